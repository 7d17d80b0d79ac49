"""LRAE's log-likelihood (``qbo.qmc.lr_interval``) as a loop over the pooled powers, at one
theta (``loglik_point``) and on a grid (``loglik_points``: the same loop per point, so a theta
has one value whichever of the two computes it), compiled by numba where the optional extra
``fast`` is installed and run as plain Python where not: the same function, the same
operations in the same order, so the same results either way.

Brent's minimiser and root finder (``scipy.optimize``) evaluate it one theta at a time; a numpy
call on a dozen powers costs tens of microseconds of overhead, the loop a fraction of that.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.compiling import COMPILED, jit

__all__ = ["COMPILED", "loglik_point", "loglik_points"]

TINY = 1e-300


def _loglik_point(theta: float, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> float:
    """l(theta) = sum_K h_K log sin^2(K theta) + (n_K - h_K) log cos^2(K theta), each factor
    floored at TINY (``qbo.qmc.lr_interval.loglik`` at one theta)."""
    total = 0.0
    for j in range(ks.shape[0]):
        sn = math.sin(theta * ks[j])
        s = sn * sn  # not sn ** 2: Python's pow and numba's square may round differently
        c = 1.0 - s
        total += hs[j] * math.log(max(s, TINY)) + (ns[j] - hs[j]) * math.log(max(c, TINY))
    return total


loglik_point = jit(_loglik_point)


def _loglik_points(theta: np.ndarray, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> np.ndarray:
    """``loglik_point`` at every theta of a 1-d array (shape P), point by point."""
    out = np.empty(theta.shape[0])
    for i in range(theta.shape[0]):
        out[i] = loglik_point(theta[i], ks, ns, hs)
    return out


loglik_points = jit(_loglik_points)


GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))  # the golden-section fraction of Brent's minimiser
EPS = 2.220446049250313e-16  # double precision's machine epsilon
SQRT_EPS = math.sqrt(EPS)  # the minimiser's relative tolerance (below it -l is flat to rounding)


def _maximise(lo: float, hi: float, xtol: float, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> tuple[float, float]:
    """(theta, l(theta)) at a local maximum of ``loglik_point`` in [lo, hi], to ``xtol``: Brent's
    minimiser of -l (golden-section steps, parabolic ones where the last three points allow;
    Brent 1973, Algorithms for Minimization without Derivatives, ch. 5)."""
    x = w = v = lo + GOLDEN * (hi - lo)
    fx = fw = fv = -loglik_point(x, ks, ns, hs)
    a, b = lo, hi
    d = e = 0.0
    for _ in range(500):
        mid = 0.5 * (a + b)
        tol = SQRT_EPS * abs(x) + xtol / 3.0
        tol2 = 2.0 * tol
        if abs(x - mid) <= tol2 - 0.5 * (b - a):
            break
        parabolic = False
        if abs(e) > tol:  # a parabola through x, w, v
            r = (x - w) * (fx - fv)
            p_den = (x - v) * (fx - fw)
            p = (x - v) * p_den - (x - w) * r
            p_den = 2.0 * (p_den - r)
            if p_den > 0.0:
                p = -p
            else:
                p_den = -p_den
            e_old, e = e, d
            if abs(p) < abs(0.5 * p_den * e_old) and p > p_den * (a - x) and p < p_den * (b - x):
                d = p / p_den
                u = x + d
                if u - a < tol2 or b - u < tol2:
                    d = tol if x < mid else -tol
                parabolic = True
        if not parabolic:  # a golden-section step into the larger part
            e = (b - x) if x < mid else (a - x)
            d = GOLDEN * e
        u = x + d if abs(d) >= tol else (x + tol if d > 0.0 else x - tol)
        fu = -loglik_point(u, ks, ns, hs)
        if fu <= fx:
            if u < x:
                b = x
            else:
                a = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
    return x, -fx


maximise = jit(_maximise)


def _deviation(t: float, l_hat: float, q: float, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> float:
    """2 (l_hat - l(t)) - q: negative inside the likelihood-ratio set at threshold q."""
    return 2.0 * (l_hat - loglik_point(t, ks, ns, hs)) - q


deviation = jit(_deviation)


def _boundary(t_in: float, t_out: float, l_hat: float, q: float, xtol: float, ks: np.ndarray, ns: np.ndarray,
              hs: np.ndarray) -> float:
    """The theta between ``t_in`` (deviation <= 0) and ``t_out`` (> 0) where the deviation
    crosses 0, to ``xtol`` plus 4 ulp: Brent's root finder (bisection, secant and inverse
    quadratic steps; Brent 1973, ch. 4)."""
    a, fa = t_in, deviation(t_in, l_hat, q, ks, ns, hs)
    b, fb = t_out, deviation(t_out, l_hat, q, ks, ns, hs)
    c, fc = a, fa
    d = e = b - a
    for _ in range(500):
        if (fb > 0.0) == (fc > 0.0) and fb != 0.0 and fc != 0.0:  # keep the root between b and c
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):  # b is the best guess
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2.0 * EPS * abs(b) + 0.5 * xtol
        half = 0.5 * (c - b)
        if abs(half) <= tol or fb == 0.0:
            return b
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant
                p = 2.0 * half * s
                p_den = 1.0 - s
            else:  # inverse quadratic
                qa = fa / fc
                r = fb / fc
                p = s * (2.0 * half * qa * (qa - r) - (b - a) * (r - 1.0))
                p_den = (qa - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                p_den = -p_den
            p = abs(p)
            if 2.0 * p < min(3.0 * half * p_den - abs(tol * p_den), abs(e * p_den)):
                e, d = d, p / p_den
            else:
                d = e = half
        else:
            d = e = half
        a, fa = b, fb
        b += d if abs(d) > tol else (tol if half > 0.0 else -tol)
        fb = deviation(b, l_hat, q, ks, ns, hs)
    return b


boundary = jit(_boundary)


def _set_end(t_in: float, t_out: float, step: float, l_hat: float, q: float, ks: np.ndarray, ns: np.ndarray,
         hs: np.ndarray) -> float:
    """The set's end beyond ``t_in`` towards the grid neighbour ``t_out``: Brent's root where the
    deviation changes sign between them, else ``t_in`` (also where ``t_out`` lies in another
    search interval, more than two steps away)."""
    if abs(t_out - t_in) > 2.0 * step:
        return t_in
    if deviation(t_out, l_hat, q, ks, ns, hs) > 0.0 and deviation(t_in, l_hat, q, ks, ns, hs) <= 0.0:
        return boundary(t_in, t_out, l_hat, q, 1e-15, ks, ns, hs)
    return t_in


set_end = jit(_set_end)


def _clip_run(lo: float, hi: float, search: np.ndarray, runs: np.ndarray, count: int) -> int:
    """Append [lo, hi] clipped to each interval of ``search`` (the non-empty parts) to ``runs``."""
    for s in range(search.shape[0]):
        lo_c, hi_c = max(lo, search[s, 0]), min(hi, search[s, 1])
        if hi_c > lo_c:
            runs[count, 0], runs[count, 1] = lo_c, hi_c
            count += 1
    return count


clip_run = jit(_clip_run)


def _interval(ks: np.ndarray, ns: np.ndarray, hs: np.ndarray, search: np.ndarray, q: float, localise: float,
              per_period: int) -> tuple[float, float, float, np.ndarray]:
    """``qbo.qmc.lr_interval.likelihood_interval``'s search in one loop: (theta_hat, theta_low,
    theta_high, plausible runs as rows (lo, hi)) for pooled powers ``ks`` and a search set of
    rows (lo, hi), sorted and disjoint (that module's docstring gives the steps)."""
    kmax = 1.0
    for j in range(ks.shape[0]):
        kmax = ks[j] if j == 0 or ks[j] > kmax else kmax
    step = math.pi / (kmax * per_period)
    sizes = np.empty(search.shape[0], np.int64)
    for s in range(search.shape[0]):
        sizes[s] = max(3, int(math.ceil((search[s, 1] - search[s, 0]) / step)) + 1)
    theta = np.empty(sizes.sum())
    at = 0
    for s in range(search.shape[0]):  # numpy's linspace: lo + i (hi - lo) / (n - 1), the last point hi
        lo, hi, n = search[s, 0], search[s, 1], sizes[s]
        width = (hi - lo) / (n - 1)
        for i in range(n):
            theta[at + i] = i * width + lo
        theta[at + n - 1] = hi
        at += n
    ll = np.empty(theta.shape[0])
    best = 0
    for i in range(theta.shape[0]):
        ll[i] = loglik_point(theta[i], ks, ns, hs)
        if ll[i] > ll[best]:
            best = i
    x, lx = maximise(max(0.0, theta[best] - step), min(0.5 * math.pi, theta[best] + step),
                     1e-13 * max(1.0, kmax) / kmax, ks, ns, hs)
    t_hat, l_hat = (x, lx) if lx >= ll[best] else (theta[best], ll[best])
    first, last = -1, -1
    for i in range(theta.shape[0]):
        if 2.0 * (l_hat - ll[i]) <= q:
            last = i
            if first < 0:
                first = i
    if first < 0:  # the set is narrower than a grid step: it lies around t_hat
        first = last = best
    t_low = min(theta[first], t_hat)
    t_high = max(theta[last], t_hat)
    if first > 0:
        t_low = set_end(t_low, theta[first - 1], step, l_hat, q, ks, ns, hs)
    if last < theta.shape[0] - 1:
        t_high = set_end(t_high, theta[last + 1], step, l_hat, q, ks, ns, hs)
    runs = np.empty((theta.shape[0] * search.shape[0], 2))
    count = 0
    start = prev = -1
    for i in range(theta.shape[0] + 1):  # maximal runs of kept points (< 1.5 steps apart), padded by a step
        kept = i < theta.shape[0] and (i == best or 2.0 * (l_hat - ll[i]) <= q + localise)
        if kept and start >= 0 and theta[i] - theta[prev] > 1.5 * step:
            count = clip_run(theta[start] - step, theta[prev] + step, search, runs, count)
            start = -1
        if kept:
            if start < 0:
                start = i
            prev = i
        elif i == theta.shape[0] and start >= 0:
            count = clip_run(theta[start] - step, theta[prev] + step, search, runs, count)
    order = np.argsort(runs[:count, 0], kind="mergesort")
    merged = np.empty((count, 2))
    used = 0
    for j in order:
        if used > 0 and runs[j, 0] <= merged[used - 1, 1]:
            merged[used - 1, 1] = max(merged[used - 1, 1], runs[j, 1])
        else:
            merged[used, 0], merged[used, 1] = runs[j, 0], runs[j, 1]
            used += 1
    return t_hat, t_low, t_high, merged[:used].copy()

interval = jit(_interval)
