"""Turn expected errors into one line on stderr and exit code 2 (no traceback)."""

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
        try:
            return func(*args, **kwargs)
        except EXPECTED as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(code=2) from None

    return wrapper  # type: ignore[return-value]
