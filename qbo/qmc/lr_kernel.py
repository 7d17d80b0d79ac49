"""LRAE's log-likelihood (``qbo.qmc.lr_interval``) as a loop over the pooled powers, at one
theta (``loglik_point``) and on a grid (``loglik_points``: the same loop per point, so a theta
has one value whichever of the two computes it), compiled by numba where the optional extra
``fast`` is installed and run as plain Python where not: the same function, the same
operations in the same order, so the same results either way.

``interval`` is ``likelihood_interval``'s whole search in one loop: the grid, Brent's
minimiser for the maximum and Brent's root finder for both ends (``qbo.brent``, which evaluate
l one theta at a time; scipy's, called from Python each round, cost more than the likelihood).
"""

from __future__ import annotations

import math

import numpy as np

from qbo.brent import (BEST_F, BEST_X, GOLDEN, PROPOSED, ROOT, STATE_SIZE, brent_next, brent_start, brent_told,
                       zero_next, zero_start, zero_told)
from qbo.compiling import COMPILED, jit

__all__ = ["COMPILED", "interval", "loglik_point", "loglik_points"]

TINY = 1e-300
SQRT_EPS = math.sqrt(2.220446049250313e-16)  # the maximiser's relative tolerance


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


def _maximise(lo: float, hi: float, xtol: float, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> tuple[float, float]:
    """(theta, l(theta)) at a local maximum of ``loglik_point`` in [lo, hi]: ``qbo.brent``'s
    minimiser of -l from the bracket's golden-section point, to ``xtol`` / 3 + sqrt(eps) |theta|
    (below that -l is flat to rounding)."""
    st = np.empty(STATE_SIZE)
    x = lo + GOLDEN * (hi - lo)
    brent_start(st, lo, hi, x, -loglik_point(x, ks, ns, hs), xtol / 3.0 + SQRT_EPS * abs(x))
    while brent_next(st):
        brent_told(st, -loglik_point(st[PROPOSED], ks, ns, hs))
    return st[BEST_X], -st[BEST_F]


maximise = jit(_maximise)


def _deviation(t: float, l_hat: float, q: float, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> float:
    """2 (l_hat - l(t)) - q: at most 0 inside the likelihood-ratio set at threshold q."""
    return 2.0 * (l_hat - loglik_point(t, ks, ns, hs)) - q


deviation = jit(_deviation)


def _boundary(t_in: float, f_in: float, t_out: float, f_out: float, l_hat: float, q: float, xtol: float,
              ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> float:
    """The theta between ``t_in`` (deviation ``f_in`` <= 0) and ``t_out`` (``f_out`` > 0) where
    the deviation crosses 0, to ``xtol`` plus 4 ulp: ``qbo.brent``'s root finder."""
    st = np.empty(STATE_SIZE)
    zero_start(st, t_in, f_in, t_out, f_out, xtol)
    while zero_next(st):
        zero_told(st, deviation(st[PROPOSED], l_hat, q, ks, ns, hs))
    return st[ROOT]


boundary = jit(_boundary)


def _set_end(t_in: float, t_out: float, step: float, l_hat: float, q: float, ks: np.ndarray, ns: np.ndarray,
             hs: np.ndarray) -> float:
    """The set's end beyond ``t_in`` towards the grid neighbour ``t_out``: Brent's root where the
    deviation changes sign between them, else ``t_in`` (also where ``t_out`` lies in another
    search interval, more than two steps away)."""
    if abs(t_out - t_in) > 2.0 * step:
        return t_in
    f_out = deviation(t_out, l_hat, q, ks, ns, hs)
    if f_out > 0.0:
        f_in = deviation(t_in, l_hat, q, ks, ns, hs)
        if f_in <= 0.0:
            return boundary(t_in, f_in, t_out, f_out, l_hat, q, 1e-15, ks, ns, hs)
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
