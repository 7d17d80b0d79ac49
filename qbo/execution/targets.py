"""Targets: the one parser of target strings, the facts each target carries, and its executor.

Forms: ``exact`` | ``aer`` | ``aer:CALIBRATION`` | ``fake:BACKEND`` | ``ibm:BACKEND``. A
CALIBRATION is a snapshot name (``qbo calibrations list``) or a snapshot file path; a BACKEND
is an IBM backend name (``ibm_torino``) or a qiskit-ibm-runtime fake backend (``FakeTorino``).

Design. A target string is parsed once, here, into a :class:`Target`
(``qbo.execution.base``, the value every executor carries). Every question asked of
a target is a property of that value: is it noiseless (``is_noiseless``), does it run through
qiskit-ibm-runtime (``is_device``), is it a paid IBM QPU (``is_ibm``), does it carry device
noise (``has_device_model``) and which calibration describes it (``device_model``, a
``qbo.noise.model.DeviceModel``: snapshot, qiskit Target, layout, faulty parts, depth model;
built once per snapshot file or fake backend and cached). A Target *is* its canonical string
(a ``str`` subclass), so records, journals, request fingerprints and JSON keep the same bytes,
and the executors label their counts with it (``Executor.target``). Nothing outside this
parser and the Target reads a target's prefix.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from qbo import caches
from qbo.execution.base import KINDS, Executor, Target
from qbo.noise.twirl import TwirlingConnection

__all__ = ["KINDS", "TARGET_FORMS", "Target", "make_executor", "parse_target"]

TARGET_FORMS = "exact, aer, aer:CALIBRATION, fake:BACKEND or ibm:BACKEND"
_BACKEND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,99}")
_MAX_PATH = 4096


def parse_target(text: object) -> Target:
    """Parse a target string (a Target is returned as it is); a one-line ValueError names the
    value and the forms expected. Each distinct string is parsed once per process."""
    if isinstance(text, Target):
        return text
    if not isinstance(text, str):
        raise ValueError(f"target must be a string, expected {TARGET_FORMS}, got {repr(text)[:80]}")
    return _parse(text)


@caches.lru(maxsize=1024)
def _parse(text: str) -> Target:
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
    parsed = parse_target(target)
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

    if parsed.is_ibm and run_dir is None:
        raise ValueError(f"target '{parsed}' needs a run folder for its job journal; use `qbo submit`")
    connection = connection if connection is not None else runtime.connect(parsed.kind)
    if twirl:
        connection = TwirlingConnection(connection)
    return runtime.journalled_executor(
        connection, parsed.name, parsed, seed=seed, run_dir=run_dir, mode=mode, retry=retry,
    )
