"""How an executor reaches its backends: the ``Connection`` protocol and local mode.

``fake:NAME`` runs in qiskit-ibm-runtime's local mode on a fake backend
(:class:`LocalConnection`); ``ibm:NAME`` runs on a real backend (``qbo.execution.ibm``).
The connection is the only difference between the two: everything else is
``qbo.execution.runtime.RuntimeExecutor``.

Local mode: a local job runs in a thread of the process that submitted it and dies with
it, so it can be neither re-attached nor found by tag: it is journalled as ``lost`` and
run again (rule ``lost``).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from qiskit.providers import BackendV2

from qbo.execution.jobs import check_mode


class Connection(Protocol):
    """How an executor reaches its backends: the only part that differs between targets."""

    simulated: bool  # local simulation: seed the simulator; jobs die with the process

    def backend(self, name: str) -> Any: ...

    def instance(self, backend: Any) -> str | None:
        """The instance (CRN) jobs on ``backend`` go to; None when there is none (local)."""
        ...

    def job(self, job_id: str) -> Any:
        """Re-attach to a submitted job; ``LookupError`` (local) or ``RuntimeJobNotFound``."""
        ...

    def find_jobs(self, tag: str, backend: Any) -> list[Any]:
        """Every job on ``backend`` (in its instance) tagged ``tag``, newest first."""
        ...

    def mode(self, kind: str, backend: Any, max_time: int | None) -> Any:
        """The Sampler's mode: the backend (``job``), a ``Batch`` or a ``Session``."""
        ...

    def sampler(self, mode: Any) -> Any: ...

    def status(self, job: Any) -> str:
        """``RuntimeJobV2.status()``: INITIALIZING, QUEUED, RUNNING, DONE, CANCELLED or ERROR."""
        ...

    def result(self, job: Any) -> Any:
        """The result of a job in a final state (raises the service's error for ERROR/CANCELLED)."""
        ...

    def usage(self, job: Any) -> float | None:
        """QPU seconds the job was billed, once the service has computed them (None before:
        qiskit-ibm-runtime's ``job.usage()`` is 0 until then, and always 0 in local mode)."""
        ...

    def estimate(self, job: Any) -> float | None:
        """The service's own estimate of the job's QPU seconds (``usage_estimation``), None
        where it offers none."""
        ...

    def sleep(self, seconds: float) -> None: ...

    def backends(self) -> list[str]: ...

    def replica(self) -> "Connection | None":
        """A connection that answers every request as this one will, reaching no device and
        billing nothing (the cost plan's dry run, ``qbo.execution.plan.ReplayExecutor``);
        None where outcomes cannot be known before they happen (a real device)."""
        ...


def status_name(raw: Any) -> str:
    """A status string from ``RuntimeJobV2.status()`` (str) or a local ``JobStatus`` (enum)."""
    return str(getattr(raw, "name", raw)).upper()


# ------------------------------------------------------------------ local (fake backends)


def fake_backend(name: str) -> Any:
    """Instantiate ``qiskit_ibm_runtime.fake_provider.<name>``; one-line error if unknown."""
    from qiskit_ibm_runtime import fake_provider

    cls = getattr(fake_provider, name, None)
    if not (isinstance(cls, type) and name.startswith("Fake")):
        known = fake_backend_names()
        raise ValueError(f"unknown fake backend '{name}', expected e.g. {', '.join(known[:6])} ...")
    return cls()


def fake_backend_names() -> list[str]:
    """Every BackendV2 class in ``qiskit_ibm_runtime.fake_provider``."""
    from qiskit_ibm_runtime import fake_provider
    from qiskit_ibm_runtime.fake_provider.fake_backend import FakeBackendV2

    return sorted(
        n for n in dir(fake_provider)
        if n.startswith("Fake") and isinstance(getattr(fake_provider, n), type)
        and issubclass(getattr(fake_provider, n), FakeBackendV2) and getattr(fake_provider, n) is not FakeBackendV2
    )


def _mode(kind: str, backend: Any, max_time: int | None = None) -> Any:
    from qiskit_ibm_runtime import Batch, Session

    check_mode(kind)
    if kind == "job":
        return backend
    cls = Batch if kind == "batch" else Session
    return cls(backend=backend, max_time=max_time)


def _sampler(mode: Any) -> Any:
    from qiskit_ibm_runtime.executor_sampler import Sampler

    return Sampler(mode=mode)


_SIMULATORS: dict[str, Any] = {}  # local_simulator's, per fake backend name
LOCAL_POLL_S = 0.1  # a local job runs in a thread of this process: polling it costs nothing


def local_simulator(backend: Any) -> Any:
    """``AerSimulator.from_backend(backend)``, built once per fake backend in this process.

    qiskit-ibm-runtime's local executor (``run_quantum_program``) builds it afresh for every
    job unless the mode hands it one (it then runs a copy): for FakeTorino's 133 qubits that
    is the noise model of every gate, about 7 s a job on the 2-core machine. It is a
    ``qbo.noise.layout_simulator.LayoutSimulator``: its noise model covers only the qubits each
    run's circuits use (the full model of a 156-qubit device cost seconds to build, to copy
    for every job and to run against). Same errors on those qubits, same seeds, same counts
    (tests/test_hardware.py)."""
    simulator = _SIMULATORS.get(backend.name)
    if simulator is None:
        from qbo.noise.layout_simulator import LayoutSimulator

        simulator = _SIMULATORS[backend.name] = LayoutSimulator.for_backend(backend)
    return simulator


class LocalConnection:
    """qiskit-ibm-runtime local mode on ``fake_provider`` backends, each simulated by one
    ``local_simulator`` per process (the Sampler's mode, or the Batch or Session's backend)."""

    simulated = True

    def backend(self, name: str) -> Any:
        return fake_backend(name)

    def instance(self, backend: Any) -> str | None:
        return None

    def job(self, job_id: str) -> Any:
        raise LookupError(f"local job {job_id} ran in a process that has ended")

    def find_jobs(self, tag: str, backend: Any) -> list[Any]:
        """None: local jobs die with their process, so running again is correct here."""
        return []

    def mode(self, kind: str, backend: Any, max_time: int | None = None) -> Any:
        return backend if kind == "job" else _mode(kind, local_simulator(backend), max_time)

    def sampler(self, mode: Any) -> Any:
        return _sampler(local_simulator(mode) if isinstance(mode, BackendV2) else mode)  # job mode: the backend's simulator

    def status(self, job: Any) -> str:
        return status_name(job.status())

    def result(self, job: Any) -> Any:
        return job.result()

    def usage(self, job: Any) -> float | None:
        return None  # local mode bills nothing (LocalRuntimeJob.usage() is always 0)

    def estimate(self, job: Any) -> float | None:
        return None

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def replica(self) -> "LocalConnection":
        """Itself: local mode simulates in this process, seeded by each request's seed."""
        return self

    def backends(self) -> list[str]:
        return fake_backend_names()
