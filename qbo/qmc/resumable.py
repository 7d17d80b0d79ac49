"""Resumable amplitude estimation: an IAE estimate that can be continued to a smaller eps.

A :class:`ResumableState` is a plain value: the theta interval of everything measured so
far, the Grover power and half-period side IAE stands at, every round run (power, shots,
ones) with the level alpha_i its interval used, and the number j of refinements that ran.
``refine(state, eps, sample)`` continues it to amplitude half-width ``eps``: it runs qbo's
IAE alpha-spending schedule (``qbo.qmc.iae``, ``alpha_split='spend'``) *from the carried
interval and power*, so nothing measured is thrown away, and it returns only the new
rounds, which are all that a caller charges (``Round.oracle_calls``: shots (2k + 1)).

Confidence across resumptions (the failure budget is split over refinements).
Let ``alpha`` be the state's total budget and alpha_j = alpha 6 / (pi^2 j^2), so that
S_j = sum_{i <= j} alpha_i / alpha < 1 for every j. The j-th refinement that runs rounds may
spend B_j = alpha S_j - (levels spent by refinements 1..j-1) (``refinement_budget``: what
earlier refinements left unspent carries forward), and spends it with IAE's rule: before
each of its rounds a level alpha_{j,i} and a shot count are fixed from the past only, the
round's Clopper-Pearson interval uses only its own fresh shots, and sum_i alpha_{j,i} <= B_j
(the spend schedule never overdraws its budget; ``qbo.qmc.iae`` module docstring). So after
refinement j the levels spent in all sum to at most alpha S_j < alpha, for every j. Given
the past, a round's interval misses p_k = sin^2((2k+1) theta) with probability
<= alpha_{j,i}. By the union bound over every round of every refinement,

    P(some round ever misses) <= sum_j sum_i alpha_{j,i} <= alpha sup_j S_j = alpha.

If no round misses, theta lies in every round's interval, hence in their intersection,
which is the carried interval after *every* refinement. So with probability >= 1 - alpha
the intervals reported after all refinements contain the amplitude **simultaneously**
(uniformly over how many refinements are run, and whatever eps sequence an adaptive policy
chooses, since the eps of refinement j is fixed before its shots). When an intersection is
empty a miss has happened (inside alpha); the fresh interval is then kept, as IAE does.

The cost of refining from eps to eps / 2 is about the cost of a fresh IAE at eps / 2 minus
what the carried interval already bought, i.e. a geometric series: resuming a sequence
eps_0, eps_0 / 2, ... costs about one IAE at the last eps (with a slightly smaller level,
log(j^2) more in the log term), where restarting pays the whole series again.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import check_accuracy, run_round, to_estimate, unit_epsilon, without_device_model
from qbo.qmc.confidence import ThetaInterval
from qbo.qmc.iae import IterativeAmplitudeEstimation, Sampler
from qbo.qmc.iae_engine import Plan, State
from qbo.qmc.lrae import LRState
from qbo.qmc.lrae import expected_refine_calls as lr_refine_calls
from qbo.qmc.lrae import refine_estimate as lr_refine_estimate
from qbo.qmc.result import Estimate, Round

__all__ = ["ArmState", "ResumableState", "arm_refine_calls", "arm_state_from_json", "as_kind", "refine_arm",
           "refinement_alpha", "refinement_budget", "refine", "refine_estimate", "expected_refine_calls"]

METHOD = "iae-resumed"


def refinement_alpha(alpha: float, j: int) -> float:
    """Level of the j-th refinement (1-based): ``alpha 6 / (pi^2 j^2)``; they sum to alpha."""
    if j < 1:
        raise ValueError(f"refinement index must be >= 1, got {j}")
    return alpha * 6.0 / (math.pi**2 * j * j)


def refinement_budget(state: "ResumableState", j: int) -> float:
    """Level refinement j may spend: ``alpha S_j - alpha_spent``, S_j = sum_{i<=j} 6/(pi^2 i^2)
    (what earlier refinements left unspent carries forward; module docstring)."""
    cumulative = sum(refinement_alpha(state.alpha, i) for i in range(1, j + 1))
    return max(cumulative - state.alpha_spent, 0.0)


@dataclass(frozen=True)
class ResumableState(ThetaInterval):
    """Everything an amplitude estimate has measured, as a value (JSON via ``to_json``).

    ``theta_low``/``theta_high``: the interval for theta, a = sin^2(theta).  ``k``/``up``:
    the last Grover power and its half-period side (IAE's next-power search starts here).
    ``rounds``: every round run so far; ``levels``: the alpha_i of each.  ``refinements``:
    how many refinements ran rounds (j of the next is this + 1).  ``alpha``: total budget.
    """

    alpha: float
    theta_low: float = 0.0
    theta_high: float = math.pi / 2
    k: int = 0
    up: bool = True
    rounds: tuple[Round, ...] = ()
    levels: tuple[float, ...] = ()
    refinements: int = 0

    def __post_init__(self) -> None:
        check_accuracy(1.0, self.alpha)
        if len(self.rounds) != len(self.levels):
            raise ValueError(f"need one level per round, got {len(self.levels)} for {len(self.rounds)}")

    @property
    def alpha_spent(self) -> float:
        """Sum of the levels of every round run (<= alpha, see the module docstring)."""
        return float(sum(self.levels))

    @property
    def oracle_calls(self) -> int:
        """All calls measured into this state so far (each charged once, when it ran)."""
        return sum(r.oracle_calls for r in self.rounds)

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha, "theta_low": self.theta_low, "theta_high": self.theta_high,
            "k": self.k, "up": self.up, "refinements": self.refinements,
            "rounds": [[r.k, r.shots, r.ones] for r in self.rounds], "levels": list(self.levels),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ResumableState":
        rounds = tuple(Round(int(k), int(n), int(o)) for k, n, o in data["rounds"])
        return cls(float(data["alpha"]), float(data["theta_low"]), float(data["theta_high"]),
                   int(data["k"]), bool(data["up"]), rounds, tuple(float(v) for v in data["levels"]),
                   int(data["refinements"]))


def _config(eps: float, alpha_j: float) -> IterativeAmplitudeEstimation:
    return IterativeAmplitudeEstimation(max(eps, 1e-15), alpha_j)


def refine(state: ResumableState, eps: float, sample: Sampler) -> tuple[ResumableState, tuple[Round, ...]]:
    """Continue ``state`` to amplitude half-width ``eps`` (unit scale); pure given ``sample``.

    ``sample(k, shots) -> Round`` runs shots of Q^k A.  Returns the new state and the new
    rounds only (empty if the carried interval is already within ``eps``).  A refinement
    that cannot reach ``eps`` (IAE's round cap, or its budget) returns the honest, wider
    interval; the caller sees it in ``half_width``.
    """
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps}")
    if state.half_width <= eps * (1 + 1e-9):
        return state, ()
    j = state.refinements + 1
    cfg = _config(eps, refinement_budget(state, j))
    plan = Plan.make(cfg, eps)
    st = State(cfg.alpha, cfg.final_share)
    st.theta_low, st.theta_high, st.k, st.up = state.theta_low, state.theta_high, state.k, state.up
    if state.rounds:
        st.last_k, st.last_shots = state.rounds[-1].k, state.rounds[-1].shots
    new: list[Round] = []
    levels: list[float] = []
    while st.width > 2 * eps and len(new) < plan.max_rounds:
        k = st.next_k(plan) if (state.rounds or new) else 0
        decision = plan.spend(st, k)
        if decision is None:
            break
        shots, alpha_i = decision
        rnd = sample(k, shots)
        st.update_fresh(rnd, alpha_i, plan)
        new.append(rnd)
        levels.append(alpha_i)
    if not new:
        return state, ()
    out = replace(state, theta_low=st.theta_low, theta_high=st.theta_high, k=st.k, up=st.up,
                  rounds=state.rounds + tuple(new), levels=state.levels + tuple(levels), refinements=j)
    return out, tuple(new)


def expected_refine_calls(state: ResumableState, eps: float) -> int:
    """Cost model of ``refine``: the calls it makes when every round reads its expected count
    at the carried interval's midpoint (deterministic; the stage loop's line-5 check)."""
    mid = 0.5 * (state.theta_low + state.theta_high)

    def sample(k: int, shots: int) -> Round:
        return Round(k, shots, round(shots * math.sin((2 * k + 1) * mid) ** 2))

    _, rounds = refine(state, eps, sample)
    return sum(r.oracle_calls for r in rounds)


def refine_estimate(
    state: ResumableState, oracle: Oracle, executor: Executor, epsilon: float
) -> tuple[Estimate, ResumableState]:
    """Refine on a real executor to ``epsilon`` (reward units).

    The Estimate holds the **new rounds only** (so ``oracle_calls`` charges only new shots)
    and the interval of everything measured, valid with the state's total ``alpha``.
    """
    start = time.perf_counter()
    eps = unit_epsilon(oracle, epsilon)
    new_state, rounds = refine(state, eps, lambda k, n: run_round(executor, oracle, k, n))
    low, high = new_state.interval
    estimate = to_estimate(
        oracle, low, high, 0.5 * (low + high), epsilon=epsilon, alpha=state.alpha, rounds=rounds,
        wall_time=time.perf_counter() - start, method=METHOD, target=executor.target,
        reached_epsilon=high - low <= 2 * eps * (1 + 1e-9),
    )
    return without_device_model(estimate, executor.target), new_state


ArmState = ResumableState | LRState
"""An arm's resumed estimate: IAE's (this module) or LRAE's (``qbo.qmc.lrae``)."""


def arm_state_from_json(data: dict[str, Any]) -> ArmState:
    """The state a stage record's ``"qmc"`` holds: LRAE's carries its plausible set, IAE's its power."""
    return LRState.from_json(data) if "plausible" in data else ResumableState.from_json(data)


def as_kind(state: ArmState, kind: type[ResumableState] | type[LRState]) -> ArmState:
    """``state`` as the resumed estimator ``kind`` runs it: a state with no rounds is a blank
    (only its alpha matters) and becomes ``kind(alpha)``; one that holds rounds must already
    be of ``kind`` (an arm's rounds are never reinterpreted by another estimator)."""
    if isinstance(state, kind):
        return state
    if state.rounds:
        raise ValueError(f"an arm's resumed estimate is {type(state).__name__} with rounds run, "
                         f"but this run resumes with {kind.__name__}")
    return kind(state.alpha)


def arm_refine_calls(state: ArmState, eps: float) -> int:
    """The cost model of refining ``state`` to ``eps`` (unit scale) with its own estimator."""
    if isinstance(state, LRState):
        return lr_refine_calls(state, eps)
    return expected_refine_calls(state, eps)


def refine_arm(state: ArmState, oracle: Oracle, executor: Executor, epsilon: float) -> tuple[Estimate, ArmState]:
    """Refine ``state`` with its own estimator to ``epsilon`` (reward units): the new rounds'
    Estimate and the new state."""
    if isinstance(state, LRState):
        return lr_refine_estimate(state, oracle, executor, epsilon)
    return refine_estimate(state, oracle, executor, epsilon)
