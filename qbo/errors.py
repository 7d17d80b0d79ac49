"""The errors qbo expects: each is one line for the user, never a traceback.

Bottom layer (imports nothing from qbo), so every package may raise these::

    QboError            an expected failure; the CLI prints ``error: MESSAGE`` and exits 2
    ├── BadInput        a value, option or spec outside its documented domain (also a ValueError)
    │   └── TooMuchWork a request whose predicted cost exceeds a stated limit (see docs/limits.md)
    ├── BadFile         a file that is missing, unreadable, malformed or tampered with (also a ValueError)
    ├── Unavailable     a device, service or resource (memory, disk) that cannot serve the request
    └── RunFolderConflict  a run folder that is locked by another process or holds another experiment

``BadInput`` and ``BadFile`` are ``ValueError`` subclasses, so code and tests written against
``ValueError`` keep working. Anything that is not a ``QboError`` (or one of the standard
exceptions ``qbo.cli.errors`` maps) reaching the CLI is a bug: exit 1 and a log file.
"""

from __future__ import annotations


class QboError(Exception):
    """An expected failure with a one-line message."""

    exit_code = 2


class BadInput(QboError, ValueError):
    """A value outside its documented domain; the message names the value and the domain."""


class TooMuchWork(BadInput):
    """The predicted cost (calls, circuits, files, memory) exceeds a documented limit."""


class BadFile(QboError, ValueError):
    """A file that cannot be used: missing, unreadable, malformed, or tampered with."""


class Unavailable(QboError):
    """A device, service or local resource that cannot serve the request right now."""


class HardwareError(RuntimeError):
    """A request that could not be completed on the device (message safe to print); the CLI
    exits 1. Raised by ``qbo.execution.runtime``; defined here so that the CLI's error
    boundary recognises it without importing Qiskit."""


class RunFolderConflict(QboError):
    """A run folder held by another process, or holding a different experiment."""
