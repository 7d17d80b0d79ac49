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

The connections live in ``qbo.execution.connection`` (the protocol, local mode) and
``qbo.execution.ibm`` (IBM Quantum); qiskit-ibm-runtime's log goes, redacted, to
``RUN_DIR/qbo.log`` (``qbo.execution.service_logs``). Their names are re-exported here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from qiskit import QuantumCircuit

from qbo.errors import HardwareError
from qbo.execution.base import Counts, check_shots, transpile_seed
from qbo.execution.connection import (  # noqa: F401 - re-exported
    LOCAL_POLL_S, Connection, LocalConnection, _mode, _sampler, fake_backend, fake_backend_names, local_simulator,
    status_name,
)
from qbo.execution.cost import circuit_seconds, job_seconds, rep_delay_s
from qbo.execution.sampler_io import by_shots, checked, counts_of  # noqa: F401 - by_shots re-exported
from qbo.execution.ibm import (  # noqa: F401 - re-exported
    CREDENTIALS_HELP, IBMConnection, connect, credentials_available, ibm_backend, ibm_service, saved_account_exists,
)
from qbo.execution.jobs import (
    ENDED, FINAL_STATES, JobJournal, Known, Limits, RetryPolicy, check_mode, fingerprint, spent, transient_kind,
    unbilled,
)
from qbo.execution.service_logs import quiet, redact, route_service_logs  # noqa: F401 - re-exported
from qbo.execution.transpile import TranspileCache
from qbo.grover import cache_key


class CapReached(HardwareError):
    """A hard cap (``--max-jobs``, ``--max-qpu-seconds``) would be exceeded by the next job."""


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
        self._session_opened: float | None = None  # time.time() when this executor's session opened
        self._session_max_time: int | None = None

    def _open_mode(self) -> None:
        """Open the Batch or Session. IBM bills a Session's wall time, so its ``max_time`` is
        bounded by what the QPU-seconds cap leaves, and its opening is journalled (``spent``
        counts a session's wall time, up to its ``max_time`` while it may still be open)."""
        max_time = self.limits.max_time
        if self.mode_kind == "session" and self.limits.max_qpu_seconds is not None:
            _, seconds = spent(self._entries())
            left = int(self.limits.max_qpu_seconds - seconds)
            if left < 1:
                raise CapReached(f"{self.target}: cap reached: {seconds:.1f} QPU s spent of --max-qpu-seconds "
                                 f"{self.limits.max_qpu_seconds:g}; no session was opened")
            max_time = left if max_time is None else min(max_time, left)
        with quiet():
            self._mode = self.connection.mode(self.mode_kind, self.backend, max_time)
            self._sampler = self.connection.sampler(self._mode)
        if self.mode_kind == "session":
            self._session_opened, self._session_max_time = time.time(), max_time
            self._log("session", None, None, reason="opened", mode="session", max_time=max_time)

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
        self._session_ended()
        self._mode = self._sampler = None

    def _session_ended(self, wall_s: float | None = None) -> None:
        """Journal the end of this executor's open session with its wall time (default: since it opened)."""
        if self._session_opened is not None:
            wall = time.time() - self._session_opened if wall_s is None else wall_s
            self._log("session", None, None, reason="closed", mode="session", wall_s=round(wall, 3))
            self._session_opened = None

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
            return checked(known.counts, len(circuits), shots)
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
                    estimated = self._estimate(job)
                    self._log("submitted", fp, job_id, mode=self.mode_kind, shots=shots,
                              circuits=len(circuits), attempt=attempts, predicted_s=round(predicted, 3),
                              **({} if estimated is None else {"estimated_s": round(estimated, 3)}))
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
                    self._session_ended(self._session_max_time)  # it ran to its max_time: billed in full
                    self._open_mode()
                elif kind == "wait" and job_id is not None:
                    self._log("timeout", fp, job_id, timeout_s=self.retry.timeout_s)
                failures += 1
                self._give_up_or_wait(exc, kind, failures, job_id, unsure)
                continue
            counts = [counts_of(r, shots) for r in result]
            counts = checked(counts, len(circuits), shots)
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

    def _entries(self) -> list[dict[str, Any]]:
        return self.journal.read() if self.journal else self._memory

    def _check_caps(self, predicted: float) -> None:
        """Refuse the next job if it could take the run past a cap. A job whose final usage
        IBM has not reported yet counts the larger of its prediction and IBM's estimate; when
        that would pass the cap, those jobs' usage is asked for first (``reconcile``)."""
        limits = self.limits
        if limits.max_jobs is None and limits.max_qpu_seconds is None:
            return
        jobs, seconds = spent(self._entries())
        if limits.max_jobs is not None and jobs + 1 > limits.max_jobs:
            raise CapReached(f"{self.target}: cap reached: {jobs} of --max-jobs {limits.max_jobs} jobs submitted; "
                             "nothing more was submitted (`qbo jobs resume RUN_DIR --max-jobs N` raises it)")
        if limits.max_qpu_seconds is not None and seconds + predicted > limits.max_qpu_seconds:
            if self.reconcile():
                jobs, seconds = spent(self._entries())
            if seconds + predicted > limits.max_qpu_seconds:
                raise CapReached(f"{self.target}: cap reached: {seconds:.1f} QPU s spent + {predicted:.1f} s predicted "
                                 f"for the next job > --max-qpu-seconds {limits.max_qpu_seconds:g}; nothing more was "
                                 "submitted (`qbo jobs resume RUN_DIR --max-qpu-seconds S` raises it)")

    def reconcile(self) -> int:
        """Ask the service for the final usage of every journalled job that has none yet;
        journal each figure that has arrived as a ``usage`` line (with the charge it replaces).
        Returns how many arrived."""
        arrived, entries = 0, self._entries()
        requests = {e["job_id"]: e.get("fingerprint") for e in entries if e["event"] == "submitted"}
        for job_id, charged in unbilled(entries).items():
            try:
                job = self.connection.job(job_id)
            except Exception:  # a job the service no longer knows keeps its charge
                continue
            used = self._usage(job)
            if used is not None:
                self._log("usage", requests.get(job_id), job_id, qpu_s=used, charged_s=round(charged, 3))
                arrived += 1
        return arrived

    def _usage(self, job: Any) -> float | None:
        if job is None:
            return None
        try:
            return self.connection.usage(job)
        except Exception:
            return None

    def _estimate(self, job: Any) -> float | None:
        try:
            return self.connection.estimate(job)
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

    def _log(self, event: str, fp: str | None, job_id: str | None, **fields: Any) -> None:
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
