"""Hardware jobs: the identity of a request, the run folder's job journal, and retry rules.

Hardware time is scarce and paid for, so a crashed run must not lose or re-submit a job
(issue 4, item 4). Every request that goes to a device is named by a *fingerprint*: a
SHA-256 over the target, the transpiled circuits (gate by gate: name, parameters, physical
qubits, clbits), the shots and the request's seed. The fingerprint is also the job's tag
on the service (``options.environment.job_tags``), so a job can be found again without
its id.

The protocol of one submission attempt (``qbo.execution.runtime.RuntimeExecutor``):

1. append an ``intent`` line (fingerprint, attempt) and fsync it;
2. submit the job, tagged with its fingerprint;
3. append a ``submitted`` line (job id) and fsync it; wait; append ``done`` with the counts.

A resumed run that asks for a journalled fingerprint reuses its counts, or re-attaches to
its pending job by id. An ``intent`` with no ``submitted`` line after it (a crash between
steps 1 and 3), and any submission whose call raised (e.g. a network timeout after the
service may already have created the job), is *unsure*: before submitting again the
executor looks the job up by its tag and, if the service has it, re-attaches to it and
journals it as ``submitted`` with ``via: "tag"``.

What is guaranteed, on IBM Quantum: a request is submitted again only after the journal
says its last job failed or was lost, or after a successful look-up by tag found no job
(and none of a request's failed or lost jobs are re-used). What is not: a job that the
service creates only *after* that look-up (a submission still in flight when it ran) can
be duplicated; the retry backoff runs before the look-up to make this window small. A tag
names a request, not a run: two run folders making the identical request (same target,
circuits, shots and seed) on one account share it, so an unsure submission of one may
re-attach to the other's job (whose counts answer that identical request). Local
mode (``fake:``) runs jobs in a thread of the submitting process: they die with it and
cannot be looked up, so there a crashed request is run again, which is correct (nothing
outlives the process and simulation costs nothing).

Journal lines (one JSON object each, one ``write`` on an ``O_APPEND`` descriptor, then
``fsync``) share the keys ``event``, ``time``, ``fingerprint``, ``job_id``, ``backend``:

* ``intent``: also ``attempt``; ``job_id`` is null (written before the job exists);
* ``submitted``: also ``mode``, ``shots``, ``circuits``, ``attempt`` (1, 2, ... per
  fingerprint, equal to its ``intent``'s) and, for a job found by its tag, ``via: "tag"``;
* ``timeout``: a wait of ``timeout_s`` seconds ran out; the job is still pending;
* ``done``: also ``counts`` (one dict per circuit);
* ``failed``: the job ended in error (``error`` names the exception type, never its text);
* ``lost``: a local-mode job whose process died: it cannot be re-attached.

A kill can at worst leave a torn last line; readers skip lines that do not parse and the
writer starts a fresh line after a torn one. Tokens and exception messages never reach
the journal.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from qiskit import QuantumCircuit

from qbo.files import append_line, read_lines, write_text_atomic

JOURNAL_NAME = "jobs.jsonl"
SETTINGS_NAME = "execution.json"
MODES = ("job", "batch", "session")
PENDING = ("submitted", "timeout")
ENDED = ("failed", "lost")


# ------------------------------------------------------------------ fingerprints


def circuit_text(circuit: QuantumCircuit) -> str:
    """A canonical text of a circuit: registers and every instruction on physical indices.

    Names and metadata are left out (they do not change what runs), so the text, unlike
    QPY, is stable across processes and qiskit versions.
    """
    regs = ";".join(f"{r.name}[{r.size}]" for r in circuit.cregs)
    lines = [f"{circuit.num_qubits} {circuit.num_clbits} {regs}"]
    for inst in circuit.data:
        op = inst.operation
        params = ",".join(repr(float(p)) if isinstance(p, (int, float)) else str(p) for p in op.params)
        qubits = ",".join(str(circuit.find_bit(q).index) for q in inst.qubits)
        clbits = ",".join(str(circuit.find_bit(c).index) for c in inst.clbits)
        lines.append(f"{op.name}({params}) q[{qubits}] c[{clbits}]")
    return "\n".join(lines)


def fingerprint(target: str, circuits: Sequence[QuantumCircuit], shots: int, seed: int) -> str:
    """SHA-256 of one request: target, transpiled circuits, shots and seed."""
    h = hashlib.sha256()
    h.update(f"qbo-request/1\n{target}\n{int(shots)}\n{int(seed)}\n".encode())
    for circuit in circuits:
        h.update(b"\x00" + circuit_text(circuit).encode())
    return h.hexdigest()


# ------------------------------------------------------------------ journal


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Known:
    """What the journal knows about one fingerprint."""

    counts: list[dict[str, int]] | None  # journalled result, if any
    pending: str | None  # job id of a submission that may still finish
    attempts: int  # submission attempts so far (the largest ``attempt`` journalled)
    unsure: bool = False  # the last attempt has an intent but no job id: look it up by tag
    ended: frozenset[str] = frozenset()  # job ids journalled failed or lost: never re-used


class JobJournal:
    """``RUN_DIR/jobs.jsonl``: append-only, fsync'd, torn-line tolerant."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._index: dict[str, list[dict[str, Any]]] | None = None

    @classmethod
    def in_run_dir(cls, run_dir: str | os.PathLike) -> "JobJournal":
        return cls(Path(run_dir) / JOURNAL_NAME)

    def read(self) -> list[dict[str, Any]]:
        """Every whole line, in order; a torn or garbled line is skipped."""
        return [entry for entry in read_lines(self.path) if "event" in entry]

    def append(self, event: str, **extra: Any) -> dict[str, Any]:
        """Append one line with a single write, then fsync; returns the entry."""
        entry = {"event": event, "time": now(), **extra}
        append_line(self.path, entry, fsync=True)
        self._remember(entry)
        return entry

    def known(self, fp: str) -> Known:
        """Journalled counts, a pending job id, attempts and unsure state of ``fp``.

        The file is read once; later appends of this object keep the index current (one
        writer per run folder: the run's own process).
        """
        if self._index is None:
            self._index = {}
            for entry in self.read():
                self._remember(entry)
        status: dict[str, str] = {}
        attempts, unsure = 0, False
        for entry in self._index.get(fp, []):
            event = entry["event"]
            if event == "done" and entry.get("counts") is not None:
                return Known(entry["counts"], None, attempts)
            if event in ("intent", "submitted"):
                attempts = max(attempts, int(entry.get("attempt") or 0))
                unsure = event == "intent"
            if entry.get("job_id") is not None:
                status[entry["job_id"]] = event
        pending = [job for job, event in status.items() if event in PENDING]
        ended = frozenset(job for job, event in status.items() if event in ENDED)
        return Known(None, pending[-1] if pending else None, attempts, unsure, ended)

    def _remember(self, entry: dict[str, Any]) -> None:
        if self._index is not None and entry.get("fingerprint"):
            self._index.setdefault(entry["fingerprint"], []).append(entry)

    def jobs(self) -> list[dict[str, Any]]:
        """One summary per submitted job: its submission line plus its latest status.

        A request whose last line is an ``intent`` (the process died, or the submit call
        failed, before a job id came back) is listed as ``unsure`` with job id ``-``: a
        resume looks it up on the service by its tag before submitting anything.
        """
        jobs: dict[str, dict[str, Any]] = {}
        unsure: dict[str, dict[str, Any]] = {}
        for entry in self.read():
            job_id, fp = entry.get("job_id"), entry.get("fingerprint")
            if entry["event"] == "intent":
                unsure[fp] = {k: v for k, v in entry.items() if k != "event"} | {"job_id": "-", "status": "unsure"}
            elif entry["event"] == "submitted":
                unsure.pop(fp, None)
                jobs[job_id] = {k: v for k, v in entry.items() if k != "event"} | {"status": "submitted"}
            elif job_id in jobs:
                jobs[job_id]["status"] = entry["event"]
                jobs[job_id]["updated"] = entry["time"]
        return list(jobs.values()) + list(unsure.values())


def duplicate_submissions(entries: Sequence[dict[str, Any]]) -> list[str]:
    """Fingerprints submitted again while an earlier submission was not failed or lost."""
    last: dict[str, str] = {}  # job id -> latest event
    by_fp: dict[str, list[str]] = {}
    bad = []
    for entry in entries:
        fp, job = entry.get("fingerprint"), entry.get("job_id")
        if job is None:  # an intent: no job yet
            continue
        if entry["event"] == "submitted":
            if any(last[j] not in ("failed", "lost") for j in by_fp.get(fp, [])):
                bad.append(fp)
            by_fp.setdefault(fp, []).append(job)
        last[job] = entry["event"]
    return bad


# ------------------------------------------------------------------ settings


@dataclass(frozen=True)
class RetryPolicy:
    """Retries with exponential backoff and a timeout per wait.

    A failed submission or status query that ``is_transient`` is retried after
    ``base_delay * factor**(n-1)`` seconds (at most ``max_delay``); a wait that times out is
    retried on the *same* job; a job that ends in error is re-submitted. A submission that
    raised is retried only after its job was looked up by tag and not found. After
    ``max_attempts`` failures in a row the request fails, and a job that is still pending
    stays journalled for ``qbo jobs resume``.
    """

    max_attempts: int = 5
    timeout_s: float | None = 3600.0
    base_delay: float = 2.0
    factor: float = 2.0
    max_delay: float = 120.0

    def __post_init__(self) -> None:
        if not (isinstance(self.max_attempts, int) and self.max_attempts >= 1):
            raise ValueError(f"max_attempts must be an integer >= 1, got {self.max_attempts!r}")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ValueError(f"job timeout must be > 0 seconds, got {self.timeout_s!r}")
        if self.base_delay < 0 or self.factor < 1 or self.max_delay < 0:
            raise ValueError(f"bad backoff ({self.base_delay}, {self.factor}, {self.max_delay})")

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failure in a row (1, 2, ...)."""
        return min(self.max_delay, self.base_delay * self.factor ** max(failures - 1, 0))


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown execution mode '{mode}', expected one of {', '.join(MODES)}")
    return mode


def write_settings(run_dir: str | os.PathLike, mode: str, retry: RetryPolicy | None = None) -> Path:
    """Record how a run folder talks to its device (mode and retry policy) for resume."""
    retry = retry or RetryPolicy()
    data = {"mode": check_mode(mode)} | asdict(retry)
    return write_text_atomic(Path(run_dir) / SETTINGS_NAME, json.dumps(data, indent=1) + "\n")


def read_settings(run_dir: str | os.PathLike) -> tuple[str, RetryPolicy]:
    """(mode, retry policy) of a run folder; ``job`` mode and defaults when none was written."""
    path = Path(run_dir) / SETTINGS_NAME
    if not path.exists():
        return "job", RetryPolicy()
    try:
        data = json.loads(path.read_text())
        known = {f.name for f in fields(RetryPolicy)}
        return check_mode(data["mode"]), RetryPolicy(**{k: v for k, v in data.items() if k in known})
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"'{path}' is not a valid execution settings file") from None


# ------------------------------------------------------------------ which errors are transient


def transient_kind(exc: BaseException) -> str | None:
    """``wait`` (retry the wait on the same job), ``failed`` (the job ended in error:
    re-submit), ``network`` (retry the call) or None (not transient: give up).

    * timeouts of a wait: qiskit's ``JobTimeoutError`` (incl. ``RuntimeJobTimeoutError``)
      and ``TimeoutError`` -> ``wait``;
    * ``RuntimeJobFailureError`` (the job reached ERROR, e.g. a device fault) -> ``failed``,
      but not ``RuntimeJobMaxTimeoutError`` (the job exceeds its maximum run time:
      re-running it fails again);
    * connection errors, ``requests`` timeouts and API errors with status 429 or 5xx
      (incl. 503, planned maintenance) -> ``network``.

    Authentication, input, cancelled-job and unknown-job errors are not transient.
    """
    from qiskit.providers import JobTimeoutError

    if isinstance(exc, (JobTimeoutError, TimeoutError)):
        return "wait"
    try:
        from qiskit_ibm_runtime.api.exceptions import RequestsApiError
        from qiskit_ibm_runtime.exceptions import RuntimeJobFailureError
        import requests
    except ImportError:  # pragma: no cover - qiskit-ibm-runtime is a dependency
        return "network" if isinstance(exc, ConnectionError) else None
    if isinstance(exc, RuntimeJobFailureError):
        return "failed"
    if isinstance(exc, (ConnectionError, requests.ConnectionError, requests.Timeout)):
        return "network"
    if isinstance(exc, RequestsApiError):
        code = getattr(exc, "status_code", -1)
        return "network" if code == 429 or 500 <= code < 600 or code == -1 else None
    return None
