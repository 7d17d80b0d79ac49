"""Benchmark problems of the LB-GP-UCB paper as finite-arm ``qbo.problems.Problem`` objects.

Ziomek, Adachi & Osborne (NeurIPS 2024), Sec. 5:

* Berkenkamp toy (Berkenkamp et al. 2019; the authors' code version,
  github.com/JuliuszZiomek/LB-GP-UCB ``utils/_experiments.py``):
  ``f(x) = 0.6 x + N(x; 0.2, 0.08) / 8`` on [0, 1], N the Gaussian pdf; a narrow peak
  (max ~0.75 near x = 0.2) on the left and a smooth local optimum f(1) = 0.6 on the right.
  Discretised to ``num_arms`` equally spaced arms.  f already lies in [0, 1]: rewards are f.
* Michalewicz (d = 5): ``f(x) = sum_i sin(x_i) sin^20(i x_i^2 / pi)`` on [0, pi]^d (the
  negated minimisation form, so larger is better), on ``num_arms`` seeded uniform points;
  inputs are normalised to [0, 1]^d and rewards min-max scaled to [0, 1] over the arms.

Noise: ``"gaussian"`` (N(f, std^2) on the shared window ``default_window(std)``, discretised
on 2^qubits bins) or ``"bernoulli"`` (y ~ Bernoulli(f)).  Regret is against the encoded means.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.problems.base import Problem
from qbo.problems.rewards import reward_oracles

__all__ = ["berkenkamp", "berkenkamp_function", "michalewicz", "michalewicz_function"]



def berkenkamp_function(x: np.ndarray) -> np.ndarray:
    """``0.6 x + N(x; 0.2, 0.08)/8`` (the LB-GP-UCB authors' code version)."""
    x = np.asarray(x, dtype=float)
    pdf = np.exp(-0.5 * ((x - 0.2) / 0.08) ** 2) / (0.08 * math.sqrt(2.0 * math.pi))
    return 0.6 * x + pdf / 8.0


def michalewicz_function(z: np.ndarray, m: int = 10) -> np.ndarray:
    """``sum_i sin(z_i) sin(i z_i^2 / pi)^{2m}`` for rows z in [0, pi]^d (to maximise)."""
    z = np.atleast_2d(np.asarray(z, dtype=float))
    i = np.arange(1, z.shape[1] + 1)
    return np.sum(np.sin(z) * np.sin(i * z**2 / math.pi) ** (2 * m), axis=1)


def _check_count(name: str, value: int, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def berkenkamp(noise: str = "gaussian", std: float = 0.05, num_arms: int = 200,
               seed: int = 0, qubits: int = 6) -> Problem:
    """The Berkenkamp toy on ``num_arms`` grid points; ``seed`` is accepted (the runner passes
    one per trial) but the problem is deterministic."""
    n = _check_count("num_arms", num_arms, 2)
    x = np.linspace(0.0, 1.0, n)
    oracles, shaped = reward_oracles(berkenkamp_function(x), noise, std, qubits)
    params = {"num_arms": n, "seed": seed} | shaped  # the noise is in the name
    return Problem.from_oracles(f"berkenkamp-{noise}", x[:, None], oracles, params)


def michalewicz(noise: str = "gaussian", std: float = 0.05, num_arms: int = 1000, dim: int = 5,
                seed: int = 0, qubits: int = 6) -> Problem:
    """Michalewicz on ``num_arms`` uniform points of [0, pi]^dim drawn with ``seed``."""
    n, d = _check_count("num_arms", num_arms, 2), _check_count("dim", dim, 1)
    u = np.random.default_rng(seed).uniform(0.0, 1.0, size=(n, d))
    g = michalewicz_function(math.pi * u)
    f = (g - g.min()) / (g.max() - g.min())
    oracles, shaped = reward_oracles(f, noise, std, qubits)
    params = {"num_arms": n, "dim": d, "seed": seed} | shaped  # the noise is in the name
    return Problem.from_oracles(f"michalewicz-{noise}", u, oracles, params)
