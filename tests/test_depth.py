"""Calibration-aware depth (qbo.noise.depth): predicted contrast vs Aer, bias growth, k_max."""

from __future__ import annotations

import dataclasses
import math

import pytest

from qbo.noise import load_snapshot
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


@pytest.mark.slow
def test_calibration_aware_iae_caps_depth_and_says_when_eps_is_out_of_reach():
    from qbo.qmc.capped import CalibrationAwareIAE, amplitude_bias_on
    from qbo.execution.aer import AerExecutor
    from qbo.qmc import IterativeAmplitudeEstimation

    snapshot = load_snapshot("fake_brisbane")
    oracle = bernoulli(0.3)
    capped = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.02), snapshot)
    plan = capped.device_plan(oracle)
    est = capped.estimate(oracle, AerExecutor(snapshot, seed=3))
    # k_max: the deepest power whose padded amplitude bias is <= eps / 2
    assert plan.k_max is not None and max(r.k for r in est.rounds) <= plan.k_max
    assert amplitude_bias_on(plan.k_max, plan.pads[plan.k_max]) <= 0.01
    assert all(amplitude_bias_on(k, plan.pads[k]) > 0.01 for k in range(plan.k_max + 1, len(plan.pads)))
    assert "fake_brisbane" in est.note and "noise bias" in est.note
    assert est.ci_low <= 0.3 <= est.ci_high
    assert est.reached_epsilon == (est.half_width <= 0.02 * (1 + 1e-9))
    # eps = 0.002: the pad exceeds eps/2 at every power (k = 0: readout error ~0.03 on
    # brisbane's best qubit); the estimate says eps is not reachable at any budget and returns
    # the honest, wider interval, which covers 0.3
    small = CalibrationAwareIAE(IterativeAmplitudeEstimation(0.002), snapshot)
    assert small.device_plan(oracle).k_max is None
    out = small.estimate(oracle, AerExecutor(snapshot, seed=3))
    assert not out.reached_epsilon and "not reachable at any budget" in out.note
    assert out.diagnostics["calls_for_epsilon"] is None and out.diagnostics["epsilon_floor"] > 0.002
    assert out.half_width >= out.diagnostics["epsilon_floor"] and out.ci_low <= 0.3 <= out.ci_high


def _entangled(a: float, n: int = 3):
    from qiskit import QuantumCircuit

    from qbo.oracles import Oracle

    c = QuantumCircuit(n, name="A")
    c.ry(2 * math.asin(math.sqrt(a)), n - 1)
    for q in range(n - 1, 0, -1):
        c.cx(q, q - 1)
    return Oracle(c, 0, 0.0, 1.0, float(a), spec=f"test-entangled{n}:{a!r}")


def test_depth_table_costs_a_constant_number_of_transpiles(monkeypatch):
    """k up to 50 costs what k up to 1 costs: the blocks A, Q, A^dagger, Q^dagger (and the
    undo swaps of a routed oracle), never one transpile per power."""
    from qbo.noise import blocks
    from qbo.noise.aer_model import snapshot_target
    from qbo.oracles import parse_oracle

    calls = []
    real = blocks.transpile
    monkeypatch.setattr(blocks, "transpile", lambda *a, **k: calls.append(1) or real(*a, **k))
    snapshot = load_snapshot("fake_torino")
    for oracle in (bernoulli(0.3), parse_oracle("gaussian:mean=0.4,std=0.2,qubits=2")):
        compiler = blocks.TranspileCache(snapshot_target(snapshot))
        calls.clear()
        depth_table(snapshot, oracle, range(2), compiler=compiler)
        few = len(calls)
        rows = depth_table(snapshot, oracle, range(51), compiler=compiler)
        assert len(rows) == 51 and len(calls) == few <= 8 and compiler.transpile_calls == few


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fake_torino", "fake_brisbane"])
def test_fast_model_equals_whole_circuit_model_without_routing(name):
    """Tolerance 1% relative in log contrast (measured: <= 0.21%, brisbane entangled k = 0): without routing the composed circuit has the
    gates of one transpile of Q^k A, and only the barrier-aligned idle clock differs."""
    from qiskit import transpile

    from qbo.noise.aer_model import snapshot_target
    from qbo.noise.depth import circuit_noise, compiler_for

    snapshot = load_snapshot(name)
    target = snapshot_target(snapshot)
    for oracle in (bernoulli(0.3), _entangled(0.3)):
        layout = compiler_for(snapshot).layout(oracle.num_qubits)
        for row in depth_table(snapshot, oracle, [0, 1, 5, 10]):
            whole = transpile(power_circuit(oracle, row.k), target=target, initial_layout=layout,
                              optimization_level=1, seed_transpiler=0)
            old = circuit_noise(snapshot, whole)
            assert math.log(row.contrast) == pytest.approx(math.log(old.contrast), rel=1e-2, abs=1e-9)
            assert row.two_qubit_gates == old.two_qubit_gates


@pytest.mark.slow
def test_fast_model_predicts_the_composed_circuit_of_a_routed_oracle():
    """A routed 3-qubit Gaussian: the closed form equals ``circuit_noise`` of the composed
    circuit the executor runs to 10% in log contrast (the block model counts every gate of
    a block, ``circuit_noise`` only the measured qubit's causal cone; measured 7% at k = 1),
    and its extra undo swaps cost at most 1.5x the whole-circuit transpile's log contrast."""
    from qiskit import transpile

    from qbo.noise.aer_model import snapshot_target
    from qbo.noise.depth import circuit_noise, compiler_for
    from qbo.oracles import parse_oracle

    snapshot = load_snapshot("fake_torino")
    oracle = parse_oracle("gaussian:mean=0.4,std=0.2,qubits=2")
    compiler = compiler_for(snapshot)
    layout = compiler.layout(oracle.num_qubits)
    for row in depth_table(snapshot, oracle, [1, 5]):
        composed = circuit_noise(snapshot, compiler(power_circuit(oracle, row.k)))
        assert math.log(row.contrast) == pytest.approx(math.log(composed.contrast), rel=0.10)
        whole = transpile(power_circuit(oracle, row.k), target=snapshot_target(snapshot),
                          initial_layout=layout, optimization_level=1, seed_transpiler=0)
        ratio = math.log(row.contrast) / math.log(circuit_noise(snapshot, whole).contrast)
        assert 1.0 <= ratio <= 1.5


def test_composed_powers_implement_q_k_a():
    """Noiseless probabilities of composed circuits (routed Gaussian, folded too) equal
    sin^2((2k + 1) theta) to 1e-9."""
    from qbo.mitigation.folding import folded_power_circuit
    from qbo.noise.depth import compiler_for
    from qbo.oracles import parse_oracle

    snapshot = load_snapshot("fake_torino")
    oracle = parse_oracle("gaussian:mean=0.4,std=0.2,qubits=2")
    compiler = compiler_for(snapshot)
    a = _ideal_one_probability(compiler(power_circuit(oracle, 0)))
    theta = math.asin(math.sqrt(a))
    for k, scale in ((1, 1), (3, 1), (2, 3)):
        p = _ideal_one_probability(compiler(folded_power_circuit(oracle, k, scale)))
        assert p == pytest.approx(math.sin((2 * k + 1) * theta) ** 2, abs=1e-9)


def _ideal_one_probability(compiled) -> float:
    """P(measured bit = 1) of a compiled one-bit circuit, noiseless, on its active qubits."""
    from qiskit import QuantumCircuit
    from qiskit.quantum_info import Statevector

    active = sorted({compiled.find_bit(q).index for i in compiled.data for q in i.qubits
                     if i.operation.name not in ("barrier", "delay")})
    small = QuantumCircuit(len(active))
    target = None
    for instruction in compiled.data:
        if instruction.operation.name in ("barrier", "delay"):
            continue
        qs = [active.index(compiled.find_bit(q).index) for q in instruction.qubits]
        if instruction.operation.name == "measure":
            target = qs[0]
        else:
            small.append(instruction.operation, qs)
    return float(Statevector(small).probabilities([target])[1])


def test_a_circuit_that_only_claims_to_be_a_power_is_transpiled_whole():
    """Block metadata on a circuit of another shape must not cut it into wrong blocks."""
    from qiskit import QuantumCircuit

    from qbo.noise.aer_model import snapshot_target
    from qbo.noise.blocks import TranspileCache

    compiler = TranspileCache(snapshot_target(load_snapshot("fake_torino")))
    impostor = QuantumCircuit(1, 1)
    impostor.x(0)
    impostor.measure(0, 0)
    impostor.metadata = dict(power_circuit(bernoulli(0.3), 2).metadata)
    compiled = compiler(impostor)
    assert compiler.transpile_calls == 1 and compiled.count_ops().get("x", 0) + compiled.count_ops().get("sx", 0) >= 1
    assert "rz" not in compiled.count_ops() or compiled.count_ops()["rz"] <= 2
