"""The exact noiseless target: outcome probabilities of the circuit, sampled with numpy.

For a Grover power circuit (``qbo.grover.power_circuit``) the executor reads A and Q off
the circuit itself (its barrier-separated blocks), computes the operator of Q once per
oracle and climbs a ladder of states Q^j A|0>, so every power of an oracle costs one
matrix-vector product. Any other circuit is simulated with a full statevector. Both give
the exact probabilities of the circuit that was handed in. ``run_power(oracle, k, shots)``
(``qbo.execution.base.SamplesPowers``) samples Q^k A from the same ladder without building
the circuit, whose O(k) instructions would cost more than the sampling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from qiskit import QuantumCircuit
from qiskit.quantum_info import Operator, Statevector

from qbo.execution.base import Counts, Target, check_shots
from qbo.grover import cache_key, power_circuit
from qbo.limits import check_qubits
from qbo.oracles.base import Oracle


class ExactExecutor:
    """Noiseless sampler from exact probabilities; reproducible through ``seed``."""

    target = Target("exact")

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self._ladders: dict[str, _Ladder] = {}
        self._probs: dict[tuple[str, int], np.ndarray] = {}

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        return [self._sample(self.probabilities(c), c.num_clbits, n) for c, n in zip(circuits, shots)]

    def run_power(self, oracle: Oracle, k: int, shots: int) -> Counts:
        """``run([power_circuit(oracle, k)], [shots])[0]`` without building Q^k A: the ladder
        needs A and one Q, which ``power_circuit(oracle, 1)`` holds (``SamplesPowers``). A
        subclass that overrides ``run`` or ``probabilities`` (a recorder, a noisy double) gets
        its own ``run``. Like ``probabilities``, it takes the oracle key and k to identify the
        circuit, so its measurement is read once per oracle."""
        if type(self).run is not ExactExecutor.run or type(self).probabilities is not ExactExecutor.probabilities:
            return self.run([power_circuit(oracle, k)], [shots])[0]
        if k < 0:
            raise ValueError(f"Grover power k must be >= 0, got {k}")
        (shots,) = check_shots([None], [shots])
        probs = self._power_probabilities(str(oracle.key), k, oracle.num_qubits, lambda: power_circuit(oracle, min(k, 1)))
        return self._sample(probs, 1, shots)

    def probabilities(self, circuit: QuantumCircuit) -> np.ndarray:
        """Exact distribution over the classical register (index = integer value of the bits)."""
        key = cache_key(circuit)
        if key is None:
            check_qubits(circuit.num_qubits, "exact", grover=False)  # before allocating
            return _statevector_probabilities(circuit)
        return self._power_probabilities(*key, circuit.num_qubits, lambda: circuit)

    def _power_probabilities(self, oracle_key: str, k: int, num_qubits: int,
                             circuit: Callable[[], QuantumCircuit]) -> np.ndarray:
        """Probabilities of Q^k A for the oracle ``oracle_key``, cached; ``circuit()`` (built only
        on a miss) is any power of the oracle with its measurement (power >= 1 where k >= 1)."""
        key = (oracle_key, k)
        if key not in self._probs:
            check_qubits(num_qubits, "exact", grover=k > 0)  # before allocating
            self._probs[key] = self._ladder_probabilities(circuit(), oracle_key, k)
        return self._probs[key]

    def _ladder_probabilities(self, circuit: QuantumCircuit, oracle_key: str, k: int) -> np.ndarray:
        """Probabilities of Q^k A from the ladder; ``circuit`` is any power of the oracle with
        the same measurement (power >= 1 where k >= 1), read for A, one Q and the measurement."""
        power = cache_key(circuit)[1]
        ladder = self._ladders.get(oracle_key)
        if ladder is None or (k > 0 and ladder.q is None):
            ladder = self._ladders[oracle_key] = _Ladder.from_power_circuit(circuit, power)
        if ladder.measured is None:
            ladder.measured = _measure_map(circuit)
        return _distribution(ladder.measured, circuit.num_clbits, np.abs(ladder.state(k)) ** 2)

    def _sample(self, probs: np.ndarray, num_clbits: int, shots: int) -> Counts:
        draws = self.rng.multinomial(shots, np.clip(probs, 0.0, None) / probs.sum())
        return {format(i, f"0{num_clbits}b"): int(n) for i, n in enumerate(draws) if n}


class _Ladder:
    """States Q^j A|0>, extended on demand."""

    def __init__(self, start: np.ndarray, q_matrix: np.ndarray | None) -> None:
        self._states = [start]
        self.q = q_matrix
        self.measured: list[tuple[int, int]] | None = None  # (qubit, clbit), the same for every power

    @classmethod
    def from_power_circuit(cls, circuit: QuantumCircuit, k: int) -> "_Ladder":
        a_part, q_parts = _split_power(circuit, k)
        start = Statevector(a_part).data
        return cls(start, Operator(q_parts).data if k > 0 else None)

    def state(self, k: int) -> np.ndarray:
        while len(self._states) <= k:
            self._states.append(self.q @ self._states[-1])
        return self._states[k]


def _split_power(circuit: QuantumCircuit, k: int) -> tuple[QuantumCircuit, QuantumCircuit]:
    """A (the gates before the first barrier) and one Q (a k-th of the gates after it)."""
    data = [i for i in circuit.data if i.operation.name != "measure"]
    first = next((n for n, i in enumerate(data) if i.operation.name == "barrier"), len(data))
    rest = [i for i in data[first:] if i.operation.name != "barrier"]
    if k and len(rest) % k:
        raise ValueError(f"circuit '{circuit.name}' is not A followed by {k} equal Grover steps")
    return _unitary_only(circuit, data[:first]), _unitary_only(circuit, rest[: len(rest) // k] if k else [])


def _unitary_only(circuit: QuantumCircuit, data: list | None = None) -> QuantumCircuit:
    bare = QuantumCircuit(circuit.num_qubits)
    for inst in circuit.data if data is None else data:
        bare.append(inst.operation, [circuit.find_bit(q).index for q in inst.qubits])
    return bare


def _measure_map(circuit: QuantumCircuit) -> list[tuple[int, int]]:
    pairs = [
        (circuit.find_bit(i.qubits[0]).index, circuit.find_bit(i.clbits[0]).index)
        for i in circuit.data
        if i.operation.name == "measure"
    ]
    if not pairs:
        raise ValueError(f"circuit '{circuit.name}' has no measurements; the exact target samples measured bits")
    return pairs


def _measured_distribution(circuit: QuantumCircuit, qubit_probs: np.ndarray) -> np.ndarray:
    """Distribution over the classical register from the probabilities of all qubits."""
    return _distribution(_measure_map(circuit), circuit.num_clbits, qubit_probs)


def _distribution(pairs: list[tuple[int, int]], num_clbits: int, qubit_probs: np.ndarray) -> np.ndarray:
    index = np.arange(qubit_probs.size)
    out_index = np.zeros_like(index)
    for qubit, clbit in pairs:
        out_index |= ((index >> qubit) & 1) << clbit
    return np.bincount(out_index, weights=qubit_probs, minlength=2**num_clbits)


def _statevector_probabilities(circuit: QuantumCircuit) -> np.ndarray:
    unitary = _unitary_only(circuit.remove_final_measurements(inplace=False))
    probs = np.abs(Statevector(unitary).data) ** 2
    return _measured_distribution(circuit, probs)
