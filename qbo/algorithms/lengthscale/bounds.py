"""Suspected regret bounds and confidence widths used by LB-GP-UCB's balancing rule.

Ziomek, Adachi & Osborne (NeurIPS 2024):

* Proposition 2.2: ``gamma_T(k^theta) = theta^{-d} log(T)^{d+1}`` (RBF / SE) and
  ``theta^{-d} T^{d(d+1)/(2 nu + d(d+1))} log(T)^{2 nu/(2 nu + d)}`` (nu-Matern).
* Theorem 2.3: ``R^{theta,B}(T) = sqrt(T) (B sqrt(gamma_T) + gamma_T)``, used with the
  length-scale dependent norm ``B(theta, N) = (theta_0/theta)^{d/2} N`` (Sec. 2); only its
  scaling matters (Sec. 3, "up to a constant").
* Theorem 4.1: ``xi_t = 2 sigma_N^2 log(d ln(g(t)) pi^2 t^2 / (3 delta))``.  The candidate
  count ``d ln g(t)`` is floored at 1 so that xi_t stays finite when ``g(t) = 1`` (one
  candidate; the count is then 1, not 0).
"""

from __future__ import annotations

import math

__all__ = ["KERNEL_NU", "information_gain_bound", "suspected_regret", "xi"]

KERNEL_NU: dict[str, float | None] = {"se": None, "matern12": 0.5, "matern32": 1.5, "matern52": 2.5}


def information_gain_bound(n: int, theta: float, dim: int, kernel: str) -> float:
    """``gamma_n(k^theta)`` of Proposition 2.2 (0 at n = 1, where log n = 0)."""
    if kernel not in KERNEL_NU:
        raise ValueError(f"LB-GP-UCB needs an SE or Matern kernel, got kernel={kernel!r}")
    log_n = math.log(max(n, 1))
    nu, d = KERNEL_NU[kernel], dim
    if nu is None:
        return theta**-d * log_n ** (d + 1)
    return theta**-d * n ** (d * (d + 1) / (2 * nu + d * (d + 1))) * log_n ** (2 * nu / (2 * nu + d))


def suspected_regret(n: int, theta: float, theta0: float, dim: int, kernel: str, norm: float) -> float:
    """``R^theta(n) = sqrt(n) (B(theta, N) sqrt(gamma_n) + gamma_n)`` (Thm 2.3, Sec. 2)."""
    gamma = information_gain_bound(n, theta, dim, kernel)
    b = (theta0 / theta) ** (dim / 2.0) * norm
    return math.sqrt(n) * (b * math.sqrt(gamma) + gamma)


def xi(t: int, g: float, dim: int, noise_var: float, delta: float) -> float:
    """``xi_t = 2 sigma_N^2 log(max(d ln g(t), 1) pi^2 t^2 / (3 delta))`` (Theorem 4.1)."""
    count = max(dim * math.log(max(g, 1.0)), 1.0)
    return 2.0 * noise_var * math.log(count * math.pi**2 * t * t / (3.0 * delta))
