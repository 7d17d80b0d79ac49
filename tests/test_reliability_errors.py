"""Issue 25, item 5: errors that say what happened, quoting no secret: a full disk names the
file; an ``ibm:`` failure says whether the network is unreachable, the credentials were
rejected, the backend is unknown or the service is down."""

from __future__ import annotations

import errno
import os

import pytest
import requests
from qiskit.providers.exceptions import QiskitBackendNotFoundError
from qiskit_ibm_runtime.accounts.exceptions import InvalidAccountError
from qiskit_ibm_runtime.exceptions import IBMNotAuthorizedError, IBMRuntimeError

from qbo.cli.errors import describe
from qbo.errors import Unavailable
from qbo.execution.ibm import IBMConnection, service_failure
from qbo.files import write_bytes_atomic

TOKEN = "s3cr3t-t0ken-abcdefghijklmnopqrstuvwxyz0123456789"


def _raised(outer: BaseException, inner: BaseException | None = None) -> BaseException:
    try:
        try:
            if inner is not None:
                raise inner
        finally:
            raise outer
    except BaseException as exc:  # noqa: BLE001
        return exc


def _line(exc: BaseException) -> str:
    message = describe(service_failure(exc))
    assert TOKEN not in message and "crn:" not in message
    return message


def test_offline_with_a_token_is_a_network_failure_not_bad_credentials():
    exc = _raised(InvalidAccountError(f"Unable to retrieve instances for {TOKEN}"),
                  requests.ConnectionError(f"Failed to resolve 'iam.cloud.ibm.com' token={TOKEN}"))
    assert "network or its DNS is unreachable" in _line(exc) and "credentials" not in _line(exc)


@pytest.mark.parametrize("exc", [
    IBMNotAuthorizedError(f"bad token {TOKEN}"),
    InvalidAccountError(f"Unable to retrieve instances. Please check your token {TOKEN}"),
    IBMRuntimeError(f"Failed to run program: '401 Client Error: Unauthorized for url: https://x/{TOKEN}'"),
])
def test_rejected_credentials_say_so(exc):
    assert "rejected the credentials" in _line(exc)


def test_a_service_outage_says_so():
    exc = IBMRuntimeError("Failed to run program: '503 Server Error: Service Unavailable for url: https://x'")
    assert "down or in maintenance (HTTP 503)" in _line(exc)


def test_an_unknown_backend_says_so():
    class Service:
        def backend(self, name):
            raise QiskitBackendNotFoundError(f"No backend matches {TOKEN}")

    with pytest.raises(ValueError, match="unknown IBM backend 'ibm_nowhere'") as caught:
        IBMConnection(Service()).backend("ibm_nowhere")
    assert TOKEN not in str(caught.value)


def test_a_network_failure_while_fetching_a_backend_is_not_an_unknown_backend():
    class Service:
        def backend(self, name):
            raise requests.ConnectionError("connection reset")

    with pytest.raises(Unavailable, match="network or its DNS is unreachable"):
        IBMConnection(Service()).backend("ibm_torino")


def test_a_full_disk_names_the_file(tmp_path, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    target = tmp_path / "summary.csv"
    with pytest.raises(OSError) as caught:
        write_bytes_atomic(target, b"x" * 100)
    monkeypatch.undo()
    assert describe(caught.value) == f"No space left on device: '{target}'"
    assert list(tmp_path.iterdir()) == []  # no partial file
