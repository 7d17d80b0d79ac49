"""A-GP-UCB's compiled loop (qbo.algorithms.gp_ucb_schedule, issue 21): the arms and rewards
of the Python stepper (the policy's own surrogate, refit every round), the posterior to
rounding, the same loop with and without numba, a replay that leaves the state a run goes on
from bit for bit, and a kill -9 resume of a compact unit to the same files."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.algorithms.gp_ucb_schedule import ScheduleStepper
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.experiments.assembly import make_policy_for
from qbo.experiments.config import ExperimentConfig
from tests.support.steppers import assert_same_run_without_numba, play, setup
from tests.support.stopped_runs import kill_9_then_resume

# growth_t0 small: theta changes every round from t0^2 on (a refit a round); large (the default
# e^5 on 1-d problems): theta is constant for 22,026 rounds (the posterior updated in place).
# Cases without ties to rounding (arms symmetric about the observed ones, e.g. matern12 on 30
# arms from round 5, break them by their rounding: test_where_theta_is_constant... below)
# the Python stepper refits every round (LAPACK on up to 150 observed arms): the larger cases are slow
CASES = [("synthetic-bernoulli-centred", {}, 5, 200, {"growth_t0": 1.0}),
         pytest.param("synthetic-bernoulli-centred", {}, 3, 600, {"growth_t0": 10.0, "kernel": "matern52"},
                      marks=pytest.mark.slow),
         pytest.param("berkenkamp-bernoulli", {}, 1, 500, {"growth_t0": 8.0}, marks=pytest.mark.slow),
         ("synthetic-bernoulli", {"num_arms": 60}, 2, 150, {"growth_t0": 6.0, "kernel": "matern32"}),
         pytest.param("berkenkamp-bernoulli", {}, 6, 400,
                      {"lengthscale": "a-gp-ucb:0.3", "growth_t0": 2.0, "growth_power": 0.25}, marks=pytest.mark.slow)]


def _setup(problem: str, problem_options: dict, seed: int, budget: int, options: dict):
    return setup("gp-ucb", problem, problem_options, seed, budget, {"lengthscale": "a-gp-ucb", **options})


@pytest.mark.parametrize("problem, problem_options, seed, budget, options", CASES)
def test_the_compiled_loop_plays_what_the_python_stepper_plays(problem, problem_options, seed, budget, options):
    config, instance, table = _setup(problem, problem_options, seed, budget, options)
    python = SurrogateStepper(make_policy_for(config, "gp-ucb", instance))
    expected_arms, expected_values, expected_rng = play(python, table, seed, budget)
    stepper = make_policy_for(config, "gp-ucb", instance).stepper()
    assert type(stepper) is ScheduleStepper
    arms, values, rng = play(stepper, table, seed, budget, chunks=(5, 100))
    assert arms.tolist() == expected_arms.tolist() and values.tolist() == expected_values.tolist()
    assert rng.bit_generator.state == expected_rng.bit_generator.state
    assert stepper.statistics() == python.statistics()
    model = python.surrogate.select(budget + 1)  # the model of the next round, refit by LAPACK
    assert stepper.lengthscale == python.surrogate.lengthscale(budget + 1)
    for ours, theirs in zip(stepper.posterior(), model.posterior()):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert stepper.information_gain == pytest.approx(model.information_gain, rel=1e-12)


def test_where_theta_is_constant_the_posterior_is_updated_in_place_and_arms_differ_only_at_ties():
    """The default t0 = e^5 on the centred problem: theta_0 / t0 = 0.0067 against an arm spacing
    of 0.053, so the arms are independent to 1e-13 and two arms of equal counts and sums tie to
    rounding; both loops are stepped a round at a time until their arms first differ, which must
    be such a tie (and must happen: a test of the comparison itself)."""
    config, instance, table = _setup("synthetic-bernoulli-centred", {}, 0, 300, {})
    python = SurrogateStepper(make_policy_for(config, "gp-ucb", instance))
    stepper = make_policy_for(config, "gp-ucb", instance).stepper()
    ra, rb = np.random.default_rng(0), np.random.default_rng(0)
    a, va, b, vb = np.empty(1, np.int64), np.empty(1), np.empty(1, np.int64), np.empty(1)
    for t in range(1, 301):
        model = python.surrogate.select(t)
        beta = python.policy.beta(t)
        scores = model.ucb(beta)[0].copy()
        for ours, theirs in zip(stepper.posterior(), model.posterior()):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
        n, total = stepper._n.copy(), stepper._sum.copy()
        python.run(1, table, ra, a, va)
        stepper.run(1, table, rb, b, vb)
        if a[0] != b[0]:
            assert abs(scores[a[0]] - scores[b[0]]) <= 1e-12 * abs(scores[a[0]])
            assert n[a[0]] == n[b[0]] and total[a[0]] == total[b[0]]
            break
        assert va[0] == vb[0]
    else:
        pytest.fail("no tie in 300 rounds: the case no longer tests what it says")
    assert stepper.theta_refits == 1  # t = 1 only: theta_0 / t0 throughout, every tell in place


@pytest.mark.parametrize("growth_t0, budget", [(None, 500), (1.0, 500), (15.0, 600)])
def test_a_replay_leaves_the_state_a_run_goes_on_from(growth_t0, budget):
    """A resume: a fresh stepper told the calls so far (in pieces) then plays on; the same arms as
    the uninterrupted loop and the same posterior, bit for bit (a replay skips refits only where
    a round's posterior would only have chosen an arm)."""
    options = {} if growth_t0 is None else {"growth_t0": growth_t0}
    config, instance, table = _setup("synthetic-bernoulli-centred", {}, 7, budget, options)
    whole = make_policy_for(config, "gp-ucb", instance).stepper()
    arms, values, _ = play(whole, table, 7, budget)
    for cut in (1, 150, 225, 226):  # 225 = 15^2: where g(t) starts to grow for t0 = 15
        first = make_policy_for(config, "gp-ucb", instance).stepper()
        rng = np.random.default_rng(7)
        a, v = np.empty(budget, np.int64), np.empty(budget)
        first.run(cut, table, rng, a, v)
        resumed = make_policy_for(config, "gp-ucb", instance).stepper()
        resumed.replay(a[:cut // 2], v[:cut // 2])
        resumed.replay(a[cut // 2:cut], v[cut // 2:cut])
        assert resumed.statistics() == first.statistics()
        resumed.run(budget - cut, table, rng, a[cut:], v[cut:])
        assert a.tolist() == arms.tolist() and v.tolist() == values.tolist()
        for ours, theirs in zip(resumed.posterior(), whole.posterior()):
            assert np.array_equal(ours, theirs)
        assert resumed.information_gain == whole.information_gain


def test_a_surrogate_that_has_seen_data_steps_in_python():
    config, instance, _ = _setup("synthetic-bernoulli-centred", {}, 0, 10, {})
    policy = make_policy_for(config, "gp-ucb", instance)
    policy.tell(policy.ask(), 1.0)
    assert type(policy.stepper()) is SurrogateStepper
    with pytest.raises(ValueError, match="seen nothing"):
        ScheduleStepper(policy)


@pytest.mark.slow  # a second interpreter, the loop interpreted
def test_without_numba_the_loop_gives_the_same_run(tmp_path):
    """NUMBA_DISABLE_JIT runs the very same functions as Python (the fallback without numba)."""
    code = ("import sys, numpy as np; from tests.support.steppers import play; "
            "from tests.test_gp_ucb_schedule import _setup; "
            "from qbo.experiments.assembly import make_policy_for; "
            "config, instance, table = _setup('berkenkamp-bernoulli', {}, 1, 300, {'growth_t0': 5.0}); "
            "s = make_policy_for(config, 'gp-ucb', instance).stepper(); a, v, _ = play(s, table, 1, 300); "
            "np.savez(sys.argv[1], arms=a, values=v, mean=s.posterior()[0], var=s.posterior()[1], "
            "info=s.information_gain)")
    assert_same_run_without_numba(tmp_path, code, ("arms", "values", "mean", "var", "info"))


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_gives_the_same_files(tmp_path):
    """A 3 x 10^5-call A-GP-UCB unit (theta constant for 22,026 calls, then a refit a call), killed
    after its process touched the call file, at up to 20 random moments (up to 0.1 of an
    undisturbed warm run's wall time), then resumed: the same files. (At 10^6 calls, 20 kills
    took 158 s of wall time, too long for the suite; the closing note of issue 21 has it.)"""
    config = ExperimentConfig(problem="synthetic-bernoulli-centred", algorithms=("gp-ucb",), budget=300_000,
                              trials=1, algorithm_options={"gp-ucb": {"lengthscale": "a-gp-ucb"}})
    clean, killed, kills = kill_9_then_resume(config, tmp_path, most=20, pause=(0.0, 0.1),
                                              touched="calls/trial000-gp-ucb.calls")
    assert kills >= 3, "the run ended before it could be killed a few times"
    names = ["stages.jsonl", "summary.csv", "regret.png", "calls/trial000-gp-ucb.calls"]
    assert {n: (killed / n).read_bytes() for n in names} == {n: (clean / n).read_bytes() for n in names}
