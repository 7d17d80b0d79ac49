"""Discretised Gaussian reward oracle.

The reward y ~ N(mean, std^2) is truncated to a fixed window [lo, hi] and discretised into
2^qubits equal bins; bin w carries the normal probability mass of its bin (renormalised
after truncation) and the reward value of its midpoint. The discrete oracle of Eq. (2)
(seed Sec. 3.2) then encodes it, mapping [lo, hi] onto [0, 1].

The window does not depend on the arm: every arm of a problem shares it, so the arm's mean
is carried by the amplitude, never by classical post-processing. A wider window costs
accuracy: an error eps in reward units is an error eps / (hi - lo) in amplitude.

Error of the encoded mean against ``mean`` (both in reward units):
- truncation: at most ``std * phi(z) * 2 / (1 - 2 Phi(-z))`` roughly, with z the distance
  from the mean to the nearer window edge in units of std (``phi``: standard normal pdf);
- discretisation: the midpoint rule on a Gaussian with bin width h is exponentially
  accurate, error of order ``h * exp(-2 pi^2 std^2 / h^2)``.
For the default window (-4 std, 1 + 4 std) with 6 qubits and a mean in [0, 1], both are
below 1e-3 for every std in [0.05, 1] (tests/test_oracles.py checks this).
"""

from __future__ import annotations

import numpy as np

from qbo.oracle_specs import check_gaussian, default_window
from qbo.oracles.base import Oracle
from qbo.oracles.discrete import discrete

__all__ = ["default_window", "discretised_normal", "gaussian"]


def gaussian(
    mean: float, std: float, qubits: int = 6, window: tuple[float, float] | None = None
) -> Oracle:
    """Oracle for a Gaussian reward N(mean, std^2) on a 2^qubits-point grid over ``window``."""
    mean, std, qubits, (lo, hi) = check_gaussian(mean, std, qubits, window)
    values, probs = discretised_normal(mean, std, qubits, (lo, hi))
    spec = f"gaussian:mean={mean!r},std={std!r},qubits={qubits},window=({lo!r},{hi!r})"
    return discrete(values, probs, window=(lo, hi), spec=spec)


def discretised_normal(
    mean: float, std: float, qubits: int, window: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Bin midpoints (2^qubits) and the renormalised normal mass of each bin."""
    lo, hi = window
    edges = np.linspace(lo, hi, 2**qubits + 1)
    from scipy.stats import norm  # lazy: scipy.stats is slow to import (docs/scale-out.md, Imports)

    mass = np.diff(norm.cdf(edges, loc=mean, scale=std))
    return 0.5 * (edges[:-1] + edges[1:]), mass / mass.sum()
