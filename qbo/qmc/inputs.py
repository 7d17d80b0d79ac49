"""The one entry an estimator's public ``estimate`` goes through: problems and executors as
users hold them (``qbo.oracles.accepted``, ``qbo.execution.sampler``).

``estimate(oracle, executor, *, objective=None)``: ``oracle`` is an Oracle, a bare
``QuantumCircuit`` (with ``objective=q``) or a qiskit-algorithms ``EstimationProblem``;
``executor`` is a qbo executor or any Qiskit ``BaseSamplerV2``. An estimate made through a
bare sampler records the sampler, the shots it asked for and got back, and that no
calibration-aware depth caps applied (``SamplerExecutor.diagnostics``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from qbo.execution.base import Executor
from qbo.execution.sampler import SamplerExecutor, as_executor
from qbo.oracles.accepted import as_oracle
from qbo.oracles.base import Oracle
from qbo.qmc.result import Estimate

E = TypeVar("E")


def accepts_user_inputs(
    estimate: Callable[[E, Oracle, Executor], Estimate],
) -> Callable[..., Estimate]:
    """Decorate an estimator's ``estimate(self, oracle, executor)`` (module docstring)."""

    @functools.wraps(estimate)
    def wrapper(self: E, oracle: Any, executor: Any, *, objective: int | None = None) -> Estimate:
        oracle = as_oracle(oracle, objective)
        runner = as_executor(executor)
        if not isinstance(runner, SamplerExecutor):
            return estimate(self, oracle, runner)
        since = runner.shots_seen()
        est = estimate(self, oracle, runner)
        return replace(est, diagnostics={**est.diagnostics, **runner.diagnostics(since)})

    return wrapper
