"""The CLI's one error boundary: every failure is one line on stderr, never a traceback.

- An expected failure (a ``qbo.errors.QboError``, or a standard exception that bad input or
  a bad file can cause: ValueError, KeyError, OverflowError, OSError and its subclasses,
  RecursionError, MemoryError, QiskitError) prints ``error: MESSAGE`` and exits 2.
- A device that kept failing after every retry (``HardwareError``) exits 1, as before.
- Anything else is a bug: exit 1 with ``error: internal error (TYPE), a bug in qbo; the
  traceback is in LOGFILE`` (or ``...; no log file could be written``). The log file holds the
  traceback, with secrets redacted.
- Third-party warnings (numpy RuntimeWarning, Qiskit deprecations) and library log records
  (qiskit-ibm-runtime WARNINGs) never reach stderr; qbo's own warnings are printed as one
  ``warning:`` line each, only when the command succeeds.

Messages of exceptions raised inside the IBM service client are withheld (only the type is
shown): they can quote an instance, a token or other account details.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import typer

from qbo.errors import HardwareError, QboError
from qbo.files import Interrupted, uninterrupted

F = TypeVar("F", bound=Callable)

EXPECTED = (
    QboError, ValueError, KeyError, OverflowError, FloatingPointError, OSError, RecursionError, MemoryError,
    UnicodeError, EOFError,
)
SERVICE_MODULES = ("qiskit_ibm_runtime", "requests", "urllib3", "ibm_cloud_sdk_core", "ibm_platform_services")
SECRET_VARIABLES = ("QISKIT_IBM_TOKEN", "QISKIT_IBM_INSTANCE", "IBM_QUANTUM_TOKEN", "IBMQ_TOKEN", "QBO_IBM_TOKEN")
MAX_MESSAGE = 400  # characters of one error line (a 5000-character value is cut, not echoed)


def one_line_errors(func: F) -> F:
    """Decorator for commands: the error boundary described in the module docstring."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _quiet_libraries() as shown:
            try:
                result = func(*args, **kwargs)
            except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit, Interrupted):
                raise
            except BaseException as exc:  # noqa: BLE001 - this is the boundary
                interrupt = interrupted_cause(exc)
                if interrupt is not None:  # a signal inside a native extension's import comes back wrapped
                    raise interrupt from None
                fail(exc)
        for message in shown:
            typer.echo(f"warning: {one_line(message)}", err=True)
        return result

    return wrapper  # type: ignore[return-value]


def interrupted_cause(exc: BaseException) -> Interrupted | None:
    """The ``Interrupted`` behind ``exc``, if a signal caused it: a SIGINT landing while a
    compiled module (qiskit's ``_accelerate``) initialises is re-raised by it as its own error,
    with the interrupt as its cause; C code may also drop the interrupt for an error of its own
    (``qbo.files.uninterrupted.replaced``): an error after an interrupt is that interrupt."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Interrupted):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return uninterrupted.replaced()


def fail(exc: BaseException) -> None:
    """Print ``exc`` as one line and exit 2 (expected), 1 (device failure or bug)."""
    if isinstance(exc, HardwareError):  # the device failed after every retry: not bad input
        typer.echo(f"error: {describe(exc)}", err=True)
        raise typer.Exit(code=1) from None
    if is_expected(exc):
        typer.echo(f"error: {describe(exc)}", err=True)
        raise typer.Exit(code=getattr(exc, "exit_code", 2)) from None
    log = write_crash_log(exc)
    where = f"the traceback is in {log}" if log else "no log file could be written"
    typer.echo(f"error: internal error ({type(exc).__name__}), a bug in qbo; {where}", err=True)
    raise typer.Exit(code=1) from None


def is_expected(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure bad input, a bad file or an unavailable resource can cause."""
    if isinstance(exc, EXPECTED):
        return True
    qiskit_error = _qiskit_error()
    return qiskit_error is not None and isinstance(exc, qiskit_error)


def describe(exc: BaseException) -> str:
    """One line for ``exc``; the service client's own messages are never shown."""
    if (type(exc).__module__ or "").split(".")[0] in SERVICE_MODULES:
        return f"{type(exc).__name__} from the IBM Quantum client (message withheld: it may quote account details)"
    if isinstance(exc, QboError):
        return one_line(str(exc)) or type(exc).__name__
    if isinstance(exc, KeyError):
        return f"missing key {one_line(repr(exc.args[0]))}" if exc.args else "missing key"
    if isinstance(exc, RecursionError):
        return "input is nested too deeply (it exceeds Python's recursion limit)"
    if isinstance(exc, MemoryError):
        return "not enough memory for this request; see docs/limits.md for the sizes qbo accepts"
    if isinstance(exc, OverflowError):
        return f"a number is out of range: {one_line(str(exc))}"
    if isinstance(exc, OSError) and exc.strerror:
        name = f" '{one_line(str(exc.filename), 200)}'" if exc.filename is not None else ""
        return f"{exc.strerror}:{name}" if name else exc.strerror
    return one_line(str(exc)) or type(exc).__name__


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters, secrets redacted."""
    lines = [line.strip() for line in redact(text).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= limit else first[: limit - 25] + f"... ({len(first)} characters)"


def redact(text: str) -> str:
    """``text`` with the values of credential variables replaced by ``<redacted>``."""
    for name in SECRET_VARIABLES:
        value = os.environ.get(name)
        if value and len(value) >= 6:
            text = text.replace(value, "<redacted>")
    return text


def log_dir() -> Path:
    """Where crash logs go: $QBO_LOG_DIR, else the platform's user log folder for qbo."""
    if os.environ.get("QBO_LOG_DIR"):
        return Path(os.environ["QBO_LOG_DIR"])
    from platformdirs import user_log_dir

    return Path(user_log_dir("qbo", appauthor=False))


def write_crash_log(exc: BaseException) -> Path | None:
    """Write the traceback of ``exc`` (secrets redacted, service messages withheld) to a log file."""
    if (type(exc).__module__ or "").split(".")[0] in SERVICE_MODULES:
        text = "".join(traceback.format_tb(exc.__traceback__)) + f"{type(exc).__name__}: (message withheld)\n"
    else:
        text = "".join(traceback.format_exception(exc))
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        folder = log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{stamp}-{os.getpid()}.log"
        from qbo.execution.runtime import redact as redact_service  # CRNs, token-like strings (qiskit on demand)

        path.write_text(f"qbo {' '.join(sys.argv[1:2])}\n" + redact_service(redact(text)))
    except OSError:
        return None
    return path


@contextlib.contextmanager
def _quiet_libraries() -> Iterator[list[str]]:
    """Silence third-party warnings, log records and parser prints; yield qbo's own warnings."""
    shown: list[str] = []
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield shown
        finally:
            logging.disable(previous)
            seen: set[str] = set()
            for w in caught:
                text = str(w.message)
                if _from_qbo(w.filename) and text not in seen:
                    seen.add(text)
                    shown.append(text)


def _from_qbo(filename: str) -> bool:
    parts = Path(filename).parts
    return "qbo" in parts and "site-packages" not in parts


def _qiskit_error() -> type[BaseException] | None:
    if "qiskit" not in sys.modules:
        return None
    from qiskit.exceptions import QiskitError

    return QiskitError
