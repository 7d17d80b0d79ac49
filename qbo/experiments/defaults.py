"""The options a run's policies are built with: the policy's defaults on the problem
(``qbo.algorithms.registry.PolicyEntry.defaults``, with the GP settings the problem's
registry entry tunes), then the config's options over them."""

from __future__ import annotations

from typing import Any

from qbo.algorithms.registry import ProblemFacts, policy_entry
from qbo.problems.base import Problem
from qbo.problems.drifting import TVProblem
from qbo.problems.registry import problem_entry


def policy_options(algorithm: str, problem: Problem | TVProblem, budget: int, user: dict[str, Any],
                   staged: bool = False) -> dict[str, Any]:
    """The options ``make_policy`` receives for ``algorithm`` on ``problem``; ``staged``: the
    run has a quantum policy (a drifting problem then runs QMC stages for every policy)."""
    entry = problem_entry(problem.name)
    gp = entry.gp_defaults.get(algorithm, {}) if entry is not None else {}
    return policy_entry(algorithm).defaults(ProblemFacts(problem, budget, staged, gp)) | dict(user)


def policy_inputs(problem: Problem | TVProblem) -> dict[str, Any]:
    """What a problem hands to policies apart from their options (``PolicyBase.inputs``)."""
    if isinstance(problem, TVProblem):
        return {"eval_times": problem.eval_times, "gram": problem.gram}
    return {}
