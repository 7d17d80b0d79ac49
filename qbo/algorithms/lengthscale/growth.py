"""Growth and candidate-suggesting functions of LB-GP-UCB and A-GP-UCB.

Ziomek, Adachi & Osborne (NeurIPS 2024):

* Definition 3.1: candidate length scales ``q(i) = theta_0 e^{-i/d}``; ``q(0) = theta_0``.
* Sec. 3 / Sec. 5: the suspected lower bound ``theta_L(t) = theta_0 / g(t)`` with growth
  function ``g(t) = max(t0, t^p)``, ``p = 1/2`` (Sec. 5; the ablation, Fig. 4, tries
  p in {1/4, 1/2, 3/4}); ``t0`` "selected so that at least 5 candidates are generated for
  g(1)", i.e. ``q(5) <= theta_0 / t0``, ``t0 = e^{5/d}`` (``default_t0``).
"""

from __future__ import annotations

import math

__all__ = ["candidate", "default_t0", "growth"]


def default_t0(dim: int, n_start: int = 5) -> float:
    """``t0 = e^{n_start/d}``: then ``q(n_start) = theta_0/t0`` (Sec. 5, "at least 5 candidates")."""
    return math.exp(n_start / dim)


def growth(t: int, t0: float, power: float = 0.5) -> float:
    """``g(t) = max(t0, t^power)`` (Sec. 5); non-decreasing in t for power >= 0."""
    return max(float(t0), float(t) ** power)


def candidate(i: int, theta0: float, dim: int) -> float:
    """``q(i) = theta_0 e^{-i/d}`` (Definition 3.1); ``q(0) = theta_0``."""
    return theta0 * math.exp(-i / dim)
