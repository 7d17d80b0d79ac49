"""Hardware jobs: the identity of a request, the run folder's job journal, caps and retry rules.

Hardware time is scarce and paid for, so a crashed run must not lose or re-submit a job
(issues 4 and 11). Every request that goes to a device is named by a *fingerprint*: a
SHA-256 of the *logical* request (target, what each circuit means: oracle and Grover power,
shots, the request's seed, the sampler options and qbo's version). It is not the transpiled
circuit: the layout follows the day's calibration, so a resume on another day would
otherwise name the same request differently. The run folder pins the layout and the
transpiled circuits (``transpiled/``, QPY) at first use, so a resume also *runs* the same
circuits. The fingerprint is the job's tag on the service (``options.environment.job_tags``),
so a job can be found again without its id.

The protocol of one submission attempt (``qbo.execution.runtime.RuntimeExecutor``):

1. check the caps (``Limits``), append an ``intent`` line (fingerprint, attempt), fsync;
2. submit the job, tagged with its fingerprint, with ``max_execution_time`` set;
3. append a ``submitted`` line (job id, predicted QPU seconds), fsync; poll with backoff;
   append ``done`` with the counts and the measured usage (``qpu_s``).

A resumed run that asks for a journalled fingerprint reuses its counts, or re-attaches to
its pending job by id. An ``intent`` with no ``submitted`` line after it (a crash between
steps 1 and 3), and any submission whose call raised, is *unsure*: before submitting again
the executor waits for the service's index and looks the job up by its tag, considering
every match and its status (``via: "tag"``).

A job that ends without counts is journalled as its end (``failed``: ERROR; ``maxtime``:
ERROR for exceeding ``max_execution_time``; ``cancelled``; ``notfound``: the service no
longer knows the id; ``lost``: a local-mode job whose process died). The request is
submitted again only when ``RetryPolicy.resubmit`` names that end (default ``failed`` and
``lost``), after a ``resubmit`` line naming the rule; otherwise the run stops and says how
to allow it.

What is guaranteed, on IBM Quantum: a request is submitted again only after the journal
says its last job ended under a resubmit rule, or after a successful look-up by tag found
no usable job. What is not: a job that the service lists only after ``index_wait_s``
(a submission still in flight when the look-up ran) can be duplicated. A tag names a
request, not a run: two run folders making the identical request share it.

Journal lines (one JSON object each, one ``write`` on an ``O_APPEND`` descriptor, then
``fsync``) share the keys ``event``, ``time``, ``fingerprint``, ``job_id``, ``backend``:

* ``intent``: also ``attempt``; ``job_id`` is null (written before the job exists);
* ``submitted``: also ``mode``, ``shots``, ``circuits``, ``attempt``, ``predicted_s``,
  ``estimated_s`` (IBM's ``usage_estimation``, where it offers one) and, for a job found by
  its tag, ``via: "tag"`` and ``matches`` (jobs with that tag);
* ``timeout``: a wait of ``timeout_s`` seconds ran out; the job is still pending;
* ``done``: also ``counts`` (one dict per circuit) and ``qpu_s`` (billed usage, if IBM has
  computed it: ``job.usage()`` is 0 until then);
* ``usage``: ``qpu_s``, a job's billed usage that arrived after its ``done`` line, and
  ``charged_s``, what the caps counted for it until then (``spent``);
* ``failed`` | ``maxtime`` | ``cancelled`` | ``notfound`` | ``lost``: the job ended without
  counts (``error`` names the exception type, never its text);
* ``resubmit``: ``rule`` (the end that allowed it); ``job_id`` is null;
* ``duplicate``: another live job with the request's tag (not used; still billed);
* ``session``: the Batch or Session expired and was reopened (``reason``, ``action``); in
  session mode also ``reason: "opened"`` (with the ``max_time`` the cap left) and
  ``reason: "closed"`` (with ``wall_s``), as IBM bills a session's wall time.

A kill can at worst leave a torn last line; readers skip lines that do not parse and the
writer starts a fresh line after a torn one. Tokens, CRNs and exception messages never
reach the journal.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from qiskit import QuantumCircuit

from qbo.execution.job_lines import ENDED, PENDING, checked_entry  # noqa: F401 - re-exported
from qbo.execution.spending import spent, unbilled  # noqa: F401 - re-exported
from qbo.grover import cache_key
from qbo.files import append_line, numbered_lines, write_text_atomic

JOURNAL_NAME = "jobs.jsonl"
SETTINGS_NAME = "execution.json"
MODES = ("job", "batch", "session")
FINAL_STATES = ("DONE", "CANCELLED", "ERROR")  # RuntimeJobV2.status() strings that never change


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


def qbo_version() -> str:
    """The installed qbo version (part of every request's identity)."""
    try:
        from importlib.metadata import version

        return version("qbo")
    except Exception:  # running from a source tree that is not installed
        return "0+source"


def logical_key(circuit: QuantumCircuit) -> str:
    """What a circuit *means*: ``oracle:k`` of a power circuit, else its logical gate text.

    Never the transpiled circuit: the layout follows the day's calibration, the request does not.
    """
    key = cache_key(circuit)
    return f"power {key[0]} {key[1]}" if key is not None else "circuit " + circuit_text(circuit)


def fingerprint(
    target: str, circuits: Sequence[QuantumCircuit], shots: int, seed: int,
    options: dict[str, Any] | None = None, version: str | None = None,
) -> str:
    """SHA-256 of one *logical* request: target (backend), what each circuit means (oracle and
    power, :func:`logical_key`), shots, seed (drawn from the unit's generator, which the runner
    restores at every stage, so it names trial, algorithm, stage and round), the sampler
    options and qbo's version. Pass logical circuits, not transpiled ones."""
    h = hashlib.sha256()
    opts = json.dumps(options or {}, sort_keys=True)
    h.update(f"qbo-request/2\n{target}\n{int(shots)}\n{int(seed)}\n{opts}\n{version or qbo_version()}\n".encode())
    for circuit in circuits:
        h.update(b"\x00" + logical_key(circuit).encode())
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
    ended: frozenset[str] = frozenset()  # job ids journalled terminal: never re-used
    last_end: str | None = None  # the terminal event of the latest job when nothing is pending
    resubmits: int = 0  # ``resubmit`` lines journalled (each names the rule that allowed it)


class JobJournal:
    """``RUN_DIR/jobs.jsonl``: append-only, fsync'd, torn-line tolerant."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._index: dict[str, list[dict[str, Any]]] | None = None

    @classmethod
    def in_run_dir(cls, run_dir: str | os.PathLike) -> "JobJournal":
        return cls(Path(run_dir) / JOURNAL_NAME)

    def read(self) -> list[dict[str, Any]]:
        """Every whole line, in order; a torn last line is skipped, any other damage (a line
        that is not JSON, or lacks what its event needs) is refused naming the line."""
        return [checked_entry(entry, f"'{self.path}' line {n}") for n, entry in numbered_lines(self.path)]

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
        attempts, unsure, last_end, resubmits = 0, False, None, 0
        for entry in self._index.get(fp, []):
            event = entry["event"]
            if event == "done" and entry.get("counts") is not None:
                return Known(entry["counts"], None, attempts)
            if event in ("intent", "submitted"):
                attempts = max(attempts, int(entry.get("attempt") or 0))
                unsure = event == "intent"
            if event == "resubmit":
                resubmits += 1
                last_end = None
            if entry.get("job_id") is not None and event in PENDING + ENDED:
                status[entry["job_id"]] = event
                last_end = event if event in ENDED else None
        pending = [job for job, event in status.items() if event in PENDING]
        ended = frozenset(job for job, event in status.items() if event in ENDED)
        return Known(None, pending[-1] if pending else None, attempts, unsure, ended,
                     None if pending or unsure else last_end, resubmits)

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
            elif entry["event"] == "duplicate" and job_id not in jobs:
                jobs[job_id] = {k: v for k, v in entry.items() if k != "event"} | {"status": "duplicate"}
            elif job_id in jobs and entry["event"] in PENDING + ENDED + ("done",):
                jobs[job_id]["status"] = entry["event"]
                jobs[job_id]["updated"] = entry["time"]
            if job_id in jobs and entry.get("qpu_s") is not None:  # on done, or on a later usage line
                jobs[job_id]["qpu_s"] = entry["qpu_s"]
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
            if any(last[j] not in ENDED for j in by_fp.get(fp, [])):
                bad.append(fp)
            by_fp.setdefault(fp, []).append(job)
        if entry["event"] in PENDING + ENDED + ("done",):
            last[job] = entry["event"]
    return bad


# ------------------------------------------------------------------ settings

RESUBMIT_RULES = ("failed", "lost", "cancelled", "maxtime", "notfound")


@dataclass(frozen=True)
class RetryPolicy:
    """Retries with exponential backoff, polling with backoff, and the resubmission rule.

    A failed submission or status query that is transient (:func:`transient_kind`) is
    retried after ``base_delay * factor**(n-1)`` seconds (at most ``max_delay``). A job is
    polled with ``job.status()`` every ``poll_s`` seconds, doubling up to ``poll_max_s``
    (not every 0.5 s as ``RuntimeJobV2.result`` does); a wait that lasts ``timeout_s`` is
    retried on the *same* job. A job that ends (ERROR, CANCELLED, max time, not found) is
    journalled as such and submitted again only if its end is in ``resubmit``; that is
    journalled as a ``resubmit`` line naming the rule. After ``max_attempts`` failures in a
    row the request fails, and a job that is still pending stays journalled for resume.
    Before an unsure submission is looked up by its tag, the executor waits ``index_wait_s``:
    the service lists a new job only after a delay.
    """

    max_attempts: int = 5
    timeout_s: float | None = 3600.0
    base_delay: float = 2.0
    factor: float = 2.0
    max_delay: float = 120.0
    poll_s: float = 1.0
    poll_max_s: float = 30.0
    index_wait_s: float = 10.0
    resubmit: tuple[str, ...] = ("failed", "lost")

    def __post_init__(self) -> None:
        object.__setattr__(self, "resubmit", tuple(self.resubmit))
        if not (isinstance(self.max_attempts, int) and self.max_attempts >= 1):
            raise ValueError(f"max_attempts must be an integer >= 1, got {self.max_attempts!r}")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ValueError(f"job timeout must be > 0 seconds, got {self.timeout_s!r}")
        if self.base_delay < 0 or self.factor < 1 or self.max_delay < 0:
            raise ValueError(f"bad backoff ({self.base_delay}, {self.factor}, {self.max_delay})")
        if not 0 <= self.poll_s <= self.poll_max_s:
            raise ValueError(f"poll interval must satisfy 0 <= poll_s <= poll_max_s, got {self.poll_s}, {self.poll_max_s}")
        if self.index_wait_s < 0:
            raise ValueError(f"index wait must be >= 0 seconds, got {self.index_wait_s!r}")
        bad = [r for r in self.resubmit if r not in RESUBMIT_RULES]
        if bad:
            raise ValueError(f"unknown resubmit rule '{bad[0]}', expected some of {', '.join(RESUBMIT_RULES)}")

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failure in a row (1, 2, ...)."""
        return min(self.max_delay, self.base_delay * self.factor ** max(failures - 1, 0))

    def poll_delay(self, polls: int) -> float:
        """Seconds to wait after the ``polls``-th status query of one wait (1, 2, ...)."""
        return min(self.poll_max_s, self.poll_s * 2.0 ** max(polls - 1, 0))


@dataclass(frozen=True)
class Limits:
    """Hard caps and time limits of a hardware run, recorded in its ``execution.json``.

    ``max_jobs`` and ``max_qpu_seconds`` are checked before every submission (finished jobs
    count their measured usage, pending ones their prediction); ``max_execution_time`` is
    set on every job (seconds of QPU time, the service ends the job after it) and
    ``max_time`` on every Batch or Session (seconds; an expired one is reopened, journalled).
    """

    max_jobs: int | None = None
    max_qpu_seconds: float | None = None
    max_execution_time: int | None = 300
    max_time: int | None = 8 * 3600

    def __post_init__(self) -> None:
        for name in ("max_jobs", "max_qpu_seconds", "max_execution_time", "max_time"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not 0 < value < float("inf")):
                raise ValueError(f"{name.replace('_', '-')} must be a finite number > 0, got {value!r}")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown execution mode '{mode}', expected one of {', '.join(MODES)}")
    return mode


def write_settings(
    run_dir: str | os.PathLike, mode: str, retry: RetryPolicy | None = None, limits: Limits | None = None,
    instance: str | None = None,
) -> Path:
    """Record how a run folder talks to its device (mode, retry policy, caps, instance) for resume.

    ``instance`` is a digest (:func:`instance_digest`), never the CRN itself. The qbo version
    that made the run's first requests is recorded once and kept (it enters every request's
    fingerprint, so upgrading qbo mid-run does not rename, and so re-submit, its requests).
    """
    retry = retry or RetryPolicy()
    data = {"mode": check_mode(mode)} | asdict(retry) | {"limits": asdict(limits or Limits())}
    if instance is not None:
        data["instance"] = instance
    data["qbo_version"] = read_version(run_dir) or qbo_version()
    return write_text_atomic(Path(run_dir) / SETTINGS_NAME, json.dumps(data, indent=1) + "\n")


def _settings(run_dir: str | os.PathLike) -> dict[str, Any]:
    path = Path(run_dir) / SETTINGS_NAME
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError
        return data
    except ValueError:
        raise ValueError(f"'{path}' is not a valid execution settings file") from None


def read_settings(run_dir: str | os.PathLike) -> tuple[str, RetryPolicy]:
    """(mode, retry policy) of a run folder; ``job`` mode and defaults when none was written."""
    data = _settings(run_dir)
    if not data:
        return "job", RetryPolicy()
    try:
        known = {f.name for f in fields(RetryPolicy)}
        return check_mode(data["mode"]), RetryPolicy(**{k: v for k, v in data.items() if k in known})
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"'{Path(run_dir) / SETTINGS_NAME}' is not a valid execution settings file") from None


def read_limits(run_dir: str | os.PathLike) -> Limits:
    """The caps recorded in a run folder (defaults when none were written)."""
    try:
        return Limits(**_settings(run_dir).get("limits", {}))
    except (ValueError, TypeError):
        raise ValueError(f"'{Path(run_dir) / SETTINGS_NAME}' is not a valid execution settings file") from None


def read_instance(run_dir: str | os.PathLike) -> str | None:
    """The digest of the instance a run folder's jobs were submitted from (None: unknown)."""
    value = _settings(run_dir).get("instance")
    return str(value) if value else None


def read_version(run_dir: str | os.PathLike) -> str | None:
    """The qbo version recorded when the run folder's settings were first written."""
    value = _settings(run_dir).get("qbo_version")
    return str(value) if value else None


def instance_digest(instance: str | None) -> str | None:
    """A short SHA-256 of an instance CRN: enough to tell instances apart, never the CRN."""
    return None if not instance else "sha256:" + hashlib.sha256(instance.encode()).hexdigest()[:16]


# ------------------------------------------------------------------ which errors are transient

_HTTP_CODE = re.compile(r"\b([1-5]\d\d) (?:Client|Server) Error")
_CONNECTION_TEXT = re.compile(
    r"maintenance mode|Max retries exceeded|Connection (?:aborted|reset|refused)|Read timed out|"
    r"RemoteDisconnected|ConnectionError|timed out", re.IGNORECASE)
_SESSION_ENDED_TEXT = re.compile(r"session\b.*\b(?:closed|expired|not active|inactive|has ended)", re.IGNORECASE)


def http_status(exc: BaseException) -> int | None:
    """The HTTP status inside a service error: ``status_code`` of a ``RequestsApiError`` or
    the ``NNN Client/Server Error`` text that ``IBMRuntimeError`` wraps (it is raised
    ``from None`` with the request error's text, so the code survives only there). The text
    is parsed, never shown."""
    code = getattr(exc, "status_code", None)
    if isinstance(code, int) and code > 0:
        return code
    found = _HTTP_CODE.search(str(exc))
    return int(found.group(1)) if found else None


def transient_kind(exc: BaseException) -> str | None:
    """How the executor treats an exception from the service.

    * ``wait``: a wait timed out (qiskit ``JobTimeoutError`` incl. ``RuntimeJobTimeoutError``,
      ``TimeoutError``): wait again on the same job;
    * ``network``: connection errors, ``requests`` timeouts, and service errors
      (``RequestsApiError`` or ``IBMRuntimeError``, which wraps every failed submit) with HTTP
      status 429 or 5xx, or the text of a maintenance outage or a dropped connection: retry
      the call with backoff;
    * ``expired``: the Batch or Session the job was sent to has closed or expired: reopen it
      (journalled) and submit again;
    * terminal ends of a job: ``failed`` (``RuntimeJobFailureError``, status ERROR),
      ``maxtime`` (``RuntimeJobMaxTimeoutError``, ERROR with reason 1305),
      ``cancelled`` (``RuntimeInvalidStateError``, status CANCELLED),
      ``notfound`` (``RuntimeJobNotFound``);
    * None: permanent (authentication, input, other 4xx): give up.
    """
    from qiskit.providers import JobTimeoutError

    if isinstance(exc, (JobTimeoutError, TimeoutError)):
        return "wait"
    try:
        import requests
        from qiskit_ibm_runtime.api.exceptions import RequestsApiError
        from qiskit_ibm_runtime.exceptions import (
            IBMNotAuthorizedError, IBMRuntimeError, RuntimeInvalidStateError, RuntimeJobFailureError,
            RuntimeJobMaxTimeoutError, RuntimeJobNotFound,
        )
    except ImportError:  # pragma: no cover - qiskit-ibm-runtime is a dependency
        return "network" if isinstance(exc, ConnectionError) else None
    if isinstance(exc, RuntimeJobMaxTimeoutError):
        return "maxtime"
    if isinstance(exc, RuntimeJobFailureError):
        return "failed"
    if isinstance(exc, RuntimeJobNotFound):
        return "notfound"
    if isinstance(exc, RuntimeInvalidStateError):
        return "cancelled"
    if isinstance(exc, (ConnectionError, requests.ConnectionError, requests.Timeout)):
        return "network"
    if isinstance(exc, IBMNotAuthorizedError):
        return None
    if isinstance(exc, (RequestsApiError, IBMRuntimeError)):
        code = http_status(exc)
        if code == 429 or (code is not None and 500 <= code < 600):
            return "network"
        if _SESSION_ENDED_TEXT.search(str(exc)):
            return "expired"
        if code is None and _CONNECTION_TEXT.search(str(exc)):
            return "network"
        return None
    return None
