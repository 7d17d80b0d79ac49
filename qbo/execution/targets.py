"""Targets: the one parser of target strings, and the executor each one names.

Forms: ``exact`` | ``aer`` | ``aer:CALIBRATION`` | ``fake:BACKEND`` | ``ibm:BACKEND``. A
CALIBRATION is a snapshot name (``qbo calibrations list``) or a snapshot file path; a BACKEND
is an IBM backend name (``ibm_torino``) or a qiskit-ibm-runtime fake backend (``FakeTorino``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from qbo.execution.base import Executor
from qbo.noise import Snapshot, export_from_fake, load_snapshot
from qbo.noise.twirl import TwirlingConnection

TARGET_FORMS = "exact, aer, aer:CALIBRATION, fake:BACKEND or ibm:BACKEND"
KINDS = ("exact", "aer", "fake", "ibm")
_BACKEND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,99}")
_MAX_PATH = 4096


@dataclass(frozen=True)
class Target:
    """A parsed target: ``kind`` one of KINDS, ``name`` the calibration or backend (None for
    ``exact`` and plain ``aer``)."""

    kind: str
    name: str | None = None

    def __str__(self) -> str:
        return self.kind if self.name is None else f"{self.kind}:{self.name}"

    @property
    def is_device(self) -> bool:
        """Runs through qiskit-ibm-runtime (``fake:`` local mode or ``ibm:`` hardware)."""
        return self.kind in ("fake", "ibm")

    def snapshot(self) -> Snapshot | None:
        """The calibration behind ``aer:NAME`` or ``fake:BACKEND`` (None for other targets)."""
        if self.kind == "aer" and self.name:
            return load_snapshot(self.name)
        if self.kind == "fake":
            return export_from_fake(self.name or "")
        return None


def parse_target(text: object) -> Target:
    """Parse a target string; a one-line ValueError names the value and the forms expected."""
    if not isinstance(text, str):
        raise ValueError(f"target must be a string, expected {TARGET_FORMS}, got {repr(text)[:80]}")
    kind, colon, name = text.partition(":")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if kind not in KINDS or (kind == "exact" and colon):
        raise ValueError(f"unknown target {shown!r}, expected {TARGET_FORMS}")
    if not colon:
        if kind in ("fake", "ibm"):
            raise ValueError(f"target {shown!r} needs a backend name, expected {kind}:BACKEND")
        return Target(kind)
    if kind == "aer":
        if not name or len(name) > _MAX_PATH or any(c.isspace() or not c.isprintable() for c in name):
            raise ValueError(f"target {shown!r}: expected aer:CALIBRATION, a snapshot name or file path")
        return Target(kind, name)
    if not _BACKEND_NAME.fullmatch(name):
        raise ValueError(
            f"target {shown!r}: expected {kind}:BACKEND, a backend name of letters, digits, '_' or '-' "
            "(at most 100 characters)"
        )
    return Target(kind, name)


def make_executor(
    target: str | Target, seed: int | np.random.Generator | None = None, *, run_dir: str | os.PathLike | None = None,
    mode: str | None = None, connection: Any = None, retry: Any = None, twirl: bool = False,
    device: str = "CPU",
) -> Executor:
    """Build the executor for ``target``; one-line ValueError for an unknown target.

    ``seed``: an int, or the numpy Generator the executor draws from (``rng``).

    For ``fake:`` and ``ibm:`` targets only:

    * ``run_dir``: the run folder; its ``jobs.jsonl`` journals every job (resume re-attaches)
      and its ``execution.json`` (``qbo submit``) gives the mode and retry policy;
    * ``mode``: ``job`` | ``batch`` | ``session`` (overrides the run folder's);
    * ``connection``: replaces ``qbo.execution.runtime.connect(kind)`` (tests);
    * ``retry``: a :class:`~qbo.execution.jobs.RetryPolicy` (overrides the run folder's).

    An ``ibm:`` target needs ``run_dir``: nothing is submitted to a device without a journal.
    The run folder also pins the layout and transpiled circuits (``transpiled/``) and holds
    the caps; a run resumed from another instance than the one recorded is refused.

    ``twirl``: Pauli-twirl two-qubit gates (Aer: ``qbo.noise.twirl``; runtime: the Sampler's
    own twirling options). ``device``: 'CPU' or 'GPU' (aer targets only).
    """
    parsed = target if isinstance(target, Target) else parse_target(target)
    if str(device).upper() != "CPU" and parsed.kind != "aer":
        raise ValueError(f"device {str(device)[:40]!r} works on aer targets only, got target '{parsed}'")
    if twirl and parsed.kind == "exact":
        raise ValueError("twirling works on aer, fake and ibm targets (circuits with two-qubit gates), got target 'exact'")
    if parsed.kind == "exact":
        from qbo.execution.exact import ExactExecutor

        return ExactExecutor(seed)
    if parsed.kind == "aer":
        from qbo.execution.aer import AerExecutor

        return AerExecutor(parsed.snapshot(), seed, twirl=twirl, device=device)
    from qbo.execution import runtime

    if parsed.kind == "ibm" and run_dir is None:
        raise ValueError(f"target '{parsed}' needs a run folder for its job journal; use `qbo submit`")
    connection = connection if connection is not None else runtime.connect(parsed.kind)
    if twirl:
        connection = TwirlingConnection(connection)
    return runtime.journalled_executor(
        connection, parsed.name, str(parsed), seed=seed, run_dir=run_dir, mode=mode, retry=retry,
    )
