"""``kl-ucb``'s index over scalars and its rounds as one compiled loop (``qbo.algorithms.compiled``).

The loop plays the first argmax of the same indices ``KLUCB.index`` computes, but computes
only the arms that can reach it (``_rounds``): at T = 1e6 on 20 arms most rounds compute one
or two indices instead of 20."""

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
        self._bound = np.empty(policy.num_arms)

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        p, cfg = self.policy, self.policy.config
        _rounds(count, self.rounds, cfg.c, cfg.low, cfg.high, p.n, p.total, self._bound,
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
def kl_level(t: int, c: float) -> float:
    """log t + c log log t, clipped at 0 (the log log term only where log t > 1): nondecreasing in t."""
    log_t = math.log(max(t, 1))
    d = log_t + (c * math.log(log_t) if log_t > 1 else 0.0)
    return max(d, 0.0)


@jit
def kl_arm_index(p: float, level: float, iterations: int = 60, tol: float = 1e-12) -> float:
    """max {q in [p, 1] : kl(p, q) <= level} for one arm (``kl_upper`` over scalars): 1 where
    kl(p, 1) <= level, else Newton from above in z = logit q, from the Pinsker bound, until
    g = kl(p, q) - level <= tol. The iterates decrease to the root (g convex and increasing in
    z), so the result lies between the roots at ``level`` and ``level + tol``: nondecreasing in
    ``level`` up to that tolerance, which ``_rounds``' bounds rely on."""
    if _bernoulli_kl(p, 1.0) <= level:
        return 1.0
    z = _logit(min(1.0 - _CLIP, p + math.sqrt(level / 2.0)))
    z_low = _logit(p)
    for _ in range(iterations):
        q = _expit(z)
        g = _bernoulli_kl(p, q) - level
        if not g > tol:
            break
        z = max(z_low, z - g / max(q - p, _CLIP))
    return _expit(z)


@jit
def _mean(n: np.ndarray, total: np.ndarray, i: int) -> float:
    return min(max(total[i] / n[i], 0.0), 1.0)


@jit
def kl_index(t: int, c: float, n: np.ndarray, total: np.ndarray, out: np.ndarray) -> None:
    """U_i(t) of every arm into ``out`` (+inf for unplayed arms), each by ``kl_arm_index``."""
    d = kl_level(t, c)
    for i in range(n.shape[0]):
        out[i] = kl_arm_index(_mean(n, total, i), d / n[i]) if n[i] > 0 else math.inf


@jit
def _tell(n: np.ndarray, total: np.ndarray, low: float, high: float, arm: int, value: float) -> None:
    n[arm] += 1
    total[arm] += min(1.0, max(0.0, (value - low) / (high - low)))


@jit
def _tell_rounds(n: np.ndarray, total: np.ndarray, low: float, high: float, arms: np.ndarray, values: np.ndarray) -> None:
    for k in range(arms.shape[0]):
        _tell(n, total, low, high, arms[k], values[k])


@jit
def _bound(n: np.ndarray, total: np.ndarray, i: int, d_ahead: float) -> float:
    """An upper bound on arm i's computed index at every level d <= ``d_ahead`` while its
    counts stay: the index at d_ahead / n_i + 2 tol (``kl_arm_index``'s result lies between the
    roots at level and level + tol, and the root grows with the level)."""
    return kl_arm_index(_mean(n, total, i), d_ahead / n[i] + 2e-12)


@jit
def _rounds(count: int, done: int, c: float, low: float, high: float, n: np.ndarray, total: np.ndarray,
            bound: np.ndarray, coins: np.ndarray, first: np.ndarray, second: np.ndarray,
            rng: np.random.Generator, arms: np.ndarray, values: np.ndarray) -> None:
    """``count`` rounds of KL-UCB from round ``done + 1``: play the first argmax of the index.

    The argmax of ``kl_index`` without computing every arm's index every round: ``bound[i]``
    bounds arm i's index up to round ``ahead`` (its counts change only when it is played, and
    then its bound is recomputed); an arm whose bound is below the best index computed this
    round, by more than rounding, can be neither the argmax nor a tie, so only the arm with
    the highest bound and the arms within reach of it are computed (``kl_arm_index``, the
    same numbers the policy's ``index`` gives). The bounds are refreshed when the round passes
    ``ahead``, set 1/64 of the rounds ahead. The first unplayed arm, while there is one, has
    the index +inf."""
    m = n.shape[0]
    ahead, d_ahead = 0, -1.0
    for k in range(count):
        t = done + k + 1
        arm = -1
        for i in range(m):
            if n[i] == 0:
                arm = i
                break
        if arm < 0:
            if t > ahead:
                ahead = t + t // 64 + 1
                d_ahead = kl_level(ahead, c)
                for i in range(m):
                    bound[i] = _bound(n, total, i, d_ahead)
            d = kl_level(t, c)
            top = 0
            for i in range(1, m):
                if bound[i] > bound[top]:
                    top = i
            arm, best = top, kl_arm_index(_mean(n, total, top), d / n[top])
            for i in range(m):
                if i != top and bound[i] + 1e-12 >= best:
                    u = kl_arm_index(_mean(n, total, i), d / n[i])
                    if u > best or (u == best and i < arm):
                        arm, best = i, u
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        _tell(n, total, low, high, arm, y)
        arms[k], values[k] = arm, y
        if d_ahead >= 0.0:
            bound[arm] = _bound(n, total, arm, d_ahead)
