"""Confidence intervals for a binomial proportion, as plain functions.

Grinko et al. 2021 (IAE), Sec. 3: each round turns ``ones`` out of ``shots`` into an
interval for p = sin^2(K theta / 2) by either a Chernoff-Hoeffding bound or the exact
Clopper-Pearson ('beta') interval.
"""

from __future__ import annotations

import math

from scipy.special import betaincinv


def chernoff(ones: int, shots: int, alpha: float) -> tuple[float, float]:
    """Two-sided Hoeffding interval p_hat +- sqrt(ln(2/alpha) / (2 shots)), clipped to [0, 1]."""
    p = ones / shots
    half = math.sqrt(math.log(2.0 / alpha) / (2.0 * shots))
    return max(0.0, p - half), min(1.0, p + half)


def clopper_pearson(ones: int, shots: int, alpha: float) -> tuple[float, float]:
    """Exact two-sided Clopper-Pearson interval at level 1 - alpha."""
    # quantiles of Beta(a, b) via the inverse regularised incomplete beta function (fast path
    # of scipy.stats.beta.ppf without its argument checking)
    # (float arguments: the same double loop, without converting Python ints on every call)
    low = 0.0 if ones == 0 else float(betaincinv(float(ones), float(shots - ones + 1), alpha / 2))
    high = 1.0 if ones == shots else float(betaincinv(float(ones + 1), float(shots - ones), 1 - alpha / 2))
    return low, high


METHODS = {"chernoff": chernoff, "beta": clopper_pearson}


def interval(method: str, ones: int, shots: int, alpha: float) -> tuple[float, float]:
    """Dispatch by name: 'beta' (Clopper-Pearson) or 'chernoff'."""
    try:
        return METHODS[method](ones, shots, alpha)
    except KeyError:
        raise ValueError(f"confidence method must be one of {sorted(METHODS)}, got '{method}'") from None


class ThetaInterval:
    """For a state holding an angle interval ``theta_low`` <= ``theta_high`` (amplitude
    a = sin^2 theta): the amplitude interval and its half-width."""

    theta_low: float
    theta_high: float

    @property
    def interval(self) -> tuple[float, float]:
        """The amplitude interval [sin^2 theta_low, sin^2 theta_high]."""
        return math.sin(self.theta_low) ** 2, math.sin(self.theta_high) ** 2

    @property
    def half_width(self) -> float:
        low, high = self.interval
        return 0.5 * (high - low)
