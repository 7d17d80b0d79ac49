"""Parse a target string into an executor.

Targets: ``exact`` | ``aer`` | ``aer:CALIBRATION`` | ``fake:BACKEND`` | ``ibm:BACKEND``.
"""

from __future__ import annotations

from qbo.execution.base import Executor

TARGET_FORMS = "exact, aer, aer:CALIBRATION, fake:BACKEND or ibm:BACKEND"


def make_executor(target: str, seed: int | None = None) -> Executor:
    """Build the executor for ``target``; one-line ValueError for an unknown target."""
    kind, _, name = target.partition(":")
    if target == "exact":
        from qbo.execution.exact import ExactExecutor

        return ExactExecutor(seed)
    if kind == "aer":
        from qbo.calibration import load_snapshot
        from qbo.execution.aer import AerExecutor

        return AerExecutor(load_snapshot(name) if name else None, seed)
    if kind in ("fake", "ibm") and name:
        from qbo.execution.runtime import RuntimeExecutor, fake_backend, ibm_backend

        backend = fake_backend(name) if kind == "fake" else ibm_backend(name)
        return RuntimeExecutor(backend, target, seed=seed)
    raise ValueError(f"unknown target '{target}', expected {TARGET_FORMS}")
