"""Oracles are exact against a statevector; Grover powers follow sin^2((2k+1) theta)."""

import math

import numpy as np
import pytest
from qiskit import QuantumCircuit, qasm3
from qiskit.quantum_info import Operator, Statevector

from qbo.execution.exact import ExactExecutor
from qbo.grover import oracle_calls, power_circuit
from qbo.oracles import bernoulli, default_window, discrete, from_circuit, gaussian, parse_oracle
from qbo.oracles.gaussian import discretised_normal


def statevector_amplitude(oracle):
    return float(Statevector(oracle.circuit).probabilities([oracle.objective])[1])


ORACLES = [
    bernoulli(0.0), bernoulli(0.37), bernoulli(1.0),
    discrete([0.1, 0.5, 0.9], [0.2, 0.3, 0.5]),
    discrete([-1.0, 2.0, 0.5, 0.25, 1.5], [0.1, 0.2, 0.3, 0.15, 0.25]),
    gaussian(0.4, 0.2), gaussian(0.9, 0.4, qubits=4),
]


@pytest.mark.parametrize("oracle", ORACLES, ids=lambda o: o.key[:40])
def test_oracle_amplitude_is_exact(oracle):
    assert abs(statevector_amplitude(oracle) - oracle.amplitude) < 1e-9


def test_discrete_mean_is_the_weighted_sum():
    o = discrete([-1.0, 2.0, 0.5], [0.5, 0.25, 0.25])
    assert o.mean == pytest.approx(-0.5 + 0.5 + 0.125, abs=1e-12)
    assert (o.low, o.high) == (-1.0, 2.0)
    assert abs(o.to_reward(statevector_amplitude(o)) - o.mean) < 1e-9


@pytest.mark.parametrize("std", [0.05, 0.1, 0.2, 0.3, 0.4, 1.0])
def test_gaussian_discretisation_error_is_below_1e_3(std):
    for mean in np.linspace(0.0, 1.0, 21):
        o = gaussian(mean, std)
        assert abs(o.mean - mean) < 1e-3
        assert (o.low, o.high) == default_window(std)  # the same window for every arm


def test_gaussian_window_does_not_depend_on_the_mean():
    a, b = gaussian(0.1, 0.3), gaussian(0.8, 0.3)
    assert (a.low, a.high) == (b.low, b.high)
    va, _ = discretised_normal(0.1, 0.3, 6, default_window(0.3))
    vb, _ = discretised_normal(0.8, 0.3, 6, default_window(0.3))
    assert np.array_equal(va, vb)  # the grid is shared: the mean lives in the amplitudes


def test_gaussian_objective_is_the_rotated_qubit():
    # the reference code measured the wrong qubit; ours must carry the mean on `objective`
    o = gaussian(0.7, 0.4)
    probs = Statevector(o.circuit).probabilities([o.objective])
    assert probs[1] == pytest.approx(o.amplitude, abs=1e-9)
    register = Statevector(o.circuit).probabilities(list(range(1, o.num_qubits)))
    assert register @ np.array(o.outcomes) == pytest.approx(o.mean, abs=1e-9)


def test_from_circuit_and_qasm_roundtrip(tmp_path):
    qc = QuantumCircuit(2)
    qc.h(1)
    qc.cry(1.1, 1, 0)
    path = tmp_path / "a.qasm"
    path.write_text(qasm3.dumps(qc))
    o = from_circuit(path, objective=0)
    assert abs(o.amplitude - 0.5 * math.sin(0.55) ** 2) < 1e-9
    assert parse_oracle(f"qasm:{path},objective=0") == o


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("bernoulli:1.5", "1.5"),
        ("bernoulli:x", "'x'"),
        ("discrete:values=0.1|0.2,probs=0.5|0.6", "sum 1.1"),
        ("gaussian:mean=0.2,std=-1", "-1"),
        ("poisson:3", "poisson:3"),
        ("qasm:/does/not/exist.qasm", "/does/not/exist.qasm"),
    ],
)
def test_bad_specs_raise_one_line_errors(spec, fragment):
    with pytest.raises(ValueError) as info:
        parse_oracle(spec)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_unparsable_qasm_is_one_line(tmp_path):
    bad = tmp_path / "bad.qasm"
    bad.write_text("OPENQASM 3.0; this is not qasm;")
    with pytest.raises(ValueError, match="bad.qasm"):
        parse_oracle(f"qasm:{bad}")


@pytest.mark.parametrize("oracle", [bernoulli(0.23), discrete([0.2, 0.9], [0.4, 0.6]), gaussian(0.3, 0.3, qubits=3)], ids=str)
def test_grover_powers_follow_sin2_on_exact_target(oracle):
    theta = math.asin(math.sqrt(oracle.amplitude))
    ex = ExactExecutor(0)
    for k in [0, 1, 2, 5, 13]:
        p = ex.probabilities(power_circuit(oracle, k))[1]
        assert abs(p - math.sin((2 * k + 1) * theta) ** 2) < 1e-9
        # the ladder equals a plain statevector simulation of the same circuit
        sv = Statevector(power_circuit(oracle, k).remove_final_measurements(inplace=False))
        assert abs(p - sv.probabilities([oracle.objective])[1]) < 1e-9


def test_power_circuit_of_a_phased_oracle_is_the_composed_circuit():
    """Q^k A built from the cached step equals A then k plain compositions of (barrier, Q),
    global phase included (an oracle with a phase of its own)."""
    from qbo.grover import grover

    a = QuantumCircuit(2)
    a.ry(0.7, 0)
    a.cx(0, 1)
    a.global_phase = 0.3
    oracle = from_circuit(a, objective=1)
    for k in (0, 1, 4):
        expected = oracle.circuit.copy_empty_like()
        expected.compose(oracle.circuit, inplace=True)
        for _ in range(k):
            expected.barrier()
            expected.compose(grover(oracle), inplace=True)
        built = power_circuit(oracle, k).remove_final_measurements(inplace=False)
        assert built.global_phase == pytest.approx(expected.global_phase)
        assert Operator(built).equiv(Operator(expected)) and Operator(built) == Operator(expected)


@pytest.mark.parametrize("oracle", [bernoulli(0.23), discrete([0.2, 0.9], [0.4, 0.6]), gaussian(0.3, 0.3, qubits=3)], ids=str)
def test_run_power_gives_the_counts_of_the_built_circuit(oracle):
    """ExactExecutor.run_power (no circuit built) draws exactly what run([power_circuit]) draws
    from the same seed, in any order of powers, k = 0 first or not."""
    from qbo.execution.base import SamplesPowers
    from qbo.qmc.base import run_round

    ks = [3, 0, 1, 9, 3, 0, 40, 2]
    built, direct = ExactExecutor(7), ExactExecutor(7)
    assert isinstance(direct, SamplesPowers)
    counts = [built.run([power_circuit(oracle, k)], [101])[0] for k in ks]
    assert counts == [direct.run_power(oracle, k, 101) for k in ks]
    # run_round takes the shortcut and reads the same ones
    fresh = ExactExecutor(7)
    assert [run_round(fresh, oracle, k, 101).ones for k in ks] == [c.get("1", 0) for c in counts]
    assert len({c.get("1", 0) for c in counts}) > 2  # the powers differ: the comparison has teeth
    with pytest.raises(ValueError, match="shots"):
        direct.run_power(oracle, 1, 0)
    with pytest.raises(ValueError, match="k must be >= 0"):
        direct.run_power(oracle, -1, 10)


def test_grover_powers_on_aer_match_within_binomial_margin():
    from qbo.execution.aer import AerExecutor

    oracle = bernoulli(0.3)
    theta = math.asin(math.sqrt(0.3))
    shots = 20000
    ex = AerExecutor(seed=11)
    for k in [0, 1, 3, 6]:
        p = math.sin((2 * k + 1) * theta) ** 2
        (counts,) = ex.run([power_circuit(oracle, k)], [shots])
        margin = 5 * math.sqrt(max(p * (1 - p), 1e-4) / shots)  # 5 sigma
        assert abs(counts.get("1", 0) / shots - p) < margin


def test_oracle_calls_identity():
    assert oracle_calls(0, 100) == 100
    assert oracle_calls(3, 10) == 70
    assert oracle_calls(3, 10, scale=3) == 210


def test_power_circuit_fences_every_oracle_call():
    c = power_circuit(bernoulli(0.3), 4)
    # per Grover step: one barrier before Q, then S_chi | A^dagger | S_0 | A; one before measure
    assert sum(1 for i in c.data if i.operation.name == "barrier") == 4 * 4 + 1


def test_power_circuit_rejects_negative_k():
    with pytest.raises(ValueError, match="-1"):
        power_circuit(bernoulli(0.3), -1)
