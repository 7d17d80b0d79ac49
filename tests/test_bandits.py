"""Resumable QMC (qbo.qmc.resumable), the bandit baselines (thompson, kl-ucb, gp-ts), the
quantum policies on resumed estimates (q-ucb-halve, q-se, q-gp-ucb resume), the squeezed
problems and the problems' noise bound."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from qbo.algorithms import make_policy, restore_policy
from qbo.algorithms.kl_ucb import bernoulli_kl, kl_upper
from qbo.execution import ExactExecutor
from qbo.experiments.config import load_config
from qbo.experiments.defaults import policy_options
from qbo.experiments.runner import check_experiment, run_experiment
from qbo.experiments.trial import StageSettings, run_stages
from qbo.oracles import bernoulli
from qbo.problems import make_problem
from qbo.problems.noise import bernoulli_variance_bound, noise_variance_bound
from qbo.grover import oracle_calls
from qbo.qmc.lrae import LRState
from qbo.qmc.resumable import (
    ResumableState,
    arm_state_from_json,
    expected_refine_calls,
    refine,
    refine_estimate,
    refinement_alpha,
)
from qbo.qmc.result import Round

EPS_SEQUENCE = (0.2, 0.1, 0.05, 0.025, 0.0125, 0.00625)


def _twin(theta: float, rng: np.random.Generator):
    """Classical twin of the exact executor for Q^k A: the same outcome probability
    sin^2((2k+1) theta), drawn as one binomial count per round."""
    def sample(k: int, shots: int) -> Round:
        return Round(k, shots, int(rng.binomial(shots, math.sin((2 * k + 1) * theta) ** 2)))
    return sample


def _missed(alpha: float, n: int, seed: int, eps_seq=EPS_SEQUENCE) -> int:
    """Sequences (of len(eps_seq) refinements each) in which some reported interval missed."""
    rng = np.random.default_rng(seed)
    missed = 0
    for _ in range(n):
        a = float(rng.uniform())
        sample = _twin(math.asin(math.sqrt(a)), rng)
        state = ResumableState(alpha)
        bad = False
        for eps in eps_seq:
            state, _ = refine(state, eps, sample)
            low, high = state.interval
            bad |= not (low - 1e-12 <= a <= high + 1e-12)
        missed += bad
    return missed


def _coverage_threshold(n: int, alpha: float) -> int:
    """If P(miss) <= alpha, P(misses > this) <= 1e-6 (binomial upper tail)."""
    return int(binom.ppf(1 - 1e-6, n, alpha))


# ------------------------------------------------------------------ resumable QMC
@pytest.mark.slow
def test_resumed_coverage_over_1000_sequences() -> None:
    alpha, n = 0.2, 1000
    assert _missed(alpha, n, seed=1) <= _coverage_threshold(n, alpha)


def test_resumed_coverage_quick() -> None:
    alpha, n = 0.3, 100
    assert _missed(alpha, n, seed=2, eps_seq=(0.1, 0.05)) <= _coverage_threshold(n, alpha)


def test_refine_reaches_eps_and_charges_only_new_rounds() -> None:
    rng = np.random.default_rng(0)
    sample = _twin(math.asin(math.sqrt(0.37)), rng)
    state = ResumableState(0.05)
    charged = 0
    for eps in EPS_SEQUENCE:
        before = len(state.rounds)
        state, new = refine(state, eps, sample)
        assert state.half_width <= eps * (1 + 1e-9)
        assert state.rounds[before:] == new
        charged += sum(r.shots * (2 * r.k + 1) for r in new)
        assert state.refinements <= EPS_SEQUENCE.index(eps) + 1
    assert charged == state.oracle_calls
    assert state.alpha_spent <= 0.05
    again, new = refine(state, 0.1, sample)  # a wider eps reuses everything and costs nothing
    assert new == () and again == state


def test_resuming_is_cheaper_than_restarting() -> None:
    rng = np.random.default_rng(3)
    resumed = restarted = 0
    for _ in range(20):
        sample = _twin(math.asin(math.sqrt(rng.uniform(0.2, 0.8))), rng)
        state = ResumableState(0.01)
        for eps in EPS_SEQUENCE:
            state, _ = refine(state, eps, sample)
            restarted += refine(ResumableState(0.01), eps, sample)[0].oracle_calls
        resumed += state.oracle_calls
    assert resumed < restarted


def test_refine_estimate_on_the_exact_executor_counts_2k_plus_1() -> None:
    oracle, executor = bernoulli(0.3), ExactExecutor(seed=5)
    state = ResumableState(0.05)
    estimate, state = refine_estimate(state, oracle, executor, 0.05)
    estimate2, state2 = refine_estimate(state, oracle, executor, 0.01)
    assert estimate2.oracle_calls == sum(r.shots * (2 * r.k + 1) for r in state2.rounds[len(state.rounds):])
    assert estimate.oracle_calls + estimate2.oracle_calls == state2.oracle_calls
    assert estimate2.half_width <= 0.01 * (1 + 1e-9) and estimate2.ci_low <= 0.3 <= estimate2.ci_high
    assert expected_refine_calls(state2, 0.02) == 0 < expected_refine_calls(state2, 0.002)


@given(st.integers(1, 2_000))
def test_refinement_alphas_sum_to_at_most_alpha(n: int) -> None:
    assert sum(refinement_alpha(0.1, j) for j in range(1, n + 1)) < 0.1
    assert refinement_alpha(0.1, n) > 0


@settings(max_examples=30, deadline=None)
@given(st.floats(0.0, 1.0), st.integers(0, 2**31))
def test_state_json_round_trip(a: float, seed: int) -> None:
    state, _ = refine(ResumableState(0.1), 0.05, _twin(math.asin(math.sqrt(a)), np.random.default_rng(seed)))
    back = ResumableState.from_json(json.loads(json.dumps(state.to_json())))
    assert back == state


# ------------------------------------------------------------------ classical baselines
@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(1e-6, 5.0))
def test_kl_upper_is_the_largest_q_within_the_level(p: float, level: float) -> None:
    (q,) = kl_upper(np.array([p]), np.array([level]))
    assert p - 1e-12 <= q <= 1.0
    if q < 1.0 - 1e-9:
        assert bernoulli_kl(np.array([p]), np.array([q]))[0] == pytest.approx(level, rel=1e-6, abs=1e-9)
    elif q < 1.0:  # 1 - q < 1e-9: float resolution of q; the true root is there too
        assert bernoulli_kl(np.array([p]), np.array([1.0 - 1e-9]))[0] <= level
    else:
        assert bernoulli_kl(np.array([p]), np.array([1.0 - 1e-12]))[0] <= level + 1e-6


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 2.0), st.floats(0.0, 1.0))
def test_kl_arm_index_is_bounded_by_its_value_at_a_higher_level(p: float, level: float, more: float) -> None:
    """What the lazy KL-UCB loop relies on: the index computed at any level <= L is at most
    the index computed at L + 2 tol (plus rounding), and equals ``kl_upper``'s root."""
    from qbo.algorithms.kl_ucb_kernel import kl_arm_index

    low, high = level * more, level
    assert kl_arm_index(p, low) <= kl_arm_index(p, high + 2e-12) + 1e-12
    assert kl_arm_index(p, level) == pytest.approx(kl_upper(np.array([p]), np.array([level]))[0], abs=1e-9)


@pytest.mark.parametrize("name", ["thompson", "kl-ucb", "gp-ts"])
def test_classical_baselines_learn_a_clear_best_arm(name: str) -> None:
    problem = make_problem("synthetic-bernoulli", seed=0)
    policy = make_policy(name, problem.arms, **policy_options(name, problem, 800, {}))
    records = list(run_stages(problem, policy, ExactExecutor(seed=1), StageSettings(800)))
    arms = [r["arm"] for r in records[-200:]]
    assert np.mean(np.array(arms) == problem.best_arm) > 0.5
    assert records[-1]["cum_calls"] == 800


@pytest.mark.parametrize("name", ["thompson", "gp-ts", "kl-ucb"])
def test_randomised_policies_restore_exactly(name: str) -> None:
    arms = np.linspace(0, 1, 8)[:, None]
    policy = make_policy(name, arms)
    rng = np.random.default_rng(0)
    for _ in range(30):
        q = policy.ask()
        policy.tell(q, float(rng.integers(0, 2)))
    back = restore_policy(json.loads(json.dumps(policy.state_dict())), arms)
    for _ in range(10):
        q1, q2 = policy.ask(), back.ask()
        assert q1 == q2
        v = float(rng.integers(0, 2))
        policy.tell(q1, v)
        back.tell(q2, v)


def test_thompson_gaussian_posterior_mean() -> None:
    policy = make_policy("thompson", np.linspace(0, 1, 3)[:, None], prior="gaussian", noise=0.5, prior_var=2.0, prior_mean=0.0)
    for v in (1.0, 2.0):
        policy.tell(policy.ask().__class__(1, None, None), v)
    precision = 1 / 2.0 + 2 / 0.5
    assert policy.posterior_mean()[1] == pytest.approx((3.0 / 0.5) / precision)


# ------------------------------------------------------------------ quantum policies
@pytest.mark.parametrize("estimator,method,kind", [("auto", "lrae-resumed", LRState), ("iae", "iae-resumed", ResumableState)])
@pytest.mark.parametrize("name,options", [("q-ucb-halve", {}), ("q-se", {}), ("q-gp-ucb", {"resume": True, "beta": 1.4})])
def test_resumed_policies_run_and_restore(name: str, options: dict, estimator: str, method: str, kind: type) -> None:
    """The default estimator ('auto') resumes LRAE's state per arm, 'iae' IAE's; every stage is
    charged exactly the new rounds of its arm's state (2k + 1 per shot, every round)."""
    problem = make_problem("synthetic-bernoulli", seed=0)
    policy = make_policy(name, problem.arms, **policy_options(name, problem, 3000, options))
    records = list(run_stages(problem, policy, ExactExecutor(seed=2), StageSettings(3000, estimator)))
    assert records[-1]["cum_calls"] == 3000
    quantum = [r for r in records if r["eps"] is not None and r["method"] != "exploit"]
    stages = [r for r in records if r["method"] == method]
    assert stages and len(stages) == len(quantum) and all("qmc" in r for r in stages)
    calls = {}
    for r in stages:  # a record's calls are exactly the new rounds of its arm's state
        state = arm_state_from_json(r["qmc"])
        assert isinstance(state, kind)
        total = sum(oracle_calls(rnd.k, rnd.shots) for rnd in state.rounds)
        assert r["honest_calls"] == total - calls.get(r["arm"], 0)
        calls[r["arm"]] = total
    back = restore_policy(json.loads(json.dumps(policy.state_dict())), problem.arms)
    assert back.ask() == policy.ask()


def test_resumed_policy_refuses_a_tell_without_state() -> None:
    policy = make_policy("q-ucb-halve", np.linspace(0, 1, 4)[:, None], delta=0.1)
    q = policy.ask()
    with pytest.raises(ValueError, match="resumed state"):
        policy.tell(q.__class__(q.arm, q.epsilon, q.alpha), 0.5)


def test_q_se_keeps_only_the_best_arm_on_a_wide_gap_problem() -> None:
    problem = make_problem("synthetic-bernoulli", seed=0, num_arms=6)
    policy = make_policy("q-se", problem.arms, **policy_options("q-se", problem, 20_000, {}))
    list(run_stages(problem, policy, ExactExecutor(seed=3), StageSettings(20_000)))
    assert policy.exhausted and np.flatnonzero(policy.active).tolist() == [problem.best_arm]
    assert policy.recommend() == problem.best_arm


def test_q_gp_ucb_resume_replaces_the_arm_observation() -> None:
    """Resume requests eps_eq = (1/eps_old^2 + 1/eps_s^2)^-1/2 and keeps one observation per
    arm: the model's weight at an arm is 1/eps^2 of its latest refinement, never a sum."""
    arms = np.linspace(0, 1, 5)[:, None]
    plain = make_policy("q-gp-ucb", arms, budget=1000, beta=1.0)
    res = make_policy("q-gp-ucb", arms, budget=1000, beta=1.0, resume=True)
    state = ResumableState(res.alpha)
    first = None
    for step in range(12):
        q, p = res.ask(), plain.ask()
        assert q.arm == p.arm  # same posterior variance, same (constant) rewards: same UCB
        old = res.latest.get(q.arm)
        expected = p.epsilon if old is None else (old[1] ** -2 + p.epsilon**-2) ** -0.5
        assert q.epsilon == pytest.approx(expected, rel=1e-12)
        first = first if old is None else q.arm
        res.tell(q.__class__(q.arm, q.epsilon, q.alpha, resume=state), 0.5)
        plain.tell(p, 0.5)
        assert res.model.weights[q.arm] == pytest.approx(q.epsilon**-2)  # replaced, not summed
        np.testing.assert_allclose(res.posterior()[1], plain.posterior()[1], rtol=1e-8, atol=1e-12)
    assert first is not None  # some arm was refined at least once


# ------------------------------------------------------------------ problems and noise bound
def test_squeezed_problems_place_their_means() -> None:
    centred = make_problem("synthetic-bernoulli-centred", spread=0.01, seed=3)
    top = make_problem("synthetic-bernoulli-top", spread=0.01, seed=3)
    assert centred.means.min() == pytest.approx(0.495) and centred.means.max() == pytest.approx(0.505)
    assert top.means.min() == pytest.approx(0.99) and top.means.max() == pytest.approx(1.0)
    assert noise_variance_bound(centred) == 0.25
    assert noise_variance_bound(top) == pytest.approx(0.99 * 0.01)
    assert policy_options("gp-ucb", top, 1000, {})["noise"] == pytest.approx(0.0099)
    with pytest.raises(ValueError, match="spread"):
        make_problem("synthetic-bernoulli-centred", spread=1.5)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_variance_bound_covers_every_mean_in_range(a: float, b: float, u: float) -> None:
    low, high = min(a, b), max(a, b)
    p = low + u * (high - low)
    assert p * (1 - p) <= bernoulli_variance_bound(low, high) + 1e-15


# ------------------------------------------------------------------ example configs
EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_configs_load_and_build(path: Path) -> None:
    config = load_config(path)
    check_experiment(config)


@pytest.mark.slow
def test_centred_example_runs_end_to_end(tmp_path: Path) -> None:
    config = load_config(Path(__file__).resolve().parents[1] / "examples" / "centred.toml")
    small = config.with_overrides(budget=600, trials=1, algorithms=("q-ucb-halve", "q-gp-ucb", "thompson"),
                                  algorithm_options={"q-gp-ucb": dict(config.algorithm_options["q-gp-ucb"])})
    records = run_experiment(small, tmp_path / "run")
    finals = {r["algorithm"]: r for r in records}
    assert all(r["cum_calls"] == 600 for r in finals.values())
    assert (tmp_path / "run" / "summary.csv").exists()


@pytest.mark.parametrize("name, options", [("q-ucb-halve", {}), ("q-gp-ucb", {"resume": True, "beta": 1.4})])
def test_resumed_policies_resume_after_a_crash_with_identical_files(name, options, tmp_path, monkeypatch):
    """docs/bandits.md: a killed run of a resumed policy continues from its journal (the
    resumed QMC states are replayed from the stage records' "qmc")."""
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import resume_experiment
    from tests.support.crash import crash_at_append

    config = ExperimentConfig(algorithms=(name,), budget=1500, trials=1, algorithm_options={name: options} if options else {})
    run_experiment(config, tmp_path / "clean")
    assert b'"lrae-resumed"' in (tmp_path / "clean" / "stages.jsonl").read_bytes()  # the default estimator resumes LRAE
    crash_at_append(monkeypatch, config, tmp_path / "crashed", 6)
    resume_experiment(tmp_path / "crashed")
    for file in ("stages.jsonl", "summary.csv"):
        assert (tmp_path / "crashed" / file).read_bytes() == (tmp_path / "clean" / file).read_bytes()
