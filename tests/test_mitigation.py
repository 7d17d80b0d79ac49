"""Mitigation inside the QMC step (qbo.mitigation): folding, REM, ZNE, honest intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from qiskit.quantum_info import Operator

from qbo.noise import load_snapshot
from qbo.execution.aer import AerExecutor
from qbo.execution.exact import ExactExecutor
from qbo.grover import ORACLE_KEY, POWER_KEY, cache_key
from qbo.grover import oracle_calls
from qbo.mitigation import Confusion, Mitigation, folded_power_circuit, make_mitigation
from qbo.mitigation.extrapolation import coefficients
from qbo.oracles import bernoulli, discrete
from qbo.qmc import IterativeAmplitudeEstimation
from qbo.qmc.result import Round
from tests.support.bench import bench_module


def _calls_of_a(circuit, angle: float) -> int:
    """Oracle calls in a bernoulli power circuit: RY(+-angle) gates are A and A^dagger."""
    return sum(
        1 for i in circuit.data
        if i.operation.name == "ry" and math.isclose(abs(float(i.operation.params[0])), angle)
    )


@pytest.mark.parametrize("k,scale", [(0, 1), (0, 3), (2, 3), (3, 5), (5, 7)])
def test_folded_oracle_calls_are_exact(k, scale):
    oracle = bernoulli(0.3)
    angle = 2 * math.asin(math.sqrt(0.3))
    circuit = folded_power_circuit(oracle, k, scale)
    assert _calls_of_a(circuit, angle) == scale * (2 * k + 1) == oracle_calls(k, 1, scale)
    assert Round(k, 10, 3, scale).oracle_calls == 10 * scale * (2 * k + 1)
    # same unitary and the same calls as Mitiq's global folding (which drops the barriers)
    from mitiq.zne.scaling import fold_global

    body = folded_power_circuit(oracle, k, 1).remove_final_measurements(inplace=False)
    mitiq_folded = fold_global(body, scale)
    assert _calls_of_a(mitiq_folded, angle) == scale * (2 * k + 1)
    mine = circuit.remove_final_measurements(inplace=False)
    assert Operator(mine).equiv(Operator(mitiq_folded))
    # barriers survive, so transpilation keeps every fold (depth grows with the scale)
    if scale > 1:
        executor = AerExecutor(load_snapshot("fake_torino"), seed=0)
        plain = executor.compiled(folded_power_circuit(oracle, k, 1))
        folded = executor.compiled(circuit)
        assert folded.count_ops()["sx"] == scale * plain.count_ops()["sx"]
        assert cache_key(circuit) == (f"{oracle.key}|fold{scale}", k)


def test_fractional_and_even_scales_rejected():
    with pytest.raises(ValueError, match="odd integer"):
        folded_power_circuit(bernoulli(0.3), 1, 2)
    with pytest.raises(ValueError, match="odd integer"):
        Mitigation(scales=(1, 2.5))


class _Twin:
    """Classical twin of a device: exact P_k, global depolarising per oracle call
    (contrast f^(scale (2k+1))), then readout flips p01 / p10. Reads k and the scale off
    the transpile-cache key, so it advertises ``compiled`` like a transpiling executor."""

    def __init__(self, a: float, f: float, p01: float, p10: float, seed: int) -> None:
        self.theta, self.f, self.p01, self.p10 = math.asin(math.sqrt(a)), f, p01, p10
        self.rng = np.random.default_rng(seed)
        self.target = "twin"

    def compiled(self, circuit):
        return circuit

    def run(self, circuits, shots):
        out = []
        for circuit, n in zip(circuits, shots):
            key, k = circuit.metadata[ORACLE_KEY], circuit.metadata[POWER_KEY]
            scale = int(key.rpartition("|fold")[2]) if "|fold" in key else 1
            c = self.f ** (scale * (2 * k + 1))
            p = c * math.sin((2 * k + 1) * self.theta) ** 2 + (1 - c) / 2
            q = self.p01 + (1 - self.p01 - self.p10) * p
            ones = int(self.rng.binomial(n, q))
            out.append({"1": ones, "0": n - ones})
        return out


def test_rem_recovers_ideal_probability_under_pure_readout_error():
    """Pure readout error: the REM interval covers the ideal p_k and the point value is
    within 4 binomial std / g of it."""
    oracle, n = bernoulli(0.3), 40000
    conf = Confusion(p01=0.10, p10=0.02)
    mit = Mitigation(readout=True, confusion=conf)
    for k in (0, 1, 3):
        twin = _Twin(0.3, 1.0, conf.p01, conf.p10, seed=k)
        res = mit.estimate(twin, oracle, k, n, 0.05)
        ideal = math.sin((2 * k + 1) * math.asin(math.sqrt(0.3))) ** 2
        raw = conf.observe(ideal)
        assert res.p_low <= ideal <= res.p_high
        assert abs(res.value - ideal) <= 4 * math.sqrt(raw * (1 - raw) / n) / conf.gain
        assert abs(raw - ideal) > 8 * math.sqrt(raw * (1 - raw) / n)  # the error it removed


@pytest.mark.parametrize("extrapolation", ["richardson", "exp"])
def test_zne_reduces_error_under_depolarizing(extrapolation):
    """f = 0.98 per call, k = 5: unmitigated bias (1 - c) |P - 1/2| with c = f^11 ~ 0.80
    is ~0.1; Richardson (1, 3) leaves (1 - 1.5 c + 0.5 c^3) |P - 1/2| ~ 0.03 and exp with
    asymptote 1/2 is exact for this model; the statistical std is < 0.004 at 10^5 shots."""
    oracle, k = bernoulli(0.3), 5
    ideal = math.sin(11 * math.asin(math.sqrt(0.3))) ** 2
    twin = _Twin(0.3, 0.98, 0.0, 0.0, seed=7)
    raw = make_mitigation("none") or Mitigation()
    unmitigated = raw.estimate(twin, oracle, k, 100000, 0.05).value
    zne = Mitigation(scales=(1, 3), extrapolation=extrapolation).estimate(twin, oracle, k, 100000, 0.05)
    assert abs(zne.value - ideal) < abs(unmitigated - ideal) / 2
    assert {r.scale for r in zne.rounds} == {1, 3}
    assert np.allclose(coefficients("richardson", (1, 3)), [1.5, -0.5])


def test_mitigated_iae_counts_every_folded_call_and_reports_reward_units():
    oracle = discrete([2.0, 5.0], [0.6, 0.4])  # mean 3.2, window [2, 5]
    est = IterativeAmplitudeEstimation(0.05, 0.05, mitigation=Mitigation(scales=(1, 3)))
    out = est.estimate(oracle, ExactExecutor(seed=1))
    assert out.method == "iae+zne"
    assert out.oracle_calls == sum(r.shots * r.scale * (2 * r.k + 1) for r in out.rounds)
    assert {r.scale for r in out.rounds} == {1, 3}
    assert oracle.low <= out.ci_low <= 3.2 <= out.ci_high <= oracle.high
    assert out.half_width <= 0.05 * (1 + 1e-9) and out.reached_epsilon


def test_k_max_cap_terminates_honestly():
    """eps = 0.001 at k_max = 0 needs ~10^6 shots per round: the round cap stops the loop
    with a wider interval that still covers, and reached_epsilon=False."""
    est = IterativeAmplitudeEstimation(0.001, 0.05, k_max=0)
    out = est.estimate(bernoulli(0.3), ExactExecutor(seed=2))
    assert not out.reached_epsilon and out.ci_low <= 0.3 <= out.ci_high
    assert out.half_width > 0.001 and all(r.k == 0 for r in out.rounds)


def test_plain_iae_unchanged_when_mitigation_is_none():
    a = IterativeAmplitudeEstimation(0.01).estimate(bernoulli(0.3), ExactExecutor(seed=5))
    b = IterativeAmplitudeEstimation(0.01, mitigation=None).estimate(bernoulli(0.3), ExactExecutor(seed=5))
    assert a.rounds == b.rounds and a.value == b.value and a.method == "iae"


@pytest.mark.parametrize("name", ["none", pytest.param("rem", marks=pytest.mark.slow), pytest.param("zne", marks=pytest.mark.slow),
                                  pytest.param("zne+rem", marks=pytest.mark.slow)])
def test_interval_coverage_on_a_device_model(name):
    """20 seeded amplitudes on aer:fake_brisbane (the shortest T2 of the shipped snapshots)
    at eps = 0.03: every setting covers >= 18 / 20. Nominal coverage is 1 - alpha = 0.95 and
    IAE's union bound is conservative (measured ~1.0 at eps = 0.01, bench/noise.py); the runs
    are seeded, so the check is deterministic. ZNE's intervals cover the extrapolated
    expectation, and the residual model bias at these depths (< 0.01 on p_k, diluted by 1/K
    on the amplitude, qbo.noise.depth) is well inside the interval."""
    snapshot = load_snapshot("fake_brisbane")
    executor = AerExecutor(snapshot, seed=11)
    est = IterativeAmplitudeEstimation(0.03, 0.05, mitigation=make_mitigation(name, snapshot))
    amplitudes = np.random.default_rng(4).uniform(0.02, 0.98, 20)
    covered = 0
    for a in amplitudes:
        out = est.estimate(bernoulli(float(a)), executor)
        covered += out.ci_low <= a <= out.ci_high
    assert covered >= 18, (name, covered)


@pytest.mark.parametrize("qubits", [2, 3])
def test_bench_entangled_oracle_encodes_the_amplitude_exactly(qubits):
    """The bias-dominated bench oracle: P(objective = 1) = a exactly, window (0, 1) (so the
    amplitude is the reward), and its Grover steps run two-qubit gates on the device."""
    from qiskit.quantum_info import Statevector

    from qbo.grover import power_circuit

    bench = bench_module("noise")
    for a in (0.0, 0.03, 0.37, 0.5, 0.91, 1.0):
        oracle = bench.make_oracle("entangled", a, qubits)
        assert (oracle.low, oracle.high, oracle.num_qubits, oracle.objective) == (0.0, 1.0, qubits, 0)
        assert oracle.amplitude == a
        assert abs(float(Statevector(oracle.circuit).probabilities([0])[1]) - a) < 1e-12
    assert bench.make_oracle("entangled", 0.3, qubits).key != bench.make_oracle("entangled", 0.31, qubits).key
    compiled = AerExecutor(load_snapshot("fake_torino"), seed=0).compiled(
        power_circuit(bench.make_oracle("entangled", 0.3, qubits), 1))
    assert sum(n for name, n in compiled.count_ops().items() if name in ("cz", "ecr", "cx")) >= 4
    with pytest.raises(ValueError, match="oracle must be one of"):
        bench.make_oracle("ghz", 0.3)


def test_rem_reads_the_confusion_of_the_qubit_every_folded_circuit_measures():
    """With a 3-qubit entangled oracle the router may move the objective off its initial
    physical qubit; REM must use the confusion of the qubit actually measured, in every
    folded circuit of every round (not of layout[objective])."""
    from qbo.noise.readout import measured_qubit, snapshot_confusion

    bench = bench_module("noise")
    for name in ("fake_fez", "fake_brisbane"):
        snapshot = load_snapshot(name)
        executor = AerExecutor(snapshot, seed=0)
        oracle = bench.make_oracle("entangled", 0.4, 3)
        bound = make_mitigation("zne+rem", snapshot, scales=(1, 3, 5)).bind(executor, oracle)
        measured = {
            measured_qubit(executor.compiled(folded_power_circuit(oracle, k, s)))
            for k in (0, 1, 4) for s in (1, 3, 5)
        }
        assert len(measured) == 1
        assert bound.confusion == snapshot_confusion(snapshot, measured.pop())


def test_bias_pad_widens_rounds_by_the_predicted_residual_bias():
    """bias_pad adds the residual bias the depth model allows to a round's interval
    (qbo.qmc.capped.residual_bias): for zne+rem the triangle bound sum_j |c_j| (1 - contrast(s_j))
    (zero-noise extrapolation is not assumed to remove anything), growing with k; without REM
    the readout term max(p01, p10) comes on top of the gain-scaled 1 - contrast. It only
    widens: the padded interval contains the plain one. Fixed pads (with_pads) override it."""
    from qbo.noise.depth import circuit_noise
    from qbo.noise.readout import measured_qubit, snapshot_confusion

    snapshot = load_snapshot("fake_torino")
    executor = AerExecutor(snapshot, seed=3)
    oracle = bench_module("noise").make_oracle("entangled", 0.3, 2)
    padded = make_mitigation("zne+rem", snapshot, bias_pad=True)
    assert padded.name == "zne+rem+pad" and make_mitigation("none", snapshot, bias_pad=True).name == "pad"
    bound = padded.bind(executor, oracle)
    contrast = [circuit_noise(snapshot, executor.compiled(folded_power_circuit(oracle, 4, s))).contrast for s in (1, 3)]
    assert math.isclose(bound.pad(4), 1.5 * (1 - contrast[0]) + 0.5 * (1 - contrast[1]), rel_tol=0.02)
    assert 0 < bound.pad(0) < bound.pad(4) < bound.pad(12) <= 1.0
    plain = make_mitigation("zne+rem", snapshot).bind(executor, oracle)
    assert plain.pad(4) == 0.0
    lo, hi = plain.plug_in(4, 0.4, 2000, 0.01)
    plo, phi = bound.plug_in(4, 0.4, 2000, 0.01)
    assert plo <= lo - bound.pad(4) + 1e-12 or plo == 0.0
    assert phi >= hi + bound.pad(4) - 1e-12 or phi == 1.0
    raw = make_mitigation("none", snapshot, bias_pad=True).bind(executor, oracle)
    conf = snapshot_confusion(snapshot, measured_qubit(executor.compiled(folded_power_circuit(oracle, 4, 1))))
    assert math.isclose(raw.pad(4), max(conf.p01, conf.p10) + conf.gain * (1 - contrast[0]), rel_tol=0.02)
    fixed = make_mitigation("rem", snapshot).with_pads((0.01, 0.02))
    assert fixed.name == "rem+pad" and fixed.bind(executor, oracle).pad(7) == 0.02
    with pytest.raises(ValueError, match="pads must be"):
        make_mitigation("rem", snapshot).with_pads((1.5,))
    with pytest.raises(ValueError, match="linear factories"):
        make_mitigation("zne", snapshot, extrapolation="exp", bias_pad=True)
    with pytest.raises(ValueError, match="needs a calibration snapshot"):
        Mitigation(bias_pad=True)
    with pytest.raises(ValueError, match="transpiling executor"):
        make_mitigation("zne", snapshot, bias_pad=True).bind(ExactExecutor(seed=0), oracle)


# ---------------------------------------------------------------- twirling and the estimate CLI


@pytest.mark.slow
def test_twirled_instances_keep_the_circuit_and_split_shots():
    """Every twirl of a compiled routed power implements the same Q^k A (noiseless
    probabilities equal to 1e-9), and the executor's shots over twirls sum to the call's."""
    import numpy as np

    from qbo.grover import power_circuit
    from qbo.noise.depth import compiler_for
    from qbo.noise.twirl import split_shots, twirled_instances
    from qbo.oracles import parse_oracle
    from tests.test_depth import _ideal_one_probability

    assert split_shots(10, 4) == [3, 3, 2, 2] and split_shots(3, 16) == [1, 1, 1]
    snapshot = load_snapshot("fake_torino")
    compiler = compiler_for(snapshot)
    compiled = compiler(power_circuit(parse_oracle("gaussian:mean=0.4,std=0.2,qubits=2"), 1))
    expected = _ideal_one_probability(compiled)
    twirls = twirled_instances(compiled, 3, np.random.default_rng(0), compiler.target)
    assert len({str(t.data) for t in twirls}) == 3
    for t in twirls:
        assert _ideal_one_probability(t) == pytest.approx(expected, abs=1e-9)
        assert t.count_ops().get("cz") == compiled.count_ops().get("cz")


def test_twirled_aer_executor_counts_every_shot():
    from qbo.grover import power_circuit
    from qbo.oracles import bernoulli

    executor = AerExecutor(load_snapshot("fake_torino"), seed=1, twirl=True, randomizations=4)
    (counts,) = executor.run([power_circuit(bernoulli(0.3), 2)], [101])
    assert sum(counts.values()) == 101


@pytest.mark.parametrize("args, needle", [
    (["--mitigation", "bogus", "--target", "aer:fake_torino"], "mitigation must be one of none, rem, zne, zne+rem, got 'bogus'"),
    (["--mitigation", "rem", "--target", "exact"], "readout mitigation needs"),
    (["--twirl", "--target", "exact"], "got target 'exact'"),
    (["--device", "TPU", "--target", "aer"], "device must be one of CPU, GPU, got 'TPU'"),
    (["--device", "GPU", "--target", "exact"], "works on aer targets only"),
])
def test_estimate_rejects_bad_mitigation_twirl_and_device(args, needle):
    from typer.testing import CliRunner

    from qbo.cli.app import app

    result = CliRunner().invoke(app, ["estimate", *args])
    assert result.exit_code == 2
    lines = [l for l in result.output.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.output


def test_estimate_gpu_without_the_gpu_build_is_one_line():
    from qiskit_aer import AerSimulator
    from typer.testing import CliRunner

    from qbo.cli.app import app

    if "GPU" in AerSimulator().available_devices():
        pytest.skip("this qiskit-aer has a GPU")
    result = CliRunner().invoke(app, ["estimate", "--device", "gpu", "--target", "aer"])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "qbo[gpu]" in result.output


@pytest.mark.slow
def test_estimate_with_mitigation_and_twirl_counts_folded_calls():
    import json

    from typer.testing import CliRunner

    from qbo.cli.app import app

    result = CliRunner().invoke(app, ["estimate", "--target", "aer:fake_torino", "--epsilon", "0.05",
                                      "--mitigation", "zne+rem", "--twirl", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["mitigation"] == "zne+rem" and out["twirl"] is True
    assert out["oracle_calls"] == sum(r["shots"] * r["scale"] * (2 * r["k"] + 1) for r in out["rounds"])
    assert {r["scale"] for r in out["rounds"]} == {1, 3}


@pytest.mark.slow
def test_bench_exact_channels_equal_aer_density_matrix():
    """bench/noise.py's exact probabilities (compiled-block superoperators under the Aer
    noise model, eigendecomposed powers) equal Aer's density-matrix simulation of the same
    compiled circuits, and repeated products, to 1e-7."""
    bench = bench_module("noise")
    model = bench.DeviceModel(load_snapshot("fake_torino"))
    assert bench.spot_check(model, bench.make_oracle("entangled", 0.37)) < 1e-7
    assert bench.wilson_lower(95, 100) == pytest.approx(0.8883, abs=1e-4)


def test_twirling_connection_switches_on_the_samplers_own_twirling():
    """fake:/ibm: targets twirl through the runtime Sampler's options; everything else of the
    connection passes through unchanged."""
    from types import SimpleNamespace

    from qiskit_ibm_runtime.options_models.sampler import SamplerOptions

    from qbo.noise.twirl import TwirlingConnection

    from qiskit import QuantumCircuit

    class Inner:
        simulated = True

        def sampler(self, mode):
            return SimpleNamespace(options=SamplerOptions(), mode=mode, run=lambda pubs: pubs)

    one, two = QuantumCircuit(2, 1), QuantumCircuit(2, 1)
    one.x(0)
    one.barrier()  # a directive on two qubits is not a gate
    two.cx(0, 1)
    connection = TwirlingConnection(Inner())
    sampler = connection.sampler("batch")
    assert connection.simulated and sampler.mode == "batch"
    twirling = sampler.options.twirling
    sampler.run([(two, None, 1000)])  # exactly 1000 shots: 10 randomizations of 100
    assert twirling.enable_gates is True and (twirling.num_randomizations, twirling.shots_per_randomization) == (10, 100)
    sampler.run([(two, None, 997)])  # a prime: one randomization of all its shots
    assert (twirling.num_randomizations, twirling.shots_per_randomization) == (1, 997)
    sampler.run([(one, None, 1000)])  # no two-qubit gate: nothing to twirl
    assert twirling.enable_gates is False
    sampler.run([(one, None, 64), (two, None, 64)])
    assert twirling.enable_gates is False


def test_twirling_on_a_fake_backend_keeps_one_qubit_circuits_right():
    """qiskit-ibm-runtime's local executor returned only the first randomization's shots of a
    twirled circuit without two-qubit gates (the others read 0: bernoulli:0.3 read P(1) = 0.04);
    such a request now runs untwirled, so its counts are the untwirled ones, and 1000 shots
    come back as 1000 (the Sampler's 'auto' returned 1024)."""
    from qbo.execution.targets import make_executor
    from qbo.grover import power_circuit

    plain, twirled = (make_executor("fake:FakeManilaV2", seed=3, twirl=t) for t in (False, True))
    circuits = [power_circuit(bernoulli(0.3), 0)]
    assert twirled.run(circuits, [1000]) == plain.run(circuits, [1000])


@pytest.mark.slow
def test_twirled_aer_executor_turns_a_coherent_error_into_the_twirled_channel():
    """Inject RZZ(0.1) after every CZ of the layout. Untwirled, Q^4 A of the entangled
    oracle (a = 0.3) reads what the exact channel predicts (0.295); with ``twirl=True`` the
    executor's 64 random twirls read the exact Pauli-twirled prediction (0.650), not the
    coherent one. Margins: 4 binomial sd plus 0.005 (untwirled; Aer's error-composition
    order) or 0.02 (twirled; a finite set of twirls)."""
    from qiskit.circuit.library import RZZGate
    from qiskit_aer import AerSimulator
    from qiskit_aer.noise import coherent_unitary_error

    from qbo.execution.base import ones
    from qbo.grover import power_circuit
    from qbo.noise.aer_model import noise_model

    bench = bench_module("noise")
    snapshot, oracle, k, shots = load_snapshot("fake_torino"), bench.make_oracle("entangled", 0.3), 4, 20000
    measured = {}
    for twirl in (False, True):
        model = bench.DeviceModel(snapshot, delta=0.1, twirl=twirl)
        probability = model.add(oracle).probability(k)
        predicted = float(model.confusion.observe(probability))
        executor = AerExecutor(snapshot, seed=5, twirl=twirl, randomizations=64)
        layout = executor.transpile_cache.layout(oracle.num_qubits)
        noisy = noise_model(snapshot, qubits=layout)
        for g in snapshot.gates:
            if g.gate == "cz" and set(g.qubits) <= set(layout) and not g.faulty:
                noisy.add_quantum_error(coherent_unitary_error(RZZGate(0.1).to_matrix()), "cz", list(g.qubits), warnings=False)
        executor._backends[tuple(layout)] = AerSimulator(target=executor.transpile_cache.target, noise_model=noisy)
        (counts,) = executor.run([power_circuit(oracle, k)], [shots])
        p = ones(counts) / shots
        sd = math.sqrt(p * (1 - p) / shots)
        assert abs(p - predicted) <= 4 * sd + (0.02 if twirl else 0.005), (twirl, p, predicted)
        measured[twirl] = p
    assert measured[True] - measured[False] > 0.3
