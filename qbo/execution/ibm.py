"""IBM Quantum: the service from credentials, and the :class:`IBMConnection` to its devices.

Credentials come from ``QISKIT_IBM_TOKEN`` / ``QISKIT_IBM_INSTANCE`` / ``QISKIT_IBM_CHANNEL``
or a saved Qiskit account (``QISKIT_IBM_INSTANCE`` selects the instance of either). They
are never printed, logged or written; the run folder records only a digest of the
instance. No message of an exception raised by the service is ever copied into ours (only
its type name).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from typing import Any

from qbo.execution.connection import Connection, LocalConnection, _mode, _sampler, status_name
from qbo.errors import Unavailable
from qbo.execution.jobs import check_mode, http_status
from qbo.execution.service_logs import _log_warnings, route_service_logs

CREDENTIALS_HELP = (
    "set QISKIT_IBM_TOKEN (and QISKIT_IBM_INSTANCE) or save an account with "
    "QiskitRuntimeService.save_account"
)
TAG_LOOKUP_LIMIT = 20  # jobs per tag looked at; a tag names one request, so 1 is the norm


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
        raise service_failure(exc) from None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, outermost first."""
    seen: list[BaseException] = []
    while exc is not None and len(seen) < 32 and all(exc is not e for e in seen):
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def service_failure(exc: BaseException) -> Unavailable:
    """What went wrong talking to IBM Quantum, as one line that quotes no message of the
    client's (only type names and HTTP status codes): the network is unreachable, the
    credentials were rejected, or the service is down. The client wraps a DNS or connection
    failure in an error that blames the token (``InvalidAccountError``), so the whole chain
    of causes is read, innermost cause first."""
    import requests

    chain = _chain(exc)
    names = "/".join(dict.fromkeys(type(e).__name__ for e in reversed(chain)))
    if any(isinstance(e, (requests.ConnectionError, requests.Timeout, ConnectionError, TimeoutError)) for e in chain):
        return Unavailable(f"cannot reach IBM Quantum: the network or its DNS is unreachable ({names}); "
                           "check the connection and any proxy, then try again")
    codes = [code for code in (http_status(e) for e in chain) if code is not None]
    if any(code in (401, 403) for code in codes) or any(type(e).__name__ in _REJECTED for e in chain):
        status = f"HTTP {codes[0]}, " if codes else ""
        return Unavailable(f"IBM Quantum rejected the credentials ({status}{type(chain[-1]).__name__}): {CREDENTIALS_HELP}")
    if any(code >= 500 for code in codes):
        return Unavailable(f"IBM Quantum is down or in maintenance (HTTP {max(codes)}); try again later")
    return Unavailable(f"cannot connect to IBM Quantum ({names})")


_REJECTED = ("IBMNotAuthorizedError", "InvalidAccountError", "AccountNotFoundError")  # with no network cause


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
            from qiskit.providers.exceptions import QiskitBackendNotFoundError

            if isinstance(exc, QiskitBackendNotFoundError):
                raise ValueError(f"unknown IBM backend '{name}', or not available to this account "
                                 "(`qbo backends` lists those it can use)") from None
            raise service_failure(exc) from None

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
        return float(value) if value else None  # 0 until IBM has computed the usage

    def estimate(self, job: Any) -> float | None:
        try:
            value = job.usage_estimation.get("quantum_seconds")
        except Exception:  # an estimate is advice: never fail a submitted job over it
            return None
        return float(value) if value else None

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def backends(self) -> list[str]:
        return sorted(b.name for b in self.service.backends(simulator=False, operational=True))

    def replica(self) -> None:
        """None: a real device's outcomes are not known before its jobs run."""
        return None


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
