"""Parse a target string into an executor.

Targets: ``exact`` | ``aer`` | ``aer:CALIBRATION`` | ``fake:BACKEND`` | ``ibm:BACKEND``.
"""

from __future__ import annotations

import os
from typing import Any

from qbo.execution.base import Executor

TARGET_FORMS = "exact, aer, aer:CALIBRATION, fake:BACKEND or ibm:BACKEND"


def make_executor(
    target: str, seed: int | None = None, *, run_dir: str | os.PathLike | None = None,
    mode: str | None = None, connection: Any = None, retry: Any = None,
) -> Executor:
    """Build the executor for ``target``; one-line ValueError for an unknown target.

    For ``fake:`` and ``ibm:`` targets only:

    * ``run_dir``: the run folder; its ``jobs.jsonl`` journals every job (resume re-attaches)
      and its ``execution.json`` (``qbo submit``) gives the mode and retry policy;
    * ``mode``: ``job`` | ``batch`` | ``session`` (overrides the run folder's);
    * ``connection``: replaces ``qbo.execution.runtime.connect(kind)`` (tests);
    * ``retry``: a :class:`~qbo.execution.jobs.RetryPolicy` (overrides the run folder's).
    """
    kind, _, name = target.partition(":")
    if target == "exact":
        from qbo.execution.exact import ExactExecutor

        return ExactExecutor(seed)
    if kind == "aer" and (name or target == "aer"):  # "aer:" names nothing: refused below
        from qbo.noise.snapshot import load_snapshot
        from qbo.execution.aer import AerExecutor

        return AerExecutor(load_snapshot(name) if name else None, seed)
    if kind in ("fake", "ibm") and name:
        from qbo.execution import runtime
        from qbo.execution.jobs import JobJournal, read_settings

        saved_mode, saved_retry = read_settings(run_dir) if run_dir is not None else ("job", None)
        journal = JobJournal.in_run_dir(run_dir) if run_dir is not None else None
        return runtime.RuntimeExecutor(
            connection if connection is not None else runtime.connect(kind), name, target,
            mode=mode or saved_mode, seed=seed, journal=journal, retry=retry or saved_retry,
        )
    raise ValueError(f"unknown target '{target}', expected {TARGET_FORMS}")
