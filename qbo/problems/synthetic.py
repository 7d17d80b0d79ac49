"""The Q-BO paper's synthetic problem (Dai et al. 2023, Sec. 6 and App. J).

X = ``num_arms`` (20) equally spaced points in [0, 1]; f is one draw from a zero-mean GP
with the SE kernel ``exp(-(x - x')^2 / (2 l^2))``, l = 0.1, evaluated on X, then "scaled to
[0, 1]" -- the paper does not say how; we use min-max scaling over the arms, so the worst
arm has f = 0 and the best f = 1 exactly.

Noise (the paper's two cases of Lemma 1):
- ``"bernoulli"``: y ~ Bernoulli(f(x)), a one-qubit oracle ``bernoulli(f_i)``; the encoded
  mean is exactly f_i.
- ``"gaussian"``: y ~ N(f(x), std^2) truncated to the window ``default_window(std)`` =
  (-4 std, 1 + 4 std), the same window for every arm, and discretised on 2^qubits bins
  (``qbo.oracles.gaussian``). The encoded mean (``Problem.means``) is the discretised mean,
  which differs from f_i by less than 1e-3 for std in [0.05, 1] and 6 qubits (truncation
  error dominates; see ``qbo.oracles.gaussian``). Regret is taken against the encoded
  means. The paper's std is not stated for the simulations; its real-device run (App. J,
  Fig. 4) uses std = 0.4, our default.

The same seed gives the same f for both noise types.
"""

from __future__ import annotations


import numpy as np

from qbo.problems.base import Problem
from qbo.problems.rewards import check_int, check_noise, check_positive, reward_oracles

JITTERS = (1e-10, 1e-9, 1e-8, 1e-7, 1e-6)


def se_gp_sample(x: np.ndarray, lengthscale: float, rng: np.random.Generator) -> np.ndarray:
    """One draw of a zero-mean, unit-variance SE-kernel GP at the points x (n x d).

    Cholesky of K + jitter * I, with the smallest jitter in 1e-10 .. 1e-6 that succeeds.
    """
    x = np.asarray(x, dtype=float).reshape(len(x), -1)
    sq = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    k = np.exp(-sq / (2.0 * lengthscale**2))
    z = rng.standard_normal(len(x))
    for jitter in JITTERS:
        try:
            chol = np.linalg.cholesky(k + jitter * np.eye(len(x)))
        except np.linalg.LinAlgError:
            continue
        return chol @ z
    raise ValueError(f"SE kernel matrix is not positive definite even with jitter {JITTERS[-1]}")


def synthetic_function(seed: int = 0, num_arms: int = 20, lengthscale: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """The arms x (num_arms,) and the min-max scaled GP draw f(x) in [0, 1] (min 0, max 1)."""
    seed = check_int("seed", seed, 0)
    num_arms = check_int("num_arms", num_arms, 2)
    lengthscale = check_positive("lengthscale", lengthscale)
    x = np.linspace(0.0, 1.0, num_arms)
    g = se_gp_sample(x[:, None], lengthscale, np.random.default_rng(seed))
    span = g.max() - g.min()
    if not span > 0:
        raise ValueError(f"GP draw is constant for seed {seed}; cannot scale it to [0, 1]")
    return x, (g - g.min()) / span


def synthetic(
    noise: str = "bernoulli",
    std: float = 0.4,
    seed: int = 0,
    num_arms: int = 20,
    lengthscale: float = 0.1,
    qubits: int = 6,
) -> Problem:
    """The paper's synthetic problem; ``std`` and ``qubits`` apply to ``noise="gaussian"`` only.

    Arms are x_i = i / (num_arms - 1) as an (num_arms, 1) array; see the module docstring.
    """
    noise = check_noise(noise)
    x, f = synthetic_function(seed, num_arms, lengthscale)
    params: dict[str, object] = {"seed": seed, "num_arms": num_arms, "lengthscale": float(lengthscale)}
    oracles, shaped = reward_oracles(f, noise, std, qubits)
    params.update(shaped)
    return Problem.from_oracles(f"synthetic-{noise}", x[:, None], oracles, params)
