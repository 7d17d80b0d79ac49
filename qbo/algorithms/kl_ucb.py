"""``kl-ucb``: Bernoulli KL-UCB (Garivier & Cappé 2011, "The KL-UCB algorithm for bounded
stochastic bandits and beyond", COLT, Alg. 1 with the Bernoulli divergence).

Round t: every arm is played once (lowest index first); then play the argmax of

    U_i(t) = max { q in [p_i, 1] : n_i kl(p_i, q) <= log t + c log log t },

kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q)), p_i the mean of arm i's rewards rescaled to
[0, 1] by the window (``low``, ``high``). Garivier & Cappé prove their regret bound for
c = 3 and recommend c = 0 in practice (Sec. 6); ``c`` defaults to 0. The root is found by
Newton's method in logit(q) from the Pinsker bound p + sqrt(d / (2 n)) >= U (``kl_upper``).

The policy computes its index with ``qbo.algorithms.kl_ucb_kernel.kl_index``, the same Newton
iteration over scalars (each arm iterated until its own g <= tol), and ``stepper()`` runs the
rounds as one compiled loop (``qbo.algorithms.compiled``) that plays the same argmax computing
only the arms that can reach it. It uses libm's log
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
        z = np.maximum(z_low, z - np.where(g > tol, g / np.maximum(q - p, _CLIP), 0.0))  # each to its own tol
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
        from qbo.algorithms.kl_ucb_kernel import kl_index  # numba is imported where it is used

        out = np.empty(self.num_arms)
        kl_index(t, self.config.c, self.n, self.total, out)
        return out

    def recommend(self) -> int:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(self.n > 0, self.total / np.maximum(self.n, 1), -np.inf)
        return argmax_lowest(mean)

    def _select(self) -> Query:
        return Query(argmax_lowest(self.index(self.t + 1)), None, None)

    def _update(self, arm: int, value: float, eps: float) -> None:
        cfg = self.config
        self.n[arm] += 1
        self.total[arm] += min(1.0, max(0.0, (value - cfg.low) / (cfg.high - cfg.low)))

    def stepper(self) -> Any:
        """This policy's rounds as one compiled loop (``qbo.algorithms.kl_ucb_kernel``)."""
        from qbo.algorithms.kl_ucb_kernel import KLUCBStepper  # numba is imported where it is used

        return KLUCBStepper(self)
