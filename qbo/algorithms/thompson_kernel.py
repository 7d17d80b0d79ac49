"""``thompson``'s rounds as one compiled loop (``qbo.algorithms.compiled``): the same draws, in
the same order, as ``Thompson.ask`` / ``tell`` (a vector ``rng.beta`` draws arm by arm).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import RewardTable
from qbo.algorithms.jit import draw_reward, jit

class ThompsonStepper:
    """``Thompson``'s ask / tell loop on its own arrays ``n`` and ``total`` (a ``Stepper``)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        cfg = policy.config
        self._beta = cfg.prior == "beta"
        self._params = np.array([cfg.a0, cfg.b0, cfg.low, cfg.high, cfg.prior_mean, cfg.prior_var, cfg.noise])

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        p = self.policy
        kernel = _beta_rounds if self._beta else _gaussian_rounds
        kernel(count, p.n, p.total, self._params, p.rng, table.coins, table.first, table.second, rng, arms, values)

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        _tell_rounds(self._beta, self.policy.n, self.policy.total, self._params, arms, values)

    def statistics(self) -> dict[str, Any]:
        return {"n": self.policy.n.tolist(), "total": self.policy.total.tolist()}

    def random_state(self) -> dict[str, Any] | None:
        return self.policy.rng.bit_generator.state

    def restore(self, state: dict[str, Any] | None) -> None:
        self.policy.rng.bit_generator.state = state


@jit
def _tell(beta: bool, n: np.ndarray, total: np.ndarray, params: np.ndarray, arm: int, value: float) -> None:
    """``Thompson._update``."""
    if beta:
        value = min(1.0, max(0.0, (value - params[2]) / (params[3] - params[2])))
    n[arm] += 1
    total[arm] += value


@jit
def _tell_rounds(beta: bool, n: np.ndarray, total: np.ndarray, params: np.ndarray,
                 arms: np.ndarray, values: np.ndarray) -> None:
    for k in range(arms.shape[0]):
        _tell(beta, n, total, params, arms[k], values[k])


@jit
def _beta_rounds(count: int, n: np.ndarray, total: np.ndarray, params: np.ndarray, prng: np.random.Generator,
                 coins: np.ndarray, first: np.ndarray, second: np.ndarray, rng: np.random.Generator,
                 arms: np.ndarray, values: np.ndarray) -> None:
    """Beta prior: theta_i ~ Beta(a0 + S_i, b0 + n_i - S_i), play the first argmax."""
    a0, b0 = params[0], params[1]
    for k in range(count):
        arm, best = 0, -np.inf
        for i in range(n.shape[0]):
            theta = prng.beta(a0 + total[i], b0 + n[i] - total[i])
            if theta > best:
                arm, best = i, theta
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        _tell(True, n, total, params, arm, y)
        arms[k], values[k] = arm, y


@jit
def _gaussian_rounds(count: int, n: np.ndarray, total: np.ndarray, params: np.ndarray, prng: np.random.Generator,
                     coins: np.ndarray, first: np.ndarray, second: np.ndarray, rng: np.random.Generator,
                     arms: np.ndarray, values: np.ndarray) -> None:
    """Gaussian prior: theta_i = mean_i + z_i / sqrt(P_i), play the first argmax."""
    mean0, var0, noise = params[4], params[5], params[6]
    for k in range(count):
        arm, best = 0, -np.inf
        for i in range(n.shape[0]):
            precision = 1.0 / var0 + n[i] / noise
            mean = (mean0 / var0 + total[i] / noise) / precision
            theta = mean + prng.standard_normal() / np.sqrt(precision)
            if theta > best:
                arm, best = i, theta
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        _tell(False, n, total, params, arm, y)
        arms[k], values[k] = arm, y
