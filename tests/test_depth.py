"""Calibration-aware depth (qbo.noise.depth): predicted contrast vs Aer, bias growth, k_max."""

from __future__ import annotations

import dataclasses
import math

import pytest

from qbo.noise.snapshot import load_snapshot
from qbo.noise.depth import amplitude_bias, choose_k_max, depth_table, needed_k, p_bias
from qbo.execution.aer import AerExecutor
from qbo.execution.base import ones
from qbo.grover import power_circuit
from qbo.noise.readout import measured_qubit, snapshot_confusion
from qbo.oracles import bernoulli

SHOTS = 20000


@pytest.mark.parametrize("name", ["fake_brisbane", "fake_torino"])
def test_predicted_contrast_matches_aer(name):
    """a = 1/4 (theta = pi/6): P_ideal(k) = 1 for k = 1, 10, 19, 37 ((2k+1) = 3 mod 6), so
    c = 2 (P - p01) / g - 1 measures the contrast. Margin: 4 binomial std of that estimate
    plus a modelling tolerance of 10% of the predicted loss 1 - c and 0.005: the model
    relaxes towards 1/2, Aer's T1 part towards |0>, which the orientation average
    misses by a fraction of the loss (measured: <= 2% of c on fake_brisbane)."""
    snapshot, oracle = load_snapshot(name), bernoulli(0.25)
    executor = AerExecutor(snapshot, seed=3)
    for row in depth_table(snapshot, oracle, [1, 10, 19, 37], executor=executor):
        circuit = power_circuit(oracle, row.k)
        assert math.isclose(math.sin((2 * row.k + 1) * math.pi / 6) ** 2, 1.0)
        (counts,) = executor.run([circuit], [SHOTS])
        p = ones(counts) / SHOTS
        conf = snapshot_confusion(snapshot, measured_qubit(executor.compiled(circuit)))
        measured = 2 * (p - conf.p01) / conf.gain - 1
        std = 2 * math.sqrt(p * (1 - p) / SHOTS) / conf.gain
        assert abs(measured - row.contrast) <= 4 * std + 0.1 * (1 - row.contrast) + 0.005, (row, measured)


def test_bias_on_p_grows_with_k_and_contrast_falls():
    rows = depth_table(load_snapshot("fake_brisbane"), bernoulli(0.3), [0, 2, 5, 10, 20, 40])
    contrasts = [r.contrast for r in rows]
    biases = [r.p_bias for r in rows]
    assert all(a > b for a, b in zip(contrasts, contrasts[1:]))
    assert all(a < b for a, b in zip(biases, biases[1:]))
    assert all(r.depth < s.depth and r.duration_s < s.duration_s for r, s in zip(rows, rows[1:]))
    # the amplitude bias of a round is the probability bias at k = 0, diluted by ~1/K later
    assert rows[0].bias_bound == pytest.approx(rows[0].p_bias, abs=1e-9)
    assert rows[-1].bias_bound < rows[-1].p_bias


def test_amplitude_bias_bounds():
    assert amplitude_bias(0, 0.01) == pytest.approx(0.01, abs=1e-6)
    for k in (1, 5, 20):  # |delta a| <= acos(1 - 2 b) / K
        assert amplitude_bias(k, 0.02) <= math.acos(1 - 0.04) / (4 * k + 2) + 1e-9
    assert p_bias(1.0, 0.01, 0.02) == pytest.approx(0.02)


def test_choose_k_max_and_unreachable():
    snapshot, oracle = load_snapshot("fake_torino"), bernoulli(0.3)
    assert choose_k_max(snapshot, oracle, 0.05) == needed_k(0.05)
    # a device whose readout alone exceeds fraction * eps at every reachable k
    bad = dataclasses.replace(snapshot, qubits=tuple(
        dataclasses.replace(q, readout_error=0.3, prob_meas0_prep1=0.3, prob_meas1_prep0=0.3) for q in snapshot.qubits
    ))
    assert choose_k_max(bad, oracle, 0.3) is None
    with pytest.raises(ValueError, match="fraction"):
        choose_k_max(snapshot, oracle, 0.05, fraction=0)


def test_calibration_aware_iae_caps_depth_and_says_when_eps_is_out_of_reach():
    from qbo.noise.depth import choose_k_max
    from qbo.qmc.capped import CalibrationAwareIAE
    from qbo.execution.aer import AerExecutor
    from qbo.qmc import IterativeAmplitudeEstimation

    snapshot = load_snapshot("fake_brisbane")
    oracle = bernoulli(0.3)
    capped = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.02), snapshot)
    est = capped.estimate(oracle, AerExecutor(snapshot, seed=3))
    k_max = choose_k_max(snapshot, oracle, 0.02)
    assert k_max is not None and max(r.k for r in est.rounds) <= k_max
    assert f"{k_max}" in est.note and "fake_brisbane" in est.note
    # eps = 0.002: the predicted bias exceeds eps/2 at every power (choose_k_max is None)
    assert choose_k_max(snapshot, oracle, 0.002) is None
    out = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.002), snapshot).estimate(oracle, AerExecutor(snapshot, seed=3))
    assert not out.reached_epsilon and "out of reach" in out.note
    assert all(r.k == 0 for r in out.rounds)
