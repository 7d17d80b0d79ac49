"""qiskit-ibm-runtime's log and warnings, redacted, away from stderr.

The service client prints log records and warnings on stderr and may quote an instance CRN
or a token in them. ``route_service_logs`` sends its log to qbo's ``qbo.runtime`` log (and
``RUN_DIR/qbo.log``), ``quiet`` turns the warnings raised inside it into log records, and
``redact`` removes CRNs, token-like strings and the environment's token from any text.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

LOG = logging.getLogger("qbo.runtime")

_SECRET = re.compile(r"crn:v1:[^\s'\"]+|(?<![A-Za-z0-9_-])(?![0-9a-f]{64}(?![A-Za-z0-9_-]))[A-Za-z0-9_-]{40,}")


def redact(text: str) -> str:
    """``text`` with instance CRNs, long token-like strings and the environment's token removed."""
    token = os.environ.get("QISKIT_IBM_TOKEN")
    if token:
        text = text.replace(token, "<token>")
    return _SECRET.sub("<redacted>", text)


class _Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        return True


def route_service_logs(log_file: str | os.PathLike | None = None) -> None:
    """Send qiskit-ibm-runtime's log (which it prints on stderr by default) to qbo's log
    ``qbo.runtime``, redacted, and qbo's log to ``log_file`` when given (``RUN_DIR/qbo.log``)."""
    service_log = logging.getLogger("qiskit_ibm_runtime")
    for handler in list(service_log.handlers):
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            service_log.removeHandler(handler)
    service_log.propagate = False
    qbo_log = logging.getLogger("qbo")
    if not any(isinstance(h, logging.NullHandler) for h in qbo_log.handlers):
        qbo_log.addHandler(logging.NullHandler())  # never Python's last-resort stderr handler
    if not any(isinstance(h, _Forward) for h in service_log.handlers):
        service_log.addHandler(_Forward())
    if log_file is not None:
        path = str(Path(log_file).resolve())
        if not any(getattr(h, "baseFilename", None) == path for h in qbo_log.handlers):
            handler = logging.FileHandler(path, encoding="utf-8", delay=True)
            handler.addFilter(_Redact())
            handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
            qbo_log.addHandler(handler)
            qbo_log.setLevel(logging.INFO)


class _Forward(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOG.log(record.levelno, "%s", redact(record.getMessage()))


class quiet:
    """Catch the warnings raised inside (qiskit-ibm-runtime's deprecations and notices) and
    log them, redacted, to ``qbo.runtime`` instead of printing them on stderr."""

    def __enter__(self) -> "quiet":
        self._ctx = warnings.catch_warnings(record=True)
        self._caught = self._ctx.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)
        _log_warnings(self._caught)


def _log_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    for w in caught:
        LOG.warning("%s: %s", w.category.__name__, redact(str(w.message)))
