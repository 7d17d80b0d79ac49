"""fake: targets simulate only the qubits in use (issue 24, item 5): qbo.noise.layout_simulator."""

from __future__ import annotations

import copy
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from qiskit import QuantumCircuit, transpile
from qiskit_aer import AerSimulator
from qiskit_aer.primitives import SamplerV2
from qiskit_ibm_runtime.fake_provider import FakeManilaV2

from qbo.execution import connection
from qbo.noise import layout_simulator
from qbo.execution.runtime import LocalConnection, RuntimeExecutor
from qbo.noise.layout_simulator import LayoutSimulator, active_qubits, restricted_noise_model


def _circuit() -> QuantumCircuit:
    qc = QuantumCircuit(2)
    qc.ry(1.0, 0)
    qc.cx(0, 1)
    qc.ry(0.3, 1)
    qc.cx(1, 0)
    qc.measure_all()
    return qc


def _counts(simulator: AerSimulator, circuit: QuantumCircuit, seed: int) -> dict[str, int]:
    """As qiskit-ibm-runtime's local executor runs a job: a deep copy, Aer's SamplerV2."""
    sampler = SamplerV2.from_backend(copy.deepcopy(simulator), seed=seed)
    return sampler.run([circuit], shots=3000).result()[0].data.meas.get_counts()


@pytest.mark.slow  # two simulators, four sampled runs (~3.5 s on the shared machine)
def test_layout_simulator_gives_the_full_noise_models_counts_seed_for_seed():
    backend = FakeManilaV2()
    compiled = transpile(_circuit(), backend, initial_layout=[3, 4], seed_transpiler=1, optimization_level=1)
    assert active_qubits([compiled]) == frozenset({3, 4})
    full = AerSimulator.from_backend(backend)
    mine = LayoutSimulator.for_backend(backend)
    for seed in (1, 2):
        assert _counts(mine, compiled, seed) == _counts(full, compiled, seed)
    # the noisy model differs from the ideal one: the comparison can fail
    assert _counts(AerSimulator(), compiled, 1) != _counts(full, compiled, 1)


def test_restricted_noise_model_holds_only_the_qubits_in_use():
    backend = FakeManilaV2()
    model = restricted_noise_model(backend.target, [3, 4])
    assert set(model.noise_qubits) == {3, 4}
    assert set(backend.operation_names) <= set(model.basis_gates) | {"measure", "delay", "reset"}
    full = AerSimulator.from_backend(backend).options.noise_model
    assert set(full.noise_qubits) == set(range(backend.num_qubits))


def test_a_fake_target_builds_no_noise_for_qubits_it_does_not_use(monkeypatch):
    monkeypatch.setattr(connection, "_SIMULATORS", {})
    monkeypatch.setattr(layout_simulator, "_NOISE", layout_simulator.NoiseModels(layout_simulator.NOISE_MODELS))
    executor = RuntimeExecutor(LocalConnection(), "FakeManilaV2", "fake:FakeManilaV2", seed=3)
    qc = QuantumCircuit(1)
    qc.ry(0.7, 0)
    qc.measure_all()
    counts = executor.run([qc], [100])[0]
    executor.close()
    assert sum(counts.values()) == 100
    layout = active_qubits([executor.compiled(qc)])
    assert len(layout) == 1
    built = layout_simulator._NOISE.items()  # the noise models the jobs ran with (each job runs a copy)
    assert [qubits for (_, qubits), _ in built] == [tuple(layout)]
    assert set(built[0][1].noise_qubits) == set(layout)


def _layouts() -> list[QuantumCircuit]:
    """One circuit on each of four qubit pairs of FakeManilaV2: four restricted noise models."""
    backend = FakeManilaV2()
    return [transpile(_circuit(), backend, initial_layout=pair, seed_transpiler=1, optimization_level=1)
            for pair in ([0, 1], [1, 2], [2, 3], [3, 4])]


def test_threads_sharing_one_simulator_get_the_counts_of_sequential_runs(monkeypatch):
    """Seeded jobs on one LayoutSimulator, started together from four threads, give the counts
    they give one after the other: each run hands Aer its own noise model (before, a run set
    the shared simulator's option, and a job that Aer executed later could read another
    thread's model: the circuit on qubits 3, 4 then ran with no noise on them)."""
    monkeypatch.setattr(layout_simulator, "_NOISE", layout_simulator.NoiseModels(layout_simulator.NOISE_MODELS))
    simulator = LayoutSimulator.for_backend(FakeManilaV2())
    circuits = _layouts()

    def counts(i: int) -> dict[str, int]:
        return simulator.run(circuits[i], shots=2000, seed_simulator=11 + i).result().get_counts()

    sequential = [counts(i) for i in range(len(circuits))]
    ideal = [AerSimulator().run(c, shots=2000, seed_simulator=11 + i).result().get_counts() for i, c in enumerate(circuits)]
    assert all(s != n for s, n in zip(sequential, ideal))  # a job run with another layout's model would differ
    start = threading.Barrier(len(circuits))

    def together(i: int) -> dict[str, int]:
        start.wait()
        return counts(i)

    for _ in range(3):
        with ThreadPoolExecutor(len(circuits)) as pool:
            assert list(pool.map(together, range(len(circuits)))) == sequential


def test_the_noise_model_cache_is_bounded_and_drops_the_least_recently_used():
    target = FakeManilaV2().target
    cache = layout_simulator.NoiseModels(2)
    a = cache.get("manila", target, frozenset({0}))
    cache.get("manila", target, frozenset({1}))
    assert cache.get("manila", target, frozenset({0})) is a  # a hit: {0} is now the most recent
    cache.get("manila", target, frozenset({2}))
    assert [key for key, _ in cache.items()] == [("manila", (0,)), ("manila", (2,))]
    assert layout_simulator.NOISE_MODELS == 32 and layout_simulator._NOISE.maxsize == layout_simulator.NOISE_MODELS
    with pytest.raises(ValueError, match="maxsize 0"):
        layout_simulator.NoiseModels(0)
