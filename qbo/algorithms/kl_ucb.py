"""``kl-ucb``: Bernoulli KL-UCB (Garivier & Cappé 2011, "The KL-UCB algorithm for bounded
stochastic bandits and beyond", COLT, Alg. 1 with the Bernoulli divergence).

Round t: every arm is played once (lowest index first); then play the argmax of

    U_i(t) = max { q in [p_i, 1] : n_i kl(p_i, q) <= log t + c log log t },

kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q)), p_i the mean of arm i's rewards rescaled to
[0, 1] by the window (``low``, ``high``). Garivier & Cappé prove their regret bound for
c = 3 and recommend c = 0 in practice (Sec. 6); ``c`` defaults to 0. The root is found by
Newton's method in logit(q) from the Pinsker bound p + sqrt(d / (2 n)) >= U (``kl_upper``).

The policy computes its index with ``kl_index``, the same Newton iteration over scalars, which
``stepper()`` runs as one compiled loop (``qbo.algorithms.compiled``). It uses libm's log
where ``kl_upper`` uses numpy's vectorised log, which differs from libm in the last bit for
some inputs: the two agree to about 1e-15 but not always bit for bit, so a run may pick a
different arm where two indices tie to that precision (docs/bandits.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit, logit

from qbo.algorithms.base import PolicyBase, Query, argmax_lowest, check_float
from qbo.algorithms.compiled import RewardTable, draw_reward, jit

__all__ = ["KLUCB", "KLUCBConfig", "bernoulli_kl", "kl_upper"]

_CLIP = 1e-15


def bernoulli_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """kl(p, q) of Bernoulli laws, elementwise, with 0 log 0 = 0 (p and q clipped to
    [1e-15, 1 - 1e-15], which changes kl by < 1e-13)."""
    p = np.clip(p, _CLIP, 1 - _CLIP)
    q = np.clip(q, _CLIP, 1 - _CLIP)
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def kl_upper(p: np.ndarray, level: np.ndarray, iterations: int = 60, tol: float = 1e-12) -> np.ndarray:
    """max {q in [p, 1] : kl(p, q) <= level}, elementwise (Newton from above in z = logit q).

    g(z) = kl(p, expit z) - level has g'(z) = q - p and g''(z) = q (1 - q) > 0, so g is
    convex and increasing on q > p and Newton's iterates from any start above the root
    decrease monotonically to it (no slow-down near q = 1, unlike Newton in q).
    """
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    level = np.broadcast_to(np.asarray(level, dtype=float), p.shape)
    at_top = bernoulli_kl(p, np.ones_like(p)) <= level
    z = logit(np.minimum(1.0 - _CLIP, p + np.sqrt(level / 2.0)))
    with np.errstate(divide="ignore"):
        z_low = logit(p)
    for _ in range(iterations):
        q = expit(z)
        g = bernoulli_kl(p, q) - level
        if not np.any(g > tol):
            break
        z = np.maximum(z_low, z - np.where(g > 0, g / np.maximum(q - p, _CLIP), 0.0))
    return np.where(at_top, 1.0, expit(z))


@dataclass(frozen=True)
class KLUCBConfig:
    """``c``: exploration constant of log t + c log log t; ``low``, ``high``: reward window."""

    c: float = 0.0
    low: float = 0.0
    high: float = 1.0

    def __post_init__(self) -> None:
        check_float("c", self.c, low=0.0, low_open=False)
        check_float("low", self.low)
        check_float("high", self.high, low=float(self.low))


class KLUCB(PolicyBase):
    """Bernoulli KL-UCB; one classical sample per round."""

    name = "kl-ucb"
    quantum = False

    def __init__(self, arms: np.ndarray, config: KLUCBConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else KLUCBConfig())
        self.n = np.zeros(self.num_arms)
        self.total = np.zeros(self.num_arms)

    def index(self, t: int) -> np.ndarray:
        """U_i(t) for every played arm (+inf for unplayed ones), by ``kl_index``."""
        out = np.empty(self.num_arms)
        kl_index(t, self.config.c, self.n, self.total, out, np.empty(self.num_arms), np.empty(self.num_arms))
        return out

    def recommend(self) -> int:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(self.n > 0, self.total / np.maximum(self.n, 1), -np.inf)
        return argmax_lowest(mean)

    def _select(self) -> Query:
        return Query(argmax_lowest(self.index(self.t + 1)), None, None)

    def _update(self, arm: int, value: float, eps: float) -> None:
        cfg = self.config
        _tell(self.n, self.total, cfg.low, cfg.high, arm, value)

    def stepper(self) -> KLUCBStepper:
        """This policy's rounds as one compiled loop (``qbo.algorithms.compiled``)."""
        return KLUCBStepper(self)


class KLUCBStepper:
    """``KLUCB``'s ask / tell loop on its own arrays ``n`` and ``total`` (a ``Stepper``);
    the round number is the policy's ``t`` plus the rounds run here."""

    def __init__(self, policy: KLUCB) -> None:
        self.policy = policy
        self.rounds = policy.t
        self._work = (np.empty(policy.num_arms), np.empty(policy.num_arms), np.empty(policy.num_arms))

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        p, cfg = self.policy, self.policy.config
        _rounds(count, self.rounds, cfg.c, cfg.low, cfg.high, p.n, p.total, *self._work,
                table.p_first, table.first, table.second, rng, arms, values)
        self.rounds += count

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        cfg = self.policy.config
        _tell_rounds(self.policy.n, self.policy.total, cfg.low, cfg.high, arms, values)
        self.rounds += arms.shape[0]

    def statistics(self) -> dict[str, Any]:
        return {"n": self.policy.n.tolist(), "total": self.policy.total.tolist()}

    def restore(self, state: dict[str, Any]) -> None:
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
            index: np.ndarray, z: np.ndarray, z_low: np.ndarray, p_first: np.ndarray, first: np.ndarray,
            second: np.ndarray, rng: np.random.Generator, arms: np.ndarray, values: np.ndarray) -> None:
    """``count`` rounds of KL-UCB from round ``done + 1``: play the first argmax of the index."""
    for k in range(count):
        kl_index(done + k + 1, c, n, total, index, z, z_low)
        arm, best = 0, -math.inf
        for i in range(n.shape[0]):
            if index[i] > best:
                arm, best = i, index[i]
        y = draw_reward(rng, p_first[arm], first[arm], second[arm])
        _tell(n, total, low, high, arm, y)
        arms[k], values[k] = arm, y
