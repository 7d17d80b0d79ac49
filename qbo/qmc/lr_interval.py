"""The likelihood-ratio interval of LRAE (``qbo.qmc.lrae``) as pure functions on arrays.

All rounds of an amplitude estimate are pooled per power K = 2k + 1 (counts add), and the
log-likelihood of theta is l(theta) = sum_K h_K log sin^2(K theta) + (n_K - h_K) log cos^2(K theta)
(the maximum-likelihood form of Suzuki et al. 2020 over the Grover powers of Dai et al. 2023, Eq. (2)). The interval
is Wilks' set {theta : 2 (l_max - l(theta)) <= q}, q the chi-square(1) quantile at 1 - alpha
(asymptotic: docs/estimators.md gives its coverage), found on a grid of GRID_PER_PERIOD
points per period of the deepest power and refined by bounded Brent and Brent's root finder.
One interval evaluates l with one function, ``qbo.qmc.lr_kernel``'s loop (``loglik_points`` on
the grid, ``loglik_point`` for Brent), so a theta has one value in every comparison; ``loglik``
is the same sum in numpy, equal to rounding (a reference for tests and notes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from qbo.qmc.lr_kernel import loglik_point, loglik_points
from qbo.qmc.result import Round

HALF_PI = 0.5 * math.pi
LOCALISE = 30.0  # extra 2 log-likelihood kept in the plausible set beyond the interval's threshold
GRID_PER_PERIOD = 24  # grid points per period pi / K of the deepest power when the set is searched


def pooled(rounds: tuple[Round, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K, shots, ones) summed per power."""
    acc: dict[int, list[int]] = {}
    for r in rounds:
        n_h = acc.setdefault(2 * r.k + 1, [0, 0])
        n_h[0] += r.shots
        n_h[1] += r.ones
    ks = np.array(sorted(acc), dtype=float)
    return ks, np.array([acc[int(k)][0] for k in ks], float), np.array([acc[int(k)][1] for k in ks], float)


_TINY = 1e-300


def loglik(theta: np.ndarray, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> np.ndarray:
    """l(theta) for an array of theta (shape P) over pooled powers (shape R), vectorised (equal
    to ``loglik1`` to rounding, not bit for bit: ``likelihood_interval`` uses the loop only)."""
    s = np.sin(np.multiply.outer(theta, ks)) ** 2
    c = 1.0 - s
    return (hs * np.log(np.maximum(s, _TINY)) + (ns - hs) * np.log(np.maximum(c, _TINY))).sum(axis=-1)


def loglik1(theta: float, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> float:
    """l(theta) at one theta (``qbo.qmc.lr_kernel``: compiled where numba is installed)."""
    return float(loglik_point(float(theta), ks, ns, hs))


@dataclass(frozen=True)
class Interval:
    """A likelihood-ratio set's hull on theta, its maximiser, and the plausible set (a union
    of theta intervals at the looser level q + LOCALISE)."""

    theta_hat: float
    theta_low: float
    theta_high: float
    plausible: tuple[tuple[float, float], ...]

    def amplitude(self) -> tuple[float, float, float]:
        """(low, high, value) on the amplitude scale."""
        return math.sin(self.theta_low) ** 2, math.sin(self.theta_high) ** 2, math.sin(self.theta_hat) ** 2


def likelihood_interval(
    rounds: tuple[Round, ...], q: float, search: tuple[tuple[float, float], ...] = ((0.0, HALF_PI),)
) -> Interval:
    """The hull of {theta in search : 2 (l_max - l(theta)) <= q} for the likelihood of ``rounds``,
    and the plausible set at q + LOCALISE (within ``search``), as an :class:`Interval`.

    The search set is gridded at GRID_PER_PERIOD points per period pi / K_max; the maximiser and
    both ends are then refined (bounded Brent, Brent root) between grid points."""
    ks, ns, hs = pooled(rounds)
    kmax = float(ks.max()) if len(ks) else 1.0
    step = math.pi / (kmax * GRID_PER_PERIOD)
    grids = []
    for lo, hi in search:
        n = max(3, int(math.ceil((hi - lo) / step)) + 1)
        grids.append(np.linspace(lo, hi, n))
    theta = np.concatenate(grids)
    ll = loglik_points(theta, ks, ns, hs)
    i = int(np.argmax(ll))
    lo_b, hi_b = max(0.0, theta[i] - step), min(HALF_PI, theta[i] + step)
    best = minimize_scalar(lambda t: -loglik1(t, ks, ns, hs), bounds=(lo_b, hi_b), method="bounded",
                           options={"xatol": 1e-13 * max(1.0, kmax) / kmax})
    t_hat, l_hat = (float(best.x), -float(best.fun)) if -best.fun >= ll[i] else (float(theta[i]), float(ll[i]))
    dev = 2.0 * (l_hat - ll)
    inside = np.flatnonzero(dev <= q)
    if len(inside) == 0:  # the set is narrower than a grid step: it lies around t_hat
        inside = np.array([i])
    first, last = int(inside[0]), int(inside[-1])

    def g(t: float) -> float:
        return 2.0 * (l_hat - loglik1(t, ks, ns, hs)) - q

    def end(j_in: int, j_out: int, t_in: float) -> float:
        t_out = float(theta[j_out])
        if abs(t_out - t_in) > 2 * step:  # the neighbour lies in another search interval: stop at the grid point
            return t_in
        return brentq(g, t_in, t_out, xtol=1e-15) if g(t_out) > 0 and g(t_in) <= 0 else t_in

    t_low = min(float(theta[first]), t_hat)
    t_high = max(float(theta[last]), t_hat)
    if first > 0:
        t_low = end(first, first - 1, t_low)
    if last < len(theta) - 1:
        t_high = end(last, last + 1, t_high)
    keep = dev <= q + LOCALISE
    keep[i] = True
    plausible = plausible_runs(theta, keep, step, search)
    return Interval(t_hat, t_low, t_high, plausible)


def plausible_runs(theta: np.ndarray, keep: np.ndarray, step: float, search: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
    """Maximal runs of kept grid points, each padded by one grid step, clipped to ``search``."""
    out: list[tuple[float, float]] = []
    idx = np.flatnonzero(keep)
    if len(idx) == 0:
        return search
    breaks = np.flatnonzero(np.diff(theta[idx]) > 1.5 * step)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(idx) - 1]))
    for s, e in zip(starts, ends):
        lo, hi = float(theta[idx[s]]) - step, float(theta[idx[e]]) + step
        for a, b in search:
            lo_c, hi_c = max(lo, a), min(hi, b)
            if hi_c > lo_c:
                out.append((lo_c, hi_c))
    merged: list[tuple[float, float]] = []
    for lo, hi in sorted(out):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)
