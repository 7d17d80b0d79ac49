"""Turn expected errors into one line on stderr and exit code 2 (no traceback).

A device that keeps failing after every retry (``HardwareError``) exits with code 1.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import typer

F = TypeVar("F", bound=Callable)

EXPECTED = (ValueError, FileNotFoundError, PermissionError, IsADirectoryError, KeyError)


def one_line_errors(func: F) -> F:
    """Decorator for commands: expected errors exit 2 with ``error: MESSAGE``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from qbo.execution.runtime import HardwareError

        try:
            return func(*args, **kwargs)
        except EXPECTED as exc:
            typer.echo(f"error: {_first_line(exc)}", err=True)
            raise typer.Exit(code=2) from None
        except HardwareError as exc:  # the device failed after every retry: not bad input
            typer.echo(f"error: {_first_line(exc)}", err=True)
            raise typer.Exit(code=1) from None

    return wrapper  # type: ignore[return-value]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
