"""``gp-ucb``'s rounds on the rank-one posterior as one compiled loop (``qbo.algorithms.compiled``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import RewardTable
from qbo.algorithms.jit import draw_reward, jit

_BETA_MODES = {"theorem1": 0, "practical": 1, "bogunovic": 2}  # else 3: a constant multiplier


class GPUCBStepper:
    """``GPUCB``'s ask / tell loop on its rank-one posterior's own arrays (a ``Stepper``):
    ``ArmPosterior.ucb`` and ``ArmPosterior.add`` as scalar loops, the same operations in the
    same order, so the same posterior bit for bit (its information gain is summed with libm's
    log1p, which may differ from numpy's in the last bit)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.model = policy.surrogate.model
        cfg = policy.config
        self.rounds = policy.t
        self._beta = beta_params(cfg)
        self._b, self._weight = self.model.b, self.model.weights
        self._info = np.array([self.model.information_gain])
        self._score = np.empty(policy.num_arms)
        self._u = np.empty(policy.num_arms)

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        Sigma, mu, var, sd = self.model.buffers()
        _rounds(count, self.rounds, self._beta, self.model.lam, Sigma, mu, var, sd, self._b, self._weight,
                self._info, self._score, self._u, table.coins, table.first, table.second, rng, arms, values)
        self._done(count)

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        Sigma, mu, var, sd = self.model.buffers()
        _tell_rounds(self.model.lam, Sigma, mu, var, sd, self._b, self._weight, self._info, self._u, arms, values)
        self._done(arms.shape[0])

    def _done(self, count: int) -> None:
        self.rounds += count
        self.model.adopt(self._b, self._weight, self.model.n + count, self._info[0])

    def statistics(self) -> dict[str, Any]:
        return {"n": self._weight.tolist(), "sum": self._b.tolist()}

    def random_state(self) -> dict[str, Any] | None:
        return None

    def restore(self, state: dict[str, Any] | None) -> None:
        """Nothing random to restore."""


def beta_params(cfg: Any) -> np.ndarray:
    """A GP-UCB configuration's beta schedule as the compiled loops read it (``beta_at``):
    (mode, delta, beta_scale, constant, pi^2); mode ``_BETA_MODES[beta]``, or 3 for a constant."""
    b = cfg.beta
    return np.array([_BETA_MODES.get(b, 3) if isinstance(b, str) else 3, cfg.delta, cfg.beta_scale,
                     0.0 if isinstance(b, str) else float(b), math.pi ** 2])


@jit
def beta_at(t: int, num_arms: int, beta: np.ndarray) -> float:
    """``GPUCB.beta(t)``: mode 0 theorem1, 1 practical, 2 bogunovic, 3 constant."""
    mode = beta[0]
    if mode == 0:
        beta_t = 2.0 * math.log(num_arms * t * t * beta[4] / (6.0 * beta[1]))
        return math.sqrt(max(beta_t, 0.0) / beta[2])
    if mode == 1:
        return 1.0 + math.log(t)
    if mode == 2:
        return math.sqrt(max(0.8 * math.log(0.4 * t), 0.0))
    return beta[3]


@jit
def _add(lam: float, Sigma: np.ndarray, mu: np.ndarray, var: np.ndarray, sd: np.ndarray, b: np.ndarray,
         weight: np.ndarray, info: np.ndarray, u: np.ndarray, i: int, y: float) -> None:
    """``ArmPosterior.add(i, y, eps=1)``."""
    m = mu.shape[0]
    for j in range(m):
        u[j] = Sigma[i, j]
    s_ii = max(u[i], 0.0)
    info[0] += 0.5 * math.log1p(1.0 * s_ii / lam)
    c = (1.0 / lam) / (1.0 + (1.0 / lam) * s_ii)
    k = c * (y - mu[i])
    for j in range(m):
        mu[j] += k * u[j]
    for j in range(m):
        for l in range(m):
            Sigma[j, l] -= (u[j] * u[l]) * c
    for j in range(m):
        var[j] = max(Sigma[j, j], 0.0)
        sd[j] = math.sqrt(var[j])
    b[i] += 1.0 * y
    weight[i] += 1.0


@jit
def _tell_rounds(lam: float, Sigma: np.ndarray, mu: np.ndarray, var: np.ndarray, sd: np.ndarray, b: np.ndarray,
                 weight: np.ndarray, info: np.ndarray, u: np.ndarray, arms: np.ndarray, values: np.ndarray) -> None:
    for k in range(arms.shape[0]):
        _add(lam, Sigma, mu, var, sd, b, weight, info, u, arms[k], values[k])


@jit
def _rounds(count: int, done: int, beta: np.ndarray, lam: float, Sigma: np.ndarray, mu: np.ndarray,
            var: np.ndarray, sd: np.ndarray, b: np.ndarray, weight: np.ndarray, info: np.ndarray,
            score: np.ndarray, u: np.ndarray, coins: np.ndarray, first: np.ndarray, second: np.ndarray,
            rng: np.random.Generator, arms: np.ndarray, values: np.ndarray) -> None:
    """``count`` rounds of GP-UCB from round ``done + 1`` (Srinivas et al. Eq. (6), first argmax)."""
    m = mu.shape[0]
    for k in range(count):
        multiplier = beta_at(done + k + 1, m, beta)
        arm, best = 0, -math.inf
        for j in range(m):
            s = sd[j] * multiplier + mu[j]
            if s > best or (j == 0):
                arm, best = j, s
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        _add(lam, Sigma, mu, var, sd, b, weight, info, u, arm, y)
        arms[k], values[k] = arm, y
