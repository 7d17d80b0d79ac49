"""qiskit-aer target: noiseless, or noisy from a calibration snapshot (``aer:NAME``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from qiskit import QuantumCircuit

from qbo.noise.snapshot import Snapshot
from qbo.execution.base import Counts, check_shots
from qbo.execution.transpile import TranspileCache
from qbo.limits import check_qubits


class AerExecutor:
    """Runs circuits on ``AerSimulator``; with a snapshot, on its noise model and layout.

    Noisy circuits are transpiled to the snapshot's basis gates and coupling map with a
    fixed layout (``choose_layout``); the noise model covers just the laid-out qubits.
    """

    def __init__(
        self, snapshot: Snapshot | None = None, seed: int | None = None, optimization_level: int = 1
    ) -> None:
        from qiskit_aer import AerSimulator

        self.rng = np.random.default_rng(seed)
        self._snapshot = snapshot
        self.target = "aer" if snapshot is None else f"aer:{snapshot.name}"
        self._backends: dict[tuple[int, ...], object] = {}
        if snapshot is None:
            self._ideal = AerSimulator(method="statevector")
            self._transpile = TranspileCache(self._ideal.target, optimization_level, seed or 0, layout=lambda n: list(range(n)))
        else:
            self._transpile = TranspileCache(snapshot.target(), optimization_level, seed or 0)

    def backend_for(self, num_qubits: int):
        """The simulator for circuits of this width (noise restricted to the layout)."""
        if self._snapshot is None:
            return self._ideal
        layout = tuple(self._transpile.layout(num_qubits))
        if layout not in self._backends:
            self._backends[layout] = self._snapshot.to_backend(noise_qubits=layout)
        return self._backends[layout]

    def compiled(self, circuit: QuantumCircuit) -> QuantumCircuit:
        """The transpiled circuit that actually runs (cached for power circuits)."""
        return self._transpile(circuit)

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        out = []
        for circuit, n in zip(circuits, shots):
            check_qubits(circuit.num_qubits, "aer")  # before the simulator allocates
            backend = self.backend_for(circuit.num_qubits)
            seed = int(self.rng.integers(2**31))
            result = backend.run(self.compiled(circuit), shots=n, seed_simulator=seed).result()
            out.append(dict(result.get_counts()))
        return out
