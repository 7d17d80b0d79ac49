"""``kl-ucb``'s index over scalars and its rounds as one compiled loop (``qbo.algorithms.compiled``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import RewardTable
from qbo.algorithms.jit import draw_reward, jit

_CLIP = 1e-15  # as qbo.algorithms.kl_ucb


class KLUCBStepper:
    """``KLUCB``'s ask / tell loop on its own arrays ``n`` and ``total`` (a ``Stepper``);
    the round number is the policy's ``t`` plus the rounds run here."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.rounds = policy.t
        self._work = (np.empty(policy.num_arms), np.empty(policy.num_arms), np.empty(policy.num_arms))

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        p, cfg = self.policy, self.policy.config
        _rounds(count, self.rounds, cfg.c, cfg.low, cfg.high, p.n, p.total, *self._work,
                table.coins, table.first, table.second, rng, arms, values)
        self.rounds += count

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        cfg = self.policy.config
        _tell_rounds(self.policy.n, self.policy.total, cfg.low, cfg.high, arms, values)
        self.rounds += arms.shape[0]

    def statistics(self) -> dict[str, Any]:
        return {"n": self.policy.n.tolist(), "total": self.policy.total.tolist()}

    def random_state(self) -> dict[str, Any] | None:
        return None

    def restore(self, state: dict[str, Any] | None) -> None:
        """Nothing random to restore."""


@jit
def _bernoulli_kl(p: float, q: float) -> float:
    """``bernoulli_kl`` of two scalars."""
    p = min(max(p, _CLIP), 1 - _CLIP)
    q = min(max(q, _CLIP), 1 - _CLIP)
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


@jit
def _logit(x: float) -> float:
    """scipy.special.logit (the same branches)."""
    if x <= 0.0:
        return -math.inf
    if x >= 1.0:
        return math.inf
    if x < 0.3 or x > 0.65:
        return math.log(x / (1 - x))
    s = 2 * (x - 0.5)
    return math.log1p(s) - math.log1p(-s)


@jit
def _expit(z: float) -> float:
    return 1 / (1 + math.exp(-z))


@jit
def kl_index(t: int, c: float, n: np.ndarray, total: np.ndarray, out: np.ndarray,
             z: np.ndarray, z_low: np.ndarray, iterations: int = 60, tol: float = 1e-12) -> None:
    """U_i(t) of every arm into ``out`` (+inf for unplayed arms): ``kl_upper`` over scalars,
    iterating every played arm until none has g > tol, as the vector form does."""
    log_t = math.log(max(t, 1))
    d = log_t + (c * math.log(log_t) if log_t > 1 else 0.0)
    d = max(d, 0.0)
    played = 0
    for i in range(n.shape[0]):
        if n[i] > 0:
            played += 1
            p = min(max(total[i] / n[i], 0.0), 1.0)
            level = d / n[i]
            z[i] = _logit(min(1.0 - _CLIP, p + math.sqrt(level / 2.0)))
            z_low[i] = _logit(p)
    for _ in range(iterations if played else 0):
        pending = False
        for i in range(n.shape[0]):
            if n[i] > 0:
                p = min(max(total[i] / n[i], 0.0), 1.0)
                q = _expit(z[i])
                g = _bernoulli_kl(p, q) - d / n[i]
                if g > tol:
                    pending = True
                out[i] = g
        if not pending:
            break
        for i in range(n.shape[0]):
            if n[i] > 0:
                p = min(max(total[i] / n[i], 0.0), 1.0)
                g = out[i]
                step = g / max(_expit(z[i]) - p, _CLIP) if g > 0 else 0.0
                z[i] = max(z_low[i], z[i] - step)
    for i in range(n.shape[0]):
        if n[i] > 0:
            p = min(max(total[i] / n[i], 0.0), 1.0)
            out[i] = 1.0 if _bernoulli_kl(p, 1.0) <= d / n[i] else _expit(z[i])
        else:
            out[i] = math.inf


@jit
def _tell(n: np.ndarray, total: np.ndarray, low: float, high: float, arm: int, value: float) -> None:
    n[arm] += 1
    total[arm] += min(1.0, max(0.0, (value - low) / (high - low)))


@jit
def _tell_rounds(n: np.ndarray, total: np.ndarray, low: float, high: float, arms: np.ndarray, values: np.ndarray) -> None:
    for k in range(arms.shape[0]):
        _tell(n, total, low, high, arms[k], values[k])


@jit
def _rounds(count: int, done: int, c: float, low: float, high: float, n: np.ndarray, total: np.ndarray,
            index: np.ndarray, z: np.ndarray, z_low: np.ndarray, coins: np.ndarray, first: np.ndarray,
            second: np.ndarray, rng: np.random.Generator, arms: np.ndarray, values: np.ndarray) -> None:
    """``count`` rounds of KL-UCB from round ``done + 1``: play the first argmax of the index."""
    for k in range(count):
        kl_index(done + k + 1, c, n, total, index, z, z_low)
        arm, best = 0, -math.inf
        for i in range(n.shape[0]):
            if index[i] > best:
                arm, best = i, index[i]
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        _tell(n, total, low, high, arm, y)
        arms[k], values[k] = arm, y
