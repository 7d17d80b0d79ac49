"""LB-GP-UCB's compiled loop (qbo.algorithms.gp_ucb_balanced, issue 21): the arms, rewards,
per-candidate sums and posteriors of the Python stepper bit for bit, the same loop with and
without numba, a replay that rebuilds the state bit for bit, and a kill -9 resume of a compact
unit to the same files."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.algorithms.gp_ucb_balanced import BalancedStepper
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.experiments.assembly import make_policy_for
from qbo.experiments.config import ExperimentConfig
from tests.support.steppers import assert_same_run_without_numba, play, setup
from tests.support.stopped_runs import kill_9_then_resume

CASES = [("synthetic-bernoulli-centred", {}, 0, 1000, {}),
         ("synthetic-bernoulli-centred", {}, 5, 1500, {"growth_t0": 1.0, "beta": 0.5}),  # eliminations
         ("berkenkamp-bernoulli", {}, 1, 800, {"growth_t0": 2.0, "kernel": "matern52"}),
         ("synthetic-bernoulli", {"num_arms": 60}, 2, 800, {"growth_t0": 1.5, "kernel": "matern32",
                                                            "beta": "practical", "lb_norm": 2.0})]


def _setup(problem: str, problem_options: dict, seed: int, budget: int, options: dict):
    return setup("gp-ucb", problem, problem_options, seed, budget, {"lengthscale": "lb", **options})


@pytest.mark.parametrize("problem, problem_options, seed, budget, options", CASES)
def test_the_compiled_loop_is_the_python_stepper_bit_for_bit(problem, problem_options, seed, budget, options):
    config, instance, table = _setup(problem, problem_options, seed, budget, options)
    python = SurrogateStepper(make_policy_for(config, "gp-ucb", instance))
    expected_arms, expected_values, expected_rng = play(python, table, seed, budget)
    stepper = make_policy_for(config, "gp-ucb", instance).stepper()
    assert type(stepper) is BalancedStepper
    arms, values, rng = play(stepper, table, seed, budget, chunks=(5, 100))
    assert arms.tolist() == expected_arms.tolist() and values.tolist() == expected_values.tolist()
    assert rng.bit_generator.state == expected_rng.bit_generator.state
    surrogate, k = python.surrogate, len(stepper.thetas)
    assert stepper.thetas == surrogate.thetas and len(surrogate.thetas) >= 4  # candidates introduced on the way
    assert stepper.active_lengthscales == surrogate.active_lengthscales
    assert stepper._cand[:k, 1].tolist() == surrogate.count
    assert stepper._cand[:k, 2].tolist() == surrogate.sum_y and stepper._cand[:k, 3].tolist() == surrogate.sum_bs
    assert stepper.lengthscale == surrogate.lengthscale(budget + 1)
    for ours, theirs in zip(stepper.posterior(), surrogate.select(budget + 1).posterior()):
        assert np.array_equal(ours, theirs)
    assert stepper.statistics() == python.statistics()


def test_eliminations_happen_in_the_cases():
    """The comparison above covers line 12: with beta = 0.5 candidates are eliminated."""
    config, instance, table = _setup(*CASES[1])
    stepper = make_policy_for(config, "gp-ucb", instance).stepper()
    play(stepper, table, CASES[1][2], CASES[1][3])
    assert len(stepper.active_lengthscales) < len(stepper.thetas)
    # an eliminated candidate's m x m arrays are reused: the slots held are the active ones'
    k = len(stepper.thetas)
    active = stepper._cand[:k, 4] != 0.0
    slots = stepper._cand[:k, 5][active].astype(int)
    assert len(set(slots.tolist())) == active.sum() and len(set(stepper._cand[:k, 5].tolist())) < k
    assert stepper._Sigma.shape[0] <= max(4, 2 * active.sum())


@pytest.mark.parametrize("cut", [1, 99, 700, 1400])
def test_a_replay_leaves_the_state_a_run_goes_on_from(cut):
    config, instance, table = _setup("synthetic-bernoulli-centred", {}, 3, 1500, {"growth_t0": 1.0})
    whole = make_policy_for(config, "gp-ucb", instance).stepper()
    arms, values, _ = play(whole, table, 3, 1500)
    first, rng = make_policy_for(config, "gp-ucb", instance).stepper(), np.random.default_rng(3)
    a, v = np.empty(1500, np.int64), np.empty(1500)
    first.run(cut, table, rng, a, v)
    resumed = make_policy_for(config, "gp-ucb", instance).stepper()
    resumed.replay(a[:cut // 2], v[:cut // 2])
    resumed.replay(a[cut // 2:cut], v[cut // 2:cut])
    for name in ("_cand", "_Sigma", "_mu", "_var", "_sd", "_n", "_sum", "_state"):
        assert np.array_equal(getattr(resumed, name), getattr(first, name)), name
    resumed.run(1500 - cut, table, rng, a[cut:], v[cut:])
    assert a.tolist() == arms.tolist() and v.tolist() == values.tolist()


def test_other_posteriors_and_a_surrogate_that_has_seen_data_step_in_python():
    config, instance, _ = _setup("synthetic-bernoulli-centred", {}, 0, 10, {"model": "exact-cholesky"})
    assert type(make_policy_for(config, "gp-ucb", instance).stepper()) is SurrogateStepper
    config, instance, _ = _setup("synthetic-bernoulli-centred", {}, 0, 10, {})
    policy = make_policy_for(config, "gp-ucb", instance)
    policy.tell(policy.ask(), 1.0)
    assert type(policy.stepper()) is SurrogateStepper
    with pytest.raises(ValueError, match="seen nothing"):
        BalancedStepper(policy)


@pytest.mark.slow  # a second interpreter, the loop interpreted
def test_without_numba_the_loop_gives_the_same_run(tmp_path):
    code = ("import sys, numpy as np; from tests.support.steppers import play; "
            "from tests.test_gp_ucb_balanced import _setup; "
            "from qbo.experiments.assembly import make_policy_for; "
            "config, instance, table = _setup('berkenkamp-bernoulli', {}, 1, 300, {'growth_t0': 2.0}); "
            "s = make_policy_for(config, 'gp-ucb', instance).stepper(); a, v, _ = play(s, table, 1, 300); "
            "np.savez(sys.argv[1], arms=a, values=v, cand=s._cand, Sigma=s._Sigma)")
    assert_same_run_without_numba(tmp_path, code, ("arms", "values", "cand", "Sigma"))


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_gives_the_same_files(tmp_path):
    """A 10^6-call LB-GP-UCB unit killed after its process touched the call file, at up to 20
    random moments (up to 0.1 of an undisturbed warm run's wall time), then resumed: the same files."""
    config = ExperimentConfig(problem="synthetic-bernoulli-centred", algorithms=("gp-ucb",), budget=1_000_000,
                              trials=1, algorithm_options={"gp-ucb": {"lengthscale": "lb"}})
    clean, killed, kills = kill_9_then_resume(config, tmp_path, most=20, pause=(0.0, 0.1),
                                              touched="calls/trial000-gp-ucb.calls")
    assert kills >= 3, "the run ended before it could be killed a few times"
    names = ["stages.jsonl", "summary.csv", "regret.png", "calls/trial000-gp-ucb.calls"]
    assert {n: (killed / n).read_bytes() for n in names} == {n: (clean / n).read_bytes() for n in names}
