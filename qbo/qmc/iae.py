"""Iterative amplitude estimation (Grinko, Gacon, Zoufal, Woerner 2021, Algorithm 1).

Written on qbo's executor interface. Notation: a = sin^2(theta), K = 4k + 2, and a shot of
Q^k A reads 1 with probability p_k = sin^2((2k+1) theta) = (1 - cos(K theta)) / 2.

Each round picks the largest K <= pi / (theta_u - theta_l) (at least ``min_ratio`` times
the last one) for which K [theta_l, theta_u] stays inside one half period, so the round's
interval for p_k maps back to an interval for theta. The loop stops once the amplitude
interval is at most 2 epsilon wide.

Failure probability (union bound over every interval a round computes):
- ``alpha_split='uniform'``: alpha / T per round, T = ceil(log2(pi / (8 eps))), as in
  Grinko et al. Sec. 3 (and qiskit-algorithms).
- ``alpha_split='geometric'`` (default): a round at K gets alpha * K / K_sum * 6 / (pi^2 j^2),
  j the repeat count at that K. Distinct K grow by at least ``min_ratio`` = r and never exceed
  K_bound = pi / (2 eps) (the loop runs only while theta_u - theta_l > 2 eps), so
  sum K <= K_bound * r / (r - 1) =: K_sum, and the repeats sum to 1: total failure <= alpha.
  The expensive deep rounds get most of alpha, like modified IAE (Fukuzawa et al. 2023).

Termination: every iteration is a round and the loop is capped at ``max_rounds`` (default
4 * (log_r(K_bound) + 2)); the inner search for K decreases K by 4 each step. If the cap
is hit the estimate is returned with its honest, wider interval and reached_epsilon=False.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Literal

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import check_accuracy, run_round, to_estimate, unit_epsilon
from qbo.qmc.confidence import METHODS, interval
from qbo.qmc.result import Estimate, Round

TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class IterativeAmplitudeEstimation:
    """IAE to half-width ``epsilon`` (reward units) with probability >= 1 - ``alpha``.

    Args:
        epsilon: target half-width of the interval, in reward units.
        alpha: failure probability.
        shots: shots per round (rounds at large K shoot fewer, Grinko's no-overshooting rule).
        confidence: 'beta' (Clopper-Pearson) or 'chernoff'.
        min_ratio: each new K is at least this multiple of the last.
        k_max: optional cap on the Grover power (e.g. from a device's coherence).
        alpha_split: 'geometric' (default) or 'uniform' (Grinko et al.), see module docstring.
        max_rounds: hard cap on rounds; None derives it from epsilon.
    """

    epsilon: float
    alpha: float = 0.05
    shots: int = 100
    confidence: Literal["beta", "chernoff"] = "beta"
    min_ratio: float = 2.0
    k_max: int | None = None
    alpha_split: Literal["geometric", "uniform"] = "geometric"
    max_rounds: int | None = None

    def __post_init__(self) -> None:
        check_accuracy(self.epsilon, self.alpha)
        if not (isinstance(self.shots, int) and self.shots >= 1):
            raise ValueError(f"shots must be an integer >= 1, got {self.shots}")
        if self.confidence not in METHODS:
            raise ValueError(f"confidence must be one of {sorted(METHODS)}, got '{self.confidence}'")
        if not self.min_ratio > 1:
            raise ValueError(f"min_ratio must be > 1, got {self.min_ratio}")
        if self.k_max is not None and self.k_max < 0:
            raise ValueError(f"k_max must be >= 0, got {self.k_max}")
        if self.alpha_split not in ("geometric", "uniform"):
            raise ValueError(f"alpha_split must be 'geometric' or 'uniform', got '{self.alpha_split}'")

    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        start = time.perf_counter()
        plan = _Plan.make(self, unit_epsilon(oracle, self.epsilon))
        rounds: list[Round] = []
        state = _State()
        while state.width > 2 * plan.eps and len(rounds) < plan.max_rounds:
            k = state.next_k(plan) if rounds else 0
            state.k = k
            rnd = run_round(executor, oracle, k, plan.shots_at(k))
            rounds.append(rnd)
            state.update(rnd, plan)
        a_low, a_high = state.amplitude_interval()
        return to_estimate(
            oracle, a_low, a_high, 0.5 * (a_low + a_high),
            epsilon=self.epsilon, alpha=self.alpha, rounds=tuple(rounds),
            wall_time=time.perf_counter() - start, method="iae", target=executor.target,
            reached_epsilon=a_high - a_low <= 2 * plan.eps * (1 + 1e-9),
        )


@dataclass(frozen=True)
class _Plan:
    """Derived, per-estimate constants."""

    config: IterativeAmplitudeEstimation
    eps: float
    k_bound: float
    max_rounds: int
    stages: int
    l_max: float

    @classmethod
    def make(cls, cfg: IterativeAmplitudeEstimation, eps: float) -> "_Plan":
        k_bound = math.pi / (2 * eps)
        if cfg.k_max is not None:
            k_bound = min(k_bound, 4 * cfg.k_max + 2)
        stages = max(1, math.ceil(math.log2(math.pi / (8 * eps)))) if eps < math.pi / 16 else 1
        depth = math.log(max(k_bound, 2.0) / 2.0) / math.log(cfg.min_ratio)
        max_rounds = cfg.max_rounds or 4 * (math.ceil(depth) + 2)
        l_max = math.asin((2.0 / cfg.shots * math.log(2 * stages / cfg.alpha)) ** 0.25) if cfg.shots > 2 * math.log(2 * stages / cfg.alpha) else math.pi / 2
        return cls(cfg, eps, k_bound, max_rounds, stages, l_max)

    def shots_at(self, k: int) -> int:
        """Grinko's no-overshooting rule: fewer shots once K exceeds L_max / eps."""
        big_k = 4 * k + 2
        if big_k > math.ceil(self.l_max / self.eps):
            return max(1, math.ceil(self.config.shots * self.l_max / self.eps / big_k / 10))
        return self.config.shots

    def round_alpha(self, k: int, repeat: int) -> float:
        cfg = self.config
        if cfg.alpha_split == "uniform":
            return cfg.alpha / self.stages
        r = cfg.min_ratio
        k_sum = max(self.k_bound, 2.0) * r / (r - 1)
        return cfg.alpha * (4 * k + 2) / k_sum * 6 / (math.pi**2 * repeat**2)


class _State:
    """theta interval, current power and the shots pooled at that power."""

    def __init__(self) -> None:
        self.theta_low, self.theta_high = 0.0, math.pi / 2
        self.k, self.up = 0, True
        self.pooled_k, self.pooled_shots, self.pooled_ones, self.repeat = -1, 0, 0, 0

    @property
    def width(self) -> float:
        low, high = self.amplitude_interval()
        return high - low

    def amplitude_interval(self) -> tuple[float, float]:
        return math.sin(self.theta_low) ** 2, math.sin(self.theta_high) ** 2

    def next_k(self, plan: _Plan) -> int:
        k, self.up = find_next_k(self.k, self.theta_low, self.theta_high, self.up, plan.config.min_ratio, plan.k_bound)
        return k

    def update(self, rnd: Round, plan: _Plan) -> None:
        if rnd.k != self.pooled_k:
            self.pooled_k, self.pooled_shots, self.pooled_ones, self.repeat = rnd.k, 0, 0, 0
        self.pooled_shots += rnd.shots
        self.pooled_ones += rnd.ones
        self.repeat += 1
        alpha_i = plan.round_alpha(rnd.k, self.repeat)
        p_low, p_high = interval(plan.config.confidence, self.pooled_ones, self.pooled_shots, alpha_i)
        low, high = theta_interval(rnd.k, p_low, p_high, self.theta_low, self.up)
        new_low, new_high = max(low, self.theta_low), min(high, self.theta_high)
        if new_low > new_high:  # a confidence failure elsewhere; trust the fresh interval
            new_low, new_high = low, high
        self.theta_low, self.theta_high = new_low, new_high


def find_next_k(
    k: int, theta_low: float, theta_high: float, up: bool, min_ratio: float, k_bound: float
) -> tuple[int, bool]:
    """Largest K = 4k'+2 <= min(pi / width, k_bound), K >= min_ratio (4k+2), keeping
    K [theta_low, theta_high] inside one half period (Grinko et al., Algorithm 2)."""
    current = 4 * k + 2
    width = theta_high - theta_low
    if width <= 0:
        return k, up
    big_k = int(min(math.pi / width, k_bound))
    big_k -= (big_k - 2) % 4
    while big_k >= min_ratio * current:
        low, high = (big_k * theta_low) % TWO_PI, (big_k * theta_high) % TWO_PI
        if low <= high <= math.pi:
            return (big_k - 2) // 4, True
        if math.pi <= low <= high:
            return (big_k - 2) // 4, False
        big_k -= 4
    return k, up


def theta_interval(k: int, p_low: float, p_high: float, theta_low: float, up: bool) -> tuple[float, float]:
    """Map an interval for p_k = (1 - cos(K theta)) / 2 back to theta, given the half period."""
    big_k = 4 * k + 2
    period = math.floor(big_k * theta_low / TWO_PI)
    angle_low, angle_high = math.acos(1 - 2 * p_low), math.acos(1 - 2 * p_high)
    if not up:
        angle_low, angle_high = TWO_PI - angle_high, TWO_PI - angle_low
    return (period * TWO_PI + angle_low) / big_k, (period * TWO_PI + angle_high) / big_k
