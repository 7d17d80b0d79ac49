"""Turn expected errors into one line on stderr and exit code 2 (no traceback).

A device that keeps failing after every retry (``HardwareError``) exits with code 1.
Messages of exceptions raised inside the IBM service client are withheld (only the type is
shown): they can quote an instance, a token or other account details.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import typer

F = TypeVar("F", bound=Callable)

EXPECTED = (ValueError, FileNotFoundError, PermissionError, IsADirectoryError, KeyError)
SERVICE_MODULES = ("qiskit_ibm_runtime", "requests", "urllib3", "ibm_cloud_sdk_core", "ibm_platform_services")


def one_line_errors(func: F) -> F:
    """Decorator for commands: expected errors exit 2 with ``error: MESSAGE``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from qbo.execution.runtime import HardwareError

        try:
            return func(*args, **kwargs)
        except EXPECTED as exc:
            typer.echo(f"error: {describe(exc)}", err=True)
            raise typer.Exit(code=2) from None
        except HardwareError as exc:  # the device failed after every retry: not bad input
            typer.echo(f"error: {describe(exc)}", err=True)
            raise typer.Exit(code=1) from None

    return wrapper  # type: ignore[return-value]


def describe(exc: BaseException) -> str:
    """One line for ``exc``; the service client's own messages are never shown."""
    if (type(exc).__module__ or "").split(".")[0] in SERVICE_MODULES:
        return f"{type(exc).__name__} from the IBM Quantum client (message withheld: it may quote account details)"
    if isinstance(exc, KeyError):
        return f"missing key {exc.args[0]!r}" if exc.args else "missing key"
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
