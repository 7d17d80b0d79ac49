"""Progress reports of an estimate (``qbo.qmc.progress``) and the call budget (``max_calls``) of the estimators."""

from __future__ import annotations

import io
import math
import json
import time

import pytest
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.execution.exact import ExactExecutor
from qbo.mitigation import Mitigation
from qbo.noise import load_snapshot
from qbo.oracles import bernoulli
from qbo.qmc import (
    AutoEstimator, CalibrationAwareIAE, IterativeAmplitudeEstimation, MaximumLikelihoodAE, MonteCarloEstimator,
    make_estimator,
)
from qbo.qmc.progress import Progress, ProgressPrinter, Tracker, listening
from qbo.qmc.result import Round


def _heard(estimator, oracle=None, executor=None):
    heard: list[Progress] = []
    with listening(heard.append, plan_after_s=0.0):
        est = estimator.estimate(oracle or bernoulli(0.3), executor or ExactExecutor(seed=3))
    return est, heard


@pytest.mark.parametrize("estimator", [
    pytest.param(IterativeAmplitudeEstimation(0.01), id="iae"),
    pytest.param(IterativeAmplitudeEstimation(0.05, mitigation=Mitigation(scales=(1, 3))), id="iae+zne",
                 marks=pytest.mark.slow),  # ~3 s a mitigated estimate
    pytest.param(MaximumLikelihoodAE(0.01), id="mlae"),
    pytest.param(MonteCarloEstimator(0.05), id="mc"),
    pytest.param(AutoEstimator(0.01), id="auto"),
    pytest.param(CalibrationAwareIAE(IterativeAmplitudeEstimation(0.05), load_snapshot("fake_torino")), id="iae+pad",
                 marks=pytest.mark.slow),
])
def test_every_round_is_reported_and_the_last_report_is_the_estimates_count(estimator):
    est, heard = _heard(estimator)
    assert heard, "no progress reported"
    assert heard[-1].calls == est.oracle_calls and heard[-1].rounds == len(est.rounds)
    assert [p.calls for p in heard] == sorted(p.calls for p in heard)  # calls only grow
    assert heard[0].planned_calls is not None and heard[0].planned_calls > 0


def test_without_a_listener_a_tracker_asks_no_plan():
    asked = []
    tracker = Tracker("x", lambda: asked.append(1) or 1.0)
    tracker.add([Round(k=1, shots=10, ones=3)])
    assert asked == [] and tracker.calls == 0


def test_a_short_estimate_asks_no_plan():
    """The cost model is asked for only after ``plan_after_s``: short estimates pay nothing."""
    asked: list[int] = []
    heard: list[Progress] = []
    with listening(heard.append, plan_after_s=60.0):
        tracker = Tracker("x", lambda: asked.append(1) or 1.0)
        tracker.add([Round(k=1, shots=10, ones=3)])
    assert asked == [] and heard[-1].calls == 30 and heard[-1].planned_calls is None


def test_eta_scales_the_elapsed_time_by_the_calls_left():
    assert Progress("iae", 2, 100, 400.0, 10.0).eta_s == pytest.approx(30.0)
    assert Progress("iae", 2, 500, 400.0, 10.0).eta_s is None  # past the plan: no honest ETA
    assert Progress("iae", 0, 0, 400.0, 1.0).eta_s is None


def test_printer_writes_a_line_per_period_without_a_terminal():
    buf = io.StringIO()
    with ProgressPrinter(buf, period=0.02, delay=0.0) as printer, listening(printer, plan_after_s=0.0):
        MaximumLikelihoodAE(1e-3).estimate(bernoulli(0.3), ExactExecutor(seed=1))
        time.sleep(0.1)
    lines = buf.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("estimate: ") for line in lines)
    assert "calls of ~" in lines[-1] and "rounds" in lines[-1]


def test_printer_is_silent_for_a_short_estimate():
    buf = io.StringIO()
    with ProgressPrinter(buf, period=0.02, delay=60.0) as printer, listening(printer):
        IterativeAmplitudeEstimation(0.05).estimate(bernoulli(0.3), ExactExecutor(seed=1))
        time.sleep(0.05)
    assert buf.getvalue() == ""


@pytest.mark.parametrize("cap", [1, 7, 300, 2000])
@pytest.mark.parametrize("zne", [False, True])
def test_iae_keeps_within_max_calls_and_says_it_stopped(cap, zne):
    """The cap binds (eps 1e-3 needs ~1e4 calls): at most ``cap`` calls, folded ones at their
    scale, and an honest interval; 20 seeds, a = 0.3, alpha 0.05: every interval covers
    (a miss has probability <= alpha per run, and the intervals only get wider when cut)."""
    mitigation = Mitigation(scales=(1, 3)) if zne else None
    covered = 0
    for seed in range(20):
        est = IterativeAmplitudeEstimation(1e-3, max_calls=cap, mitigation=mitigation).estimate(
            bernoulli(0.3), ExactExecutor(seed=seed))
        assert est.oracle_calls <= cap and not est.reached_epsilon
        covered += est.ci_low <= 0.3 <= est.ci_high
    assert covered >= 17  # Binomial(20, 0.95) >= 17 with probability 0.98


def test_iae_max_calls_that_does_not_bind_changes_nothing():
    a = IterativeAmplitudeEstimation(0.01).estimate(bernoulli(0.3), ExactExecutor(seed=4))
    b = IterativeAmplitudeEstimation(0.01, max_calls=10**9).estimate(bernoulli(0.3), ExactExecutor(seed=4))
    assert a.rounds == b.rounds and (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)


def test_mc_max_calls_widens_to_the_hoeffding_interval_of_the_samples_taken():
    est = MonteCarloEstimator(0.001, 0.05, max_calls=1000).estimate(bernoulli(0.3), ExactExecutor(seed=2))
    assert est.oracle_calls == 1000 and not est.reached_epsilon
    assert est.half_width == pytest.approx((math.log(2 / 0.05) / 2000) ** 0.5, rel=1e-9)


@pytest.mark.parametrize("method", ["iae", "mlae", "mc", "auto"])
def test_make_estimator_passes_the_budget_to_every_method(method):
    est = make_estimator(method, 1e-3, max_calls=800).estimate(bernoulli(0.3), ExactExecutor(seed=5))
    assert est.oracle_calls <= 800


def test_cli_max_calls_and_quiet():
    result = CliRunner().invoke(app, ["estimate", "--oracle", "bernoulli:0.3", "--epsilon", "0.001",
                                      "--max-calls", "700", "--quiet", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["oracle_calls"] <= 700 and out["reached_epsilon"] is False


def test_cli_bad_max_calls_is_one_line():
    result = CliRunner().invoke(app, ["estimate", "--max-calls", "0"])
    assert result.exit_code == 2 and "max-calls" in result.output and len(result.output.strip().splitlines()) == 1
