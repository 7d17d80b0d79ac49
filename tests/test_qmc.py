"""Monte Carlo and the automatic choice between MC and IAE."""

import math

import pytest

from qbo.execution import ExactExecutor
from qbo.oracles import bernoulli, gaussian
from qbo.qmc import AutoEstimator, IterativeAmplitudeEstimation, LikelihoodRatioAE, MonteCarloEstimator, make_estimator


def test_mc_costs_scale_as_one_over_eps_squared():
    ex = ExactExecutor(0)
    calls = [MonteCarloEstimator(e).estimate(bernoulli(0.4), ex).oracle_calls for e in (0.04, 0.01)]
    assert calls[1] / calls[0] == pytest.approx(16, rel=0.01)


def test_iae_beats_mc_by_far_at_small_eps():
    ex = ExactExecutor(0)
    iae = IterativeAmplitudeEstimation(0.001).estimate(bernoulli(0.4), ex).oracle_calls
    mc = MonteCarloEstimator(0.001).expected_calls(0.001)
    assert iae < mc / 50  # Hoeffding needs ~1.8e6 calls at eps=1e-3; IAE ~1e4


@pytest.mark.parametrize("method", ["mc", "iae", "auto"])
def test_eps_of_one_half_needs_no_calls(method):
    """[0, 1] already has half-width 1/2: its midpoint is within eps of any mean."""
    est = make_estimator(method, 0.5).estimate(bernoulli(0.3), ExactExecutor(1))
    assert est.oracle_calls == 0 and est.ci_low <= 0.3 <= est.ci_high


def test_auto_uses_mc_against_a_fixed_shot_iae_at_large_eps():
    """Hoeffding needs ceil(ln(40) / (2 * 0.3^2)) = 21 calls at eps = 0.3; IAE with a fixed
    100 shots per round pays at least 100."""
    auto = AutoEstimator(0.3, 0.05, {"shots": 100, "alpha_split": "uniform"})
    assert isinstance(auto.choose(bernoulli(0.3)), MonteCarloEstimator)
    assert auto.estimate(bernoulli(0.3), ExactExecutor(1)).oracle_calls == 21


def test_auto_choice_never_depends_on_the_unknown_mean():
    """The choice may use (eps, alpha, window) only: oracles that differ only in their mean
    get the same estimator, so choosing cannot bias coverage."""
    for eps in (0.4, 0.3, 0.1, 0.03):
        auto = AutoEstimator(eps, 0.05, {"shots": 100, "alpha_split": "uniform"})
        kinds = {type(auto.choose(bernoulli(p))) for p in (0.0, 0.05, 0.3, 0.5, 0.9, 1.0)}
        assert len(kinds) == 1, (eps, kinds)


def test_auto_uses_lrae_at_small_eps():
    auto = AutoEstimator(0.005, 0.05)
    assert isinstance(auto.choose(bernoulli(0.3)), LikelihoodRatioAE)


def test_auto_with_iae_options_keeps_that_iae():
    auto = AutoEstimator(0.005, 0.05, {"shots": 100})
    assert isinstance(auto.choose(bernoulli(0.3)), IterativeAmplitudeEstimation)


def test_auto_decides_on_the_amplitude_scale():
    # a Gaussian oracle's window (-1.6, 2.6) shrinks eps by 4.2 on the amplitude scale
    o = gaussian(0.5, 0.4)
    auto = AutoEstimator(0.2, 0.05)
    eps_unit = 0.2 / (o.high - o.low)
    expected = MonteCarloEstimator(0.2).expected_calls(eps_unit) <= LikelihoodRatioAE(0.2).expected_calls(eps_unit)
    assert isinstance(auto.choose(o), MonteCarloEstimator) == expected


def test_estimates_report_reward_units():
    o = gaussian(0.7, 0.3)
    est = MonteCarloEstimator(0.05).estimate(o, ExactExecutor(2))
    assert est.ci_high - est.ci_low <= 0.1 + 1e-9
    assert abs(est.value - o.mean) < 0.1  # Hoeffding at 95%, checked with a fixed seed


def test_estimate_json_round_trip_has_rounds_and_calls():
    est = IterativeAmplitudeEstimation(0.02).estimate(bernoulli(0.2), ExactExecutor(3))
    out = est.to_json()
    assert out["oracle_calls"] == sum(r["shots"] * (2 * r["k"] + 1) for r in out["rounds"])
    assert out["wall_time"] > 0 and out["method"] == "iae"


def test_make_estimator_rejects_unknown_method():
    with pytest.raises(ValueError, match="'quantum'"):
        make_estimator("quantum", 0.1)


def test_monte_carlo_refuses_impossible_sample_counts():
    with pytest.raises(ValueError, match="1e-12"):
        MonteCarloEstimator(1e-12).estimate(bernoulli(0.3), ExactExecutor(0))


def test_auto_runs_the_method_it_planned_with_its_one_device_model():
    """``planned_calls`` and ``estimate`` read one device model, the snapshot auto was built
    with: a stage planned as the device choice runs the device choice, on any executor (before,
    the estimate took the noiseless choice on a noiseless executor, or the target's own
    calibration on a noisy one, whatever the plan had used)."""
    from qbo.noise import load_snapshot

    snapshot, oracle = load_snapshot("fake_torino"), bernoulli(0.3)
    auto = make_estimator("auto", 0.05, snapshot=snapshot)
    chosen, facts = auto.device_choice(oracle, snapshot)
    assert auto.planned_calls(oracle) == chosen.planned_calls(oracle)
    out = auto.estimate(oracle, ExactExecutor(seed=1))
    assert out.diagnostics["auto_choice"] == facts and out.method.startswith(facts["chosen"].split("+")[0])
    bare = make_estimator("auto", 0.05)
    assert bare.planned_calls(oracle) == bare.choose(oracle).planned_calls(oracle)
    assert "auto_choice" not in bare.estimate(oracle, ExactExecutor(seed=1)).diagnostics
