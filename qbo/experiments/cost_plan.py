"""The cost plan of a hardware run (``qbo submit``): jobs, circuits, shots, stages and
predicted QPU seconds per algorithm, from a dry run (``qbo.execution.plan``).

Where the connection has a replica (local mode on a fake backend, the test service) every
trial is *replayed*: the run's executor with the run's seeds on the replica, so the count is
the run's own (``kind: "replay"``; it costs one more simulation of the whole run). On a real
device outcomes are unknown: the run is simulated on an ideal device with the hardware path's
job rule (``kind: "ideal"``), ``plan_trials`` trials scaled to all, and is an estimate.

Units are assembled as the run assembles them (``qbo.experiments.assembly``); only the
executor differs: a ``PlanExecutor`` that counts what the device would be sent.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qbo.execution import parse_target
from qbo.execution.connection import Connection
from qbo.execution.plan import PlanExecutor, ReplayExecutor
from qbo.experiments.assembly import Unit, check_experiment, stage_settings, unit_parts
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.trial import run_stages
from qbo.noise import Snapshot
from qbo.problems import is_drifting

__all__ = ["PLAN_TRIALS", "TALLIES", "cost_plan"]

PLAN_TRIALS = 2  # trials simulated for the cost plan (scaled to all trials)
TALLIES = ("jobs", "circuits", "shots", "qpu_s", "stages")


def cost_plan(config: ExperimentConfig, device: Any, plan_trials: int | None = None,
              calibration: Snapshot | None = None, replica: Connection | None = None,
              mode: str = "job") -> dict[str, Any]:
    """Per algorithm: quantum or not, and the jobs, circuits, shots, quantum stages and QPU
    seconds of ``plan_trials`` dry-run trials scaled to all (default: every trial when
    ``replica`` replays the run in ``mode``, else PLAN_TRIALS on an ideal device); its
    estimators capped and padded by ``calibration`` (an ``ibm:`` run's device model) as the
    run's will be.  A drifting problem gets no prediction (``"tv": True``)."""
    kind = "ideal" if replica is None else "replay"
    if is_drifting(config.problem):
        return {"algorithms": {}, "simulated": 0, "trials": config.trials, "tv": True, "kind": kind}
    settings = check_experiment(config)
    if calibration is not None:
        settings = stage_settings(config, snapshot=calibration)
    default = PLAN_TRIALS if replica is None else config.trials
    simulated = min(default if plan_trials is None else plan_trials, config.trials)
    algorithms: dict[str, dict[str, Any]] = {}
    for algorithm in config.algorithms:
        entry: dict[str, Any] = {"quantum": False, "jobs": 0, "circuits": 0, "shots": 0, "qpu_s": 0.0, "stages": 0}
        algorithms[algorithm] = entry
        for trial in range(simulated):
            unit = Unit(trial, algorithm)
            parts = unit_parts(config, unit)
            if not parts.policy.quantum:
                break  # classical learners sample the reward model on hardware: no jobs
            entry["quantum"] = True
            executor = _executor(config, unit, device, replica, mode)
            try:
                for record in run_stages(parts.problem, parts.policy, executor, settings, clock=parts.clock):
                    entry["stages"] += record["method"] not in ("exploit", "sample")
            finally:
                if isinstance(executor, ReplayExecutor):
                    executor.close()
            tally = executor.tally
            entry["jobs"] += tally.jobs
            entry["circuits"] += tally.circuits
            entry["shots"] += tally.shots
            entry["qpu_s"] += tally.qpu_seconds
    scale = config.trials / simulated
    for entry in algorithms.values():
        for key in TALLIES:
            entry[key] = entry[key] * scale
    return {"algorithms": algorithms, "simulated": simulated, "trials": config.trials, "tv": False, "kind": kind}


def _executor(config: ExperimentConfig, unit: Unit, device: Any, replica: Connection | None,
              mode: str) -> PlanExecutor | ReplayExecutor:
    """The unit's dry-run executor: the run's executor on ``replica`` with the unit's generator
    (as the runner builds it), else the ideal-device counter."""
    if replica is None:
        return PlanExecutor(device, config.target, seed=unit.seed(config.seed))
    name = parse_target(config.target).name
    return ReplayExecutor(replica, str(name), config.target, mode, np.random.default_rng(unit.seed(config.seed)))
