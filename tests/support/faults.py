"""Fault injection for the hardware path (tests): transient errors, timeouts, failed jobs, crashes.

:class:`FaultyConnection` wraps any connection (``qbo.execution.runtime``) and counts the
calls to its Sampler's ``run`` (request numbers 0, 1, 2, ..., every attempt counted):

* ``transient``: that call raises a 503 ``RequestsApiError`` before anything is submitted;
* ``ambiguous``: the service creates that call's job, then the call raises
  ``requests.Timeout`` (the reply was lost: the caller cannot know the job exists);
* ``timeout``: the first wait on that call's job raises ``RuntimeJobTimeoutError``;
* ``failed``: the first wait on that call's job raises ``RuntimeJobFailureError``;
* ``crash_on_submit``: the process dies right after the service accepted that call's job,
  before ``run`` returns (so before the executor journals ``submitted``);
* ``crash``: the process dies while waiting on that call's job, i.e. after the job was
  submitted and journalled.

A crash is :class:`SimulatedCrash` (a ``BaseException``, which no ``except Exception``
stops) or, with ``hard=True``, ``os._exit(CRASH_EXIT)``.

:class:`ExactConnection` stands in for IBM Quantum without a network: a small fake
backend, a Sampler whose results are computed by :class:`~qbo.execution.ExactExecutor`
(seeded by the request's seed, so identical requests give identical counts), and a job
store (in memory, or a folder that outlives the process) that keeps each job's tags
(``options.environment.job_tags``), from which ``job(job_id)`` re-attaches, as
``QiskitRuntimeService.job`` does, and ``find_job(tag, backend)`` finds the newest job
with a tag, as ``QiskitRuntimeService.jobs(job_tags=[tag], ...)`` does. Everything in
``RuntimeExecutor`` runs against it; only the qiskit-ibm-runtime call itself is replaced.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

CRASH_EXIT = 75


class SimulatedCrash(BaseException):
    """The process 'dies' here (not an Exception, so nothing on the way catches it)."""


def die(plan: "FaultPlan", where: str) -> None:
    """Crash as ``plan`` says: ``os._exit`` when ``hard``, else :class:`SimulatedCrash`."""
    if plan.hard:
        os._exit(CRASH_EXIT)
    raise SimulatedCrash(f"injected crash {where}")


@dataclass(frozen=True)
class FaultPlan:
    transient: frozenset[int] = field(default_factory=frozenset)
    ambiguous: frozenset[int] = field(default_factory=frozenset)
    timeout: frozenset[int] = field(default_factory=frozenset)
    failed: frozenset[int] = field(default_factory=frozenset)
    crash_on_submit: int | None = None
    crash: int | None = None
    hard: bool = False

    def __post_init__(self) -> None:
        for name in ("transient", "ambiguous", "timeout", "failed"):
            object.__setattr__(self, name, frozenset(getattr(self, name)))


class FaultyConnection:
    """A connection whose Sampler and waits fail as ``plan`` says."""

    def __init__(self, inner: Any, plan: FaultPlan) -> None:
        self.inner = inner
        self.plan = plan
        self.calls = 0  # calls to sampler.run, failed ones included
        self.finds = 0  # calls to find_job
        self.simulated = inner.simulated

    def backend(self, name: str) -> Any:
        return self.inner.backend(name)

    def job(self, job_id: str) -> Any:
        return self.inner.job(job_id)

    def find_job(self, tag: str, backend: Any) -> Any:
        self.finds += 1
        return self.inner.find_job(tag, backend)

    def mode(self, kind: str, backend: Any) -> Any:
        return self.inner.mode(kind, backend)

    def sampler(self, mode: Any) -> Any:
        return _FaultySampler(self.inner.sampler(mode), self)

    def backends(self) -> list[str]:
        return self.inner.backends()

    def result(self, job: Any, timeout: float | None) -> Any:
        if isinstance(job, _FaultyJob):
            job.before_wait(self.plan)
            job = job.inner
        return self.inner.result(job, timeout)


class _FaultySampler:
    def __init__(self, inner: Any, connection: FaultyConnection) -> None:
        self.inner = inner
        self.connection = connection

    @property
    def options(self) -> Any:
        return self.inner.options

    def run(self, pubs: Any, **kwargs: Any) -> Any:
        import requests
        from qiskit_ibm_runtime.api.exceptions import RequestsApiError

        plan = self.connection.plan
        number = self.connection.calls
        self.connection.calls += 1
        if number in plan.transient:
            raise RequestsApiError("injected transient failure", status_code=503)
        job = self.inner.run(pubs, **kwargs)  # the service has the job from here on
        if number == plan.crash_on_submit:
            die(plan, f"after the service accepted request {number}")
        if number in plan.ambiguous:
            raise requests.Timeout("injected lost reply")
        return _FaultyJob(job, number)


class _FaultyJob:
    def __init__(self, inner: Any, number: int) -> None:
        self.inner = inner
        self.number = number
        self._fired: set[str] = set()

    def job_id(self) -> str:
        return self.inner.job_id()

    def status(self) -> Any:
        return self.inner.status()

    def before_wait(self, plan: FaultPlan) -> None:
        from qiskit_ibm_runtime.exceptions import RuntimeJobFailureError, RuntimeJobTimeoutError

        if self.number == plan.crash:
            die(plan, f"while waiting on request {self.number}")
        for name, exc in (("timeout", RuntimeJobTimeoutError), ("failed", RuntimeJobFailureError)):
            if self.number in getattr(plan, name) and name not in self._fired:
                self._fired.add(name)
                raise exc(f"injected {name}")


# ------------------------------------------------------------------ an offline stand-in for IBM


class ExactConnection:
    """IBM Quantum without a network: exact results on a small fake backend, re-attachable jobs.

    Args:
        backends: the backend names this 'account' can use (others: one-line ValueError).
        store: a folder for the job store (re-attach across processes); None keeps it in memory.
        device: the fake_provider class whose target the circuits are transpiled for.
    """

    simulated = True  # results are seeded by the request's seed

    def __init__(self, backends: Sequence[str] = ("ibm_test",), store: str | os.PathLike | None = None,
                 device: str = "FakeManilaV2") -> None:
        self.names = tuple(backends)
        self.store = Path(store) if store is not None else None
        self.device = device
        self.submitted: list[str] = []  # job ids created by this object, in order
        self.tags: dict[str, list[str]] = {}  # job id -> its tags (this object's jobs)
        self._jobs: dict[str, dict[str, Any]] = {}

    def backend(self, name: str) -> Any:
        from qiskit_ibm_runtime import fake_provider

        if name not in self.names:
            raise ValueError(f"unknown IBM backend '{name}' or not available to this account")
        return getattr(fake_provider, self.device)()

    def job(self, job_id: str) -> Any:
        if job_id in self._jobs:
            return _ExactJob(job_id, self._jobs[job_id]["items"])
        path = self.store / f"{job_id}.json" if self.store is not None else None
        if path is None or not path.exists():
            raise LookupError(f"no job {job_id}")
        return _ExactJob(job_id, json.loads(path.read_text())["items"])

    def find_job(self, tag: str, backend: Any) -> Any | None:
        """The newest job tagged ``tag`` (every name of this account shares one device)."""
        records = dict(self._jobs)
        if self.store is not None and self.store.exists():
            for path in self.store.glob("*.json"):
                records.setdefault(path.stem, json.loads(path.read_text()))
        tagged = [(r["created"], job_id) for job_id, r in records.items() if tag in r["tags"]]
        if not tagged:
            return None
        job_id = max(tagged)[1]
        return _ExactJob(job_id, records[job_id]["items"])

    def all_tags(self) -> list[str]:
        """The tags of every job in the store (or in memory), one entry per job."""
        if self.store is None:
            return [tag for tags in self.tags.values() for tag in tags]
        return [tag for path in self.store.glob("*.json") for tag in json.loads(path.read_text())["tags"]]

    def mode(self, kind: str, backend: Any) -> Any:
        return SimpleNamespace(kind=kind, backend=backend, close=lambda: None)

    def sampler(self, mode: Any) -> Any:
        return _ExactSampler(self)

    def result(self, job: Any, timeout: float | None) -> Any:
        return job.result()

    def backends(self) -> list[str]:
        return list(self.names)

    def keep(self, job_id: str, items: list[dict[str, Any]], tags: Sequence[str]) -> None:
        record = {"items": items, "tags": list(tags), "created": time.time_ns()}
        self.submitted.append(job_id)
        self.tags[job_id] = list(tags)
        self._jobs[job_id] = record
        if self.store is not None:
            self.store.mkdir(parents=True, exist_ok=True)
            (self.store / f"{job_id}.json").write_text(json.dumps(record))


class _ExactSampler:
    def __init__(self, connection: ExactConnection) -> None:
        self.connection = connection
        self.options = SimpleNamespace(simulator=SimpleNamespace(seed_simulator=None),
                                       environment=SimpleNamespace(job_tags=[]))

    def run(self, pubs: Any, **kwargs: Any) -> "_ExactJob":
        from qbo.execution.exact import ExactExecutor

        executor = ExactExecutor(self.options.simulator.seed_simulator)
        items = []
        for circuit, _, shots in pubs:
            bare = circuit.copy()
            bare.metadata = {}  # the transpiled circuit is simulated as it is, not as a power
            (counts,) = executor.run([bare], [shots])
            items.append({"register": circuit.cregs[0].name, "bits": circuit.num_clbits, "counts": counts})
        job_id = str(uuid.uuid4())
        self.connection.keep(job_id, items, self.options.environment.job_tags)
        return _ExactJob(job_id, items)


class _ExactJob:
    def __init__(self, job_id: str, items: list[dict[str, Any]]) -> None:
        self._id = job_id
        self._items = items

    def job_id(self) -> str:
        return self._id

    def status(self) -> str:
        return "DONE"

    def result(self, timeout: float | None = None) -> Any:
        from qiskit.primitives import BitArray, DataBin, PrimitiveResult, SamplerPubResult

        return PrimitiveResult([
            SamplerPubResult(DataBin(**{item["register"]: BitArray.from_counts(item["counts"], item["bits"])}))
            for item in self._items
        ])
