"""Issue 22 item 3: q-gp-ucb with resume spends by eps above the floor max(eps_min, 1 / T)
(``qbo.algorithms.q_gp_ucb_resume``); an arm final at its floor ends the run honestly, and
the stage loop cannot repeat a zero-call stage forever (``qbo.experiments.trial``)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from qbo.algorithms import make_policy
from qbo.algorithms.base import Query
from qbo.algorithms.q_ucb_halve import QUCBHalve, QUCBHalveConfig
from qbo.algorithms.registry import POLICIES
from qbo.execution import ExactExecutor
from qbo.experiments import journal
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.defaults import policy_options
from qbo.experiments.runner import resume_experiment, run_experiment
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


class _Stopped(Exception):
    """The interruption of the test below."""


def test_a_run_interrupted_right_after_a_zero_call_stage_resumes_to_the_same_files(monkeypatch, tmp_path) -> None:
    """The zero-call guard is rebuilt from the journal (``Progress.idle``): without it the
    resumed unit would run the repeated query once more (a second zero-call stage) before
    stopping, and its stages.jsonl would differ from the uninterrupted run's."""
    monkeypatch.setitem(POLICIES, "q-ucb-halve", replace(POLICIES["q-ucb-halve"], policy=_SameQuery))
    monkeypatch.setattr(journal, "FLUSH_EVERY_S", 0.0)  # every stage durable at once
    config = ExperimentConfig(problem="synthetic-bernoulli", algorithms=("q-ucb-halve",), budget=50_000, trials=1)
    run_experiment(config, tmp_path / "A")
    seen: list[int] = []

    def stop_after_the_zero_call_stage(key: str, calls: int, budget: int) -> None:
        seen.append(calls)
        if len(seen) == 2:
            assert seen[0] == seen[1] > 0  # the second stage spent nothing
            raise _Stopped

    with pytest.raises(_Stopped):
        run_experiment(config, tmp_path / "B", on_progress=stop_after_the_zero_call_stage)
    resume_experiment(tmp_path / "B")
    expected = (tmp_path / "A" / "stages.jsonl").read_text().splitlines()
    assert [json.loads(line)["method"] for line in expected] == ["lrae-resumed", "lrae-resumed", "exploit"]
    for name in ("stages.jsonl", "summary.csv", "run.json"):
        assert (tmp_path / "B" / name).read_bytes() == (tmp_path / "A" / name).read_bytes(), name


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
