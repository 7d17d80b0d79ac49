"""Calibration-aware estimators: every IAE variant and MC padded on a device model, reachability
numbers, and Q-GP-UCB's weight for an unreached stage (issue 9, items 2 and 6)."""

from __future__ import annotations

import math

import pytest

from qbo.execution.exact import ExactExecutor
from qbo.noise import load_snapshot
from qbo.oracles.bernoulli import bernoulli
from qbo.qmc import CalibrationAwareIAE, CalibrationAwareMC, IterativeAmplitudeEstimation, make_estimator
from qbo.noise.depth import residual_bias
from qbo.qmc.capped import amplitude_bias_on
from qbo.qmc.montecarlo import MonteCarloEstimator, hoeffding_shots
from tests.support.bench import bench_module


def test_residual_bias_is_the_general_bound_and_mitigation_does_not_remove_it():
    # one scale: 1 - c, plus max(p01, p10) and the gain without readout correction
    assert math.isclose(residual_bias([0.9], [1.0], 0.02, 0.01, True), 0.1)
    assert math.isclose(residual_bias([0.9], [1.0], 0.02, 0.01, False), 0.02 + 0.97 * 0.1)
    # Richardson (1, 3): the triangle bound, larger than the unmitigated one
    zne = residual_bias([0.9, 0.73], [1.5, -0.5], 0.0, 0.0, True)
    assert math.isclose(zne, 1.5 * 0.1 + 0.5 * 0.27) and zne > residual_bias([0.9], [1.0], 0.0, 0.0, True)
    assert residual_bias([0.0, 0.0], [1.5, -0.5], 0.0, 0.0, True) == 1.0
    # the amplitude bias of a pad is the p-bias itself at k = 0 (a = p) and shrinks on a sub-interval
    assert math.isclose(amplitude_bias_on(0, 0.01), 0.01, rel_tol=1e-6)
    assert amplitude_bias_on(3, 0.01, 0.5, 0.6) <= amplitude_bias_on(3, 0.01) + 1e-12


def test_without_a_snapshot_the_estimators_are_the_noiseless_ones():
    assert type(make_estimator("iae", 0.01)) is IterativeAmplitudeEstimation
    assert type(make_estimator("mc", 0.01)) is MonteCarloEstimator
    snapshot = load_snapshot("fake_torino")
    assert isinstance(make_estimator("iae", 0.01, snapshot=snapshot), CalibrationAwareIAE)
    assert isinstance(make_estimator("mc", 0.01, snapshot=snapshot), CalibrationAwareMC)
    assert "assumes a noiseless device" in " ".join(make_estimator.__doc__.split())


@pytest.mark.slow
@pytest.mark.parametrize("mitigation", ["none", "rem", "zne+rem"])
def test_every_iae_variant_on_a_device_model_is_padded_and_honest_about_reach(mitigation):
    """Entangled 3-qubit oracle on fake_torino (exact channels, sampled): at eps = 0.01 the
    pads exceed eps at every usable power, so every variant says eps is unreachable at any
    budget, with a floor >= eps, and returns a wider interval that covers; on the Bernoulli
    oracle plain IAE reaches eps and reports the calls it spent."""
    from qbo.mitigation import make_mitigation

    bench = bench_module("noise")
    snapshot = load_snapshot("fake_torino")
    model = bench.DeviceModel(snapshot)
    oracle = bench.make_oracle("entangled", 0.3)
    model.add(oracle)
    executor = bench.ExactBinomialExecutor(model, seed=4)
    est = make_estimator("iae", 0.01, 0.05, mitigation=make_mitigation(mitigation, snapshot), snapshot=snapshot)
    out = est.estimate(oracle, executor)
    d = out.diagnostics
    assert out.method.endswith("pad") and not out.reached_epsilon and out.epsilon == 0.01
    assert out.ci_low <= 0.3 <= out.ci_high and out.half_width > 0.01
    assert d["calls_for_epsilon"] is None and d["epsilon_floor"] >= 0.01
    assert "not reachable at any budget" in out.note
    assert d["reachable_half_width"] == out.half_width
    # the stage is planned with the padded run's own cost model (it aims at a reachable eps)
    assert est.planned_calls(oracle) < 5 * out.oracle_calls
    plain = bench.make_oracle("bernoulli", 0.3)
    model.add(plain)
    hit = make_estimator("iae", 0.02, 0.05, snapshot=snapshot).estimate(plain, bench.ExactBinomialExecutor(model, seed=4))
    assert hit.reached_epsilon and hit.diagnostics["calls_for_epsilon"] == hit.oracle_calls
    assert hit.ci_low <= 0.3 <= hit.ci_high


@pytest.mark.slow
def test_padded_monte_carlo_costs_at_most_four_times_and_says_when_it_cannot_reach():
    bench = bench_module("noise")
    snapshot = load_snapshot("fake_torino")
    model = bench.DeviceModel(snapshot)
    oracle = bench.make_oracle("entangled", 0.6)
    model.add(oracle)
    out = make_estimator("mc", 0.01, 0.05, snapshot=snapshot).estimate(oracle, bench.ExactBinomialExecutor(model, seed=2))
    assert out.method == "mc+pad" and not out.reached_epsilon
    assert out.oracle_calls <= 4 * hoeffding_shots(0.01, 0.05) + 4
    assert out.ci_low <= 0.6 <= out.ci_high and out.half_width >= out.diagnostics["epsilon_floor"]
    loose = make_estimator("mc", 0.1, 0.05, snapshot=snapshot).estimate(oracle, bench.ExactBinomialExecutor(model, seed=2))
    assert loose.reached_epsilon and loose.half_width <= 0.1 + 1e-12


@pytest.mark.slow
def test_pads_bound_the_exact_bias_on_fake_torino():
    """The general bound holds on the exact channels of the Aer model (bench/noise.py's check)."""
    bench = bench_module("noise")
    snapshot = load_snapshot("fake_torino")
    model = bench.DeviceModel(snapshot)
    for kind in ("bernoulli", "entangled"):
        oracles = [bench.make_oracle(kind, a) for a in (0.05, 0.3, 0.62, 0.95)]
        line = bench.pad_check(model, snapshot, oracles, k_top=8)
        ratios = [float(part.split()[1]) for part in line.split("]): ", 1)[1].split(", ")]
        assert max(ratios) < 1.0, line


def test_an_unreached_stage_is_weighed_by_its_half_width(monkeypatch):
    """Eq. (3) with the achieved eps: a stage whose QMC did not reach eps_s is told the
    half-width it reached, under both weight rules; a reached one keeps eps_s ('requested')."""
    import dataclasses

    from qbo.algorithms.base import Query
    from qbo.execution.exact import ExactExecutor
    from qbo.experiments import trial
    from qbo.experiments.clock import FixedClock
    from qbo.problems import make_problem
    from qbo.qmc.result import Estimate, Round

    problem = make_problem("synthetic-bernoulli", seed=0)

    class Stub:
        def __init__(self, reached: bool) -> None:
            self.reached = reached

        def planned_calls(self, oracle) -> float:
            return 1.0

        def estimate(self, oracle, executor) -> Estimate:
            return Estimate(0.5, 0.3, 0.7, 0.05, 0.05, (Round(0, 10, 5),), 0.0, "stub", "exact",
                            reached_epsilon=self.reached)

    for reached, rule, expected in ((False, "requested", 0.2), (False, "achieved", 0.2),
                                    (True, "requested", 0.05), (True, "achieved", 0.2)):
        monkeypatch.setattr(trial, "make_estimator", lambda *a, reached=reached, **k: Stub(reached))
        settings = dataclasses.replace(trial.StageSettings(1000), weights=rule)
        out = trial._measure(FixedClock(problem), ExactExecutor(seed=0), Query(0, 0.05, 0.05), settings, 1000)
        assert math.isclose(out[4], expected), (reached, rule, out[4])


@pytest.mark.slow
def test_estimate_cli_reports_reach_on_a_device_model_and_the_noiseless_assumption_without():
    from typer.testing import CliRunner

    from qbo.cli.app import app

    args = ["estimate", "--oracle", "bernoulli:0.3", "--target", "aer:fake_torino", "--epsilon", "0.02"]
    padded = CliRunner().invoke(app, args + ["--mitigation", "rem"])
    assert padded.exit_code == 0, padded.output
    assert "iae+rem+pad" in padded.output and "reach        half-width" in padded.output
    bare = CliRunner().invoke(app, args + ["--no-calibration-aware"])
    assert bare.exit_code == 0, bare.output
    assert "assumes a noiseless device" in bare.output and "reach " not in bare.output


class _NoisyNamed(ExactExecutor):
    """Exact sampling under a noisy target's name: what a model-free estimator sees on a device."""

    @property
    def target(self) -> str:
        return "fake:FakeTorino"


@pytest.mark.parametrize("estimator", [IterativeAmplitudeEstimation(0.05), MonteCarloEstimator(0.05)])
def test_a_model_free_estimate_on_a_noisy_target_promises_nothing(estimator):
    """Issue 9 item 2: without a device model the interval covers sampling error only, so a
    noisy target's estimate says eps is not reached; on a noiseless target it is unchanged."""
    oracle = bernoulli(0.3)
    clean = estimator.estimate(oracle, ExactExecutor(seed=3))
    noisy = estimator.estimate(oracle, _NoisyNamed(seed=3))
    assert clean.reached_epsilon and "device noise" not in (clean.note or "")
    assert not noisy.reached_epsilon and "does not model" in noisy.note
    assert (noisy.value, noisy.ci_low, noisy.ci_high, noisy.oracle_calls) == (clean.value, clean.ci_low, clean.ci_high, clean.oracle_calls)


def test_a_padded_estimate_keeps_its_own_verdict_on_a_noisy_target():
    oracle = bernoulli(0.3)
    padded = make_estimator("iae", 0.05, snapshot=load_snapshot("fake_torino")).estimate(oracle, _NoisyNamed(seed=3))
    assert "does not model" not in (padded.note or "")


def test_a_resumed_estimate_on_a_noisy_target_promises_nothing():
    """Resumed QMC (qbo.qmc.resumable) has no device model either (issue 9 item 2)."""
    from qbo.qmc.resumable import ResumableState, refine_estimate

    oracle = bernoulli(0.3)
    clean, _ = refine_estimate(ResumableState(0.05), oracle, ExactExecutor(seed=3), 0.05)
    noisy, _ = refine_estimate(ResumableState(0.05), oracle, _NoisyNamed(seed=3), 0.05)
    assert clean.reached_epsilon and not noisy.reached_epsilon and "does not model" in noisy.note


def test_a_bias_floor_past_the_range_is_reported_as_the_whole_range():
    """A 6-qubit Gaussian oracle on fake_torino predicts a k = 0 bias of 0.93 in p: the floor
    is then 'anywhere in the window' (half-width 1/2 of the amplitude range), not 2.4."""
    from qbo.oracles import parse_oracle
    from qbo.qmc.capped import reachability
    from qbo.qmc.result import Estimate

    oracle = parse_oracle("gaussian:mean=0.4,std=0.2")
    scale = oracle.high - oracle.low
    est = Estimate(0.5, oracle.low, oracle.high, 0.02, 0.05, (), 0.0, "iae+pad", "aer:fake_torino", False)
    d = reachability(est, oracle, [0.93, 0.997], 0.02 / scale)
    assert d["calls_for_epsilon"] is None and d["epsilon_floor"] == pytest.approx(0.5 * scale)


def test_an_unreachable_eps_still_leaves_sampling_to_do_while_the_bias_bound_is_below_one_half():
    from qbo.qmc.capped import aim_half_width

    # small bounds: bound / fraction, as before (sampling half-width = the bound at fraction 1/2)
    assert math.isclose(aim_half_width(0.05, 0.5), 0.1)
    for bound in (0.01, 0.1, 1 / 6, 0.2, 0.249, 0.3, 0.49):
        aim = aim_half_width(bound, 0.5)
        assert bound < aim < 0.5  # IAE has a round to run: it never stops after 0 calls
        assert aim <= bound / 0.5 + 1e-12
        if bound <= 0.25 - 1 / 64:  # an interval at most 1/2 wide is affordable: aimed at
            assert aim <= 0.25
    assert aim_half_width(0.5, 0.5) == 0.5 and aim_half_width(0.7, 0.5) == 0.5


@pytest.mark.slow
def test_zne_rem_on_a_deep_oracle_spends_calls_and_never_returns_the_whole_window_after_none():
    """The 4-qubit discrete oracle on FakeKingston (issue 24 item 3): zne+rem's triangle bound at
    k = 0 (about 1/4) exceeds the unmitigated pad, so plain rounds run; the estimate spends calls,
    stays within 2x its planned calls, covers, is narrower than 1/2 and reports the floor."""
    from qbo.mitigation import make_mitigation

    bench = bench_module("noise")
    snapshot = bench.snapshot_of("fake:FakeKingston")
    model = bench.DeviceModel(snapshot)
    oracle = bench.make_oracle("discrete", 0.35)
    model.add(oracle)
    est = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.01, 0.05, mitigation=make_mitigation("zne+rem", snapshot)), snapshot)
    out = est.estimate(oracle, bench.ExactBinomialExecutor(model, seed=1))
    a = float(oracle.mean)
    assert 0 < out.oracle_calls <= 2 * est.planned_calls(oracle)
    assert out.ci_low <= a <= out.ci_high and out.ci_high - out.ci_low < 0.5
    assert not out.reached_epsilon and out.diagnostics["epsilon_floor"] > 0.01
    assert out.diagnostics["mitigation_skipped"] and "plain rounds ran" in out.note
    assert "not reachable at any budget" in out.note


def test_a_user_k_max_bounds_every_choice_of_the_device_plan(monkeypatch):
    """A user's k_max (``iae.k_max``) makes the plan the one of the powers it allows: the cap is
    the best usable power among them, the probe runs only if *its* bound is >= 1/2, and IAE aims
    at that power's bound (before, the cap was min(best power overall, k_max) and the aim came
    from the best power overall, one the user forbade: unreachable at the powers allowed)."""
    from qbo.qmc import capped
    from qbo.qmc.capped import PROBE_SHOTS, aim_half_width

    pads = {"now": lambda k: (0.6, 0.2)[k] if k < 2 else 0.25}  # k = 0 unusable, the best bound deep
    monkeypatch.setattr(capped, "predicted_pads", lambda snapshot, oracle, ks: tuple(pads["now"](k) for k in ks))
    snapshot, oracle = load_snapshot("fake_torino"), bernoulli(0.3)

    def aware(k_max):
        return CalibrationAwareIAE(IterativeAmplitudeEstimation(0.01, 0.05, k_max=k_max), snapshot)

    def plan(k_max):
        return aware(k_max).device_plan(oracle)

    capped._device_plan.cache_clear()
    try:
        free = plan(None)
        assert free.k_max is None and free.cap > 1 and not free.hopeless
        assert free.iae.epsilon == pytest.approx(aim_half_width(amplitude_bias_on(free.cap, 0.25), 0.5))
        one = plan(1)
        assert one.iae.epsilon == pytest.approx(aim_half_width(amplitude_bias_on(1, 0.2), 0.5))
        assert one.cap == one.iae.k_max == 1 and not one.hopeless and len(one.pads) == 2
        zero = plan(0)  # its one power's bound is 0.6: the probe
        assert zero.cap == 0 and zero.hopeless
        assert aware(0).planned_calls(oracle) == PROBE_SHOTS
        pads["now"] = lambda k: min(0.1 + 0.005 * k, 0.25)  # growing pads, the best bound deep
        capped._device_plan.cache_clear()
        deep, zero = plan(None), plan(0)
        assert deep.cap > 0 and deep.iae.epsilon < aim_half_width(0.1, 0.5)
        assert zero.cap == 0 and not zero.hopeless and zero.iae.epsilon == pytest.approx(aim_half_width(0.1, 0.5))
    finally:
        capped._device_plan.cache_clear()


def test_the_note_names_a_user_k_max_that_set_the_cap():
    """With k_max = 1 the cap is the calibration's best power within k <= 1 (k = 0 here): the
    note names the user's k_max, not the calibration alone (fake_torino allows deeper powers)."""
    snapshot, oracle = load_snapshot("fake_torino"), bernoulli(0.3)
    free = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.05, 0.05), snapshot)
    assert free.device_plan(oracle).cap > 1
    out = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.05, 0.05, k_max=1), snapshot).estimate(
        oracle, ExactExecutor(seed=1))
    assert "by the user's k_max=1 and fake_torino's calibration within it" in out.note
