"""Tests for qbo.qmc.mlae: coverage, honest calls, reachability, goodness of fit, auto."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from qbo.execution.exact import ExactExecutor
from qbo.grover import cache_key
from qbo.oracles import bernoulli
from qbo.qmc import AutoEstimator, MaximumLikelihoodAE, make_estimator
from qbo.qmc.confidence import clopper_pearson
from qbo.qmc.likelihood import DecayPrior, Pooled, fisher, profile, rotation_score, theta_sd

ALPHA = 0.05
TRUE = dict(a0=0.95, r=0.915, p01=0.02, p10=0.04)
PRIOR = DecayPrior(0.97, 0.93, 0.2, 0.5 * abs(math.log(0.93)) + 0.005, 0.02, 0.04, "test")


class ModelExecutor:
    """Samples the decay + readout model of a Bernoulli amplitude a, reading k off each power
    circuit; ``delta`` over-rotates every Grover step coherently (angle 2 theta + delta)."""

    def __init__(self, a: float, a0=1.0, r=1.0, p01=0.0, p10=0.0, delta=0.0, seed=0, target="ibm:model_executor"):
        self.theta = math.asin(math.sqrt(a))
        self.a0, self.r, self.p01, self.p10, self.delta = a0, r, p01, p10, delta
        self.rng = np.random.default_rng(seed)
        self.target = target
        self.ran: list[tuple[int, int]] = []

    def run(self, circuits, shots):
        out = []
        for circuit, n in zip(circuits, shots):
            k = cache_key(circuit)[1]
            self.ran.append((k, int(n)))
            s = math.sin((2 * k + 1) * self.theta + k * self.delta) ** 2
            q = self.p01 + (1 - self.p01 - self.p10) * (0.5 + self.a0 * self.r**k * (s - 0.5))
            ones = int(self.rng.binomial(n, q))
            out.append({"1": ones, "0": int(n) - ones})
        return out


def _allowed_misses(n: int, alpha: float = ALPHA) -> int:
    """0.999 quantile of Binomial(n, alpha): an estimator covering >= 1 - alpha exceeds it
    with probability < 0.001."""
    return int(binom.ppf(0.999, n, alpha))


def _misses(estimator, amplitudes, make_executor) -> int:
    misses = 0
    for i, a in enumerate(amplitudes):
        est = estimator.estimate(bernoulli(float(a)), make_executor(float(a), i))
        misses += not (est.ci_low - 1e-12 <= a <= est.ci_high + 1e-12)
    return misses


def test_coverage_exact_fast():
    amps = np.random.default_rng(11).uniform(0, 1, 30)
    misses = _misses(MaximumLikelihoodAE(0.08, ALPHA), amps, lambda a, i: ExactExecutor(seed=i))
    assert misses <= _allowed_misses(30)


@pytest.mark.slow
@pytest.mark.parametrize("eps, n", [(0.01, 300), (0.001, 100)])
def test_coverage_exact(eps, n):
    amps = np.random.default_rng(12).uniform(0, 1, n)
    misses = _misses(MaximumLikelihoodAE(eps, ALPHA), amps, lambda a, i: ExactExecutor(seed=i))
    assert misses <= _allowed_misses(n)


@pytest.mark.slow
def test_coverage_under_decay_and_readout():
    amps = np.random.default_rng(13).uniform(0, 1, 60)
    est = MaximumLikelihoodAE(0.02, ALPHA, prior=PRIOR, decay="fit")
    misses = _misses(est, amps, lambda a, i: ModelExecutor(a, **TRUE, seed=i))
    assert misses <= _allowed_misses(60)


@pytest.mark.slow
def test_ignoring_the_decay_misses_more_than_fitting_it():
    """On decaying data (r = 0.915, readout 2% / 4%) the no-decay likelihood misses more
    often than the fitted one (issue 9: 4.5% coverage without the decay term), and the fitted
    one stays within the binomial margin of 1 - alpha."""
    amps = np.random.default_rng(14).uniform(0, 1, 40)
    exe = lambda a, i: ModelExecutor(a, **TRUE, seed=100 + i)
    none = _misses(MaximumLikelihoodAE(0.01, decay="none"), amps, exe)
    fit = _misses(MaximumLikelihoodAE(0.01, prior=PRIOR, decay="fit"), amps, exe)
    assert fit <= _allowed_misses(40) and none > fit + 5


@pytest.mark.parametrize("noisy", [False, True])
def test_calls_equal_the_sum_over_circuits_run(noisy):
    ex = ModelExecutor(0.37, **(TRUE if noisy else {}), seed=3)
    kw = dict(prior=PRIOR, decay="fit") if noisy else dict(decay="none")
    est = MaximumLikelihoodAE(0.03, **kw).estimate(bernoulli(0.37), ex)
    assert est.oracle_calls == sum(n * (2 * k + 1) for k, n in ex.ran)
    assert [(r.k, r.shots) for r in est.rounds] == ex.ran
    assert ex.ran[0][0] == 0


def test_estimate_reports_its_interval_method_and_fit():
    est = MaximumLikelihoodAE(0.02).estimate(bernoulli(0.2), ExactExecutor(seed=1))
    d = est.diagnostics
    assert est.method == "mlae" and "profile likelihood" in d["interval_method"]
    assert d["decay"] == "none" and d["a0"] == 1.0 and d["r"] == 1.0
    assert d["dof"] >= 0 and 0 <= d["gof_p_value"] <= 1 and d["model_fits"]
    assert est.reached_epsilon and est.half_width <= 0.02 * (1 + 1e-9)
    assert est.to_json()["diagnostics"]["interval_method"] == d["interval_method"]


def test_budget_reports_reachability_with_numbers():
    ex = ModelExecutor(0.4, **TRUE, seed=2)
    est = MaximumLikelihoodAE(0.002, prior=PRIOR, decay="fit", budget=3000).estimate(bernoulli(0.4), ex)
    d = est.diagnostics
    assert est.oracle_calls <= 3000
    assert not est.reached_epsilon and d["stopped"] == "budget"
    assert d["reachable_half_width"] == pytest.approx(est.half_width)
    assert d["calls_for_epsilon"] is not None and d["calls_for_epsilon"] > est.oracle_calls
    assert d["epsilon_floor"] == 0.0
    assert "not reached" in est.note


def test_a_budget_is_spent_when_eps_is_out_of_reach():
    """eps = 1e-4 is far out of reach of 2e4 calls under r = 0.915: the estimate still spends
    the budget (it used to stop as 'unreachable' after a few thousand calls, issue 9), up to
    less than one shot of its deepest power, and goes no deeper than budget / (3 shots) calls
    a round."""
    budget = 20000
    ex = ModelExecutor(0.4, **TRUE, seed=5)
    est = MaximumLikelihoodAE(1e-4, prior=PRIOR, decay="fit", budget=budget).estimate(bernoulli(0.4), ex)
    deepest = max(k for k, _ in ex.ran)
    assert est.diagnostics["stopped"] == "budget" and not est.reached_epsilon
    assert budget - (2 * deepest + 1) < est.oracle_calls <= budget
    assert 16 * (2 * deepest + 1) <= budget / 3
    assert est.ci_low <= 0.4 <= est.ci_high


def test_a_model_that_does_not_fit_widens_and_says_so():
    """gof_level = 1 declares every fit bad: the interval then contains the k = 0 interval,
    reached_epsilon is False and the note and diagnostics say why."""
    est = MaximumLikelihoodAE(0.01, gof_level=1.0, max_rounds=6).estimate(bernoulli(0.3), ExactExecutor(seed=4))
    zero = [r for r in est.rounds if r.k == 0]
    low, high = clopper_pearson(sum(r.ones for r in zero), sum(r.shots for r in zero), ALPHA)
    assert est.ci_low <= low + 1e-12 and est.ci_high >= high - 1e-12
    assert not est.reached_epsilon and not est.diagnostics["model_fits"]
    assert "does not fit" in est.note and est.diagnostics["calls_for_epsilon"] is None


def test_coherent_over_rotation_is_flagged():
    """An over-rotation delta = 0.05 rad of every Q with check_shots = 36 / delta^2 k = 0 shots
    after the schedule: the deep powers read theta + delta / 2 while the check pins theta to sd
    ~ delta / 12, so the over-rotation score has non-centrality ~ delta^2 N = 36 against the
    chi2_1 cut 10.8 at gof_level 1e-3 (power > 99%). Every run is flagged, reports a wide
    interval and reached_epsilon False, and its value comes from the k = 0 counts (within
    4 binomial sd of a)."""
    delta = 0.05
    check = round(36 / delta**2)
    for i, a in enumerate((0.3, 0.45, 0.6)):
        est = MaximumLikelihoodAE(0.001, check_shots=check, decay="none").estimate(
            bernoulli(a), ModelExecutor(a, delta=delta, seed=i))
        d = est.diagnostics
        assert not d["model_fits"] and d["stopped"] == "misfit" and d["rotation_p_value"] < 1e-3
        assert not est.reached_epsilon and est.half_width > 0.001 and "over-rotation" in est.note
        assert abs(est.value - a) <= 4 * math.sqrt(a * (1 - a) / check)


def test_the_check_round_does_not_flag_a_correct_model():
    """Without an over-rotation the same check round passes (false-alarm rate <= 2 gof_level
    per test, so 3 runs all pass with probability >= 0.99) and eps is reached."""
    for i, a in enumerate((0.3, 0.45, 0.6)):
        ex = ModelExecutor(a, seed=10 + i)
        est = MaximumLikelihoodAE(0.001, check_shots=14400, decay="none").estimate(bernoulli(a), ex)
        assert est.diagnostics["model_fits"] and est.reached_epsilon
        assert ex.ran[-1] == (0, 14400)


def test_rotation_score_is_zero_at_the_truth_and_grows_with_delta():
    """Expected counts of the over-rotated model: the score statistic at the true theta is ~0
    for delta = 0 and grows as delta^2 (a quadratic form in the score)."""
    theta, ks = math.asin(math.sqrt(0.3)), np.array([0.0, 1.0, 3.0, 7.0])
    shots = np.array([2000.0, 100.0, 100.0, 100.0])

    def stat(delta):
        q = np.sin((2 * ks + 1) * theta + ks * delta) ** 2
        return rotation_score(theta, 0.0, 0.0, Pooled(ks, shots, shots * q), DecayPrior())[0]

    assert stat(0.0) < 1e-9
    assert stat(0.05) > 1.0 and stat(0.01) == pytest.approx(stat(0.02) / 4, rel=0.2)


def test_coherent_over_rotation_is_flagged_with_an_anchor():
    """With anchor_shots = 36 / delta^2 the k = 0 data pin theta to sd delta / 12, so the
    shift of delta / 2 that every deep power reads is a 6 sd contradiction: most runs are
    flagged, and a flagged run reports a wide interval that still covers."""
    delta, flagged = 0.2, 0
    for i, a in enumerate((0.3, 0.6, 0.45, 0.8, 0.15)):
        est = MaximumLikelihoodAE(0.001, anchor_shots=round(36 / delta**2), decay="none").estimate(
            bernoulli(a), ModelExecutor(a, delta=delta, seed=1))
        if not est.diagnostics["model_fits"]:
            flagged += 1
            assert not est.reached_epsilon and est.half_width > 0.001 and est.ci_low <= a <= est.ci_high
            assert est.diagnostics["stopped"] == "misfit"
    assert flagged >= 3


def test_profile_fixes_nuisances_on_the_noiseless_prior():
    data = Pooled(np.array([0.0, 3.0]), np.array([100.0, 50.0]), np.array([30.0, 20.0]))
    ll, u, v = profile(np.linspace(0.1, 1.0, 5), data, DecayPrior())
    assert np.all(u == 0.0) and np.all(v == 0.0) and np.all(np.isfinite(ll))


def test_noiseless_fisher_is_suzuki_4_n_m_squared():
    """Suzuki et al. 2020: I(theta) = 4 sum_k N_k (2k + 1)^2 on the noiseless model."""
    ks, shots = np.array([0.0, 1.0, 4.0]), np.array([10.0, 20.0, 30.0])
    sd = theta_sd(fisher(0.4, 0.0, 0.0, ks, shots, DecayPrior()), DecayPrior())
    assert sd == pytest.approx((4 * np.sum(shots * (2 * ks + 1) ** 2)) ** -0.5, rel=1e-9)


def test_auto_picks_mlae_on_noisy_targets_only():
    auto = AutoEstimator(0.05, ALPHA, mlae_options={"prior": PRIOR})
    noisy = auto.estimate(bernoulli(0.3), ModelExecutor(0.3, **TRUE, seed=1, target="aer:fake_torino"))
    assert noisy.method == "mlae"
    assert auto.estimate(bernoulli(0.3), ExactExecutor(seed=1)).method in ("iae", "mc")


def test_registry_and_validation():
    assert isinstance(make_estimator("mlae", 0.01, shots=8), MaximumLikelihoodAE)
    for bad in (dict(decay="x"), dict(shots=0), dict(budget=0), dict(localise=0.0), dict(stop_share=0.0),
                dict(check_shots=-1), dict(budget=100, check_shots=100)):
        with pytest.raises(ValueError):
            MaximumLikelihoodAE(0.01, **bad)
    with pytest.raises(ValueError):
        DecayPrior(a0=1.5)


def test_expected_calls_tracks_the_exact_runs():
    model = MaximumLikelihoodAE(0.05).expected_calls(0.05)
    runs = [MaximumLikelihoodAE(0.05).estimate(bernoulli((j + 0.5) / 16), ExactExecutor(seed=j)).oracle_calls for j in range(16)]
    assert 0.5 * np.mean(runs) <= model <= 2.0 * np.mean(runs)
    assert MaximumLikelihoodAE(0.05, check_shots=100).expected_calls(0.05) == pytest.approx(model + 100)
