"""One (trial, algorithm) run: the stage loop of Alg. 1 with per-call regret, for every problem.

Dai et al. 2023, Alg. 1 and Sec. 3.2: a stage s queries arm x_s; a quantum policy's stage
runs QMC(O_{x_s}, eps_s, alpha_s), a classical policy's stage draws one sample (one oracle
call). Every oracle call spent in stage s adds r_s = f(x*) - f(x_s) to the cumulative regret.

Stopping (line 5): before a stage runs, its cost is predicted with the estimator's own cost
model (for IAE the realised count is adaptive, so N_eps is a prediction); if the predicted
total exceeds T the loop stops. A stage whose realised cost overruns T is charged only up to
T: regret is reported at T. With ``leftover="recommend"`` the calls left after the stop are
charged at the gap of the policy's recommended arm (what a user would then play); with
``"stop"`` they are not charged, as in the paper's R_T over the queries actually made.

Weights (Eq. (3)): ``weights="requested"`` (the paper) weighs a stage's estimate by
1/eps_s^2 with the eps_s the policy asked for; ``"achieved"`` uses the half-width of the
interval QMC actually returned, which is valid for the same failure probability and often
narrower (IAE's last round rarely lands exactly on eps). It breaks the doubling identity of
App. D, so the theory beta no longer follows from it; measured in bench/regret.py. Under
either, a stage whose estimate did not reach eps_s (``reached_epsilon`` False: out of reach
on the device model) is weighed by the half-width it reached, never by eps_s.

Clocks (``qbo.experiments.clock``): what a stage's calls cost in regret, how long it takes and
what the oracle of an arm is *now* differ between a static problem and a drifting one
(Imamura et al., seed 000: non-constant evaluation time); the loop itself is the same.  A
clock's initial design (the seed's random initial rounds) is played before the policy is
asked; those records have method ``init``.  Time-aware policies are told each stage's
elapsed time and honest calls.

Resumable queries (``Query.resume`` set: q-ucb-halve, q-se, q-gp-ucb with resume): the stage
continues the arm's resumed estimate to eps_s instead of starting a new QMC (LRAE's
``qbo.qmc.lrae.LRState`` under estimator 'auto' or 'lrae', IAE's
``qbo.qmc.resumable.ResumableState`` under 'iae': ``qbo.qmc.auto.resumed_kind``; an arm's
blank state takes that kind at its first visit); the line-5 prediction is that refinement's own cost model, only the new shots are
charged (2k + 1 each), the policy is told the query with ``resume`` replaced by the refined
state, and the stage record carries it as ``"qmc"`` (JSON). Needs no mitigation. A
non-resumed stage runs ``qbo.qmc.auto.choose_method`` of the configured estimator.

Zero-call stages: a resumed stage whose arm already meets eps_s spends no call (its state
comes back unchanged). The policy is told it; if it then asks the very same query again, no
stage can change anything and the loop would never end, so it stops there as at line 5 (the
rest is charged at ``recommend()``). The guard is part of where a unit stands (``Progress.idle``:
the query told after a zero-call stage), so a resumed unit stops where an uninterrupted one
does. ``q-gp-ucb`` with resume never asks such a repeat (an arm final at its floor ends the
run: ``qbo.algorithms.q_gp_ucb_resume``); the guard holds for any policy.

Under ``accounting="reference"`` only the charge changes: the line-5 prediction still uses
the estimator's honest cost model, so such a run stops earlier than the authors' code would
(their count being lower). It reproduces their accounting of what was spent, not their
stopping point.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from qbo.algorithms.base import PolicyBase, Query
from qbo.algorithms.gp_ucb import GPUCBLockstep
from qbo.execution.base import ClassicalSourced, Executor
from qbo.experiments.accounting import charged_calls
from qbo.experiments.clock import Clock, FixedClock
from qbo.experiments.records import STAGE_KEYS, TIMED_KEYS
from qbo.noise import Snapshot
from qbo.problems.base import Problem
from qbo.qmc import make_estimator
from qbo.qmc.base import unit_epsilon
from qbo.qmc.auto import choose_method, resumed_kind
from qbo.qmc.resumable import arm_refine_calls, as_kind, refine_arm


@dataclass
class Progress:
    """Where a unit stands: stages done, calls charged, regret accrued (None: the problem's
    exact means are unknown, so regret is undefined), and ``idle``: the query the policy was
    told after the last stage if that stage spent no oracle call (the zero-call guard of
    ``run_stages``; a resume rebuilds it from the journal's last stage, ``qbo.experiments.runner``)."""

    stage: int = 0
    calls: int = 0
    regret: float | None = 0.0
    idle: Query | None = None


@dataclass(frozen=True)
class StageSettings:
    """How stages are measured and charged; ``mitigation`` is a qbo.mitigation.Mitigation."""

    budget: int
    estimator: str = "auto"
    accounting: str = "honest"
    leftover: str = "recommend"
    mitigation: Any = None
    weights: str = "requested"
    snapshot: Snapshot | None = None  # the target's device model: IAE's depth is capped by it


def run_stages(
    problem: Problem | None, policy: PolicyBase, executor: Executor, settings: StageSettings,
    start: Progress | None = None, *, clock: Clock | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one record per stage until the budget or the stopping rule ends the run.

    ``clock`` defaults to ``FixedClock(problem)`` (a static problem).  A policy that can run
    out of stages (``exhausted``, e.g. ``qbo.algorithms.staged``) defines it on its class."""
    clock = clock if clock is not None else FixedClock(problem)
    at = start or Progress()
    budget, design, timed = settings.budget, clock.design, clock.timed
    may_exhaust = not isinstance(policy, PolicyBase) or hasattr(type(policy), "exhausted")
    source = _classical_source(executor)
    while at.calls < budget:
        init = at.stage < len(design)
        if init:
            query = Query(design[at.stage], None, None)
        else:
            query = policy.ask()
            if may_exhaust and getattr(policy, "exhausted", False):
                break
            if at.idle is not None and replace(query, horizon=None) == at.idle:  # a zero-call stage asked
                break  # again would repeat forever: stop as at line 5
        if query.epsilon is None:  # one classical sample, one oracle call
            value = clock.sample(query.arm, source)
            charged = honest = 1
            method, weight_eps, wall, told = "sample", None, 0.0, query
        else:
            outcome = _measure(clock, executor, query, settings, budget_left=budget - at.calls)
            if outcome is None:  # line 5: the predicted cost does not fit in the budget
                break
            value, charged, honest, method, weight_eps, wall, told = outcome
            charged = min(charged, budget - at.calls)
        at.idle = replace(told, horizon=None) if honest == 0 else None  # the journal keeps no horizon off timed clocks
        elapsed, regret = clock.stage(query.arm, charged, honest, wall)
        policy.tell(told, value, epsilon=weight_eps, elapsed=elapsed, calls=honest)
        record = _record(at, query.arm, query.epsilon, "init" if init else method, charged, honest, value, regret,
                         weight_eps)
        if told.resume is not None:
            record["qmc"] = told.resume.to_json()
        if timed:
            record |= _timing(clock, regret, charged, elapsed, query.horizon)
        yield record
    if settings.leftover == "recommend" and at.calls < budget:
        arm = int(policy.recommend())
        left = budget - at.calls
        elapsed, regret = clock.exploit(arm, left)
        record = _record(at, arm, None, "exploit", left, left, None, regret, None)
        yield record | _timing(clock, regret, left, elapsed, None)


def run_lockstep(
    clocks: list[Clock], policies: GPUCBLockstep, executors: list[Executor], settings: StageSettings,
    starts: list[Progress],
) -> Iterator[list[dict[str, Any]]]:
    """``run_stages`` for B classical units in lockstep: yields, stage by stage, the list of
    the B records each unit's own ``run_stages`` would yield (the same records, bit for bit).

    For one-call stages only (``GPUCBLockstep``: every stage draws one sample, so a unit ends
    at its budget exactly and has no exploit stage), on clocks without an initial design or
    time (a static problem), all units at the same number of calls."""
    sizes = {len(clocks), len(policies.policies), len(executors), len(starts)}
    if len(sizes) != 1:
        raise ValueError(f"a lockstep needs one clock, policy, executor and start per unit, got {len(clocks)}, "
                         f"{len(policies.policies)}, {len(executors)} and {len(starts)}")
    if len({at.calls for at in starts}) > 1:
        raise ValueError(f"a lockstep needs units at one number of calls, got {sorted({at.calls for at in starts})[:8]}")
    if any(clock.design or clock.timed for clock in clocks):
        raise ValueError("a lockstep needs static clocks (no initial design, no time), got a drifting problem's clock")
    sources = [_classical_source(executor) for executor in executors]
    units = list(zip(clocks, sources, starts))
    calls = starts[0].calls if starts else settings.budget
    while calls < settings.budget:
        arms = policies.ask()
        values = [clock.sample(arm, source) for arm, (clock, source, _) in zip(arms, units)]
        policies.tell(arms, values)
        records = []
        for arm, value, (clock, _, at) in zip(arms, values, units):
            _, regret = clock.stage(arm, 1, 1, 0.0)
            records.append(_record(at, arm, None, "sample", 1, 1, value, regret, None))
        calls += 1
        yield records


def _classical_source(executor: Executor) -> Any:
    """What a classical sample draws from: on hardware the reward model, never the QPU (issue 11)."""
    return executor.classical_source if isinstance(executor, ClassicalSourced) else executor


def _measure(
    clock: Clock, executor: Executor, query: Query, settings: StageSettings, budget_left: int
) -> tuple[float, int, int, str, float | None, float, Query] | None:
    """A QMC stage (``query.epsilon`` set): (value, charged calls, honest calls, method, eps of
    the observation's weight, wall s, the query to tell: for a resumable query, ``resume``
    holds the refined state); None if line 5 stops the run."""
    oracle = clock.oracle(query.arm)
    eps_unit = unit_epsilon(oracle, query.epsilon)
    if query.resume is not None:  # continue the arm's estimate (qbo.qmc.resumable)
        if settings.mitigation is not None:
            raise ValueError("resumable QMC runs without mitigation, got a mitigation")
        start = as_kind(query.resume, resumed_kind(settings.estimator))
        if arm_refine_calls(start, eps_unit) > budget_left:
            return None
        estimate, state = refine_arm(start, oracle, executor, query.epsilon)
        query = replace(query, resume=state)
    else:
        method = choose_method(settings.estimator, executor.target, mitigation=settings.mitigation is not None, run=True)
        estimator = make_estimator(method, query.epsilon, query.alpha, mitigation=settings.mitigation,
                                   snapshot=settings.snapshot)
        if estimator.planned_calls(oracle) > budget_left:
            return None
        estimate = estimator.estimate(oracle, executor)
    charged = charged_calls(settings.accounting, estimate, eps_unit)
    weight_eps = query.epsilon if settings.weights == "requested" else max(estimate.half_width, 1e-12)
    if not estimate.reached_epsilon:  # eps_s out of reach: weigh by the half-width reached (issue 9, item 6)
        weight_eps = max(weight_eps, estimate.half_width)
    return estimate.value, charged, estimate.oracle_calls, estimate.method, weight_eps, estimate.wall_time, query


def _record(
    at: Progress, arm: int, eps: float | None, method: str,
    charged: int, honest: int, value: float | None, regret: float | None, weight_eps: float | None,
) -> dict[str, Any]:
    """Advance ``at`` by one stage and return its record: the stage loop's fields of
    ``qbo.experiments.records.STAGE_FIELDS``, in the line's order."""
    at.stage += 1
    at.calls += charged
    at.regret = None if regret is None or at.regret is None else at.regret + regret
    return dict(zip(STAGE_KEYS, (at.stage, arm, eps, method, charged, honest, value, at.calls, at.regret, weight_eps)))


def _timing(clock: Clock, regret: float, calls: int, elapsed: float | None, horizon: float | None) -> dict[str, Any]:
    """A timed clock's fields: per-call regret of the stage, its elapsed time, the clock after
    it and the horizon the acquisition assumed."""
    if not clock.timed:
        return {}
    return dict(zip(TIMED_KEYS, (regret / max(calls, 1), elapsed, clock.time(), horizon)))
