"""IBM targets through qiskit-ibm-runtime's client-side Sampler, journalled, capped and retried.

``fake:NAME`` runs in qiskit-ibm-runtime's local mode on a fake backend; ``ibm:NAME`` runs
on a real backend of a ``QiskitRuntimeService``. The *connection* is the only difference
between the two (and the test double in ``tests/support/fake_service.py``): a small object
with ``backend``, ``job``, ``find_jobs``, ``mode``, ``sampler``, ``status``, ``result``,
``usage``, ``sleep`` and ``instance``. Everything else (pinned layout and QPY circuits,
logical request fingerprints, the job journal, job tags, caps, polling with backoff,
retries, terminal states and the resubmission rule, session reopening, counts parsing) is
:class:`RuntimeExecutor`, shared by every connection.

No double submission (see ``qbo.execution.jobs`` for the journal): each attempt journals
an ``intent`` (fsync'd) *before* the Sampler submits, and every job carries its logical
request's fingerprint as its tag. Journalled counts are reused; a pending job is
re-attached with ``connection.job(job_id)``. When a submission's outcome is unknown (a
crash after the intent, or a submit call that raised), the executor waits
``RetryPolicy.index_wait_s`` (the service indexes new jobs with a delay), then asks
``connection.find_jobs(fingerprint, backend)`` for *every* job with that tag: a finished
one is used, else a pending one is re-attached (extra live matches are journalled as
``duplicate``); jobs that ended (ERROR, CANCELLED) are journalled as such. It submits again
only when the look-up succeeds and finds nothing usable. Not guaranteed: a job the service
indexes only after ``index_wait_s`` can run twice.

A job that ends without counts (``failed``, ``cancelled``, ``maxtime``, ``notfound``,
``lost``) is journalled as that event and submitted again only when
``RetryPolicy.resubmit`` names it (default: ``failed`` and ``lost``); the executor then
journals a ``resubmit`` line with that rule. Otherwise the run stops with one line saying
how to allow it (``qbo jobs resume RUN_DIR --resubmit cancelled``).

Local mode: a local job runs in a thread of the process that submitted it and dies with
it, so it can be neither re-attached nor found by tag: it is journalled as ``lost`` and
run again (rule ``lost``).

Credentials come from ``QISKIT_IBM_TOKEN`` / ``QISKIT_IBM_INSTANCE`` / ``QISKIT_IBM_CHANNEL``
or a saved Qiskit account (``QISKIT_IBM_INSTANCE`` selects the instance of either). They
are never printed, logged or written; the run folder records only a digest of the
instance. No message of an exception raised by the service is ever copied into ours (only
its type name), and qiskit-ibm-runtime's own log and warnings go, redacted, to
``RUN_DIR/qbo.log`` instead of stderr (:func:`route_service_logs`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from qiskit import QuantumCircuit
from qiskit.providers import BackendV2

from qbo.errors import HardwareError
from qbo.execution.base import Counts, check_shots, transpile_seed
from qbo.execution.cost import circuit_seconds, job_seconds, rep_delay_s
from qbo.execution.jobs import (
    ENDED, FINAL_STATES, JobJournal, Known, Limits, RetryPolicy, check_mode, fingerprint, spent, transient_kind,
)
from qbo.execution.transpile import TranspileCache
from qbo.grover import cache_key

CREDENTIALS_HELP = (
    "set QISKIT_IBM_TOKEN (and QISKIT_IBM_INSTANCE) or save an account with "
    "QiskitRuntimeService.save_account"
)

TAG_LOOKUP_LIMIT = 20  # jobs per tag looked at; a tag names one request, so 1 is the norm
LOG = logging.getLogger("qbo.runtime")


class CapReached(HardwareError):
    """A hard cap (``--max-jobs``, ``--max-qpu-seconds``) would be exceeded by the next job."""


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
        """QPU seconds the job was billed (None when unknown)."""
        ...

    def sleep(self, seconds: float) -> None: ...

    def backends(self) -> list[str]: ...


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
    is the noise model of every gate, about 7 s a job on the 2-core machine. Same noise model,
    same seeds, same counts (checked on three powers of a Bernoulli oracle)."""
    simulator = _SIMULATORS.get(backend.name)
    if simulator is None:
        from qiskit_aer import AerSimulator

        simulator = _SIMULATORS[backend.name] = AerSimulator.from_backend(backend)
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

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

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
    """A ``QiskitRuntimeService`` from the environment or the saved account; one-line errors.

    ``QISKIT_IBM_INSTANCE`` selects the instance with a token and with a saved account alike.
    """
    env = os.environ if env is None else env
    if not credentials_available(env):
        raise ValueError(f"no IBM Quantum credentials: {CREDENTIALS_HELP}")
    from qiskit_ibm_runtime import QiskitRuntimeService

    kwargs: dict[str, Any] = {}
    if env.get("QISKIT_IBM_TOKEN"):
        kwargs = {"channel": env.get("QISKIT_IBM_CHANNEL") or "ibm_quantum_platform", "token": env["QISKIT_IBM_TOKEN"]}
    if env.get("QISKIT_IBM_INSTANCE"):
        kwargs["instance"] = env["QISKIT_IBM_INSTANCE"]
    route_service_logs()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            service = QiskitRuntimeService(**kwargs)
        _log_warnings(caught)
        return service
    except Exception as exc:  # never echo the exception text: it may quote credentials
        raise ValueError(f"cannot connect to IBM Quantum ({type(exc).__name__}): {CREDENTIALS_HELP}") from None


class _Primitives:
    """qiskit-ibm-runtime's own Batch, Session and client-side Sampler."""

    def mode(self, kind: str, backend: Any, max_time: int | None) -> Any:
        return _mode(kind, backend, max_time)

    def sampler(self, mode: Any) -> Any:
        return _sampler(mode)


class IBMConnection:
    """Real devices of a ``QiskitRuntimeService`` (created on first use).

    ``service`` and ``primitives`` (an object with ``mode(kind, backend, max_time)`` and
    ``sampler(mode)``) are replaced only by the test double; every other line is the real path.
    """

    simulated = False

    def __init__(self, service: Any = None, primitives: Any = None) -> None:
        self._service = service
        self._primitives = primitives or _Primitives()

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

    def instance(self, backend: Any) -> str | None:
        """The instance the service resolved for ``backend`` (``IBMBackend._instance``)."""
        value = getattr(backend, "_instance", None) or os.environ.get("QISKIT_IBM_INSTANCE")
        return str(value) if value else None

    def job(self, job_id: str) -> Any:
        return self.service.job(job_id)

    def find_jobs(self, tag: str, backend: Any) -> list[Any]:
        """``QiskitRuntimeService.jobs`` filtered by tag, backend and the backend's instance
        (not just the active one), newest first."""
        return list(self.service.jobs(
            job_tags=[tag], backend_name=backend.name, instance=self.instance(backend),
            limit=TAG_LOOKUP_LIMIT, descending=True,
        ))

    def mode(self, kind: str, backend: Any, max_time: int | None = None) -> Any:
        check_mode(kind)
        try:
            return self._primitives.mode(kind, backend, max_time)
        except Exception as exc:  # e.g. sessions not available on this plan; type name only
            raise ValueError(f"cannot open {kind} mode on '{backend.name}' ({type(exc).__name__}); try --mode job") from None

    def sampler(self, mode: Any) -> Any:
        return self._primitives.sampler(mode)

    def status(self, job: Any) -> str:
        return status_name(job.status())

    def result(self, job: Any) -> Any:
        return job.result()

    def usage(self, job: Any) -> float | None:
        try:
            value = job.usage()
        except Exception:  # usage is bookkeeping: never fail a finished job over it
            return None
        return None if value is None else float(value)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

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


# ------------------------------------------------------------------ quiet and safe

_SECRET = re.compile(r"crn:v1:[^\s'\"]+|(?<![A-Za-z0-9_-])(?![0-9a-f]{64}(?![A-Za-z0-9_-]))[A-Za-z0-9_-]{40,}")


def redact(text: str) -> str:
    """``text`` with instance CRNs, long token-like strings and the environment's token removed."""
    token = os.environ.get("QISKIT_IBM_TOKEN")
    if token:
        text = text.replace(token, "<token>")
    return _SECRET.sub("<redacted>", text)


class _Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        return True


def route_service_logs(log_file: str | os.PathLike | None = None) -> None:
    """Send qiskit-ibm-runtime's log (which it prints on stderr by default) to qbo's log
    ``qbo.runtime``, redacted, and qbo's log to ``log_file`` when given (``RUN_DIR/qbo.log``)."""
    service_log = logging.getLogger("qiskit_ibm_runtime")
    for handler in list(service_log.handlers):
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            service_log.removeHandler(handler)
    service_log.propagate = False
    qbo_log = logging.getLogger("qbo")
    if not any(isinstance(h, logging.NullHandler) for h in qbo_log.handlers):
        qbo_log.addHandler(logging.NullHandler())  # never Python's last-resort stderr handler
    if not any(isinstance(h, _Forward) for h in service_log.handlers):
        service_log.addHandler(_Forward())
    if log_file is not None:
        path = str(Path(log_file).resolve())
        if not any(getattr(h, "baseFilename", None) == path for h in qbo_log.handlers):
            handler = logging.FileHandler(path, encoding="utf-8", delay=True)
            handler.addFilter(_Redact())
            handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
            qbo_log.addHandler(handler)
            qbo_log.setLevel(logging.INFO)


class _Forward(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOG.log(record.levelno, "%s", redact(record.getMessage()))


class quiet:
    """Catch the warnings raised inside (qiskit-ibm-runtime's deprecations and notices) and
    log them, redacted, to ``qbo.runtime`` instead of printing them on stderr."""

    def __enter__(self) -> "quiet":
        self._ctx = warnings.catch_warnings(record=True)
        self._caught = self._ctx.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)
        _log_warnings(self._caught)


def _log_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    for w in caught:
        LOG.warning("%s: %s", w.category.__name__, redact(str(w.message)))


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
        retry: backoff, polling, attempts, the timeout of one wait and the resubmission rule.
        limits: caps checked before each submission, per-job and per-session time limits.
        pin: a folder (``RUN_DIR/transpiled``) pinning the layout and the transpiled circuits.
        version: the qbo version in request fingerprints (the run folder's recorded one).
        sleep: the backoff's sleep (default: the connection's; tests pass a no-op).

    The client-side Sampler needs equal shots within one job, so a call with several shot
    counts submits one request per distinct count.
    """

    hardware = True  # classical learners sample the reward model, not this device (trial.py)

    def __init__(
        self, connection: Connection, backend_name: str, target: str | None = None, *,
        mode: str = "job", seed: int | np.random.Generator | None = None, journal: JobJournal | None = None,
        retry: RetryPolicy | None = None, limits: Limits | None = None, optimization_level: int = 1,
        pin: str | os.PathLike | None = None, sleep: Callable[[float], None] | None = None,
        version: str | None = None,
    ) -> None:
        self.connection = connection
        self.backend = connection.backend(backend_name)
        self.target = target or f"ibm:{backend_name}"
        self.mode_kind = check_mode(mode)
        self.journal = journal
        self.retry = retry or RetryPolicy()
        self.limits = limits or Limits()
        self.rng = np.random.default_rng(seed)
        self._sleep = sleep or connection.sleep
        self._level = optimization_level
        self._version = version  # qbo version in fingerprints (None: the installed one)
        self._transpile = TranspileCache(self.backend.target, optimization_level, transpile_seed(seed), store=pin)
        self._rep_delay = rep_delay_s(self.backend)
        self._durations: dict[tuple[str, int], float] = {}
        self._memory: list[dict[str, Any]] = []  # journal lines when there is no journal (caps)
        self._mode: Any = None  # opened at the first submission: a unit that never submits
        self._sampler: Any = None  # (a classical learner) opens no Batch or Session

    def _open_mode(self) -> None:
        with quiet():
            self._mode = self.connection.mode(self.mode_kind, self.backend, self.limits.max_time)
            self._sampler = self.connection.sampler(self._mode)

    @property
    def classical_source(self) -> Any:
        """Where a classical learner's samples come from on hardware: the problem's reward
        model (exact sampling of the oracle, this executor's generator), never the QPU."""
        from qbo.execution.exact import ExactExecutor

        source = ExactExecutor(0)
        source.rng = self.rng
        return source

    def compiled(self, circuit: QuantumCircuit) -> QuantumCircuit:
        return self._transpile(circuit)

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        out: list[Counts] = [{} for _ in circuits]
        for n, index in by_shots(shots).items():
            seed = int(self.rng.integers(2**62))
            for i, counts in zip(index, self.request([circuits[i] for i in index], n, seed)):
                out[i] = counts
        return out

    def close(self) -> None:
        """Close the batch or session (no-op in job mode)."""
        if self._mode is not None and self._mode is not self.backend and hasattr(self._mode, "close"):
            try:
                self._mode.close()
            except Exception:  # closing is best effort; the service times sessions out
                pass

    def __enter__(self) -> "RuntimeExecutor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def options_id(self) -> dict[str, Any]:
        """The sampler options that change what a request means (part of its fingerprint)."""
        return {"primitive": "executor_sampler.Sampler", "optimization_level": self._level}

    # -------------------------------------------------------------- one request

    def request(self, circuits: Sequence[QuantumCircuit], shots: int, seed: int) -> list[Counts]:
        """Counts of one logical request (equal shots): journalled, reused on resume,
        re-attached when pending or found by tag, retried when a failure is transient,
        resubmitted after a terminal end only under the retry policy's rule."""
        fp = fingerprint(self.target, circuits, shots, seed, self.options_id, self._version)
        known = self.journal.known(fp) if self.journal else Known(None, None, 0)
        if known.counts is not None:
            return _checked(known.counts, len(circuits), shots)
        compiled = [self.compiled(c) for c in circuits]
        attempts, failures, unsure, ended = known.attempts, 0, known.unsure, set(known.ended)
        job, job_id = None, known.pending
        self._resubmits = known.resubmits
        if known.last_end is not None:  # the run stopped at a job that ended: apply the rule now
            self._resubmit_or_stop(fp, known.last_end)
        while True:
            try:
                if job is None and job_id is not None:
                    job = self._reattach(fp, job_id)
                    if job is None:  # not found: never re-used, even if found by its tag
                        ended.add(job_id)
                        job_id = None
                        continue
                if job is None and unsure:  # the last submission may have reached the service
                    job = self._find(fp, ended, attempts)
                    unsure = False
                    if job is not None:
                        job_id, failures = str(job.job_id()), 0
                if job is None:
                    predicted = self._predict(compiled, shots)
                    self._check_caps(predicted)
                    attempts, unsure = attempts + 1, True
                    self._log("intent", fp, None, attempt=attempts)
                    job = self._submit(compiled, shots, seed, fp)
                    job_id, unsure, failures = str(job.job_id()), False, 0
                    self._log("submitted", fp, job_id, mode=self.mode_kind, shots=shots,
                              circuits=len(circuits), attempt=attempts, predicted_s=round(predicted, 3))
                result = self._wait(job)
            except CapReached:
                raise
            except Exception as exc:
                kind = transient_kind(exc)
                if kind in ENDED and job_id is not None:
                    self._log(kind, fp, job_id, error=type(exc).__name__, qpu_s=self._usage(job))
                    ended.add(job_id)
                    job, job_id = None, None
                    self._resubmit_or_stop(fp, kind)
                    continue
                if kind == "expired":
                    self._log("session", fp, None, reason="expired", mode=self.mode_kind, action="reopened")
                    self._open_mode()
                elif kind == "wait" and job_id is not None:
                    self._log("timeout", fp, job_id, timeout_s=self.retry.timeout_s)
                failures += 1
                self._give_up_or_wait(exc, kind, failures, job_id, unsure)
                continue
            counts = [_counts(r, shots) for r in result]
            counts = _checked(counts, len(circuits), shots)
            self._log("done", fp, job_id, counts=counts, qpu_s=self._usage(job))
            return counts

    def _submit(self, compiled: Sequence[QuantumCircuit], shots: int, seed: int, fp: str) -> Any:
        if self._sampler is None:
            self._open_mode()
        options = self._sampler.options
        options.environment.job_tags = [fp]  # find_jobs(fp) finds it if the reply is lost
        if self.limits.max_execution_time is not None and hasattr(options, "max_execution_time"):
            options.max_execution_time = int(self.limits.max_execution_time)
        if self.connection.simulated:
            options.simulator.seed_simulator = seed % 2**31
        with quiet():
            return self._sampler.run([(c, None, shots) for c in compiled])

    def _wait(self, job: Any) -> Any:
        """Poll ``status()`` with backoff until the job is final, then fetch its result; a
        ``TimeoutError`` after ``retry.timeout_s`` seconds of waiting."""
        waited, polls = 0.0, 0
        while self.connection.status(job) not in FINAL_STATES:
            timeout = self.retry.timeout_s
            if timeout is not None and waited >= timeout:
                raise TimeoutError(f"job still pending after {timeout} s")
            polls += 1
            delay = self.retry.poll_delay(polls)
            if self.connection.simulated:  # the backoff is for a remote service
                delay = min(delay, LOCAL_POLL_S)
            delay = delay if timeout is None else min(delay, timeout - waited)
            self._sleep(delay)
            waited += delay
        return self.connection.result(job)

    def _find(self, fp: str, ended: set[str], attempts: int) -> Any | None:
        """After ``index_wait_s``, every job tagged ``fp``: a DONE one, else a pending one; jobs
        that ended are journalled as such; other live matches are journalled ``duplicate``."""
        if self.retry.index_wait_s > 0:
            self._sleep(self.retry.index_wait_s)
        matches = [j for j in self.connection.find_jobs(fp, self.backend) if str(j.job_id()) not in ended]
        states = [(j, self.connection.status(j)) for j in matches]
        for job, state in states:
            if state in ("CANCELLED", "ERROR"):
                self._log("submitted", fp, str(job.job_id()), mode=self.mode_kind, attempt=attempts, via="tag")
                self._log("cancelled" if state == "CANCELLED" else "failed", fp, str(job.job_id()), via="tag")
                ended.add(str(job.job_id()))
        live = [(j, s) for j, s in states if s not in ("CANCELLED", "ERROR")]
        if not live:
            return None
        live.sort(key=lambda js: js[1] != "DONE")  # a finished job first; stable: newest first
        chosen = live[0][0]
        self._log("submitted", fp, str(chosen.job_id()), mode=self.mode_kind, attempt=attempts, via="tag",
                  matches=len(states))
        for other, state in live[1:]:
            self._log("duplicate", fp, str(other.job_id()), status=state, used=str(chosen.job_id()))
        return chosen

    def _reattach(self, fp: str, job_id: str) -> Any:
        try:
            return self.connection.job(job_id)
        except LookupError:
            self._log("lost", fp, job_id)
            self._resubmit_or_stop(fp, "lost")
            return None
        except Exception as exc:
            if transient_kind(exc) != "notfound":
                raise
            self._log("notfound", fp, job_id, error=type(exc).__name__)
            self._resubmit_or_stop(fp, "notfound")
            return None

    def _resubmit_or_stop(self, fp: str, end: str) -> None:
        """Journal a ``resubmit`` line naming the rule, or stop with a one-line error (also
        after ``max_attempts`` resubmissions of one request: a job that keeps ending)."""
        if end in self.retry.resubmit and self._resubmits < self.retry.max_attempts:
            self._resubmits += 1
            self._log("resubmit", fp, None, rule=end, resubmits=self._resubmits)
            return
        if end in self.retry.resubmit:
            raise HardwareError(f"{self.target}: a request's jobs ended {self._resubmits + 1} times (last: {end}); "
                                "not submitted again")
        raise HardwareError(
            f"{self.target}: a job of this run ended as {end}; it is journalled and not submitted again. "
            f"`qbo jobs resume RUN_DIR --resubmit {end}` submits it again"
        )

    def _predict(self, compiled: Sequence[QuantumCircuit], shots: int) -> float:
        durations = []
        for c in compiled:
            key = cache_key(c)
            if key is None:
                durations.append(circuit_seconds(c, self.backend.target))
                continue
            if key not in self._durations:
                self._durations[key] = circuit_seconds(c, self.backend.target)
            durations.append(self._durations[key])
        return job_seconds(durations, shots, self._rep_delay)

    def _check_caps(self, predicted: float) -> None:
        limits = self.limits
        if limits.max_jobs is None and limits.max_qpu_seconds is None:
            return
        jobs, seconds = spent(self.journal.read() if self.journal else self._memory)
        if limits.max_jobs is not None and jobs + 1 > limits.max_jobs:
            raise CapReached(f"{self.target}: cap reached: {jobs} of --max-jobs {limits.max_jobs} jobs submitted; "
                             "nothing more was submitted (`qbo jobs resume RUN_DIR --max-jobs N` raises it)")
        if limits.max_qpu_seconds is not None and seconds + predicted > limits.max_qpu_seconds:
            raise CapReached(f"{self.target}: cap reached: {seconds:.1f} QPU s spent + {predicted:.1f} s predicted "
                             f"for the next job > --max-qpu-seconds {limits.max_qpu_seconds:g}; nothing more was "
                             "submitted (`qbo jobs resume RUN_DIR --max-qpu-seconds S` raises it)")

    def _usage(self, job: Any) -> float | None:
        if job is None:
            return None
        try:
            return self.connection.usage(job)
        except Exception:
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
        if kind != "wait":  # a wait already waited timeout_s
            self._sleep(self.retry.delay(failures))

    def _log(self, event: str, fp: str, job_id: str | None, **fields: Any) -> None:
        entry = {"fingerprint": fp, "job_id": job_id, "backend": self.target, **fields}
        if self.journal is not None:
            self.journal.append(event, **entry)
        else:
            self._memory.append({"event": event, **entry})


def _resume_hint(pending: str | None, unsure: bool = False) -> str:
    if pending:
        return f"; job {pending} is still pending: `qbo jobs resume RUN_DIR` re-attaches to it"
    if unsure:
        return ("; the last submission may have reached the service: "
                "`qbo jobs resume RUN_DIR` looks it up by its tag")
    return ""


def by_shots(shots: Sequence[int]) -> dict[int, list[int]]:
    """Indices of the circuits of each distinct shot count: one job each."""
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


def journalled_executor(
    connection: Connection, name: str, target: str, *, seed: int | None = None,
    run_dir: str | os.PathLike | None = None, mode: str | None = None, retry: RetryPolicy | None = None,
    limits: Limits | None = None, sleep: Callable[[float], None] | None = None,
) -> RuntimeExecutor:
    """A :class:`RuntimeExecutor` on ``run_dir``: its journal, settings (mode, retry policy,
    caps, qbo version), pinned layout and circuits (``transpiled/``) and log (``qbo.log``).
    Refuses a connection whose instance differs from the one the run folder recorded;
    records it and the qbo version at first use (the instance as a digest, never the CRN)."""
    from qbo.execution.jobs import (
        instance_digest, qbo_version, read_instance, read_limits, read_settings, read_version, write_settings,
    )

    if run_dir is None:
        return RuntimeExecutor(connection, name, target, mode=mode or "job", seed=seed, retry=retry,
                               limits=limits, sleep=sleep)
    run_dir = Path(run_dir)
    saved_mode, saved_retry = read_settings(run_dir)
    limits = limits or read_limits(run_dir)
    version = read_version(run_dir) or qbo_version()
    executor = RuntimeExecutor(
        connection, name, target, mode=mode or saved_mode, seed=seed, journal=JobJournal.in_run_dir(run_dir),
        retry=retry or saved_retry, limits=limits, pin=run_dir / "transpiled", sleep=sleep, version=version,
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    route_service_logs(run_dir / "qbo.log")
    current = instance_digest(connection.instance(executor.backend))
    recorded = read_instance(run_dir)
    if recorded and current and recorded != current:
        executor.close()
        raise ValueError(f"'{run_dir}' was submitted from another IBM instance ({recorded}, now {current}); "
                         "set QISKIT_IBM_INSTANCE to that instance to resume it")
    if (current and not recorded) or read_version(run_dir) is None:
        write_settings(run_dir, saved_mode, saved_retry, limits, instance=recorded or current)
    return executor
