"""Never give up cheaply (issue 24, item 3): on a deep oracle no noise-aware estimate stops under
1,000 calls with an interval wider than 1/2 unless the depth model proves its floor, IAE never
returns after 0 calls and stays within 2x its planned calls, and ``auto`` runs the method the
depth model predicts reaches the smaller half-width.

The devices are three qubits of a shipped snapshot with every T1 and T2 divided by a factor:
the depth model then predicts any k = 0 pad from about 0.02 to 1 on the 1-qubit Bernoulli
oracle (compiled in milliseconds), so the deep regime is reached without a deep circuit.
"""

from __future__ import annotations

import dataclasses

import pytest

from qbo.mitigation import make_mitigation
from qbo.noise import Snapshot, load_snapshot
from qbo.noise.depth import predicted_pads
from qbo.oracles.bernoulli import bernoulli
from qbo.qmc import CalibrationAwareIAE, IterativeAmplitudeEstimation, make_estimator
from qbo.qmc.auto import AutoEstimator, mlae_half_width
from qbo.qmc.capped import PROBE_SHOTS
from tests.support.bench import bench_module

FACTORS = (1.0, 100.0, 300.0, 1000.0, 3000.0, 1e6)  # k = 0 pads about 0.02, 0.05, 0.1, 0.26, 0.58, 0.98


def executor(snapshot: Snapshot, oracle, seed: int):
    """Exact noisy probabilities of the compiled circuits on ``snapshot``, sampled (bench/noise.py)."""
    bench = bench_module("noise")
    model = bench.DeviceModel(snapshot)
    model.add(oracle)
    return bench.ExactBinomialExecutor(model, seed=seed)


def decayed(factor: float, name: str = "fake_torino") -> Snapshot:
    """Qubits 0-2 of ``name`` with every T1 and T2 divided by ``factor`` (renamed, so caches
    keep them apart)."""
    base, _ = bench_module("noise").restrict(load_snapshot(name), (0, 1, 2))
    qubits = tuple(dataclasses.replace(q, t1=None if q.t1 is None else q.t1 / factor,
                                       t2=None if q.t2 is None else q.t2 / factor) for q in base.qubits)
    return dataclasses.replace(base, name=f"{name}_t1_over_{factor:g}", qubits=qubits)


def test_the_decayed_devices_span_shallow_to_hopeless():
    oracle = bernoulli(0.3)
    pads = [predicted_pads(decayed(f), oracle, [0])[0] for f in FACTORS]
    assert pads == sorted(pads) and pads[0] < 0.05 and pads[-1] > 0.9
    assert any(0.2 < p < 0.5 for p in pads)  # a floor below 1/2 that eps = 0.01 cannot reach


@pytest.mark.parametrize("mitigation,factor", [
    *[("none", f) for f in FACTORS],
    pytest.param("zne+rem", 1.0, marks=pytest.mark.slow),  # zne+rem to k ~ 20 on the exact channels: ~6 s
    *[("zne+rem", f) for f in FACTORS[1:]],
])
def test_no_cheap_wide_stop_no_zero_calls_and_at_most_twice_the_plan(factor, mitigation):
    snapshot = decayed(factor)
    oracle = bernoulli(0.3)
    est = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.01, 0.05, mitigation=make_mitigation(mitigation, snapshot)),
                              snapshot)
    out = est.estimate(oracle, executor(snapshot, oracle, 7))
    d = out.diagnostics
    assert out.oracle_calls > 0
    assert out.oracle_calls <= 2 * est.planned_calls(oracle)
    wide = out.ci_high - out.ci_low > 0.5
    if wide and out.oracle_calls < 1000:
        # the floor alone rules out an interval 1/2 wide or narrower, and the note says so
        assert d["floor_proven"] and d["epsilon_floor"] >= min(out.half_width, 0.25) * (1 - 1e-9)
        assert "no budget gives an interval narrower than its floor" in out.note
    assert out.ci_low <= 0.3 <= out.ci_high  # the exact channels' bias lies within the pads here


def test_a_proven_floor_runs_one_probe_round_and_says_so():
    snapshot = decayed(1e6)
    oracle = bernoulli(0.3)
    for mitigation in ("none", "zne+rem"):
        est = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.01, 0.05, mitigation=make_mitigation(mitigation, snapshot)),
                                  snapshot)
        assert est.device_plan(oracle).hopeless
        out = est.estimate(oracle, executor(snapshot, oracle, 3))
        assert out.oracle_calls == est.planned_calls(oracle) == PROBE_SHOTS  # plain rounds: 1 call a shot
        assert (out.ci_low, out.ci_high) == (0.0, 1.0) and not out.reached_epsilon
        assert out.diagnostics["floor_proven"] and out.diagnostics["calls_for_epsilon"] is None
        assert out.value != 0.5 and out.rounds[0].k == 0  # the probe's own k = 0 estimate, not the window's middle
        assert "one k = 0 round of 100 shots ran" in out.note


@pytest.mark.parametrize("factor", [100.0, 300.0])
def test_a_floor_that_leaves_room_is_not_called_proven(factor):
    """k = 0 pads 0.05 and 0.1: an interval 1/2 wide is reachable, so the estimate reaches one."""
    snapshot = decayed(factor)
    oracle = bernoulli(0.3)
    est = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.01, 0.05), snapshot)
    assert not est.device_plan(oracle).hopeless
    out = est.estimate(oracle, executor(snapshot, oracle, 5))
    assert not out.diagnostics["floor_proven"] and out.ci_high - out.ci_low <= 0.5


def test_predicted_half_widths_shrink_with_calls_and_iae_stops_at_its_floor():
    snapshot = decayed(1000.0)
    oracle = bernoulli(0.3)
    iae = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.01, 0.05), snapshot)
    pad = predicted_pads(snapshot, oracle, [0])[0]
    widths = [iae.predicted_half_width(oracle, n) for n in (100, 10_000, 10**8)]
    assert widths[0] > widths[1] > widths[2] >= pad * (1 - 1e-9)  # never below the bias bound
    assert widths[2] == pytest.approx(pad, rel=1e-2)
    mlae = [mlae_half_width(snapshot, oracle, n, 0.05, 20) for n in (100, 10_000, 10**8)]
    assert mlae[0] > mlae[1] > mlae[2] and mlae[2] < 1e-3  # a fitted decay has no bias floor


@pytest.mark.parametrize("factor", [1.0, 1000.0, 1e6])
def test_auto_on_a_device_runs_the_method_predicted_narrower_and_says_so(factor):
    snapshot = decayed(factor)
    oracle = bernoulli(0.3)
    est = make_estimator("auto", 0.01, 0.05, snapshot=snapshot, max_calls=4000)
    assert isinstance(est, AutoEstimator)
    chosen, facts = est.device_choice(oracle, snapshot)
    predicted = facts["predicted_half_width"]
    assert facts["chosen"] == ("iae+pad" if predicted["iae+pad"] < predicted["mlae"] else "mlae")
    assert facts["calls"] == 4000
    out = est.estimate(oracle, executor(snapshot, oracle, 2))
    assert out.diagnostics["auto_choice"] == facts and f"auto ran {facts['chosen']}" in out.note
    assert out.method.startswith(facts["chosen"].split("+")[0])
    assert 0 < out.oracle_calls <= 4000 * 1.01
    assert out.ci_high - out.ci_low <= 0.5 or out.oracle_calls >= 1000 or out.diagnostics.get("floor_proven")


def test_mlaes_prediction_at_k0_carries_a0s_prior_and_the_reason_says_so():
    """At k = 0 MLAE's counts pin A0 (a - 1/2), not a: its predicted half-width there is at
    least the prior's own z a0_sd / 4, however many calls, and drops to the sampling width
    without a prior; the reason names k = 0 and the bound only when that power is MLAE's best."""
    from qbo.qmc.auto import choice_reason, mlae_prediction, prior_half_width

    snapshot, oracle = decayed(1000.0), bernoulli(0.3)
    prior = prior_half_width(0.6, 0.05)
    assert prior == pytest.approx(1.959963984540054 * 0.6 / 4)
    width, k = mlae_prediction(snapshot, oracle, 10**9, 0.05, 0, a0_sd=0.6)
    assert k == 0 and prior <= width <= prior * 1.001
    bare, k_bare = mlae_prediction(snapshot, oracle, 10**9, 0.05, 0)
    assert k_bare == 0 and bare < 1e-3
    predicted = {"mlae": width, "iae+pad": 0.4}
    assert "k = 0" in choice_reason("mlae", predicted, 0, prior, 0.6)
    assert "k = 0" not in choice_reason("mlae", predicted, 3, prior, 0.6)
    assert choice_reason("iae+pad", {"mlae": 0.45, "iae+pad": 0.4}, 0, prior, 0.6).startswith("iae+pad predicted narrower")


def test_a_contrast_that_underflows_to_zero_gives_the_floor_prior():
    """The depth model's c_0 underflows to 0 on broken gates; ``a0_prior`` (auto's prediction and
    MLAE's prior share it) takes the floor instead of raising on log(0)."""
    from qbo.qmc.mlae import C0_FLOOR, a0_prior

    assert a0_prior(0.0, 0.05) == a0_prior(C0_FLOOR, 0.05)
    centre, sd = a0_prior(0.0, 0.05)
    assert 0 < centre < 1 and sd > 0.05
