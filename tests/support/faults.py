"""Fault injection for the hardware path (tests): transient errors, timeouts, failed jobs, crashes.

:class:`FaultyConnection` wraps any connection (``qbo.execution.runtime``) and counts the
calls to its Sampler's ``run`` (request numbers 0, 1, 2, ..., every attempt counted):

* ``transient``: that call raises the ``IBMRuntimeError`` the real service raises for a 503
  (status code only in its text) before anything is submitted;
* ``ambiguous``: the service creates that call's job, then the call raises
  ``requests.Timeout`` (the reply was lost: the caller cannot know the job exists);
* ``timeout``: the first wait on that call's job raises ``RuntimeJobTimeoutError``;
* ``failed``: the first wait on that call's job raises ``RuntimeJobFailureError``;
* ``crash_on_submit``: the process dies right after the service accepted that call's job,
  before ``run`` returns (so before the executor journals ``submitted``);
* ``crash``: the process dies while waiting on that call's job, i.e. after the job was
  submitted and journalled.

A crash is :class:`SimulatedCrash` (a ``BaseException``, which no ``except Exception``
stops), with ``hard=True`` ``os._exit(CRASH_EXIT)``, or with ``kill=True`` a SIGKILL the
process sends itself (as ``kill -9`` would: no clean-up of any kind runs).

:func:`ExactConnection` is the real ``IBMConnection`` on the fake service of
``tests/support/fake_service.py``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

CRASH_EXIT = 75


class SimulatedCrash(BaseException):
    """The process 'dies' here (not an Exception, so nothing on the way catches it)."""


def die(plan: "FaultPlan", where: str) -> None:
    """Crash as ``plan`` says: SIGKILL when ``kill``, ``os._exit`` when ``hard``, else :class:`SimulatedCrash`."""
    if plan.kill:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
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
    kill: bool = False

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

    def replica(self) -> None:
        """No replay through injected faults: a plan here is the ideal-device estimate."""
        return None

    def instance(self, backend: Any) -> Any:
        return self.inner.instance(backend)

    def job(self, job_id: str) -> Any:
        return self.inner.job(job_id)

    def find_jobs(self, tag: str, backend: Any) -> Any:
        self.finds += 1
        return self.inner.find_jobs(tag, backend)

    def mode(self, kind: str, backend: Any, max_time: int | None = None) -> Any:
        return self.inner.mode(kind, backend, max_time)

    def status(self, job: Any) -> str:
        if isinstance(job, _FaultyJob):
            job.before_wait(self.plan)
            job = job.inner
        return self.inner.status(job)

    def usage(self, job: Any) -> Any:
        return self.inner.usage(job.inner if isinstance(job, _FaultyJob) else job)

    def estimate(self, job: Any) -> Any:
        return self.inner.estimate(job.inner if isinstance(job, _FaultyJob) else job)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)

    def __getattr__(self, name: str) -> Any:  # the fake service's views (submitted, all_tags)
        return getattr(self.inner, name)

    def sampler(self, mode: Any) -> Any:
        return _FaultySampler(self.inner.sampler(mode), self)

    def backends(self) -> list[str]:
        return self.inner.backends()

    def result(self, job: Any) -> Any:
        return self.inner.result(job.inner if isinstance(job, _FaultyJob) else job)


class _FaultySampler:
    def __init__(self, inner: Any, connection: FaultyConnection) -> None:
        self.inner = inner
        self.connection = connection

    @property
    def options(self) -> Any:
        return self.inner.options

    def run(self, pubs: Any, **kwargs: Any) -> Any:
        import requests

        from tests.support.fake_service import _service_error

        plan = self.connection.plan
        number = self.connection.calls
        self.connection.calls += 1
        if number in plan.transient:
            raise _service_error(503)
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


def ExactConnection(backends: Sequence[str] = ("ibm_test",), store: str | os.PathLike | None = None,
                    device: str = "FakeManilaV2", **options: Any) -> Any:
    """IBM Quantum without a network: the real ``IBMConnection`` on the fake service of
    ``tests/support/fake_service.py`` (exact results, tags, delayed indexing, ends)."""
    from tests.support.fake_service import fake_ibm

    return fake_ibm(store, backends=backends, device=device, **options)


def pin_as_submit_does(folder: str | os.PathLike, conn: Any, target: str) -> None:
    """What ``qbo submit`` does before the claim of an ``ibm:`` run: pin the backend's
    calibration as the run's device model (``qbo.experiments.folder.pin_calibration``)."""
    from pathlib import Path

    from qbo.experiments.folder import pin_calibration
    from qbo.noise import snapshot_from_backend

    Path(folder).mkdir(parents=True, exist_ok=True)
    name = target.partition(":")[2]
    pin_calibration(folder, snapshot_from_backend(conn.backend(name), source=target), target)
