"""Classical trials in lockstep (qbo.gp.ArmStack, qbo.algorithms.gp_ucb.GPUCBLockstep and the
runner's lockstep groups): bit for bit what separate updates, policies and units produce."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qbo.experiments.journal as journal_module
import qbo.experiments.runner as runner
from qbo.algorithms import make_policy
from qbo.algorithms.gp_ucb import GPUCBLockstep
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import lockstep_groups, resume_experiment, run_experiment, units
from qbo.gp import ArmPosterior, ArmStack, make_kernel
from tests.support.crash import crash_at_append

FILES = ("stages.jsonl", "summary.csv", "regret.png", "config.toml")


@pytest.fixture
def full(monkeypatch):
    """Units with a record a call: gp-ucb on the exact target is otherwise a compact unit
    (qbo.experiments.compact), which runs its own compiled loop instead of a lockstep."""
    monkeypatch.setattr(runner, "compact_unit", lambda *args, **kwargs: None)


def _posterior(rng: np.random.Generator, m: int, lam: float) -> ArmPosterior:
    arms = rng.uniform(size=(m, 2))
    return ArmPosterior.from_kernel(make_kernel("se", float(rng.uniform(0.1, 1.0)), 1.0), arms, lam)


def _same(a: ArmPosterior, b: ArmPosterior) -> None:
    assert np.array_equal(a.Sigma, b.Sigma) and np.array_equal(a.mean, b.mean)
    assert np.array_equal(a.var, b.var) and np.array_equal(a.std, b.std)
    assert np.array_equal(a.b, b.b) and np.array_equal(a.weights, b.weights) and a.n == b.n
    assert a.information_gain == b.information_gain


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), models=st.integers(1, 6), m=st.integers(1, 12), steps=st.integers(1, 40))
def test_arm_stack_is_bit_for_bit_separate_adds(seed, models, m, steps):
    rng = np.random.default_rng(seed)
    lams = rng.uniform(0.05, 2.0, size=models).tolist()
    alone = [_posterior(np.random.default_rng([seed, b]), m, lams[b]) for b in range(models)]
    stacked = [_posterior(np.random.default_rng([seed, b]), m, lams[b]) for b in range(models)]
    stack = ArmStack(stacked)
    for _ in range(steps):
        arms = rng.integers(0, m, size=models).tolist()
        ys = rng.normal(size=models).tolist()
        for model, arm, y in zip(alone, arms, ys):
            model.add(arm, y, 1.0)
        stack.add(arms, ys)
        beta = float(rng.uniform(0.0, 3.0))
        assert np.array_equal(stack.ucb(beta), np.stack([model.ucb(beta)[0] for model in alone]))
    for a, b in zip(alone, stacked):
        _same(a, b)


def test_arm_stack_refuses_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="one size"):
        ArmStack([_posterior(rng, 3, 1.0), _posterior(rng, 4, 1.0)])
    twice = _posterior(rng, 3, 1.0)
    with pytest.raises(ValueError, match="one model twice"):
        ArmStack([twice, twice])
    stack = ArmStack([_posterior(rng, 3, 1.0), _posterior(rng, 3, 1.0)])
    with pytest.raises(ValueError, match=r"in \[0, 3\), got \[0, 3\]"):
        stack.add([0, 3], [0.0, 1.0])
    with pytest.raises(ValueError, match="y must be finite, got nan"):
        stack.add([0, 1], [0.0, float("nan")])
    with pytest.raises(ValueError, match="one entry per model"):
        stack.add([0], [0.0])
    with pytest.raises(ValueError, match="integer indices"):
        stack.add([True, 1], [0.0, 1.0])
    alone = ArmStack([_posterior(np.random.default_rng(5), 3, 1.0)])
    same = _posterior(np.random.default_rng(5), 3, 1.0)
    alone.add([np.int64(2)], [0.5])  # numpy integers, as ArmPosterior.add takes them
    same.add(2, 0.5)
    _same(alone.models[0], same)


@pytest.mark.parametrize("configs", [
    [{}] * 4,  # one beta for all
    [{"delta": 0.1}, {"delta": 0.01}, {"beta": "practical"}, {"beta": 2.0, "noise": 0.1}],  # a beta per policy
])
def test_gp_ucb_lockstep_asks_and_tells_what_each_policy_would(configs):
    rng = np.random.default_rng(3)
    arms = [rng.uniform(size=(15, 1)) for _ in configs]
    alone = [make_policy("gp-ucb", a, **c) for a, c in zip(arms, configs)]
    together = [make_policy("gp-ucb", a, **c) for a, c in zip(arms, configs)]
    lockstep = GPUCBLockstep.of(together)
    assert lockstep is not None
    draws_alone = [np.random.default_rng(b) for b in range(len(configs))]
    draws_together = [np.random.default_rng(b) for b in range(len(configs))]
    for _ in range(400):
        for policy, draw in zip(alone, draws_alone):
            query = policy.ask()
            policy.tell(query, float(draw.random() < 0.3))
        picked = lockstep.ask()
        lockstep.tell(picked, [float(draw.random() < 0.3) for draw in draws_together])
    for a, b in zip(alone, together):
        assert a.state_dict() == b.state_dict() and a.ask() == b.ask()
        _same(a.surrogate.model, b.surrogate.model)


def test_gp_ucb_lockstep_only_takes_policies_it_can_step_exactly():
    arms = np.linspace(0, 1, 8)[:, None]
    assert GPUCBLockstep.of([]) is None
    assert GPUCBLockstep.of([make_policy("q-gp-ucb", arms, budget=100)] * 2) is None
    assert GPUCBLockstep.of([make_policy("gp-ucb", arms, lengthscale="mle")] * 2) is None
    assert GPUCBLockstep.of([make_policy("gp-ucb", arms), make_policy("gp-ucb", arms[:7])]) is None
    ahead = make_policy("gp-ucb", arms)
    ahead.tell(ahead.ask(), 1.0)
    assert GPUCBLockstep.of([ahead, make_policy("gp-ucb", arms)]) is None  # not at one round
    asked = make_policy("gp-ucb", arms)
    asked.ask()
    assert GPUCBLockstep.of([asked, make_policy("gp-ucb", arms)]) is None  # an ask pending
    policy = make_policy("gp-ucb", arms)
    assert GPUCBLockstep.of([policy, policy]) is None  # one policy twice


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in FILES}


CONFIG = ExperimentConfig(budget=600, trials=3, algorithms=("q-gp-ucb", "gp-ucb", "linucb"))
QUICK = CONFIG.with_overrides(budget=200)


def test_lockstep_groups_gather_the_gp_ucb_trials_and_leave_the_rest_alone(monkeypatch):
    groups = lockstep_groups(CONFIG)
    assert sorted(u.key for g in groups for u in g) == sorted(u.key for u in units(CONFIG))
    keys = [[u.key for u in g] for g in groups]
    assert keys == [["trial000-q-gp-ucb"], ["trial000-gp-ucb", "trial001-gp-ucb", "trial002-gp-ucb"],
                    ["trial000-linucb"], ["trial001-q-gp-ucb"], ["trial001-linucb"], ["trial002-q-gp-ucb"],
                    ["trial002-linucb"]]  # linucb has no lockstep: its units run alone
    spread = lockstep_groups(CONFIG, parts=2)  # for two workers: the gp-ucb trials in two groups
    assert [len(g) for g in spread if g[0].algorithm == "gp-ucb"] == [2, 1]
    todo = [u for u in units(CONFIG) if u.trial > 0]  # what a resume has left
    assert [len(g) for g in lockstep_groups(CONFIG, todo) if g[0].algorithm == "gp-ucb"] == [2]
    mle = ExperimentConfig(budget=600, trials=3, algorithms=("gp-ucb",), algorithm_options={"gp-ucb": {"lengthscale": "mle"}})
    assert all(len(g) == 1 for g in lockstep_groups(mle))  # refits: not a fixed posterior
    one = runner.lockstep_bytes(20, CONFIG.budget)
    assert one == 2 * 20 * 20 * 8 + CONFIG.budget * runner.STAGE_BYTES
    monkeypatch.setattr(runner, "LOCKSTEP_BYTES", 2 * one)  # room for two units' posteriors and stages
    assert [len(g) for g in lockstep_groups(CONFIG) if g[0].algorithm == "gp-ucb"] == [2, 1]
    monkeypatch.setattr(runner, "LOCKSTEP_BYTES", 1)  # not even one: every unit alone
    assert all(len(g) == 1 for g in lockstep_groups(CONFIG))


def test_a_lockstep_run_writes_the_files_of_units_run_one_by_one(tmp_path, monkeypatch, full):
    run_experiment(QUICK, tmp_path / "together")
    monkeypatch.setattr(runner, "LOCKSTEP_BYTES", 1)
    run_experiment(QUICK, tmp_path / "alone")
    assert _files(tmp_path / "together") == _files(tmp_path / "alone")


@pytest.mark.slow  # a checkpoint (fsync) per stage
@pytest.mark.parametrize("crash_at, apart", [(901, False), (1200, True)])  # the gp-ucb units at one stage, or at different ones
def test_a_crash_inside_a_lockstep_resumes_to_the_same_files(tmp_path, monkeypatch, crash_at, apart, full):
    run_experiment(CONFIG, tmp_path / "clean")
    monkeypatch.setattr(journal_module, "FLUSH_EVERY_S", 0.0)  # a checkpoint after every stage
    crash_at_append(monkeypatch, CONFIG, tmp_path / "crashed", crash_at)
    journals = (tmp_path / "crashed" / "units").glob("trial*.jsonl")
    stages = [p.read_bytes().count(b'"stage":') for p in journals if p.name.endswith("-gp-ucb.jsonl") and "-q-" not in p.name]
    assert len(stages) == 3 and min(stages) > 0 and (len(set(stages)) > 1) == apart
    resume_experiment(tmp_path / "crashed")
    assert _files(tmp_path / "crashed") == _files(tmp_path / "clean")


def test_a_group_of_b_journals_commits_every_b_flush_periods(tmp_path, monkeypatch, full):
    """B journals stepping together, each committing every period, would fsync B times as
    often as one unit run alone: each commits every B periods instead."""
    made = []
    open_unit = runner._open_unit

    def remember(*args, **kwargs):
        live = open_unit(*args, **kwargs)
        made.append(live.journal)
        return live

    monkeypatch.setattr(runner, "_open_unit", remember)
    run_experiment(QUICK, tmp_path / "run")
    periods = {(j.unit.split("-", 1)[1], j.flush_every_s) for j in made}
    base = journal_module.FLUSH_EVERY_S
    assert periods == {("q-gp-ucb", base), ("gp-ucb", 3 * base), ("linucb", base)}
