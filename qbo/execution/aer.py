"""qiskit-aer target: noiseless, or noisy from a calibration snapshot (``aer:NAME``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from qiskit import QuantumCircuit

from qbo.noise.aer_model import aer_backend
from qbo.noise.depth import compiler_for
from qbo.noise.schema import Snapshot
from qbo.execution.base import Counts, Target, check_shots, transpile_seed
from qbo.limits import check_qubits
from qbo.noise.blocks import TranspileCache
from qbo.noise.twirl import DEFAULT_RANDOMIZATIONS, split_shots, twirled_instances


DEVICES = ("CPU", "GPU")
# On a GPU a noisy run evolves the density matrix once and draws every shot from it, where
# it fits and the run has enough shots: one statevector trajectory per shot is the slower
# path there (bench/gpu.py, docs/noise.md "Aer on a GPU"). Aer's automatic method keeps
# trajectories until shots exceed 2^n, which suits a CPU, not a GPU.
GPU_DENSITY_MATRIX_BYTES = 2**32  # 16 * 4^n bytes: up to 14 qubits
GPU_DENSITY_MATRIX_MIN_SHOTS = 16


def gpu_method(num_qubits: int, shots: int) -> str | None:
    """The Aer method a noisy GPU run of ``shots`` shots on ``num_qubits`` active qubits takes:
    'density_matrix' where it fits ``GPU_DENSITY_MATRIX_BYTES`` and shots >=
    ``GPU_DENSITY_MATRIX_MIN_SHOTS``, else None (Aer's automatic choice)."""
    fits = 16 * 4.0**num_qubits <= GPU_DENSITY_MATRIX_BYTES
    return "density_matrix" if fits and shots >= GPU_DENSITY_MATRIX_MIN_SHOTS else None


class AerExecutor:
    """Runs circuits on ``AerSimulator``; with a snapshot, on its noise model and layout.

    Noisy circuits are transpiled to the snapshot's basis gates and coupling map with a
    fixed layout (``choose_layout``); the noise model covers just the laid-out qubits.

    ``twirl``: every run spreads its shots over up to ``randomizations`` random Pauli twirls
    of the compiled circuit's two-qubit gates (``qbo.noise.twirl``). ``device='GPU'`` runs on
    qiskit-aer-gpu (the optional ``gpu`` extra; nothing else needs it), noisy runs there on
    the density matrix where ``gpu_method`` says so.
    """

    def __init__(
        self, snapshot: Snapshot | None = None, seed: int | np.random.Generator | None = None, optimization_level: int = 1,
        *, twirl: bool = False, randomizations: int = DEFAULT_RANDOMIZATIONS, device: str = "CPU",
    ) -> None:
        from qiskit_aer import AerSimulator

        self.device = check_device(device)
        self.rng = np.random.default_rng(seed)
        self._snapshot = snapshot
        self.twirl, self.randomizations = bool(twirl), int(randomizations)
        self.target = Target("aer") if snapshot is None else Target("aer", snapshot.name)
        self._backends: dict[tuple[int, ...], object] = {}
        if snapshot is None:
            self._ideal = AerSimulator(method="statevector", device=self.device)
            self._transpile = TranspileCache(self._ideal.target, optimization_level, transpile_seed(seed), layout=lambda n: list(range(n)))
        else:
            self._transpile = compiler_for(snapshot, optimization_level, transpile_seed(seed))

    def backend_for(self, num_qubits: int):
        """The simulator for circuits of this width (noise restricted to the layout)."""
        if self._snapshot is None:
            return self._ideal
        layout = tuple(self._transpile.layout(num_qubits))
        if layout not in self._backends:
            self._backends[layout] = aer_backend(self._snapshot, noise_qubits=layout, device=self.device)
        return self._backends[layout]

    @property
    def transpile_cache(self) -> TranspileCache:
        """Compiles this executor's circuits (shared per snapshot with ``qbo.noise.depth``)."""
        return self._transpile

    def compiled(self, circuit: QuantumCircuit) -> QuantumCircuit:
        """The transpiled circuit that actually runs (cached for power circuits)."""
        return self._transpile(circuit)

    def _run_options(self, num_qubits: int, shots: int) -> dict[str, str]:
        """Aer run options: on a GPU with a noise model, ``gpu_method``'s; else none."""
        method = gpu_method(num_qubits, shots) if self.device == "GPU" and self._snapshot is not None else None
        return {} if method is None else {"method": method}

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        out = []
        for circuit, n in zip(circuits, shots):
            check_qubits(circuit.num_qubits, "aer")  # before the simulator allocates
            backend = self.backend_for(circuit.num_qubits)
            compiled = self.compiled(circuit)
            if not self.twirl:
                seed = int(self.rng.integers(2**31))
                options = self._run_options(circuit.num_qubits, n)
                out.append(dict(backend.run(compiled, shots=n, seed_simulator=seed, **options).result().get_counts()))
                continue
            parts = split_shots(n, self.randomizations)
            instances = twirled_instances(compiled, len(parts), self.rng, self._transpile.target)
            total: Counts = {}
            for instance, m in zip(instances, parts):
                seed = int(self.rng.integers(2**31))
                options = self._run_options(circuit.num_qubits, m)
                for bits, c in backend.run(instance, shots=m, seed_simulator=seed, **options).result().get_counts().items():
                    total[bits] = total.get(bits, 0) + c
            out.append(total)
        return out


def check_device(device: str) -> str:
    """'CPU' or 'GPU' (case-insensitive); GPU only if this qiskit-aer build has one."""
    name = str(device).upper()
    if name not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, got {str(device)[:40]!r}")
    if name == "GPU":
        from qiskit_aer import AerSimulator

        if "GPU" not in AerSimulator().available_devices():
            raise ValueError("device 'GPU' needs the GPU build of qiskit-aer (pip install 'qbo[gpu]', which "
                             "installs qiskit-aer-gpu in place of qiskit-aer) and a CUDA GPU; this qiskit-aer has CPU only")
    return name
