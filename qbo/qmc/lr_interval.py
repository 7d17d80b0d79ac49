"""The likelihood-ratio interval of LRAE (``qbo.qmc.lrae``) as pure functions on arrays.

All rounds of an amplitude estimate are pooled per power K = 2k + 1 (counts add), and the
log-likelihood of theta is l(theta) = sum_K h_K log sin^2(K theta) + (n_K - h_K) log cos^2(K theta)
(the maximum-likelihood form of Suzuki et al. 2020 over the Grover powers of Dai et al. 2023, Eq. (2)). The interval
is Wilks' set {theta : 2 (l_max - l(theta)) <= q}, q the chi-square(1) quantile at 1 - alpha
(asymptotic: docs/estimators.md gives its coverage), found on a grid of GRID_PER_PERIOD
points per period of the deepest power and refined by Brent's minimiser and root finder, all in
``qbo.qmc.lr_kernel``'s compiled loop. One interval evaluates l with one function
(``loglik_point``), so a theta has one value in every comparison; ``loglik`` is the same sum in
numpy, equal to rounding (a reference for tests and notes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qbo.qmc.lr_kernel import interval, loglik_point
from qbo.qmc.result import Round

HALF_PI = 0.5 * math.pi
LOCALISE = 30.0  # extra 2 log-likelihood kept in the plausible set beyond the interval's threshold
GRID_PER_PERIOD = 24  # grid points per period pi / K of the deepest power when the set is searched


def shot_information(big_k: int) -> float:
    """The Fisher information on theta of one shot at power K = 2k + 1: 4 K^2, whatever theta
    (p_K = sin^2(K theta): the Fisher information of Suzuki et al. 2020's likelihood, one power)."""
    return 4.0 * big_k * big_k


class Pool:
    """Counts pooled per power K = 2k + 1, added round by round, with the Fisher information on
    theta (sum 4 K^2 shots, independent of theta) and the deepest k: what an interval and the
    next round's plan need, kept up to date instead of re-summed over every round each round."""

    def __init__(self, rounds: tuple[Round, ...] = ()) -> None:
        self._acc: dict[int, list[int]] = {}
        self.information = 0.0
        self.k_last = -1
        for r in rounds:
            self.add(r)

    def add(self, r: Round) -> None:
        big_k = 2 * r.k + 1
        n_h = self._acc.setdefault(big_k, [0, 0])
        n_h[0] += r.shots
        n_h[1] += r.ones
        self.information += shot_information(big_k) * r.shots
        self.k_last = max(self.k_last, r.k)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, shots, ones) summed per power, K ascending."""
        ks = sorted(self._acc)
        return (np.array(ks, dtype=float), np.array([self._acc[k][0] for k in ks], float),
                np.array([self._acc[k][1] for k in ks], float))


def pooled(rounds: tuple[Round, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K, shots, ones) summed per power."""
    return Pool(rounds).arrays()


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
    and the plausible set at q + LOCALISE (within ``search``: sorted, disjoint intervals), as an
    :class:`Interval` (``pooled_interval`` of their :class:`Pool`)."""
    return pooled_interval(Pool(rounds), q, search)


def pooled_interval(pool: Pool, q: float, search: tuple[tuple[float, float], ...] = ((0.0, HALF_PI),)) -> Interval:
    """``likelihood_interval`` of the rounds pooled in ``pool``. The search set is gridded at
    GRID_PER_PERIOD points per period pi / K_max; the maximiser and both ends are then refined
    (Brent's minimiser and root finder) between grid points, all in one compiled loop
    (``qbo.qmc.lr_kernel.interval``)."""
    if not search:
        raise ValueError("the search set of a likelihood-ratio interval must hold at least one interval")
    ks, ns, hs = pool.arrays()
    t_hat, t_low, t_high, runs = interval(ks, ns, hs, np.array(search, dtype=float).reshape(-1, 2), q, LOCALISE,
                                          GRID_PER_PERIOD)
    return Interval(float(t_hat), float(t_low), float(t_high), tuple((float(lo), float(hi)) for lo, hi in runs))
