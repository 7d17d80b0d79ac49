"""Gauss-Hermite quadrature over a log-normal evaluation time (seed 000, App. A Lemma 6).

CTV's acquisition (seed Eq. (4)) is ``int alpha_base(x, tau_n + t) Lambda(t | mu, s^2) dt``.
With ``t = exp(mu + sqrt(2) s u)`` it becomes ``int alpha_base(x, tau_n + t(u)) e^{-u^2} /
sqrt(pi) du`` (the substitution in the proof of Lemma 6), which Gauss-Hermite with Q nodes
u_q and weights w_q approximates by ``sum_q w_q / sqrt(pi) alpha_base(x, tau_n + t(u_q))``.
"""

from __future__ import annotations

import math

import numpy as np

from qbo import caches

__all__ = ["hermite_rule", "lognormal_mean", "lognormal_nodes", "quadrature_lognormal_mean"]


@caches.lru(maxsize=32)
def _rule(order: int) -> tuple[np.ndarray, np.ndarray]:
    u, w = np.polynomial.hermite.hermgauss(order)
    return u, w / math.sqrt(math.pi)


def hermite_rule(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes u_q and normalised weights ``w_q / sqrt(pi)`` (summing to 1) of Q-point Gauss-Hermite."""
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or not 1 <= order <= 200:
        raise ValueError(f"quadrature order must be an integer in [1, 200], got {order!r}")
    u, w = _rule(int(order))
    return u.copy(), w.copy()


def lognormal_nodes(mu: np.ndarray, sd: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Times ``t[i, q] = exp(mu_i + sqrt(2) sd_i u_q)`` (m, Q) and weights (Q) for Lambda(mu, sd^2)."""
    u, w = hermite_rule(order)
    m = np.asarray(mu, float).reshape(-1, 1)
    s = np.asarray(sd, float).reshape(-1, 1)
    return np.exp(m + math.sqrt(2.0) * s * u[None, :]), w


def quadrature_lognormal_mean(mu: np.ndarray, sd: np.ndarray, order: int = 32) -> np.ndarray:
    """``E[t]`` for t ~ Lambda(mu, sd^2) by Gauss-Hermite (equals ``lognormal_mean`` to ~1e-15)."""
    t, w = lognormal_nodes(mu, sd, order)
    return t @ w


def lognormal_mean(mu: np.ndarray, var: np.ndarray) -> np.ndarray:
    """``E[t] = exp(mu + var / 2)`` for ``log t ~ N(mu, var)`` (seed Eq. (5)'s t~)."""
    return np.exp(np.asarray(mu, float) + 0.5 * np.asarray(var, float))
