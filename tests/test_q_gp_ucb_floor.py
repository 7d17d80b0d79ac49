"""Issue 22 item 3: q-gp-ucb with resume spends by eps above the floor max(eps_min, 1 / T)
(``qbo.algorithms.q_gp_ucb_resume``); an arm final at its floor ends the run honestly, and
the stage loop cannot repeat a zero-call stage forever (``qbo.experiments.trial``)."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.algorithms import make_policy
from qbo.algorithms.base import Query
from qbo.algorithms.q_ucb_halve import QUCBHalve, QUCBHalveConfig
from qbo.execution import ExactExecutor
from qbo.experiments.defaults import policy_options
from qbo.experiments.trial import StageSettings, run_stages
from qbo.problems import make_problem
from qbo.qmc.lrae import LRState
from qbo.qmc.resumable import ResumableState, arm_state_from_json


def test_resumed_q_gp_ucb_whose_arms_reach_the_floor_ends_within_budget() -> None:
    """With eps_min = 0.02 (far above 1 / T) the arms reach the floor long before T calls: the
    policy reports ``exhausted``, the rest of T is charged at the recommended arm, no stage
    asked below the floor, and every stage either spent calls or lowered its arm's eps."""
    budget = 200_000
    problem = make_problem("synthetic-bernoulli", seed=0, num_arms=6)
    options = policy_options("q-gp-ucb", problem, budget, {"resume": True, "spending": "eps", "beta": 1.4, "eps_min": 0.02})
    policy = make_policy("q-gp-ucb", problem.arms, **options)
    assert policy.floor == 0.02 and options["reward_range"] == 1.0
    records = list(run_stages(problem, policy, ExactExecutor(seed=1), StageSettings(budget)))
    stages = records[:-1]
    assert records[-1]["method"] == "exploit" and records[-1]["cum_calls"] == budget
    assert stages[-1]["cum_calls"] < budget // 2  # it stopped at the floor, not at line 5
    assert policy.exhausted and min(e for _, e in policy.latest.values()) <= policy.floor
    assert all(r["method"] == "lrae-resumed" and r["eps"] >= policy.floor for r in stages)
    at_floor = [r["arm"] for r in stages if r["eps"] == policy.floor]
    assert at_floor and len(set(at_floor)) == len(at_floor)  # an arm at its floor is final: never asked again
    last_eps: dict[int, float] = {}
    for r in stages:
        state = arm_state_from_json(r["qmc"])
        assert isinstance(state, LRState) and state.eps_floor == 0.02 and state.alpha == policy.alpha
        assert r["honest_calls"] > 0 or r["eps"] < last_eps[r["arm"]]
        last_eps[r["arm"]] = r["eps"]


class _SameQuery(QUCBHalve):
    """Asks arm 0 at eps 0.3 forever: from its second stage on, nothing is left to measure."""

    def _select(self) -> Query:
        return self._query(0, 0.3)


def test_a_zero_call_stage_asked_again_stops_the_stage_loop() -> None:
    problem = make_problem("synthetic-bernoulli", seed=0, num_arms=4)
    policy = _SameQuery(problem.arms, QUCBHalveConfig(delta=0.1))
    records = list(run_stages(problem, policy, ExactExecutor(seed=0), StageSettings(50_000)))
    assert [r["method"] for r in records] == ["lrae-resumed", "lrae-resumed", "exploit"]
    assert records[0]["honest_calls"] > 0 and records[1]["honest_calls"] == 0
    assert records[-1]["cum_calls"] == 50_000
    np.testing.assert_equal(policy.visits, [2, 0, 0, 0])


def test_resumed_q_gp_ucb_spends_by_index_by_default_and_refuses_an_unknown_spending() -> None:
    """Index spending is the default (lower regret in this policy, docs/estimators.md):
    ResumableState per arm, the floor is eps_min, exhaustion is StagedPolicy's rule."""
    problem = make_problem("synthetic-bernoulli", seed=0, num_arms=6)
    options = policy_options("q-gp-ucb", problem, 20_000, {"resume": True})
    policy = make_policy("q-gp-ucb", problem.arms, **options)
    assert policy.config.spending == "index" and policy.floor == policy.config.eps_min
    assert all(type(s) is ResumableState and s.alpha == policy.alpha for s in policy.states)
    with pytest.raises(ValueError, match="spending must be one of index, eps, got 'fast'"):
        make_policy("q-gp-ucb", problem.arms, **(options | {"spending": "fast"}))
