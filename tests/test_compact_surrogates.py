"""gp-ucb's compact units beyond the rank-one kernel (qbo.experiments.compact): stepped in
Python with an adaptive length scale (qbo.algorithms.gp_ucb_steps), compiled on the Cholesky
posterior (qbo.algorithms.gp_ucb_cholesky, tests/test_gp_ucb_cholesky.py): the same arms and
rewards as the policy's own ask / tell, the same summary and figure as a record a call, and a
resume from an interruption or a kill -9 to the same files (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import qbo.experiments.compact as compact_module
import qbo.experiments.journal as journal_module
import qbo.experiments.runner as runner
from qbo.algorithms.compiled import RewardTable
from qbo.algorithms.gp_ucb_mle import MLEStepper
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.execution import make_executor
from qbo.experiments.assembly import make_policy_for, problem_for_trial
from qbo.experiments.clock import FixedClock
from qbo.experiments.compact import CALL_DTYPE, checkpoints
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import resume_experiment, run_experiment
from qbo.sampling import two_outcome_table
from tests.support.crash import crash_at_append
from tests.support.stopped_runs import kill_9_then_resume

SURROGATES = [{"model": "exact-cholesky"}, {"lengthscale": "a-gp-ucb"}, {"lengthscale": "lb", "model": "exact-cholesky"},
              {"lengthscale": "mle", "mle_every": 25}]


def _config(options: dict, budget: int = 300, trials: int = 1) -> ExperimentConfig:
    return ExperimentConfig(problem="synthetic-bernoulli-centred", algorithms=("gp-ucb",), budget=budget,
                            trials=trials, algorithm_options={"gp-ucb": options})


def _files(folder: Path) -> dict[str, bytes]:
    names = ["stages.jsonl", "summary.csv", "regret.png"] + [f"calls/{p.name}" for p in sorted((folder / "calls").iterdir())]
    return {name: (folder / name).read_bytes() for name in names}


def _table(problem, executor) -> RewardTable:
    rows = [two_outcome_table(executor, problem.oracle(i)) for i in range(problem.arms.shape[0])]
    return RewardTable.of(*(np.array(c) for c in zip(*rows)), np.array([float(problem.regret(i)) for i in range(len(rows))]))


# compiled loops: the Cholesky posterior, A-GP-UCB, LB-GP-UCB on rank-one posteriors, MLE
# (tests/test_gp_ucb_cholesky.py, test_gp_ucb_schedule.py, test_gp_ucb_balanced.py, test_gp_ucb_mle.py);
# MLE's Python stepper is what its compiled loop is checked against
@pytest.mark.parametrize("options", SURROGATES[2:])
def test_the_python_stepper_plays_what_the_policys_ask_and_tell_play(options):
    config = _config(options, budget=120)
    problem = problem_for_trial(config, 0)
    policy, executor = make_policy_for(config, "gp-ucb", problem), make_executor("exact", seed=np.random.default_rng(3))
    clock, arms, values = FixedClock(problem), [], []
    for _ in range(config.budget):
        query = policy.ask()
        value = clock.sample(query.arm, executor)
        policy.tell(query, value)
        arms.append(query.arm)
        values.append(value)
    twin, rng = make_policy_for(config, "gp-ucb", problem), np.random.default_rng(3)
    stepper = SurrogateStepper(twin)
    assert type(twin.stepper()) is (SurrogateStepper if options.get("lengthscale") != "mle" else MLEStepper)
    a, v = np.empty(config.budget, np.int64), np.empty(config.budget)
    stepper.run(50, _table(problem, executor), rng, a, v)
    stepper.run(70, _table(problem, executor), rng, a[50:], v[50:])
    assert a.tolist() == arms and v.tolist() == values
    assert rng.bit_generator.state == executor.rng.bit_generator.state
    again = make_policy_for(config, "gp-ucb", problem)
    SurrogateStepper(again).replay(a, v)
    for ours, theirs in ((again, policy), (twin, policy)):  # the same model, bit for bit
        assert ours.lengthscale == theirs.lengthscale
        assert all(np.array_equal(x, y) for x, y in zip(ours.posterior(), theirs.posterior()))
    assert twin.t == 0  # the stepper keeps its own count: the policy's history does not grow


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Cholesky gp-ucb run with compact units (the compiled loop) and with a record a call (the
    policy's ask / tell on ``CholeskyArmPosterior``)."""
    base = tmp_path_factory.mktemp("compact-surrogates")
    config = _config({"model": "exact-cholesky"}, budget=400, trials=2)
    run_experiment(config, base / "compact")
    patch = pytest.MonkeyPatch()
    patch.setattr(runner, "compact_unit", lambda *args, **kwargs: None)
    try:
        run_experiment(config, base / "full")
    finally:
        patch.undo()
    return config, base / "compact", base / "full"


def test_a_compact_cholesky_unit_writes_what_a_record_a_call_writes(runs):
    config, compact, full = runs
    for name in ("summary.csv", "regret.png"):
        assert (compact / name).read_bytes() == (full / name).read_bytes(), name
    rows = [json.loads(x) for x in (full / "stages.jsonl").read_text().splitlines()]
    kept = [json.loads(x) for x in (compact / "stages.jsonl").read_text().splitlines()]
    for trial in range(config.trials):
        every = [r for r in rows if r["trial"] == trial]
        calls = np.fromfile(compact / "calls" / f"trial{trial:03d}-gp-ucb.calls", dtype=CALL_DTYPE)
        assert calls["arm"].tolist() == [r["arm"] for r in every]
        assert calls["reward"].tolist() == [r["estimate"] for r in every]
        points = [r for r in kept if r["trial"] == trial]
        assert [r["stage"] for r in points] == checkpoints(config.budget).tolist()
        for r in points:  # the record a call would have had, plus the call file's digest
            same = every[r["stage"] - 1]
            assert {k: v for k, v in r.items() if k not in ("seq", "chain", "calls_sha256")} == \
                {k: v for k, v in same.items() if k not in ("seq", "chain")}


@pytest.mark.parametrize("crash_at", [90, 333])
def test_a_crashed_cholesky_unit_resumes_to_the_same_files(runs, tmp_path, monkeypatch, crash_at):
    config, compact, _ = runs
    monkeypatch.setattr(journal_module, "FLUSH_EVERY_S", 0.0)
    monkeypatch.setattr(compact_module, "MAX_CHUNK", 32)
    crash_at_append(monkeypatch, config, tmp_path / "crashed", crash_at)
    resume_experiment(tmp_path / "crashed")
    assert _files(tmp_path / "crashed") == _files(compact)


@pytest.mark.slow
@pytest.mark.parametrize("options, budget", [({"model": "exact-cholesky"}, 3_000_000)])  # A-GP-UCB: test_gp_ucb_schedule.py
def test_kill_9_at_random_moments_then_resume_gives_the_same_files(tmp_path, options, budget):
    """Each kill lands while the unit runs: after its process touched the call file, at a random
    moment (up to 0.15 of an undisturbed warm run's wall time)."""
    clean, killed, kills = kill_9_then_resume(_config(options, budget=budget), tmp_path, most=10, pause=(0.0, 0.15),
                                              touched="calls/trial000-gp-ucb.calls")
    assert kills >= 3, "the run ended before it could be killed a few times"
    assert _files(killed) == _files(clean)
