"""Coherent over-rotation of Q on hardware (issue 24, item 2; qbo.qmc.over_rotation): the
calibration-aware IAE's interval holds every over-rotation its counts cannot exclude on an
``ibm:`` target, as MLAE's does, and nothing changes on a simulator."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.noise import load_snapshot
from qbo.oracles import bernoulli
from qbo.qmc import make_estimator
from qbo.qmc.confidence import clopper_pearson
from qbo.qmc.likelihood import DecayPrior
from qbo.qmc.mlae import MaximumLikelihoodAE, calibration_prior
from qbo.qmc.mlae_fit import FALLBACK_A0_SD, shallow_interval
from qbo.qmc.give_up import GIVE_UP_CALLS, k0_top_up, widest_k0_interval
from qbo.qmc.over_rotation import held_by_iae, held_interval, on_real_device
from qbo.qmc.result import Estimate, Round
from tests.support.bench import bench_module

ModelExecutor = bench_module("mlae_coherent").ModelExecutor  # MLAE's model with an over-rotation delta of Q
SNAPSHOT = load_snapshot("fake_torino")


def _model() -> dict[str, float]:
    """The device the estimator is told about: the depth model's contrasts and readout."""
    prior = calibration_prior(SNAPSHOT, bernoulli(0.5))
    return dict(a0=prior.a0, r=prior.r, p01=prior.p01, p10=prior.p10)


def test_iae_on_hardware_holds_an_over_rotation_that_a_simulator_label_misses():
    """delta = 0.1 rad a Grover step moves IAE's deep rounds by about sin(2 theta) delta / 2,
    some 0.05 in amplitude, against a padded half-width near eps = 0.01: on a simulator label
    (no coherent error assumed) the interval misses in every run below; on ``ibm:`` it is
    widened (theta by K / (2K + 1) (|delta_hat| + z sd)) and holds a, with ``reached_epsilon`` False and the
    note naming the over-rotation and --twirl."""
    model = _model()
    for i, a in enumerate((0.3, 0.45, 0.6)):
        estimator = make_estimator("iae", 0.01, snapshot=SNAPSHOT)
        sim = estimator.estimate(bernoulli(a), ModelExecutor(a, **model, delta=0.1, seed=i, target="fake:model"))
        assert not sim.ci_low <= a <= sim.ci_high and "rotation_widening" not in sim.diagnostics
        hw = estimator.estimate(bernoulli(a), ModelExecutor(a, **model, delta=0.1, seed=i, target="ibm:model_executor"))
        d = hw.diagnostics
        assert hw.rounds == sim.rounds  # the same counts: only the interval differs
        assert hw.ci_low <= a <= hw.ci_high and not hw.reached_epsilon
        assert d["rotation_widening"] > 0.04 and 0 < d["rotation_sd"] < 0.1 and d["rotation_shift"] > 0
        assert hw.ci_low <= sim.ci_low and hw.ci_high >= sim.ci_high
        assert max(sim.ci_low - hw.ci_low, hw.ci_high - sim.ci_high) == pytest.approx(d["rotation_widening"], rel=1e-12)
        assert "over-rotation of Q the counts cannot exclude" in hw.note and "--twirl" in hw.note
        need = d["calls_for_epsilon"]  # the widening's sd shrinks as calls^-1/2: far more calls than spent
        assert need is None or need >= hw.oracle_calls * (d["rotation_widening"] / 0.005) ** 2 * (1 - 1e-9)
        assert sim.diagnostics["calls_for_epsilon"] is None or need is None or need > sim.diagnostics["calls_for_epsilon"]


def test_held_rotation_of_k0_rounds_is_nothing():
    """Without a Grover step no over-rotation moves the estimate: no lever, nothing widened."""
    prior = calibration_prior(SNAPSHOT, bernoulli(0.5))
    held = held_by_iae([Round(0, 100, 40)], prior, 0.4, 0.05)
    assert held.lever == 0.0 and not held.flagged
    assert held_interval(0.3, 0.5, held.lever, held.sd, held.score, 1.96) == (0.3, 0.5, 0.0)


def test_a_strong_over_rotation_is_held_while_the_test_is_still_gated():
    """delta = 0.3 rad at a = 0.1: in these runs the counts resolve delta only to sd > 0.1 rad,
    where the goodness of fit does not test (``ProfileFit.rotation`` reports 0), yet the score
    is large; the bound on delta uses it, so the interval holds a (it missed with the gated score)."""
    model = _model()
    for seed in (1007, 1009):
        est = make_estimator("iae", 0.01, snapshot=SNAPSHOT).estimate(
            bernoulli(0.1), ModelExecutor(0.1, **model, delta=0.3, seed=seed, target="ibm:model_executor"))
        assert est.diagnostics["rotation_sd"] > 0.1 and est.diagnostics["rotation_score"] > 4
        assert est.ci_low <= 0.1 <= est.ci_high


def test_mlae_at_the_end_of_the_range_falls_back_to_the_k0_rounds_on_hardware():
    """All zeros at k = 0, 1 and 4 put MLAE's fit at theta = 0, where the information on delta
    vanishes (sd infinite) while an over-rotation of -0.2 rad still moves the deep powers: the
    interval was [0, 0.0025], 'reached', and missed a = 0.01. Now it is the k = 0 rounds' own,
    which no over-rotation moves, not reached, and the note says why."""
    model = _model()
    for seed in (300, 301, 305):
        est = make_estimator("mlae", 0.01, snapshot=SNAPSHOT).estimate(
            bernoulli(0.01), ModelExecutor(0.01, **model, delta=-0.2, seed=seed, target="ibm:model_executor"))
        assert est.diagnostics["rotation_sd"] is None and est.diagnostics["rotation_widening"] is None
        assert est.ci_low <= 0.01 <= est.ci_high and not est.reached_epsilon
        assert "k=0 rounds' own" in est.note


def test_only_ibm_targets_are_real_devices():
    assert on_real_device("ibm:ibm_torino") and not on_real_device("fake:FakeTorino")
    assert not on_real_device("aer:fake_torino") and not on_real_device("exact") and not on_real_device("a test double")


@settings(max_examples=80, deadline=None)
@given(low=st.floats(0.0, 1.0), width=st.floats(0.0, 1.0), lever=st.floats(-1.0, 1.0), sd=st.floats(1e-4, 2.0),
       score=st.floats(0.0, 100.0), z=st.floats(0.5, 4.0))
def test_held_interval_moves_theta_out_by_the_lever_times_the_excludable_delta(low, width, lever, sd, score, z):
    """theta's ends move out by |lever| (sqrt(score) + z) sd, clipped to [0, pi / 2]: the held
    interval contains the original and stays in [0, 1]; it grows with the score; no lever, no change."""
    high = min(1.0, low + width)
    a_low, a_high, held = held_interval(low, high, lever, sd, score, z)
    assert 0.0 <= a_low <= low + 1e-12 and high - 1e-12 <= a_high <= 1.0
    assert held == (0.0 if lever == 0.0 else pytest.approx(sd * (math.sqrt(score) + z), rel=1e-12))
    step = abs(lever) * held
    assert math.asin(math.sqrt(a_low)) == pytest.approx(max(0.0, math.asin(math.sqrt(low)) - step), abs=1e-9)
    more = held_interval(low, high, lever, sd, score + 1.0, z)
    assert more[0] <= a_low + 1e-15 and more[1] >= a_high - 1e-15
    assert held_interval(low, high, 0.3, math.inf, score, z) is None


def test_auto_on_hardware_counts_the_held_part_and_runs_the_narrower_method():
    """issue 24 item 3: ``auto`` compares predictions that include what holding the
    over-rotation adds on ``ibm:`` (``predicted_hold``: the design's expected information on
    delta). IAE's deep rounds resolve delta better per call than MLAE's short rounds, so on
    hardware IAE is predicted narrower and runs; on a simulator label the choice, and so the
    estimate, is what it was (MLAE), with no held part in the prediction."""
    model, a = _model(), 0.3
    estimator = make_estimator("auto", 0.01, snapshot=SNAPSHOT)
    hw = estimator.estimate(bernoulli(a), ModelExecutor(a, **model, seed=2, target="ibm:model_executor"))
    sim = estimator.estimate(bernoulli(a), ModelExecutor(a, **model, seed=2, target="fake:model"))
    hw_choice, sim_choice = hw.diagnostics["auto_choice"], sim.diagnostics["auto_choice"]
    assert sim_choice["chosen"] == "mlae" and "predicted_held_part" not in sim_choice
    assert hw_choice["chosen"] == "iae+pad" and hw.method == "iae+pad"
    held = hw_choice["predicted_held_part"]
    assert 0 < held["iae+pad"] < held["mlae"]
    for name, width in hw_choice["predicted_half_width"].items():  # own part plus the held part, at most 1/2
        assert width == pytest.approx(min(0.5, sim_choice["predicted_half_width"][name] + held[name]))
    assert "over-rotation of Q its counts are predicted not to exclude" in hw.note
    assert hw.ci_low <= a <= hw.ci_high


@pytest.mark.parametrize("method, a, seed", [("iae", 0.02, 25), ("mlae", 0.01, 28)])
def test_a_wide_held_interval_after_few_calls_spends_a_fresh_k0_round(method, a, seed):
    """issue 24 item 3: near a = 0 the counts resolve delta poorly, and these runs held an
    interval wider than 1/2 after a few hundred calls. Now a fresh k = 0 round brings the calls
    to 1,000 and its own interval, which no over-rotation moves, is the estimate's: at most 1/2
    wide, holding a."""
    est = make_estimator(method, 0.01, snapshot=SNAPSHOT).estimate(
        bernoulli(a), ModelExecutor(a, **_model(), seed=seed, target="ibm:model_executor"))
    d = est.diagnostics
    assert est.oracle_calls == 1000 and est.rounds[-1].k == 0 and est.rounds[-1].shots == d["k0_top_up_shots"]
    assert d["width_before_top_up"] > 0.5 and est.ci_high - est.ci_low <= 0.5
    assert est.ci_low <= a <= est.ci_high
    assert "fresh k=0 round" in est.note and not d.get("budget_bound")


@pytest.mark.parametrize("method, a, budget, label", [("iae", 0.02, 300, "ibm:model_executor"),
                                                       ("auto", 0.02, 300, "ibm:model_executor"),
                                                       ("mlae", 0.3, 100, "fake:model")])
def test_a_budget_below_1000_calls_is_named_as_the_binding_limit(method, a, budget, label):
    """With a caller's budget under 1,000 calls, stopping short is the caller's choice: the
    estimate spends what the budget leaves (IAE's fresh k = 0 round on hardware up to it) and
    says the budget was the binding limit (``budget_bound``, the note)."""
    est = make_estimator(method, 0.01, snapshot=SNAPSHOT, max_calls=budget).estimate(
        bernoulli(a), ModelExecutor(a, **_model(), seed=25, target=label))
    assert budget - 2 * 38 <= est.oracle_calls <= budget and not est.reached_epsilon
    assert est.diagnostics["budget_bound"] is True and "binding limit" in est.note
    assert est.ci_low <= a <= est.ci_high


def test_a_misfit_that_leaves_the_wide_k0_hull_spends_a_fresh_k0_round():
    """MLAE whose decay model does not fit (here an over-rotation of 0.1 rad under a simulator
    label, which assumes none) stopped short of 1,000 calls with the hull of its few k = 0
    shots, wider than 1/2: more shots cannot make the model right, but they narrow the k = 0
    interval, so a fresh k = 0 round now brings the calls to 1,000."""
    a = 0.07582010753475009
    est = make_estimator("mlae", 0.01, snapshot=SNAPSHOT).estimate(
        bernoulli(a), ModelExecutor(a, **_model(), delta=0.1, seed=7919 * 3 + 1, target="fake:model"))
    assert est.diagnostics["stopped"] == "misfit" and est.diagnostics["width_before_top_up"] > 0.5
    assert est.oracle_calls == 1000 and est.ci_high - est.ci_low <= 0.5 and est.ci_low <= a <= est.ci_high


def test_an_interval_as_wide_as_asked_for_spends_nothing_more():
    """A stage that asks for eps >= 1/4 (Q-GP-UCB's early stages) may get an interval wider
    than 1/2 after few calls: that is what it asked for, not a give-up, so ``k0_top_up`` runs
    no round (the executor would fail if asked to); the same interval short of eps would."""
    oracle, prior = bernoulli(0.3), calibration_prior(SNAPSHOT, bernoulli(0.5))
    est = Estimate(0.3, 0.0, 0.7, 0.4, 0.05, (Round(0, 50, 15), Round(1, 20, 10)), 0.0, "iae+pad", "ibm:x", True)

    class NoRounds:
        target = "ibm:x"

        def run(self, circuits, shots):
            raise AssertionError("no round may run")

    assert k0_top_up(est, oracle, NoRounds(), prior, None) == (est, "")
    short = replace(est, epsilon=0.01, reached_epsilon=False)
    topped, note = k0_top_up(short, oracle, ModelExecutor(0.3, **_model(), seed=1), prior, None)
    assert topped.oracle_calls == 1000 and "fresh k=0 round" in note


def test_mlae_top_up_stays_within_its_own_max_calls():
    """MLAE's loop obeys ``max_calls`` when no budget is given; the fresh k = 0 round must too
    (it brought the calls to 1,000 past a cap of 300), and says the cap was the binding limit."""
    est = MaximumLikelihoodAE(0.01, snapshot=SNAPSHOT, max_calls=300).estimate(
        bernoulli(0.01), ModelExecutor(0.01, **_model(), seed=28, target="ibm:model_executor"))
    assert est.oracle_calls <= 300 and est.rounds[-1].k == 0
    assert est.diagnostics["budget_bound"] is True and "binding limit" in est.note
    assert est.ci_low <= 0.01 <= est.ci_high


def _wide(width: float, spent: int, eps: float = 0.01) -> Estimate:
    return Estimate(0.3, 0.3 - width / 2, 0.3 + width / 2, eps, 0.05, (Round(0, spent, round(0.3 * spent)),), 0.0,
                    "mlae", "ibm:x", False)


@pytest.mark.parametrize("width, spent", [(0.52, 995), (0.51, 999), (0.9, 990), (0.6, 700)])
def test_the_top_up_without_a_budget_is_never_wider_than_what_it_replaces(width, spent):
    """Without a budget the round was GIVE_UP_CALLS - spent shots whatever that gave: 5 shots
    after 995 calls replaced a 0.52-wide interval with a wider one. Now the round is sized,
    before any count, so that its widest possible interval is narrower."""
    prior = replace(calibration_prior(SNAPSHOT, bernoulli(0.5)), offset_sd=0.02)
    topped, note = k0_top_up(_wide(width, spent), bernoulli(0.3), ModelExecutor(0.3, **_model(), seed=3), prior, None)
    shots = topped.diagnostics["k0_top_up_shots"]
    assert shots >= GIVE_UP_CALLS - spent and widest_k0_interval(shots, prior, 0.05) < width
    assert topped.ci_high - topped.ci_low < width and topped.oracle_calls == spent + shots and note
    if shots > GIVE_UP_CALLS - spent:  # the fewest such shots: one fewer is not sure to be narrower
        assert widest_k0_interval(shots - 1, prior, 0.05) >= width or shots - 1 < GIVE_UP_CALLS - spent


def test_no_top_up_where_no_k0_round_can_be_narrower():
    """With A0's prior range that wide, no k = 0 round of any size is sure to be narrower than
    0.55: nothing runs (the executor would fail if asked to)."""
    prior = DecayPrior(0.05, 1.0, 0.5, 0.0, offset_sd=0.02)

    class NoRounds:
        target = "ibm:x"

        def run(self, circuits, shots):
            raise AssertionError("no round may run")

    est = _wide(0.55, 900)
    assert k0_top_up(est, bernoulli(0.3), NoRounds(), prior, None) == (est, "")


def test_mlae_after_a_top_up_that_reaches_eps_reports_the_reported_interval():
    """The fresh k = 0 round reached eps here: the note must not say eps was missed, nor that
    more calls would narrow it, and the diagnostics describe the reported interval (no
    over-rotation widening, the calls spent reach it), not the discarded one."""
    est = make_estimator("mlae", 0.01, snapshot=SNAPSHOT).estimate(
        bernoulli(0.01), ModelExecutor(0.01, **_model(), seed=28, target="ibm:model_executor"))
    d = est.diagnostics
    assert est.reached_epsilon and "k0_top_up_shots" in d
    assert "not reached" not in est.note and "would reach" not in est.note and "widens it" not in est.note
    assert d["calls_for_epsilon"] == est.oracle_calls and d["epsilon_floor"] == 0.0
    assert d["rotation_widening"] == 0.0 and d["reachable_half_width"] == pytest.approx(est.half_width)
    assert not d["budget_bound"] and "k=0 rounds' own" in d["interval_method"]


def test_a_capped_top_up_that_reaches_eps_does_not_blame_the_budget():
    """Under a budget below 1,000 calls, a fresh k = 0 round that reaches eps is not a stop at
    the budget: ``budget_bound`` False, and the estimate reached."""
    prior = calibration_prior(SNAPSHOT, bernoulli(0.5))
    est = replace(_wide(0.6, 200, eps=0.2), diagnostics={"budget_bound": True})
    topped, _ = k0_top_up(est, bernoulli(0.3), ModelExecutor(0.3, **_model(), seed=4), prior, 900)
    assert topped.reached_epsilon and topped.diagnostics["budget_bound"] is False
    assert topped.oracle_calls == 900


@settings(max_examples=60, deadline=None)
@given(ones=st.integers(0, 200), extra=st.integers(0, 200), a0=st.floats(0.3, 1.0), a0_sd=st.sampled_from([0.0, 0.05]),
       offset=st.floats(0.3, 0.7), offset_sd=st.sampled_from([0.0, 0.02, 0.05]), a=st.floats(0.0, 1.0),
       p01=st.floats(0.0, 0.05), p10=st.floats(0.0, 0.05))
def test_the_k0_interval_holds_every_offset_and_contrast_the_prior_allows(ones, extra, a0, a0_sd, offset, offset_sd,
                                                                           a, p01, p10):
    """``shallow_interval`` inverts q_0 = readout(f + A0 (a - f)): where the Clopper-Pearson
    interval holds q_0 and A0, f lie in the prior's ranges (3 sd), the amplitude interval holds
    a. The old one fixed f = 1/2 and missed a whenever f was off it and A0 < 1."""
    shots = ones + extra + 1
    prior = DecayPrior(a0, 1.0, a0_sd, 0.0, p01, p10, offset=offset, offset_sd=offset_sd)
    low, high = shallow_interval([Round(0, shots, ones)], prior, 0.05)
    q_low, q_high = clopper_pearson(ones, shots, 0.05)
    sd = 0.0 if a0_sd == 0 else max(a0_sd, FALLBACK_A0_SD)
    for true_a0 in (a0 * math.exp(-3 * sd), 1.0):
        for f in (offset - 3 * offset_sd, offset + 3 * offset_sd):
            q = p01 + (1 - p01 - p10) * (f + min(true_a0, 1.0) * (a - f))
            if q_low <= q <= q_high:
                assert low - 1e-9 <= a <= high + 1e-9


def test_the_k0_interval_at_a_small_amplitude_moves_with_the_offset():
    """At k = 0 an offset f off 1/2 biases the amplitude by about (f - 1/2)(1 - A0) / A0: the
    interval with f free reaches further than with f fixed on the side the offset moves it."""
    fixed = DecayPrior(0.8, 1.0, 0.05, 0.0, offset_sd=0.0)
    free = replace(fixed, offset_sd=0.02)
    rounds = [Round(0, 1000, 400)]
    (lo0, hi0), (lo1, hi1) = shallow_interval(rounds, fixed, 0.05), shallow_interval(rounds, free, 0.05)
    assert lo1 < lo0 and hi1 >= hi0
