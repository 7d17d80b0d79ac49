"""The cost plan of a hardware run (``qbo submit``): jobs, circuits, shots, stages and
predicted QPU seconds per algorithm, from a dry run (``qbo.execution.plan``).

Where the connection has a replica (local mode on a fake backend, the test service) every
trial is *replayed*: the run's executor with the run's seeds on the replica, so the count is
the run's own (``kind: "replay"``; it costs one more simulation of the whole run). On a real
device outcomes are unknown: the run is simulated on an ideal device with the hardware path's
job rule (``kind: "ideal"``), ``plan_trials`` trials scaled to all, and is an estimate; the
same trials with PLAN_RESEEDS other sampling seeds give ``jobs_upper``, the most of all
passes: a spread over sampled outcomes, not a guarantee (a noisy device takes other rounds).

Units are assembled as the run assembles them (``qbo.experiments.assembly``); only the
executor differs: a ``PlanExecutor`` that counts what the device would be sent.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qbo.execution import parse_target
from qbo.execution.connection import Connection
from qbo.execution.plan import PlanExecutor, ReplayExecutor
from qbo.experiments.assembly import Unit, check_experiment, stable_seed, stage_settings, unit_parts
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.trial import StageSettings, run_stages
from qbo.noise import Snapshot
from qbo.problems import is_drifting

__all__ = ["PLAN_TRIALS", "TALLIES", "cost_plan"]

PLAN_TRIALS = 2  # trials simulated for the cost plan on an ideal device (scaled to all trials)
PLAN_RESEEDS = 4  # further sampling seeds of those trials on an ideal device: "jobs_upper" is the most
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
    reseeds = 0 if replica is not None else PLAN_RESEEDS
    for algorithm in config.algorithms:
        entry = _tally(config, settings, algorithm, simulated, device, replica, mode, 0)
        if entry["quantum"]:
            entry["jobs_upper"] = max([entry["jobs"]] + [
                _tally(config, settings, algorithm, simulated, device, None, mode, r)["jobs"]
                for r in range(1, reseeds + 1)])
        algorithms[algorithm] = entry
    scale = config.trials / simulated
    for entry in algorithms.values():
        for key in (*TALLIES, "jobs_upper"):
            if key in entry:
                entry[key] = entry[key] * scale
    return {"algorithms": algorithms, "simulated": simulated, "trials": config.trials, "tv": False, "kind": kind}


def _tally(config: ExperimentConfig, settings: StageSettings, algorithm: str, trials: int, device: Any,
           replica: Connection | None, mode: str, reseed: int) -> dict[str, Any]:
    """The jobs, circuits, shots, QPU seconds and quantum stages of ``algorithm``'s first
    ``trials`` units, dry-run with the run's sampling seeds (``reseed`` 0) or others."""
    entry: dict[str, Any] = {"quantum": False, "jobs": 0, "circuits": 0, "shots": 0, "qpu_s": 0.0, "stages": 0}
    for trial in range(trials):
        unit = Unit(trial, algorithm)
        parts = unit_parts(config, unit)
        if not parts.policy.quantum:
            break  # classical learners sample the reward model on hardware: no jobs
        entry["quantum"] = True
        executor = _executor(config, unit, device, replica, mode, reseed)
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
    return entry


def _executor(config: ExperimentConfig, unit: Unit, device: Any, replica: Connection | None,
              mode: str, reseed: int = 0) -> PlanExecutor | ReplayExecutor:
    """The unit's dry-run executor: the run's executor on ``replica`` with the unit's generator
    (as the runner builds it), else the ideal-device counter (seeded as the run, or reseeded)."""
    if replica is None:
        seed = unit.seed(config.seed) if reseed == 0 else stable_seed(f"{config.seed}/{unit.key}/plan{reseed}")
        return PlanExecutor(device, config.target, seed=seed)
    name = parse_target(config.target).name
    return ReplayExecutor(replica, str(name), config.target, mode, np.random.default_rng(unit.seed(config.seed)))
