"""One (trial, algorithm) run: the stage loop of Alg. 1 with per-call regret.

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
App. D, so the theory beta no longer follows from it; measured in bench/regret.py.

Under ``accounting="reference"`` only the charge changes: the line-5 prediction still uses
the estimator's honest cost model, so such a run stops earlier than the authors' code would
(their count being lower). It reproduces their accounting of what was spent, not their
stopping point.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from qbo.algorithms.base import PolicyBase, Query
from qbo.execution.base import Executor
from qbo.experiments.accounting import charged_calls
from qbo.problems.base import Problem
from qbo.qmc import make_estimator
from qbo.qmc.base import unit_epsilon
from qbo.sampling import classical_samples


@dataclass
class Progress:
    """Where a unit stands: stages done, calls charged, regret accrued."""

    stage: int = 0
    calls: int = 0
    regret: float = 0.0


@dataclass(frozen=True)
class StageSettings:
    """How stages are measured and charged; ``mitigation`` is a qbo.mitigation.Mitigation."""

    budget: int
    estimator: str = "iae"
    accounting: str = "honest"
    leftover: str = "recommend"
    mitigation: Any = None
    weights: str = "requested"


def run_stages(
    problem: Problem, policy: PolicyBase, executor: Executor, settings: StageSettings,
    start: Progress | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one record per stage until the budget or the stopping rule ends the run."""
    at = start or Progress()
    while at.calls < settings.budget:
        query = policy.ask()
        if getattr(policy, "exhausted", False):
            break
        outcome = _measure(problem, executor, query, settings, budget_left=settings.budget - at.calls)
        if outcome is None:  # line 5: the predicted cost does not fit in the budget
            break
        value, charged, honest, method, weight_eps = outcome
        charged = min(charged, settings.budget - at.calls)
        policy.tell(query, value, epsilon=weight_eps)
        yield _record(problem, at, query.arm, query.epsilon, method, charged, honest, value) | {"weight_eps": weight_eps}
    if settings.leftover == "recommend" and at.calls < settings.budget:
        arm = int(policy.recommend())
        left = settings.budget - at.calls
        yield _record(problem, at, arm, None, "exploit", left, left, None) | {"weight_eps": None}


def _measure(
    problem: Problem, executor: Executor, query: Query, settings: StageSettings, budget_left: int
) -> tuple[float, int, int, str, float | None] | None:
    """(value, charged calls, honest calls, method, eps of the observation's weight)."""
    oracle = problem.oracle(query.arm)
    if query.epsilon is None:
        # on hardware a classical learner samples the reward model, never the QPU (issue 11)
        (sample,) = classical_samples(getattr(executor, "classical_source", executor), oracle, 1)
        return float(sample), 1, 1, "sample", None
    estimator = make_estimator(settings.estimator, query.epsilon, query.alpha, mitigation=settings.mitigation)
    eps_unit = unit_epsilon(oracle, query.epsilon)
    if estimator.expected_calls(eps_unit) > budget_left:
        return None
    estimate = estimator.estimate(oracle, executor)
    charged = charged_calls(settings.accounting, estimate, eps_unit)
    weight_eps = query.epsilon if settings.weights == "requested" else max(estimate.half_width, 1e-12)
    return estimate.value, charged, estimate.oracle_calls, estimate.method, weight_eps


def _record(
    problem: Problem, at: Progress, arm: int, eps: float | None, method: str,
    charged: int, honest: int, value: float | None,
) -> dict[str, Any]:
    at.stage += 1
    at.calls += charged
    at.regret += charged * float(problem.regret(arm))
    return {
        "stage": at.stage, "arm": arm, "eps": eps, "method": method, "oracle_calls": charged,
        "honest_calls": honest, "estimate": value, "cum_calls": at.calls, "cum_regret": at.regret,
    }
