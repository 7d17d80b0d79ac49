"""qiskit-algorithms' IAE as a baseline, counted the honest way (bench only).

qiskit-algorithms reads ``metadata["shots"]`` and counts shots*k; here every round it ran
is charged shots*(2k+1). Its circuits are simulated exactly (statevector probabilities,
sampled with a seeded numpy generator) through a minimal SamplerV2, so the comparison with
qbo's exact target is like for like.
"""

from __future__ import annotations

import numpy as np
from qiskit.primitives import BaseSamplerV2, PrimitiveResult, SamplerPubResult
from qiskit.primitives.containers import BitArray, DataBin
from qiskit.primitives.containers.sampler_pub import SamplerPub
from qiskit.quantum_info import Statevector


class _Job:
    def __init__(self, result):
        self._result = result

    def result(self):
        return self._result


class ExactSampler(BaseSamplerV2):
    """Exact probabilities of the given 1-clbit-register circuits, sampled with numpy."""

    def __init__(self, shots: int, seed: int):
        self._shots = shots
        self._rng = np.random.default_rng(seed)
        self.rounds: list[tuple[int, int]] = []  # (shots, k) of every circuit run

    def run(self, pubs, *, shots=None):
        results = []
        for pub in pubs:
            pub = SamplerPub.coerce(pub, shots or self._shots)
            circuit = pub.circuit
            qubits = [circuit.find_bit(i.qubits[0]).index for i in circuit.data if i.operation.name == "measure"]
            probs = Statevector(circuit.remove_final_measurements(inplace=False)).probabilities(qubits)
            draws = self._rng.multinomial(pub.shots, probs / probs.sum())
            counts = {format(i, f"0{len(qubits)}b"): int(n) for i, n in enumerate(draws) if n}
            creg = circuit.cregs[0].name
            bits = BitArray.from_counts(counts, num_bits=len(qubits))
            results.append(SamplerPubResult(DataBin(**{creg: bits}), metadata={"shots": pub.shots}))
        return _Job(PrimitiveResult(results))


def qiskit_algorithms_iae(circuit, epsilon: float, alpha: float, shots: int, seed: int):
    """Run qiskit-algorithms IAE; returns (estimate, (low, high), honest oracle calls)."""
    from qiskit_algorithms import EstimationProblem, IterativeAmplitudeEstimation

    sampler = ExactSampler(shots, seed)
    iae = IterativeAmplitudeEstimation(epsilon, alpha, sampler=sampler)
    result = iae.estimate(EstimationProblem(circuit, [0]))
    calls = sum(shots * (2 * k + 1) for k in result.powers[1:])
    return result.estimation, tuple(result.confidence_interval), calls
