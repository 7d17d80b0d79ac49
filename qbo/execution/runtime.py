"""IBM targets through qiskit-ibm-runtime's client-side Sampler, journalled and retried.

``fake:NAME`` runs in qiskit-ibm-runtime's local mode on a fake backend; ``ibm:NAME`` runs
on a real backend of a ``QiskitRuntimeService``. The *connection* is the only difference
between the two (issue 4, item 6): a small object with ``backend(name)``, ``job(job_id)``,
``find_job(tag, backend)``, ``mode(kind, backend)``, ``sampler(mode)`` and
``result(job, timeout)``. Everything else (the fixed-layout transpile cache, request
fingerprints, the job journal, job tags, retries with backoff, the per-job timeout, counts
parsing and shot checks) is :class:`RuntimeExecutor`, shared by both.

No double submission (see ``qbo.execution.jobs`` for the journal): each attempt journals
an ``intent`` (fsync'd) *before* the Sampler submits, and every job carries its request's
fingerprint as its tag. Journalled counts are reused; a pending job is re-attached with
``connection.job(job_id)``. When a submission's outcome is unknown (a crash after the
intent but before the ``submitted`` line, or a submit call that raised, e.g. a
``requests.Timeout`` or a 5xx after the service may already have created the job), the
executor first asks ``connection.find_job(fingerprint, backend)`` and re-attaches to the
job it returns; it submits again only when the look-up succeeds and finds nothing (or only
jobs journalled failed or lost). A look-up that itself fails is retried like any call; it
is never skipped. Not guaranteed: a job the service creates only after a look-up that
missed it (its submission still in flight) can run twice; the backoff precedes the
look-up to keep that window small.

Local mode: a local job runs in a thread of the process that submitted it and dies with
it, so it can be neither re-attached nor found by tag (``find_job`` returns None): it is
journalled as ``lost`` and run again. That is correct there, not a duplicate: the first
run left nothing behind and local simulation costs nothing. On hardware the journal and
the tags always re-attach.

Credentials come from ``QISKIT_IBM_TOKEN`` / ``QISKIT_IBM_INSTANCE`` / ``QISKIT_IBM_CHANNEL``
or a saved Qiskit account. They are never printed, logged or written, and no message of
an exception raised by the service is ever copied into ours (only its type name).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
from qiskit import QuantumCircuit

from qbo.execution.base import Counts, check_shots, transpile_seed
from qbo.execution.jobs import JobJournal, Known, RetryPolicy, check_mode, fingerprint, transient_kind
from qbo.execution.transpile import TranspileCache

CREDENTIALS_HELP = (
    "set QISKIT_IBM_TOKEN (and QISKIT_IBM_INSTANCE) or save an account with "
    "QiskitRuntimeService.save_account"
)


TAG_LOOKUP_LIMIT = 10  # jobs per tag looked at; a tag names one request, so 1 is the norm


class HardwareError(RuntimeError):
    """A request that could not be completed on the device (message safe to print)."""


class Connection(Protocol):
    """How an executor reaches its backends: the only part that differs between targets."""

    simulated: bool  # local simulation: seed the simulator; jobs die with the process

    def backend(self, name: str) -> Any: ...

    def job(self, job_id: str) -> Any:
        """Re-attach to a submitted job; ``LookupError`` when that is impossible."""
        ...

    def find_job(self, tag: str, backend: Any) -> Any | None:
        """The newest job on ``backend`` tagged ``tag``, or None: the service has none."""
        ...

    def mode(self, kind: str, backend: Any) -> Any:
        """The Sampler's mode: the backend (``job``), a ``Batch`` or a ``Session``."""
        ...

    def sampler(self, mode: Any) -> Any: ...

    def result(self, job: Any, timeout: float | None) -> Any:
        """The job's result; a ``TimeoutError`` (or qiskit ``JobTimeoutError``) after ``timeout`` s."""
        ...

    def backends(self) -> list[str]: ...


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


def _mode(kind: str, backend: Any) -> Any:
    from qiskit_ibm_runtime import Batch, Session

    check_mode(kind)
    if kind == "job":
        return backend
    return Batch(backend=backend) if kind == "batch" else Session(backend=backend)


def _sampler(mode: Any) -> Any:
    from qiskit_ibm_runtime.executor_sampler import Sampler

    return Sampler(mode=mode)


class LocalConnection:
    """qiskit-ibm-runtime local mode on ``fake_provider`` backends."""

    simulated = True

    def backend(self, name: str) -> Any:
        return fake_backend(name)

    def job(self, job_id: str) -> Any:
        raise LookupError(f"local job {job_id} ran in a process that has ended")

    def find_job(self, tag: str, backend: Any) -> Any | None:
        """None: local jobs die with their process, so running again is correct here."""
        return None

    def mode(self, kind: str, backend: Any) -> Any:
        return _mode(kind, backend)

    def sampler(self, mode: Any) -> Any:
        return _sampler(mode)

    def result(self, job: Any, timeout: float | None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while deadline is not None and not job.done():
            if time.monotonic() >= deadline:
                raise TimeoutError(f"local job still running after {timeout} s")
            time.sleep(0.02)
        return job.result()

    def backends(self) -> list[str]:
        return fake_backend_names()


# ------------------------------------------------------------------ IBM Quantum


def saved_account_exists() -> bool:
    """Whether the default Qiskit account file holds an account (read without creating it)."""
    from qiskit_ibm_runtime.accounts import management

    path = management._DEFAULT_ACCOUNT_CONFIG_JSON_FILE
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data)


def credentials_available(env: dict[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("QISKIT_IBM_TOKEN")) or saved_account_exists()


def ibm_service(env: dict[str, str] | None = None) -> Any:
    """A ``QiskitRuntimeService`` from the environment or the saved account; one-line errors."""
    env = os.environ if env is None else env
    if not credentials_available(env):
        raise ValueError(f"no IBM Quantum credentials: {CREDENTIALS_HELP}")
    from qiskit_ibm_runtime import QiskitRuntimeService

    kwargs: dict[str, Any] = {}
    if env.get("QISKIT_IBM_TOKEN"):
        kwargs = {"channel": env.get("QISKIT_IBM_CHANNEL") or "ibm_quantum_platform", "token": env["QISKIT_IBM_TOKEN"]}
        if env.get("QISKIT_IBM_INSTANCE"):
            kwargs["instance"] = env["QISKIT_IBM_INSTANCE"]
    try:
        return QiskitRuntimeService(**kwargs)
    except Exception as exc:  # never echo the exception text: it may quote credentials
        raise ValueError(f"cannot connect to IBM Quantum ({type(exc).__name__}): {CREDENTIALS_HELP}") from None


class IBMConnection:
    """Real devices of a ``QiskitRuntimeService`` (created on first use)."""

    simulated = False

    def __init__(self, service: Any = None) -> None:
        self._service = service

    @property
    def service(self) -> Any:
        if self._service is None:
            self._service = ibm_service()
        return self._service

    def backend(self, name: str) -> Any:
        service = self.service
        try:
            return service.backend(name)
        except Exception as exc:
            raise ValueError(f"unknown IBM backend '{name}' or not available to this account ({type(exc).__name__})") from None

    def job(self, job_id: str) -> Any:
        return self.service.job(job_id)

    def find_job(self, tag: str, backend: Any) -> Any | None:
        """``QiskitRuntimeService.jobs`` filtered by tag and backend, newest first."""
        jobs = self.service.jobs(
            job_tags=[tag], backend_name=backend.name, limit=TAG_LOOKUP_LIMIT, descending=True
        )
        return jobs[0] if jobs else None

    def mode(self, kind: str, backend: Any) -> Any:
        check_mode(kind)
        try:
            return _mode(kind, backend)
        except Exception as exc:  # e.g. sessions not available on this plan; type name only
            raise ValueError(f"cannot open {kind} mode on '{backend.name}' ({type(exc).__name__}); try --mode job") from None

    def sampler(self, mode: Any) -> Any:
        return _sampler(mode)

    def result(self, job: Any, timeout: float | None) -> Any:
        return job.result(timeout=timeout)

    def backends(self) -> list[str]:
        return sorted(b.name for b in self.service.backends(simulator=False, operational=True))


def connect(kind: str) -> Connection:
    """The connection of a target kind: ``fake`` (local mode) or ``ibm`` (real devices)."""
    if kind == "fake":
        return LocalConnection()
    if kind == "ibm":
        return IBMConnection()
    raise ValueError(f"unknown connection '{kind}', expected fake or ibm")


def ibm_backend(name: str) -> Any:
    """A real backend of the account in the environment or the saved Qiskit account."""
    return IBMConnection().backend(name)


# ------------------------------------------------------------------ the executor


class RuntimeExecutor:
    """Runs circuits with ``qiskit_ibm_runtime.executor_sampler.Sampler`` through a connection.

    Args:
        connection: :class:`LocalConnection`, :class:`IBMConnection` or a test double.
        backend_name: e.g. ``FakeBrisbane`` or ``ibm_torino``.
        target: the label, e.g. ``fake:FakeBrisbane`` (default ``<kind>:<backend_name>``).
        mode: ``job``, ``batch`` or ``session``.
        seed: seeds ``rng``, which draws one 62-bit seed per request: it enters the request's
            fingerprint and seeds the simulator in local mode (hardware ignores it).
        journal: the run folder's :class:`~qbo.execution.jobs.JobJournal` (None: no resume).
        retry: backoff, attempts and the timeout of one wait.
        sleep: the backoff's sleep (tests pass a no-op).

    The client-side Sampler needs equal shots within one job, so a call with several shot
    counts submits one request per distinct count.
    """

    def __init__(
        self, connection: Connection, backend_name: str, target: str | None = None, *,
        mode: str = "job", seed: int | np.random.Generator | None = None, journal: JobJournal | None = None,
        retry: RetryPolicy | None = None, optimization_level: int = 1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.connection = connection
        self.backend = connection.backend(backend_name)
        self.target = target or f"ibm:{backend_name}"
        self.mode_kind = check_mode(mode)
        self._mode = connection.mode(mode, self.backend)
        self._sampler = connection.sampler(self._mode)
        self.journal = journal
        self.retry = retry or RetryPolicy()
        self.rng = np.random.default_rng(seed)
        self._sleep = sleep
        self._transpile = TranspileCache(self.backend.target, optimization_level, transpile_seed(seed))

    def compiled(self, circuit: QuantumCircuit) -> QuantumCircuit:
        return self._transpile(circuit)

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        compiled = [self.compiled(c) for c in circuits]
        out: list[Counts] = [{} for _ in circuits]
        for n, index in _by_shots(shots).items():
            seed = int(self.rng.integers(2**62))
            for i, counts in zip(index, self.request([compiled[i] for i in index], n, seed)):
                out[i] = counts
        return out

    def close(self) -> None:
        """Close the batch or session (no-op in job mode)."""
        if self._mode is not self.backend and hasattr(self._mode, "close"):
            try:
                self._mode.close()
            except Exception:  # closing is best effort; the service times sessions out
                pass

    def __enter__(self) -> "RuntimeExecutor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- one request

    def request(self, circuits: Sequence[QuantumCircuit], shots: int, seed: int) -> list[Counts]:
        """Counts of one request (transpiled circuits, equal shots): journalled, reused on
        resume, re-attached when pending or found by tag, retried when a failure is transient."""
        fp = fingerprint(self.target, circuits, shots, seed)
        known = self.journal.known(fp) if self.journal else Known(None, None, 0)
        if known.counts is not None:
            return _checked(known.counts, len(circuits), shots)
        attempts, failures, unsure, ended = known.attempts, 0, known.unsure, set(known.ended)
        job, job_id = None, known.pending
        while True:
            try:
                if job is None and job_id is not None:
                    job = self._reattach(fp, job_id)
                    if job is None:  # lost: never re-used, even if found by its tag
                        ended.add(job_id)
                        job_id = None
                if job is None and unsure:  # the last submission may have reached the service
                    job = self._find(fp, ended)
                    unsure = False
                    if job is not None:
                        job_id, failures = str(job.job_id()), 0
                        self._log("submitted", fp, job_id, mode=self.mode_kind, shots=shots,
                                  circuits=len(circuits), attempt=attempts, via="tag")
                if job is None:
                    attempts, unsure = attempts + 1, True
                    self._log("intent", fp, None, attempt=attempts)
                    job = self._submit(circuits, shots, seed, fp)
                    job_id, unsure, failures = str(job.job_id()), False, 0
                    self._log("submitted", fp, job_id, mode=self.mode_kind, shots=shots,
                              circuits=len(circuits), attempt=attempts)
                result = self.connection.result(job, self.retry.timeout_s)
            except Exception as exc:
                kind = transient_kind(exc)
                if kind == "wait" and job_id is not None:
                    self._log("timeout", fp, job_id, timeout_s=self.retry.timeout_s)
                elif kind == "failed" and job_id is not None:
                    self._log("failed", fp, job_id, error=type(exc).__name__)
                    ended.add(job_id)
                    job, job_id = None, None
                failures += 1
                self._give_up_or_wait(exc, kind, failures, job_id, unsure)
                continue
            counts = [_counts(r, shots) for r in result]
            counts = _checked(counts, len(circuits), shots)
            self._log("done", fp, job_id, counts=counts)
            return counts

    def _submit(self, circuits: Sequence[QuantumCircuit], shots: int, seed: int, fp: str) -> Any:
        options = self._sampler.options
        options.environment.job_tags = [fp]  # find_job(fp) finds it if the reply is lost
        if self.connection.simulated:
            options.simulator.seed_simulator = seed % 2**31
        return self._sampler.run([(c, None, shots) for c in circuits])

    def _find(self, fp: str, ended: set[str]) -> Any | None:
        """The job tagged ``fp`` on the service, unless it is one journalled failed or lost."""
        job = self.connection.find_job(fp, self.backend)
        return None if job is None or str(job.job_id()) in ended else job

    def _reattach(self, fp: str, job_id: str) -> Any:
        try:
            return self.connection.job(job_id)
        except LookupError:
            self._log("lost", fp, job_id)
            return None

    def _give_up_or_wait(
        self, exc: Exception, kind: str | None, failures: int, pending: str | None, unsure: bool
    ) -> None:
        name = type(exc).__name__
        hint = _resume_hint(pending, unsure)
        if kind is None:
            raise HardwareError(f"{self.target}: request failed ({name}), not retried{hint}") from None
        if failures >= self.retry.max_attempts:
            raise HardwareError(
                f"{self.target}: request failed {failures} times in a row (last: {name}){hint}"
            ) from None
        self._sleep(self.retry.delay(failures))

    def _log(self, event: str, fp: str, job_id: str | None, **fields: Any) -> None:
        if self.journal is not None:
            self.journal.append(event, fingerprint=fp, job_id=job_id, backend=self.target, **fields)


def _resume_hint(pending: str | None, unsure: bool = False) -> str:
    if pending:
        return f"; job {pending} is still pending: `qbo jobs resume RUN_DIR` re-attaches to it"
    if unsure:
        return ("; the last submission may have reached the service: "
                "`qbo jobs resume RUN_DIR` looks it up by its tag")
    return ""


def _by_shots(shots: Sequence[int]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(shots):
        groups.setdefault(n, []).append(i)
    return groups


def _counts(pub_result: Any, shots: int) -> Counts:
    """Counts of the (single) classical register of one pub result."""
    data = pub_result.data
    names = list(data.keys()) if hasattr(data, "keys") else list(vars(data))
    if len(names) != 1:
        raise HardwareError(f"expected one classical register in the result, got {len(names)}")
    bits = getattr(data, names[0])
    if bits.num_shots != shots:
        raise HardwareError(f"asked for {shots} shots, backend returned {bits.num_shots}")
    return {str(k): int(v) for k, v in bits.get_counts().items()}


def _checked(counts: Sequence[Counts], circuits: int, shots: int) -> list[Counts]:
    """Check one Counts per circuit, each summing to ``shots``."""
    if len(counts) != circuits:
        raise HardwareError(f"asked for {circuits} results, got {len(counts)}")
    for c in counts:
        if sum(c.values()) != shots:
            raise HardwareError(f"asked for {shots} shots, got {sum(c.values())}")
    return [dict(c) for c in counts]
