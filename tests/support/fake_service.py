"""A stand-in for IBM Quantum with the service's semantics, where local mode has none.

:class:`FakeService` plays ``QiskitRuntimeService`` (``backend``, ``job``, ``jobs``) and
:class:`FakePrimitives` plays Batch, Session and the client-side Sampler. qbo reaches them
through the *real* :class:`~qbo.execution.runtime.IBMConnection` (:func:`fake_ibm`), so the
test exercises every line of the hardware path except qiskit-ibm-runtime's HTTP calls.

What it models (qiskit-ibm-runtime 0.51):

* job tags (``options.environment.job_tags``) and ``jobs(job_tags=[...], backend_name=,
  instance=, limit=, descending=True)``: newest first, every match, only the *active*
  instance's jobs unless ``instance`` is given; a new job is listed only ``index_delay``
  seconds after its creation (``job(id)`` finds it at once);
* ``status()`` strings: QUEUED, RUNNING, then DONE, CANCELLED or ERROR as time passes;
* ``result()`` of an ended job raises ``RuntimeJobFailureError`` (ERROR),
  ``RuntimeJobMaxTimeoutError`` (ERROR, reason 1305) or ``RuntimeInvalidStateError``
  (CANCELLED); ``job(id)`` of an unknown job raises ``RuntimeJobNotFound``;
* a failed submit raises ``IBMRuntimeError("Failed to run program: ...")`` carrying the
  HTTP status only in its text, as the real service does (a 503 reads as a maintenance
  outage);
* a Batch or Session expires ``max_time`` seconds after it opened; submitting to it then
  fails with a 400 naming the closed session;
* ``job.usage()``: billed QPU seconds, but 0 until the service has computed them,
  ``usage_delay`` seconds after the job ended (as qiskit-ibm-runtime's ``usage()`` is 0
  until IBM has computed the usage); ``job.usage_estimation``: ``{"quantum_seconds": S}``
  with ``estimation=True``, ``{"quantum_seconds": None}`` without (the field is absent from
  the service's reply);
* ``recalibrate()``: the device's readout errors move, so a fresh layout differs.

Time is a clock of the service (``sleep`` advances it, no real waiting), except for
``reply_s``: real seconds that ``submit`` (after the job is recorded, as a slow network
delivers the reply late), ``job(id)`` and ``backends()`` take to answer, for tests of ``--timeout``. Results are exact
samples of the transpiled circuit, seeded by the job's tag, so one request always gives the
same counts. With ``store`` the whole state lives in one JSON file (replaced atomically),
so the service outlives a killed process and is shared by every object on that folder.

Faults are scheduled by submit number (0, 1, 2, ... over the service's lifetime):
``fail_submit={n: 503}``, ``end={n: "CANCELLED" | "ERROR" | "MAXTIME"}``, ``forget={n}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from qbo.execution.runtime import IBMConnection
from qbo.files import write_text_atomic

INSTANCE = "crn:v1:bluemix:public:quantum-computing:us-east:a/0123456789abcdef:inst-a::"
OTHER_INSTANCE = "crn:v1:bluemix:public:quantum-computing:us-east:a/0123456789abcdef:inst-b::"
QUEUE_S = 2.0  # service seconds a job waits in QUEUED
RUN_S = 3.0  # then seconds in RUNNING


def _service_error(code: int) -> Exception:
    """What ``QiskitRuntimeService._run`` raises for an HTTP ``code`` (text as in 0.51)."""
    from qiskit_ibm_runtime.exceptions import IBMRuntimeError

    url = "https://quantum.cloud.ibm.com/api/v1/jobs"
    if code == 503:
        inner = ("Unexpected response received from server. Please check if the service is in maintenance "
                 f"mode https://docs.quantum.ibm.com/announcements/service-alerts '503 Server Error: "
                 f"Service Unavailable for url: {url}'")
    else:
        kind = "Server" if code >= 500 else "Client"
        inner = f"'{code} {kind} Error: for url: {url}. Request failed., Error code: 1000.'"
    return IBMRuntimeError(f"Failed to run program: {inner}")


class FakeService:
    """``QiskitRuntimeService`` with tags, delayed indexing, instances, ends and sessions."""

    def __init__(
        self, backends: Sequence[str] = ("ibm_test",), store: str | os.PathLike | None = None, *,
        device: str = "FakeManilaV2", instance: str = INSTANCE, index_delay: float = 5.0,
        fail_submit: dict[int, int] | None = None, end: dict[int, str] | None = None,
        forget: Sequence[int] = (), usage_delay: float = 30.0, estimation: bool = True, reply_s: float = 0.0,
    ) -> None:
        self.names = tuple(backends)
        self.reply_s = reply_s
        self.usage_delay = usage_delay
        self.estimation = estimation
        self.device = device
        self.active_instance = instance
        self.index_delay = index_delay
        self.path = Path(store) / "service.json" if store is not None else None
        self._state: dict[str, Any] = {
            "clock": 0.0, "calls": 0, "calibration": 0, "jobs": {}, "order": [],
            "fail_submit": {str(k): v for k, v in (fail_submit or {}).items()},
            "end": {str(k): v for k, v in (end or {}).items()}, "forget": [int(n) for n in forget],
        }
        if self.path is not None and self.path.exists():
            self._state = json.loads(self.path.read_text())
        else:
            self._save()

    # ------------------------------------------------------------------ state

    def _load(self) -> dict[str, Any]:
        if self.path is not None:
            self._state = json.loads(self.path.read_text())
        return self._state

    def _save(self) -> None:
        if self.path is not None:
            write_text_atomic(self.path, json.dumps(self._state))

    @property
    def clock(self) -> float:
        return self._load()["clock"]

    def sleep(self, seconds: float) -> None:
        state = self._load()
        state["clock"] += float(seconds)
        self._save()

    @property
    def submitted(self) -> list[str]:
        """Every job id the service created, in order (forgotten ones included)."""
        return list(self._load()["order"])

    def all_tags(self) -> list[str]:
        """The tags of every job the service created, one entry per job."""
        state = self._load()
        return [tag for job_id in state["order"] for tag in state["jobs"][job_id]["tags"]]

    def jobs_tagged(self, tag: str) -> int:
        state = self._load()
        return sum(tag in state["jobs"][j]["tags"] for j in state["order"])

    # ------------------------------------------------------------------ QiskitRuntimeService

    def backend(self, name: str, instance: str | None = None) -> Any:
        from qiskit.transpiler import InstructionProperties
        from qiskit_ibm_runtime import fake_provider

        if name not in self.names:
            from qiskit.providers.exceptions import QiskitBackendNotFoundError

            raise QiskitBackendNotFoundError("No backend matches the criteria.")
        device = getattr(fake_provider, self.device)()
        shift = self._load()["calibration"]
        if shift:
            errors = {q[0]: p.error for q, p in device.target["measure"].items()}
            n = len(errors)
            for q in errors:
                device.target.update_instruction_properties(
                    "measure", (q,), InstructionProperties(error=errors[(q + shift) % n]))
        device.name = name
        device._instance = self.active_instance
        return device

    def backends(self, **filters: Any) -> list[Any]:
        time.sleep(self.reply_s)
        return [self.backend(n) for n in self.names]

    def job(self, job_id: str) -> "FakeJob":
        from qiskit_ibm_runtime.exceptions import RuntimeJobNotFound

        if job_id not in self._load()["jobs"]:
            raise RuntimeJobNotFound(f"Job not found: {job_id}")
        time.sleep(self.reply_s)
        return FakeJob(self, job_id)

    def jobs(
        self, limit: int | None = 10, skip: int = 0, backend_name: str | None = None, pending: bool | None = None,
        program_id: str | None = None, instance: str | None = None, job_tags: list[str] | None = None,
        descending: bool = True, **_: Any,
    ) -> list["FakeJob"]:
        state = self._load()
        instance = instance or self.active_instance
        found = []
        for job_id in state["order"]:
            record = state["jobs"].get(job_id)
            if record is None or record["created"] + self.index_delay > state["clock"]:
                continue  # forgotten, or not indexed yet
            if backend_name and record["backend"] != backend_name or record["instance"] != instance:
                continue
            if job_tags and not set(job_tags) <= set(record["tags"]):
                continue
            found.append(job_id)
        if descending:
            found.reverse()
        found = found[skip:]
        return [FakeJob(self, j) for j in (found if limit is None else found[:limit])]

    # ------------------------------------------------------------------ test controls

    def recalibrate(self) -> None:
        """The day's calibration: readout errors rotate over the qubits."""
        state = self._load()
        state["calibration"] += 1
        self._save()

    def cancel(self, job_id: str) -> None:
        state = self._load()
        state["jobs"][job_id]["end"] = "CANCELLED"
        self._save()

    def switch_instance(self, instance: str) -> None:
        self.active_instance = instance

    # ------------------------------------------------------------------ what the primitives call

    def submit(self, mode: "FakeMode", pubs: Any, options: Any) -> "FakeJob":
        from qbo.execution.exact import ExactExecutor

        state = self._load()
        number = state["calls"]
        state["calls"] += 1
        self._save()
        if str(number) in state["fail_submit"]:
            raise _service_error(int(state["fail_submit"][str(number)]))
        if mode.kind != "job" and mode.max_time is not None and state["clock"] > mode.opened + mode.max_time:
            from qiskit_ibm_runtime.exceptions import IBMRuntimeError

            raise IBMRuntimeError(f"Failed to run program: '400 Client Error: Bad Request for url: "
                                  f"https://quantum.cloud.ibm.com/api/v1/jobs. Session {mode.id} is closed., "
                                  "Error code: 1217.'")
        tags = list(options.environment.job_tags)
        seed = int.from_bytes(hashlib.sha256("|".join(tags).encode()).digest()[:4], "little")
        executor = ExactExecutor(seed)
        items, shots_total = [], 0
        for circuit, _, shots in pubs:
            bare = circuit.copy()
            bare.metadata = {}
            (counts,) = executor.run([bare], [shots])
            items.append({"register": circuit.cregs[0].name, "bits": circuit.num_clbits, "counts": counts})
            shots_total += shots
        job_id = "d" + uuid.uuid4().hex[:19]
        state = self._load()
        state["jobs"][job_id] = {
            "items": items, "tags": tags, "created": state["clock"], "backend": mode.backend.name,
            "instance": self.active_instance, "end": state["end"].get(str(number), "DONE"),
            "usage": round(2.0 + 0.001 * shots_total, 3), "max_execution_time": options.max_execution_time,
            "estimate": round(1.5 + 0.001 * shots_total, 3) if self.estimation else None,
        }
        state["order"].append(job_id)
        if number in state["forget"]:
            del state["jobs"][job_id]  # the service lost it: job(id) and jobs() no longer know it
        self._save()
        time.sleep(self.reply_s)  # the service has the job; its reply is late
        return FakeJob(self, job_id)


class FakeJob:
    """``RuntimeJobV2``: status strings by the service's clock, results, usage."""

    def __init__(self, service: FakeService, job_id: str) -> None:
        self.service = service
        self._id = job_id

    def job_id(self) -> str:
        return self._id

    def _record(self) -> dict[str, Any]:
        from qiskit_ibm_runtime.exceptions import RuntimeJobNotFound

        record = self.service._load()["jobs"].get(self._id)
        if record is None:
            raise RuntimeJobNotFound(f"Job not found: {self._id}")
        return record

    def status(self) -> str:
        record = self._record()
        if record["end"] == "CANCELLED":
            return "CANCELLED"
        age = self.service.clock - record["created"]
        if age < QUEUE_S:
            return "QUEUED"
        if age < QUEUE_S + RUN_S:
            return "RUNNING"
        return "ERROR" if record["end"] in ("ERROR", "MAXTIME") else "DONE"

    def usage(self) -> float:
        record = self._record()
        computed = self.service.clock >= record["created"] + QUEUE_S + RUN_S + self.service.usage_delay
        return record["usage"] if self.status() in ("DONE", "ERROR") and computed else 0.0

    @property
    def usage_estimation(self) -> dict[str, Any]:
        return {"quantum_seconds": self._record()["estimate"]}

    def result(self, timeout: float | None = None) -> Any:
        from qiskit.primitives import BitArray, DataBin, PrimitiveResult, SamplerPubResult
        from qiskit_ibm_runtime.exceptions import (
            RuntimeInvalidStateError, RuntimeJobFailureError, RuntimeJobMaxTimeoutError, RuntimeJobTimeoutError,
        )

        state = self.status()
        if state not in ("DONE", "CANCELLED", "ERROR"):
            raise RuntimeJobTimeoutError(f"Timed out waiting for job {self._id}")
        end = self._record()["end"]
        if end == "MAXTIME":
            raise RuntimeJobMaxTimeoutError("Job exceeded its maximum execution time")
        if state == "ERROR":
            raise RuntimeJobFailureError("Unable to retrieve job result. Error code 8000")
        if state == "CANCELLED":
            raise RuntimeInvalidStateError(f"Unable to retrieve result for job {self._id}. Job was cancelled.")
        return PrimitiveResult([
            SamplerPubResult(DataBin(**{item["register"]: BitArray.from_counts(item["counts"], item["bits"])}))
            for item in self._record()["items"]
        ])


class FakeMode:
    """A Batch or Session (or the backend, in job mode) opened at the service's clock."""

    def __init__(self, service: FakeService, kind: str, backend: Any, max_time: int | None) -> None:
        self.kind, self.backend, self.max_time = kind, backend, max_time
        self.opened = service.clock
        self.id = uuid.uuid4().hex[:12]
        self.closed = False

    def close(self) -> None:
        self.closed = True


class FakeSampler:
    def __init__(self, service: FakeService, mode: FakeMode) -> None:
        self.service, self.mode = service, mode
        self.options = SimpleNamespace(
            environment=SimpleNamespace(job_tags=[]), simulator=SimpleNamespace(seed_simulator=None),
            max_execution_time=None,
        )

    def run(self, pubs: Any, **kwargs: Any) -> FakeJob:
        return self.service.submit(self.mode, pubs, self.options)


class FakePrimitives:
    """Batch, Session and Sampler of :class:`FakeService`; opened modes are kept for tests."""

    def __init__(self, service: FakeService) -> None:
        self.service = service
        self.opened: list[FakeMode] = []

    def mode(self, kind: str, backend: Any, max_time: int | None) -> Any:
        mode = FakeMode(self.service, kind, backend, max_time)
        self.opened.append(mode)
        return mode

    def sampler(self, mode: FakeMode) -> FakeSampler:
        return FakeSampler(self.service, mode)


class FakeIBM(IBMConnection):
    """The real :class:`IBMConnection` on a :class:`FakeService`; sleeping advances its clock."""

    def __init__(self, service: FakeService) -> None:
        super().__init__(service, FakePrimitives(service))
        self.fake = service

    def sleep(self, seconds: float) -> None:
        self.fake.sleep(seconds)

    def replica(self) -> "FakeIBM":
        """A fresh in-memory service on the same device: results are seeded by the job's tag
        alone, so it answers every request as this one will (no faults scheduled)."""
        return FakeIBM(FakeService(self.fake.names, device=self.fake.device, instance=self.fake.active_instance,
                                   usage_delay=self.fake.usage_delay, estimation=self.fake.estimation))

    # the old ExactConnection's views, for tests that count jobs on the service
    @property
    def submitted(self) -> list[str]:
        return self.fake.submitted

    def all_tags(self) -> list[str]:
        return self.fake.all_tags()


def fake_ibm(store: str | os.PathLike | None = None, **options: Any) -> FakeIBM:
    """An ``ibm:`` connection to a fresh (or, with ``store``, a persisted) fake service."""
    return FakeIBM(FakeService(store=store, **options))
