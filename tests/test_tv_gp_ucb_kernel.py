"""``tv-gp-ucb``'s compiled loop (``qbo.algorithms.tv_gp_ucb_kernel``) against the policy's own
ask and tell, on static problems (issue 21), where the policy now runs."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.algorithms.tv_gp_ucb_kernel import TVStepper
from qbo.execution import make_executor
from qbo.experiments.assembly import check_experiment, make_policy_for
from qbo.experiments.clock import FixedClock
from qbo.experiments.config import ExperimentConfig
from qbo.gp.forgetting import ForgettingArmPosterior
from tests.support.steppers import assert_same_run_without_numba, play, setup

# (problem, options, seed, budget, policy options): the static default (eps 0: GP-UCB on the
# static GP with Bogunovic et al.'s beta), forgetting (eps 0.01, 0.05), other betas
CASES = [("synthetic-bernoulli-centred", {}, 0, 600, {}), ("synthetic-bernoulli-centred", {}, 5, 600, {"eps": 0.01}),
         ("berkenkamp-bernoulli", {}, 1, 400, {"beta": 2.0, "eps": 0.05}),
         ("synthetic-bernoulli", {"num_arms": 60}, 2, 400, {"beta": "practical"})]


def _setup(problem: str, problem_options: dict, seed: int, budget: int, options: dict):
    return setup("tv-gp-ucb", problem, problem_options, seed, budget, options)


@pytest.mark.parametrize("problem, options, seed, budget, policy_options", CASES)
def test_the_compiled_loop_plays_what_the_policys_ask_and_tellplay(problem, options, seed, budget, policy_options):
    config, instance, table = _setup(problem, options, seed, budget, policy_options)
    check_experiment(config)  # a static problem is no longer refused
    policy = make_policy_for(config, "tv-gp-ucb", instance)
    assert not policy.clocked
    executor = make_executor("exact", seed=np.random.default_rng(seed))
    clock, expected_arms, expected_values = FixedClock(instance), [], []
    for _ in range(budget):
        query = policy.ask()
        value = clock.sample(query.arm, executor)
        policy.tell(query, value)
        expected_arms.append(query.arm)
        expected_values.append(value)
    stepper = make_policy_for(config, "tv-gp-ucb", instance).stepper()
    assert type(stepper) is TVStepper
    arms, values, rng = play(stepper, table, seed, budget)
    assert arms.tolist() == expected_arms and values.tolist() == expected_values
    assert len(set(expected_arms)) > 3  # the runs explore: the test compares more than one arm's column
    assert rng.bit_generator.state == executor.rng.bit_generator.state
    # the same posterior bit for bit: the policy's dense form, operation for operation
    for ours, theirs in zip(stepper.posterior(), policy.posterior.posterior()):
        assert np.array_equal(ours, theirs)
    assert np.array_equal(stepper._P, policy.posterior._P)
    assert stepper.information_gain == policy.posterior.information_gain
    counts = np.bincount(arms, minlength=instance.arms.shape[0]).astype(float)
    assert stepper.statistics()["n"] == counts.tolist()
    again = make_policy_for(config, "tv-gp-ucb", instance).stepper()
    again.replay(arms[:100], values[:100])
    again.replay(arms[100:], values[100:])
    for ours, theirs in zip(again.posterior(), stepper.posterior()):  # a resume's replay: bit for bit
        assert np.array_equal(ours, theirs)
    assert again.information_gain == stepper.information_gain and again.statistics() == stepper.statistics()
    assert again.rounds == stepper.rounds == budget


def test_the_dense_form_is_the_square_root_forms_posterior():
    """``dense=True`` (P = V^T V, m x m) and the square-root rows give the same posterior."""
    rng = np.random.default_rng(7)
    x = np.linspace(0.0, 1.0, 12)
    K = np.exp(-0.5 * ((x[:, None] - x[None, :]) / 0.2) ** 2)
    forms = [ForgettingArmPosterior(K, 0.05, 0.1), ForgettingArmPosterior(K, 0.05, 0.1, dense=True)]
    for _ in range(200):
        arm, y, dt = int(rng.integers(12)), float(rng.normal()), float(rng.exponential())
        for post in forms:
            post.advance(dt)
            post.add(arm, y)
    assert forms[0].n == forms[1].n == 200
    for ours, theirs in zip(forms[1].future(np.array([0.0, 1.5]).repeat(6)), forms[0].future(np.array([0.0, 1.5]).repeat(6))):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert forms[1].information_gain == pytest.approx(forms[0].information_gain, rel=1e-12)
    V = forms[0]._V[:200]
    np.testing.assert_allclose(forms[1]._P, V.T @ V, rtol=0, atol=1e-12)


def test_without_forgetting_the_posterior_is_the_static_gp():
    """eps = 0: after any rounds, P = K - Sigma of the static GP posterior on the same data."""
    config, instance, table = _setup("synthetic-bernoulli-centred", {}, 3, 300, {"eps": 0.0})
    stepper = make_policy_for(config, "tv-gp-ucb", instance).stepper()
    arms, values, _ = play(stepper, table, 3, 300)
    K, lam = stepper._K, stepper._params[1]
    X = np.eye(K.shape[0])[arms]  # n x m: which arm each round played
    G = X @ K @ X.T + lam * np.eye(len(arms))
    cross = K @ X.T
    mean = cross @ np.linalg.solve(G, values)
    var = np.diag(K) - np.einsum("ij,ji->i", cross, np.linalg.solve(G, cross.T))
    np.testing.assert_allclose(stepper.posterior()[0], mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(stepper.posterior()[1], var, rtol=0, atol=1e-8)


def test_on_a_static_problem_it_forgets_nothing_and_models_as_gp_ucb_by_default():
    config, instance, _ = _setup("synthetic-bernoulli-centred", {}, 0, 10, {})
    tv, gp = make_policy_for(config, "tv-gp-ucb", instance), make_policy_for(config, "gp-ucb", instance)
    assert tv.config.eps == 0.0 and tv.config.beta == "bogunovic"
    assert (tv.config.kernel, tv.config.lengthscale, tv.config.outputscale, tv.config.noise) == (
        gp.config.kernel, gp.config.lengthscale, gp.config.outputscale, gp.config.noise)


def test_a_policy_that_has_seen_data_has_no_stepper_and_the_ctv_policies_still_need_a_drifting_problem():
    config, instance, _ = _setup("synthetic-bernoulli-centred", {}, 0, 10, {})
    policy = make_policy_for(config, "tv-gp-ucb", instance)
    policy.tell(policy.ask(), 1.0)
    assert policy.stepper() is None
    with pytest.raises(ValueError, match="seen nothing"):
        TVStepper(policy)
    ctv = ExperimentConfig(problem="synthetic-bernoulli-centred", algorithms=("ctv",), budget=10, trials=1)
    with pytest.raises(ValueError, match="needs a drifting problem"):
        check_experiment(ctv)


@pytest.mark.slow  # a second interpreter, the loop interpreted
def test_without_numba_the_loop_gives_the_same_run(tmp_path):
    """NUMBA_DISABLE_JIT runs the very same functions as Python (the fallback without numba)."""
    code = ("import sys, numpy as np; from tests.support.steppers import play; "
            "from tests.test_tv_gp_ucb_kernel import _setup; "
            "from qbo.experiments.assembly import make_policy_for; "
            "config, instance, table = _setup('berkenkamp-bernoulli', {}, 1, 300, {'eps': 0.05}); "
            "s = make_policy_for(config, 'tv-gp-ucb', instance).stepper(); a, v, _ = play(s, table, 1, 300); "
            "np.savez(sys.argv[1], arms=a, values=v, mean=s.posterior()[0], var=s.posterior()[1], info=s.information_gain)")
    assert_same_run_without_numba(tmp_path, code, ("arms", "values", "mean", "var", "info"))
