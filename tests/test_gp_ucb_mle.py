"""gp-ucb with the MLE baseline's length scale as a compiled loop (qbo.algorithms.gp_ucb_mle,
issue 21): the arms and rewards of the Python stepper (the policy's own ``MLESurrogate``), its
length scales bit for bit (both call qbo.algorithms.lengthscale.mle_search.fit on the same
statistics), its posterior to rounding, the same loop with and without numba, a replay that
leaves the state a run goes on from bit for bit, and a kill -9 resume of a compact unit to the
same files."""

from __future__ import annotations

import json

import numpy as np
import pytest

import qbo.experiments.runner as runner
from qbo.algorithms.gp_ucb_mle import MLEStepper
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.experiments.assembly import make_policy_for
from qbo.experiments.compact import CALL_DTYPE
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import run_experiment
from tests.support.steppers import assert_same_run_without_numba, play, setup
from tests.support.stopped_runs import kill_9_then_resume

# (problem, its options, seed, budget, gp-ucb options). The length scale runs to either bound
# (10 on the centred problem, 1e-3 with the output scale fitted on 60 arms) and in between; no
# case has a tie to rounding; the Python stepper refits by LAPACK every round, so the larger
# cases are slow
CASES = [("synthetic-bernoulli-centred", {}, 5, 200, {"lengthscale": "mle"}),
         ("berkenkamp-bernoulli", {}, 1, 150, {"lengthscale": "mle"}),
         ("synthetic-bernoulli", {"num_arms": 60}, 0, 150, {"lengthscale": "mle+outputscale"}),
         ("synthetic-bernoulli", {"num_arms": 60}, 2, 150,
          {"lengthscale": "mle", "kernel": "matern32", "mle_every": 7}),
         pytest.param("berkenkamp-bernoulli", {}, 1, 400, {"lengthscale": "mle+outputscale"}, marks=pytest.mark.slow),
         pytest.param("synthetic-bernoulli", {"num_arms": 60}, 1, 300, {"lengthscale": "mle+outputscale",
                                                                         "kernel": "matern12"}, marks=pytest.mark.slow),
         pytest.param("synthetic-bernoulli-centred", {}, 2, 400, {"lengthscale": "mle:0.5", "kernel": "matern52"},
                      marks=pytest.mark.slow)]


@pytest.mark.parametrize("problem, problem_options, seed, budget, options", CASES)
def test_the_compiled_loop_plays_what_the_python_stepper_plays(problem, problem_options, seed, budget, options):
    config, instance, table = setup("gp-ucb", problem, problem_options, seed, budget, options)
    python = SurrogateStepper(make_policy_for(config, "gp-ucb", instance))
    expected_arms, expected_values, expected_rng = play(python, table, seed, budget)
    stepper = make_policy_for(config, "gp-ucb", instance).stepper()
    assert type(stepper) is MLEStepper
    arms, values, rng = play(stepper, table, seed, budget, chunks=(5, 100))
    assert arms.tolist() == expected_arms.tolist() and values.tolist() == expected_values.tolist()
    assert rng.bit_generator.state == expected_rng.bit_generator.state
    assert stepper.statistics() == python.statistics()
    surrogate = python.surrogate
    assert (stepper.lengthscale, stepper.outputscale) == (surrogate.theta, surrogate.scale)  # the same fit, bit for bit
    model = surrogate.select(budget + 1)  # refit by LAPACK
    for ours, theirs in zip(stepper.posterior(), model.posterior()):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert stepper.information_gain == pytest.approx(model.information_gain, rel=1e-12, abs=1e-12)
    every = options.get("mle_every", 1)
    assert stepper.fits == len([n for n in range(2, budget + 1) if n % every == 0 and n >= _second_arm(arms)])


def _second_arm(arms: np.ndarray) -> int:
    """The round at which a second distinct arm is first observed (fits start there)."""
    return int(np.flatnonzero(arms != arms[0])[0]) + 1


@pytest.mark.parametrize("options, budget", [({"lengthscale": "mle"}, 400),
                                             ({"lengthscale": "mle", "mle_every": 9}, 300),
                                             ({"lengthscale": "mle+outputscale"}, 170)])
def test_a_replay_leaves_the_state_a_run_goes_on_from(options, budget):
    """A resume: a fresh stepper told the calls so far (in two pieces, one fit each) then plays
    on: the same arms, length scale and posterior as the uninterrupted loop, bit for bit."""
    config, instance, table = setup("gp-ucb", "berkenkamp-bernoulli", {}, 7, budget, options)
    whole = make_policy_for(config, "gp-ucb", instance).stepper()
    arms, values, _ = play(whole, table, 7, budget)
    for cut in (1, 2, 150, 151, 161):
        first = make_policy_for(config, "gp-ucb", instance).stepper()
        rng = np.random.default_rng(7)
        a, v = np.empty(budget, np.int64), np.empty(budget)
        first.run(cut, table, rng, a, v)
        resumed = make_policy_for(config, "gp-ucb", instance).stepper()
        resumed.replay(a[:cut // 2], v[:cut // 2])
        resumed.replay(a[cut // 2:cut], v[cut // 2:cut])
        assert resumed.fits <= 2
        assert resumed.statistics() == first.statistics()
        assert (resumed.lengthscale, resumed.outputscale) == (first.lengthscale, first.outputscale)
        resumed.run(budget - cut, table, rng, a[cut:], v[cut:])
        assert a.tolist() == arms.tolist() and v.tolist() == values.tolist()
        for ours, theirs in zip(resumed.posterior(), whole.posterior()):
            assert np.array_equal(ours, theirs)
        assert resumed.information_gain == whole.information_gain


def test_a_compact_mle_unit_writes_what_a_record_a_call_writes(tmp_path, monkeypatch):
    """The runner picks the compiled loop for a compact unit; a record a call (the policy's own
    ask and tell) gives the same calls, summary and figure."""
    config = ExperimentConfig(problem="berkenkamp-bernoulli", algorithms=("gp-ucb",), budget=120, trials=1,
                              algorithm_options={"gp-ucb": {"lengthscale": "mle"}})
    played, run = [], MLEStepper.run

    def spy(self, count, *args):
        played.append(count)
        return run(self, count, *args)

    monkeypatch.setattr(MLEStepper, "run", spy)
    run_experiment(config, tmp_path / "compact")
    assert sum(played) == 120  # every call of the compact unit by the compiled loop
    monkeypatch.setattr(runner, "compact_unit", lambda *args, **kwargs: None)
    played.clear()
    run_experiment(config, tmp_path / "full")
    assert played == []  # a record a call: the policy's own ask and tell
    for name in ("summary.csv", "regret.png"):
        assert (tmp_path / "compact" / name).read_bytes() == (tmp_path / "full" / name).read_bytes(), name
    rows = [json.loads(x) for x in (tmp_path / "full" / "stages.jsonl").read_text().splitlines()]
    calls = np.fromfile(tmp_path / "compact" / "calls" / "trial000-gp-ucb.calls", dtype=CALL_DTYPE)
    assert calls["arm"].tolist() == [r["arm"] for r in rows]
    assert calls["reward"].tolist() == [r["estimate"] for r in rows]


def test_a_surrogate_that_has_seen_data_steps_in_python():
    config, instance, _ = setup("gp-ucb", "synthetic-bernoulli-centred", {}, 0, 10, {"lengthscale": "mle"})
    policy = make_policy_for(config, "gp-ucb", instance)
    policy.tell(policy.ask(), 1.0)
    assert type(policy.stepper()) is SurrogateStepper
    with pytest.raises(ValueError, match="seen nothing"):
        MLEStepper(policy)


@pytest.mark.slow  # a second interpreter, the loop and the search interpreted
def test_without_numba_the_loop_gives_the_same_run(tmp_path):
    """NUMBA_DISABLE_JIT runs the very same functions as Python (the fallback without numba):
    the same arms, fits and posterior, bit for bit."""
    code = ("import sys, numpy as np; from tests.support.steppers import play, setup; "
            "from qbo.experiments.assembly import make_policy_for; "
            "config, instance, table = setup('gp-ucb', 'berkenkamp-bernoulli', {}, 1, 120, "
            "{'lengthscale': 'mle+outputscale'}); "
            "s = make_policy_for(config, 'gp-ucb', instance).stepper(); a, v, _ = play(s, table, 1, 120); "
            "np.savez(sys.argv[1], arms=a, values=v, mean=s.posterior()[0], var=s.posterior()[1], "
            "info=s.information_gain, theta=[s.lengthscale, s.outputscale])")
    assert_same_run_without_numba(tmp_path, code, ("arms", "values", "mean", "var", "info", "theta"))


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_gives_the_same_files(tmp_path):
    """A 3 x 10^5-call MLE unit (a fit after every call), killed after its process touched the
    call file, at up to 20 random moments (up to 0.1 of an undisturbed warm run's wall time),
    then resumed: the same files."""
    config = ExperimentConfig(problem="synthetic-bernoulli-centred", algorithms=("gp-ucb",), budget=300_000,
                              trials=1, algorithm_options={"gp-ucb": {"lengthscale": "mle"}})
    clean, killed, kills = kill_9_then_resume(config, tmp_path, most=20, pause=(0.0, 0.1),
                                              touched="calls/trial000-gp-ucb.calls")
    assert kills >= 3, "the run ended before it could be killed a few times"
    names = ["stages.jsonl", "summary.csv", "regret.png", "calls/trial000-gp-ucb.calls"]
    assert {n: (killed / n).read_bytes() for n in names} == {n: (clean / n).read_bytes() for n in names}
