"""IBM Quantum targets through qiskit-ibm-runtime's client-side Sampler.

``fake:NAME`` runs in qiskit-ibm-runtime's local mode on a fake backend; ``ibm:NAME``
runs on a real backend. Both go through exactly the same ``RuntimeExecutor`` code; only
``connect`` differs: it returns a fake backend or a backend of a ``QiskitRuntimeService``.
Credentials come from ``QISKIT_IBM_TOKEN`` / ``QISKIT_IBM_INSTANCE`` or a saved account and
are never logged, stored or echoed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from qiskit import QuantumCircuit

from qbo.execution.base import Counts, check_shots
from qbo.execution.transpile import TranspileCache


def fake_backend(name: str) -> Any:
    """Instantiate ``qiskit_ibm_runtime.fake_provider.<name>``; one-line error if unknown."""
    from qiskit_ibm_runtime import fake_provider

    cls = getattr(fake_provider, name, None)
    if not (isinstance(cls, type) and name.startswith("Fake")):
        known = sorted(n for n in dir(fake_provider) if n.startswith("Fake") and n[4:5].isupper())
        raise ValueError(f"unknown fake backend '{name}', expected e.g. {', '.join(known[:6])} ...")
    return cls()


def ibm_backend(name: str) -> Any:
    """A real backend of the account in the environment or the saved Qiskit account."""
    from qiskit_ibm_runtime import QiskitRuntimeService

    token = os.environ.get("QISKIT_IBM_TOKEN")
    kwargs: dict[str, Any] = {}
    if token:
        kwargs = {"channel": os.environ.get("QISKIT_IBM_CHANNEL", "ibm_quantum_platform"), "token": token}
        if os.environ.get("QISKIT_IBM_INSTANCE"):
            kwargs["instance"] = os.environ["QISKIT_IBM_INSTANCE"]
    try:
        service = QiskitRuntimeService(**kwargs)
    except Exception as exc:  # never echo the exception text: it may quote credentials
        raise ValueError(
            f"cannot connect to IBM Quantum for backend '{name}' ({type(exc).__name__}): set "
            "QISKIT_IBM_TOKEN (and QISKIT_IBM_INSTANCE) or save an account with "
            "QiskitRuntimeService.save_account"
        ) from None
    return service.backend(name)


class RuntimeExecutor:
    """Runs circuits with ``qiskit_ibm_runtime.executor_sampler.Sampler`` on a backend.

    Args:
        backend: a fake or real IBM backend (BackendV2).
        target: the label, e.g. ``fake:FakeBrisbane`` or ``ibm:ibm_torino``.
        mode: None (job mode), or a ``Session`` / ``Batch`` opened on ``backend``.
        seed: seeds ``rng``, which draws the simulator seed of every run in local mode
            (hardware ignores it).
    """

    def __init__(
        self, backend: Any, target: str, mode: Any = None, seed: int | None = None,
        optimization_level: int = 1,
    ) -> None:
        from qiskit_ibm_runtime.executor_sampler import Sampler

        self.target = target
        self.backend = backend
        self._sampler = Sampler(mode=mode if mode is not None else backend)
        self.rng = np.random.default_rng(seed)
        self._transpile = TranspileCache(backend.target, optimization_level, seed or 0)

    def compiled(self, circuit: QuantumCircuit) -> QuantumCircuit:
        return self._transpile(circuit)

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        pubs = [(self.compiled(c), None, n) for c, n in zip(circuits, shots)]
        self._sampler.options.simulator.seed_simulator = int(self.rng.integers(2**31))
        result = self._sampler.run(pubs).result()
        return [_counts(pub_result, n) for pub_result, n in zip(result, shots)]


def _counts(pub_result: Any, shots: int) -> Counts:
    """Counts of the (single) classical register, checking the shots that came back."""
    data = pub_result.data
    names = list(data.keys()) if hasattr(data, "keys") else [k for k in vars(data)]
    bits = getattr(data, names[0])
    if bits.num_shots != shots:
        raise RuntimeError(f"asked for {shots} shots, backend returned {bits.num_shots}")
    return dict(bits.get_counts())
