"""Iterative amplitude estimation (Grinko, Gacon, Zoufal, Woerner 2021, Algorithm 1).

Written on qbo's executor interface. Notation: a = sin^2(theta), K = 4k + 2, and a shot of
Q^k A reads 1 with probability p_k = sin^2((2k+1) theta) = (1 - cos(K theta)) / 2. The
schedule (powers, shots, levels) is ``qbo.qmc.iae_engine``; the intervals of all rounds are
intersected and the loop stops once the amplitude interval is at most 2 epsilon wide.

Failure probability, ``alpha_split='spend'`` (default): alpha spending. Each round's level
alpha_i and shots are fixed from the past rounds only and its Clopper-Pearson (or
Hoeffding) interval uses only its own fresh shots, so by the union bound
P(some round misses) <= sum_i alpha_i <= alpha. ``'uniform'`` (alpha / T per round, Grinko
et al. Sec. 3) and ``'geometric'`` (alpha_i proportional to K_i, Fukuzawa et al. 2023) keep
a fixed shot count and pool repeated rounds at one K.

Mitigation (``mitigation``, a ``qbo.qmc.rounds.ProbabilityEstimator``): each round asks the
bound estimator for an interval of the ideal p_k at the round's level and records every
circuit it ran (folded circuits count scale (2k + 1) calls per shot).

Cost model (``expected_calls``): the schedule run on 16 amplitudes (j + 1/2) / 16 with
every round reading its expected counts, deterministic and cached per (configuration,
eps), as Dai et al. 2023 (Alg. 1 line 5) need to plan a stage. docs/iae.md has the
derivations (shot sizing, the depth cap, the cost tail).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, replace
from typing import Literal

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import (
    CostCache, budget_note, check_accuracy, run_round, to_estimate, unit_epsilon, without_device_model,
)
from qbo.qmc.confidence import METHODS
from qbo.qmc.iae_engine import Plan, State
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.progress import Tracker
from qbo.qmc.result import Estimate, Round
from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator

from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator

SPLITS = ("spend", "uniform", "geometric")
Sampler = Callable[[int, int], Round]


@dataclass(frozen=True)
class IterativeAmplitudeEstimation:
    """IAE to half-width ``epsilon`` (reward units) with probability >= 1 - ``alpha``.

    Args:
        epsilon: target half-width of the interval, in reward units.
        alpha: failure probability.
        shots: least shots per intermediate round ('spend' sizes them, and doubles them when K
            cannot grow; see docs/iae.md). The 'uniform' and 'geometric' splits need a
            fixed count and use 100 when None.
        confidence: 'beta' (Clopper-Pearson) or 'chernoff'.
        min_ratio: each new K is at least this multiple of the last.
        k_max: optional cap on the Grover power (e.g. from a device's coherence).
        alpha_split: 'spend' (default), 'uniform' (Grinko et al.) or 'geometric'.
        max_rounds: hard cap on rounds; None derives it from epsilon.
        final_share: share of alpha kept for the rounds planned to finish ('spend').
        growth: intermediate rounds are sized so that K can grow by this factor ('spend').
        final_factor: a round is final if it needs <= this times an intermediate's shots.
        final_safety: final rounds take this times the plug-in shot count.
        mitigation: optional ``qbo.mitigation`` probability estimator (None: plain rounds).
        max_calls: optional cap on honest oracle calls: a round is cut to the shots that fit
            (its level was fixed from the past, so the union bound still holds) and the
            loop stops when none fit, with the honest interval and reached_epsilon False.
    """

    epsilon: float
    alpha: float = 0.05
    shots: int | None = None
    confidence: Literal["beta", "chernoff"] = "beta"
    min_ratio: float = 2.0
    k_max: int | None = None
    alpha_split: Literal["spend", "uniform", "geometric"] = "spend"
    max_rounds: int | None = None
    final_share: float = 0.5
    growth: float = 2.0
    final_factor: float = 2.0
    final_safety: float = 1.0
    mitigation: ProbabilityEstimator | None = None
    max_calls: int | None = None

    def __post_init__(self) -> None:
        check_accuracy(self.epsilon, self.alpha)
        if self.shots is not None and not (isinstance(self.shots, int) and self.shots >= 1):
            raise ValueError(f"shots must be an integer >= 1 or None, got {self.shots}")
        if self.confidence not in METHODS:
            raise ValueError(f"confidence must be one of {sorted(METHODS)}, got '{self.confidence}'")
        if not self.min_ratio > 1:
            raise ValueError(f"min_ratio must be > 1, got {self.min_ratio}")
        if self.k_max is not None and self.k_max < 0:
            raise ValueError(f"k_max must be >= 0, got {self.k_max}")
        if self.alpha_split not in SPLITS:
            raise ValueError(f"alpha_split must be one of {', '.join(SPLITS)}, got '{self.alpha_split}'")
        if self.max_rounds is not None and self.max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {self.max_rounds}")
        if self.max_calls is not None and not (isinstance(self.max_calls, int) and self.max_calls >= 1):
            raise ValueError(f"max_calls must be an integer >= 1 oracle call or None, got {self.max_calls}")
        if not 0 < self.final_share < 1:
            raise ValueError(f"final_share must be in (0, 1), got {self.final_share}")
        for name in ("growth", "final_factor", "final_safety"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        start = time.perf_counter()
        eps = unit_epsilon(oracle, self.epsilon)
        probe = None if self.mitigation is None else self.mitigation.bind(executor, oracle)
        method = "iae" if self.mitigation is None else f"iae+{self.mitigation.name}"
        tracker = Tracker(method, lambda: self.expected_calls(eps))
        rounds, state = self._run(eps, lambda k, n: run_round(executor, oracle, k, n), probe, on_rounds=tracker.add)
        a_low, a_high = state.amplitude_interval()
        est = to_estimate(
            oracle, a_low, a_high, 0.5 * (a_low + a_high),
            epsilon=self.epsilon, alpha=self.alpha, rounds=tuple(rounds),
            wall_time=time.perf_counter() - start, method=method, target=executor.target,
            reached_epsilon=a_high - a_low <= 2 * eps * (1 + 1e-9),
        )
        if state.budget_bound and not est.reached_epsilon and self.max_calls is not None:
            est = replace(est, note=budget_note(self.max_calls), diagnostics={"budget_bound": True})
        if self.mitigation is not None and self.mitigation.covers_device_bias:
            return est
        return without_device_model(est, executor.target)

    def planned_calls(self, oracle: Oracle) -> float:
        """The cost model for ``oracle`` (Dai et al. 2023, Alg. 1 line 5 plans a stage with it)."""
        return self.expected_calls(unit_epsilon(oracle, self.epsilon))

    def expected_calls(self, epsilon_unit: float) -> float:
        """Cost model: the mean oracle calls of the schedule this configuration runs when every
        round reads its expected count of ones, round(N p_k), over amplitudes (j + 1/2) / 16;
        with a mitigation, the mitigated schedule and its folded calls (docs/iae.md).
        Cached; the key is the configuration with its mitigation made explicit."""
        if self.mitigation is None:
            return _expected_calls(self, None, float(epsilon_unit))
        key, model = self.mitigation.cost_model()
        return _expected_calls(replace(self, mitigation=None), key, float(epsilon_unit), model)

    def _run(
        self, eps: float, sample: Sampler, probe: RoundEstimator | None = None, plan: Plan | None = None,
        on_rounds: Callable[[tuple[Round, ...]], None] | None = None,
    ) -> tuple[list[Round], State]:
        """The rounds and final state of one schedule; ``plan`` (``Plan.make(self, eps, ...)``)
        may be passed in when several schedules share it (the cost model's amplitudes);
        ``on_rounds`` hears every round as it runs (progress)."""
        if plan is None:
            plan = Plan.make(self, eps, probe)
        state = State(self.alpha, self.final_share)
        rounds: list[Round] = []
        done = 0
        while state.width > 2 * eps and done < plan.max_rounds:
            k = state.next_k(plan) if done else 0
            done += 1
            if probe is not None:
                ran = self._mitigated_round(plan, state, probe, k, rounds)
                if ran is None:
                    break
            elif self.alpha_split == "spend":
                decision = plan.spend(state, k)
                if decision is None:  # eps out of reach at this depth: stop before spending
                    break
                shots, alpha_i = decision
                cut = self._within(k, shots, rounds, None)
                state.budget_bound |= cut < shots
                shots = cut
                if shots < 1:  # the call cap is spent
                    break
                rnd = sample(k, shots)
                state.update_fresh(rnd, alpha_i, plan)
                ran = (rnd,)
            else:
                shots = self._within(k, plan.shots_at(k), rounds, None)
                state.budget_bound |= shots < plan.shots_at(k)
                if shots < 1:
                    break
                rnd = sample(k, shots)
                state.update_pooled(rnd, plan)
                ran = (rnd,)
            rounds.extend(ran)
            if on_rounds is not None:
                on_rounds(ran)
        return rounds, state

    def _within(self, k: int, shots: int, rounds: list[Round], probe: RoundEstimator | None) -> int:
        """The most shots, up to ``shots``, of a round at power k whose honest calls (folded
        ones at their scale) fit in what ``max_calls`` leaves after ``rounds``."""
        if self.max_calls is None:
            return shots
        room = self.max_calls - sum(r.oracle_calls for r in rounds)

        def calls(n: int) -> int:
            per_shot = n if probe is None else sum(m * s for m, s in zip(probe.shots_per_scale(n), probe.scales))
            return per_shot * (2 * k + 1)

        if calls(shots) <= room:
            return shots
        low, high = 0, shots  # calls(low) <= room < calls(high); calls is non-decreasing in n
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if calls(mid) <= room else (low, mid)
        return low

    def _mitigated_round(
        self, plan: Plan, state: State, probe: RoundEstimator, k: int, rounds: list[Round]
    ) -> tuple[Round, ...] | None:
        """One round through a mitigation: a fresh interval at this round's level (None: stop,
        as ``Plan.spend`` decides, or the call cap is spent)."""
        if self.alpha_split == "spend":
            decision = plan.spend(state, k)
            if decision is None:
                return None
            shots, alpha_i = decision
        else:
            shots, alpha_i = plan.shots_at(k), plan.round_alpha(k, state.next_repeat(k))
            state.alphas.append(alpha_i)
        cut = self._within(k, shots, rounds, probe)
        state.budget_bound |= cut < shots
        shots = cut
        if shots < 1:
            return None
        result = probe.estimate(k, shots, alpha_i)
        state.update_interval(k, shots, result.p_low, result.p_high)
        return result.rounds


_COSTS = CostCache(name="qbo.qmc.iae.costs")


def _expected_calls(
    config: IterativeAmplitudeEstimation, key: Hashable, eps: float, model: RoundEstimator | None = None
) -> float:
    """Mean calls over 16 amplitudes of the (mitigated, if ``model``) schedule; cached per
    (configuration without its mitigation, the mitigation's cost key, eps)."""
    for record in _RECORDERS:
        record(config, key, eps)
    def make_calls_at() -> Callable[[float], int]:
        plan = Plan.make(config, eps, model)  # shared by the amplitudes (the probes' plug_in is the model's)

        def calls_at(theta: float) -> int:
            probe = None if model is None else _ExpectedProbe(model, theta)
            rounds, _ = config._run(eps, _expected_sampler(theta), probe, plan)
            return sum(r.oracle_calls for r in rounds)

        return calls_at

    return _COSTS.mean_calls((config, key, eps), make_calls_at)


def expected_rounds(config: IterativeAmplitudeEstimation, eps: float, theta: float) -> tuple[Round, ...]:
    """The rounds ``config`` runs to half-width ``eps`` (unit scale) at amplitude sin^2 theta
    when every round reads its expected count of ones (the cost model's schedule, its
    mitigation's plug-in intervals included): the design, without an executor."""
    probe = None if config.mitigation is None else _ExpectedProbe(config.mitigation.cost_model()[1], theta)
    rounds, _ = config._run(eps, _expected_sampler(theta), probe)
    return tuple(rounds)


def _expected_sampler(theta: float) -> Sampler:
    def sample(k: int, shots: int) -> Round:
        p = math.sin((2 * k + 1) * theta) ** 2
        return Round(k=k, shots=shots, ones=round(shots * p))

    return sample


@dataclass(frozen=True)
class _Expected:
    """What a mitigated round reports when every circuit reads its expected counts."""

    p_low: float
    p_high: float
    rounds: tuple[Round, ...]


class _ExpectedProbe:
    """A bound mitigation's plug-in interval and shot split at a fixed theta (cost model)."""

    def __init__(self, bound: RoundEstimator, theta: float) -> None:
        self.bound, self.theta = bound, theta

    @property
    def scales(self) -> tuple[int, ...]:
        return tuple(self.bound.scales)

    def shots_per_scale(self, shots: int) -> list[int]:
        return self.bound.shots_per_scale(shots)

    def plug_in(self, k: int, p: float, shots: int, alpha: float) -> tuple[float, float]:
        return self.bound.plug_in(k, p, shots, alpha)

    def estimate(self, k: int, shots: int, alpha: float) -> _Expected:
        p = math.sin((2 * k + 1) * self.theta) ** 2
        low, high = self.bound.plug_in(k, p, shots, alpha)
        per_scale = self.bound.shots_per_scale(shots)
        rounds = tuple(Round(k=k, shots=n, ones=round(n * p), scale=s) for s, n in zip(self.bound.scales, per_scale))
        return _Expected(low, high, rounds)


CostQuery = tuple[IterativeAmplitudeEstimation, Hashable, float]
_RECORDERS: list[Callable[[IterativeAmplitudeEstimation, Hashable, float], None]] = []


@contextlib.contextmanager
def recording_cost_queries() -> Iterator[list[CostQuery]]:
    """Collect every (configuration, mitigation cost key, eps) the cost model is asked for
    inside the block, cached or not (bench/speed.py replays them cold)."""
    seen: list[CostQuery] = []
    _RECORDERS.append(lambda config, key, eps: seen.append((config, key, eps)))
    try:
        yield seen
    finally:
        _RECORDERS.pop()
