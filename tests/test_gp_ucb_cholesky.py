"""gp-ucb's compiled loop on the Cholesky posterior (qbo.algorithms.gp_ucb_cholesky, issue 21):
the arms and rewards of the policy's own ask / tell on ``CholeskyArmPosterior`` and of the
Python stepper, the posterior to rounding (scalar sums against BLAS's, rows moved last and
rebuilt), the same loop with and without numba, and a replay that rebuilds the posterior bit
for bit."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.algorithms.gp_ucb_cholesky import CholeskyStepper, _refit
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.execution import make_executor
from qbo.experiments.assembly import make_policy_for
from qbo.experiments.clock import FixedClock
from qbo.gp.cholesky import ArmStats, CholeskyArmPosterior
from tests.support.steppers import assert_same_run_without_numba, play, setup

CASES = [("synthetic-bernoulli-centred", {}, 0, 600), ("synthetic-bernoulli-centred", {}, 5, 600),
         ("berkenkamp-bernoulli", {}, 1, 500), ("synthetic-bernoulli", {"num_arms": 60}, 2, 400)]


def _setup(problem: str, problem_options: dict, seed: int, budget: int):
    return setup("gp-ucb", problem, problem_options, seed, budget, {"model": "exact-cholesky"})


@pytest.mark.parametrize("problem, options, seed, budget", CASES)
def test_the_compiled_loop_plays_what_the_policys_ask_and_tellplay(problem, options, seed, budget):
    config, instance, table = _setup(problem, options, seed, budget)
    policy = make_policy_for(config, "gp-ucb", instance)
    assert type(policy.surrogate.model) is CholeskyArmPosterior
    executor = make_executor("exact", seed=np.random.default_rng(seed))
    clock, expected_arms, expected_values = FixedClock(instance), [], []
    for _ in range(budget):
        query = policy.ask()
        value = clock.sample(query.arm, executor)
        policy.tell(query, value)
        expected_arms.append(query.arm)
        expected_values.append(value)
    stepper = make_policy_for(config, "gp-ucb", instance).stepper()
    assert type(stepper) is CholeskyStepper
    arms, values, rng = play(stepper, table, seed, budget)
    assert arms.tolist() == expected_arms and values.tolist() == expected_values
    # a row moved last (and L, V rebuilt) on the way, the same arms all the same; not on
    # berkenkamp's 99 rows in 500 calls, where no arm's lost work reaches a rebuild's
    assert stepper.moves >= 1 or problem == "berkenkamp-bernoulli"
    assert rng.bit_generator.state == executor.rng.bit_generator.state
    # the same posterior to rounding: scalar sums here, BLAS's gemv / LAPACK's trtrs in the model
    for ours, theirs in zip(stepper.posterior(), policy.posterior()):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert stepper.information_gain == pytest.approx(policy.information_gain, rel=1e-12)
    python = SurrogateStepper(make_policy_for(config, "gp-ucb", instance))
    python.replay(arms, values)
    assert stepper.statistics() == python.statistics()  # a checkpoint of either resumes with the other
    again = make_policy_for(config, "gp-ucb", instance).stepper()
    again.replay(arms[:100], values[:100])
    again.replay(arms[100:], values[100:])
    for ours, theirs in zip(again.posterior(), stepper.posterior()):  # a resume's replay: bit for bit
        assert np.array_equal(ours, theirs)
    assert again.information_gain == stepper.information_gain and again.statistics() == stepper.statistics()


def test_the_loop_grows_past_its_first_rows_and_a_rebuild_agrees_with_the_batch_posterior():
    config, instance, table = _setup("synthetic-bernoulli", {"num_arms": 60}, 2, 400)
    stepper = make_policy_for(config, "gp-ucb", instance).stepper()
    arms, values, _ = play(stepper, table, 2, 400)
    rows = int(stepper._state[0])
    assert rows == len(set(arms.tolist())) > 16  # grown from 16 rows
    stats = ArmStats(instance.arms.shape[0])
    for arm, y in zip(arms.tolist(), values.tolist()):
        stats.add(arm, y, 1.0)
    kernel = make_policy_for(config, "gp-ucb", instance).surrogate.model.kernel
    batch = CholeskyArmPosterior.from_stats(kernel, instance.arms, stepper.lam, stats)
    mean, var = stepper.posterior()
    np.testing.assert_allclose(mean, batch.posterior()[0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(var, batch.posterior()[1], rtol=0, atol=1e-12)
    # the rebuild taken where a downdate is not numerically definite: the same L, V and variance
    L, V = stepper._L[:rows, :rows].copy(), stepper._V[:rows].copy()
    _refit(stepper.lam, rows, stepper._V, stepper._K, stepper._L, stepper._arm_of, stepper._W, stepper._E,
           stepper._scratch)
    np.testing.assert_allclose(stepper._L[:rows, :rows], L, rtol=0, atol=1e-10)
    np.testing.assert_allclose(stepper._V[:rows], V, rtol=0, atol=1e-10)
    np.testing.assert_allclose(stepper.posterior()[1], var, rtol=0, atol=1e-12)


def test_a_model_that_has_seen_data_steps_in_python():
    config, instance, _ = _setup("synthetic-bernoulli-centred", {}, 0, 10)
    policy = make_policy_for(config, "gp-ucb", instance)
    policy.tell(policy.ask(), 1.0)
    assert type(policy.stepper()) is SurrogateStepper
    with pytest.raises(ValueError, match="seen nothing"):
        CholeskyStepper(policy)


@pytest.mark.slow  # a second interpreter, the loop interpreted
def test_without_numba_the_loop_gives_the_same_run(tmp_path):
    """NUMBA_DISABLE_JIT runs the very same functions as Python (the fallback without numba)."""
    code = ("import sys, numpy as np; from tests.support.steppers import play; "
            "from tests.test_gp_ucb_cholesky import _setup; "
            "from qbo.experiments.assembly import make_policy_for; "
            "config, instance, table = _setup('berkenkamp-bernoulli', {}, 1, 300); "
            "s = make_policy_for(config, 'gp-ucb', instance).stepper(); a, v, _ = play(s, table, 1, 300); "
            "np.savez(sys.argv[1], arms=a, values=v, mean=s.posterior()[0], var=s.posterior()[1], info=s.information_gain)")
    assert_same_run_without_numba(tmp_path, code, ("arms", "values", "mean", "var", "info"))
