"""A linear-reward problem, for sanity checks of LinUCB / Q-LinUCB.

Arms: a regular grid of k points per axis on [0, 1]^dim (``layout="grid"``, needs
``num_arms = k**dim``) or ``num_arms`` uniform random points (``layout="random"``).
f(x) = theta^T x with theta ~ N(0, I_dim) (seeded), then affinely scaled over the arms to
[0.1, 0.9] (worst arm 0.1, best 0.9; away from 0 and 1 so Bernoulli arms are non-degenerate).

The scaled f is affine, not linear: f(x) = w^T x + c with
``w = 0.8 theta / (max - min)`` and ``c = 0.1 - 0.8 min / (max - min)`` (min, max of theta^T x
over the arms); :func:`linear_function` returns the arms, w and c. A linear-kernel
learner (LinUCB, Q-LinUCB, GP with k(x, x') = x^T x') should therefore use the augmented
features (x, 1), i.e. the kernel x^T x' + 1, to be well specified.

Noise: ``"bernoulli"`` (one-qubit oracle, encoded mean exactly f) or ``"gaussian"``
(``gaussian(f, std, qubits, window=default_window(std))``, one window for all arms; the
encoded mean is the discretised one, within 1e-3 of f for std in [0.05, 1] and 6 qubits).
"""

from __future__ import annotations

import itertools

import numpy as np

from qbo.problems.base import Problem
from qbo.problems.rewards import check_int, check_noise, reward_oracles

LAYOUTS = ("grid", "random")
LOW, HIGH = 0.1, 0.9


def linear_arms(dim: int, num_arms: int, layout: str, rng: np.random.Generator) -> np.ndarray:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if layout == "random":
        return rng.uniform(0.0, 1.0, size=(num_arms, dim))
    k = round(num_arms ** (1.0 / dim))
    if k < 2 or k**dim != num_arms:
        raise ValueError(f"num_arms must be k**dim with k >= 2 for layout='grid', got {num_arms} with dim={dim}")
    axis = np.linspace(0.0, 1.0, k)
    return np.array(list(itertools.product(axis, repeat=dim)))


def linear_function(
    dim: int = 2, num_arms: int = 25, seed: int = 0, layout: str = "grid"
) -> tuple[np.ndarray, np.ndarray, float]:
    """The arms (num_arms x dim) and the affine reward's coefficients (w, c): f = arms @ w + c."""
    dim = check_int("dim", dim, 1)
    num_arms = check_int("num_arms", num_arms, 2)
    seed = check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(dim)
    arms = linear_arms(dim, num_arms, layout, rng)
    raw = arms @ theta
    span = raw.max() - raw.min()
    if not span > 1e-12:
        raise ValueError(f"theta^T x is constant over the arms for seed {seed}; cannot scale it")
    w = (HIGH - LOW) * theta / span
    return arms, w, float(LOW - (HIGH - LOW) * raw.min() / span)


def linear(
    dim: int = 2,
    num_arms: int = 25,
    seed: int = 0,
    noise: str = "bernoulli",
    std: float = 0.1,
    qubits: int = 6,
    layout: str = "grid",
) -> Problem:
    """Affine reward f(x) = w^T x + c on [0.1, 0.9]; ``std``/``qubits`` apply to Gaussian noise only."""
    dim = check_int("dim", dim, 1)
    num_arms = check_int("num_arms", num_arms, 2)
    seed = check_int("seed", seed, 0)
    noise = check_noise(noise)
    arms, w, c = linear_function(dim, num_arms, seed, layout)
    f = np.clip(arms @ w + c, LOW, HIGH)
    params: dict[str, object] = {"dim": dim, "num_arms": num_arms, "seed": seed, "noise": noise, "layout": layout}
    oracles, shaped = reward_oracles(f, noise, std, qubits)
    params.update(shaped)
    return Problem.from_oracles("linear", arms, oracles, params)
