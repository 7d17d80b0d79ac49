"""The one place a run's parts are built from its config: problem, policy, clock, executor
and stage settings of a unit.

The runner (``qbo.experiments.runner``), the hardware cost plan
(``qbo.experiments.cost_plan``) and bench/speed.py all call these functions, so a unit is
assembled the same way wherever it runs.  ``check_experiment`` builds trial 0's parts once
before a run folder is claimed, so that a bad name or option fails with one line first.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from qbo.algorithms import is_quantum, make_policy
from qbo.algorithms.base import PolicyBase
from qbo.execution import make_executor, parse_target
from qbo.execution.jobs import RetryPolicy
from qbo.experiments.clock import Clock, make_clock
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.defaults import policy_inputs, policy_options
from qbo.experiments.folder import pinned_calibration, unit_key
from qbo.experiments.trial import StageSettings
from qbo.mitigation import make_mitigation
from qbo.noise import Snapshot
from qbo.problems import DRIFTING, is_drifting, make_problem, takes_seed
from qbo.problems.base import Problem
from qbo.problems.drifting import TVProblem

__all__ = [
    "Unit", "UnitParts", "check_experiment", "device_model", "hardware_settings", "make_policy_for",
    "problem_for_trial", "stable_seed", "stage_settings", "staged", "unit_executor", "unit_parts", "units",
]


@dataclass(frozen=True)
class Unit:
    """One run of one algorithm in one trial."""

    trial: int
    algorithm: str

    @property
    def key(self) -> str:
        return unit_key(self.trial, self.algorithm)

    def seed(self, base: int) -> int:
        return stable_seed(f"{base}/{self.trial}/{self.algorithm}")


def stable_seed(text: str) -> int:
    """A 64-bit seed from ``text`` that is the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def units(config: ExperimentConfig) -> list[Unit]:
    """Every unit of the run, in the order stages.jsonl holds them."""
    return [Unit(trial, algorithm) for trial in range(config.trials) for algorithm in config.algorithms]


_PROBLEMS: OrderedDict[str, Problem | TVProblem] = OrderedDict()  # the last problems built (units of a trial share one)
_PROBLEMS_KEPT = 32  # a lockstep group interleaves trials: keep every trial of a default run
_PROBLEMS_LOCK = threading.Lock()  # Dask threads (processes=False) share the cache


def problem_for_trial(config: ExperimentConfig, trial: int) -> Problem | TVProblem:
    """Trial t draws its problem with seed ``config.seed + t`` unless the config fixes one (a
    drifting problem draws its realisation per unit instead, ``qbo.experiments.clock``)."""
    options = ({"seed": config.seed + trial} if takes_seed(config.problem) else {}) | dict(config.problem_options)
    key = json.dumps([config.problem, config.problem_path, options], sort_keys=True, default=str)
    with _PROBLEMS_LOCK:
        problem = _PROBLEMS.get(key)
        if problem is not None:
            _PROBLEMS.move_to_end(key)
            return problem
    problem = make_problem(config.problem, config.problem_path, **options)
    with _PROBLEMS_LOCK:
        _PROBLEMS[key] = problem
        while len(_PROBLEMS) > _PROBLEMS_KEPT:
            _PROBLEMS.popitem(last=False)
    return problem


def staged(config: ExperimentConfig) -> bool:
    """Some policy of the run is quantum (a drifting problem then runs QMC stages for all)."""
    return any(is_quantum(a) for a in config.algorithms)


def make_policy_for(config: ExperimentConfig, algorithm: str, problem: Problem | TVProblem) -> PolicyBase:
    """Policy ``algorithm`` on ``problem`` with the problem's defaults and the config's options."""
    options = policy_options(algorithm, problem, config.budget, config.algorithm_options.get(algorithm, {}),
                             staged(config))
    return make_policy(algorithm, problem.arms, policy_inputs(problem), **options)


@dataclass
class UnitParts:
    """What a unit's stage loop runs on, before its journal is replayed into it."""

    problem: Problem | TVProblem
    policy: PolicyBase
    clock: Clock


def unit_parts(config: ExperimentConfig, unit: Unit, problem: Problem | TVProblem | None = None) -> UnitParts:
    """The problem (``problem_for_trial``, or ``problem`` when given: ``qbo.experiments.optimize``),
    a fresh policy and a fresh clock of ``unit``."""
    problem = problem_for_trial(config, unit.trial) if problem is None else problem
    policy = make_policy_for(config, unit.algorithm, problem)
    clock = make_clock(problem, (config.seed, unit.trial), config.budget, staged(config))
    return UnitParts(problem, policy, clock)


def unit_executor(config: ExperimentConfig, rng: np.random.Generator, out_dir: str | Path | None = None) -> Any:
    """The unit's executor on the config's target, drawing from the unit's generator; a run
    folder (``out_dir``) holds the hardware job journal (jobs.jsonl) shared by all units."""
    mode, retry = hardware_settings(config)
    return make_executor(config.target, seed=rng, run_dir=out_dir, mode=mode, retry=retry)


def device_model(config: ExperimentConfig, out_dir: str | Path | None = None) -> Snapshot | None:
    """The calibration a run's estimators plan and pad with (issue 9): the snapshot of
    ``aer:NAME``, the fake backend of ``fake:BACKEND`` (local mode simulates its noise), the
    calibration ``qbo submit`` pinned in the run folder for ``ibm:BACKEND``; None for the
    noiseless targets and for an ``ibm:`` run without one (its estimates then promise nothing
    on the device, ``qbo.qmc.base.without_device_model``)."""
    target = parse_target(config.target)
    if target.is_ibm:
        return pinned_calibration(out_dir, str(target))
    return target.snapshot()


def stage_settings(config: ExperimentConfig, out_dir: str | Path | None = None,
                   snapshot: Snapshot | None = None) -> StageSettings:
    """The stage settings of every unit; a device model (``device_model``, or ``snapshot``
    when given) caps depth and pads the bias by its calibration, as qbo estimate does."""
    snapshot = device_model(config, out_dir) if snapshot is None else snapshot
    return StageSettings(config.budget, config.estimator, config.accounting, config.leftover,
                         _mitigation(config, snapshot), config.weights, snapshot)


def _mitigation(config: ExperimentConfig, snapshot: Snapshot | None):
    """The Mitigation for config.mitigation on the run's device model (None for 'none')."""
    if config.mitigation == "none":
        return None
    if snapshot is None:
        raise ValueError(f"mitigation '{config.mitigation}' needs a device model target (aer:NAME or fake:NAME), "
                         f"got '{config.target}'")
    return make_mitigation(config.mitigation, snapshot)


def hardware_settings(config: ExperimentConfig) -> tuple[str | None, RetryPolicy | None]:
    """(mode, retry policy) of the config's [hardware] table; (None, None) when it is empty,
    so that the run folder's execution.json (``qbo submit``) applies."""
    table = dict(config.hardware)
    if not table:
        return None, None
    mode = table.pop("mode", None)
    try:
        return mode, RetryPolicy(**table)
    except TypeError as exc:
        raise ValueError(f"hardware: {exc}") from None


def check_experiment(config: ExperimentConfig) -> StageSettings:
    """Build trial 0's problem and every policy, and resolve the mitigation and the hardware
    settings: a bad name or option fails here, with a one-line ValueError, before a run
    folder is claimed.  Returns the stage settings."""
    for algorithm in config.algorithms:
        is_quantum(algorithm)  # an unknown name fails before any problem is built
    problem = problem_for_trial(config, 0)
    for algorithm in config.algorithms:
        policy = make_policy_for(config, algorithm, problem)
        if policy.clocked and not is_drifting(config.problem):
            raise ValueError(f"algorithm {algorithm!r} is time-varying and needs a drifting problem "
                             f"({', '.join(DRIFTING)}), got problem {config.problem!r}")
        if policy.resumes:
            _check_resumable(config, algorithm)
    hardware_settings(config)
    parse_target(config.target).snapshot()  # an unknown calibration or fake backend fails here, not mid-run
    return stage_settings(config)


def _check_resumable(config: ExperimentConfig, algorithm: str) -> None:
    """Resumed QMC (``qbo.qmc.resumable``: LRAE's or IAE's, ``qbo.qmc.auto.resumed_kind``) assumes a
    noiseless model: it has no mitigation and no calibration-aware bias pad, so on a device
    model its intervals would not be honest (issue 9). Refuse before a folder is claimed."""
    if config.estimator not in ("auto", "lrae", "iae") or config.mitigation != "none":
        raise ValueError(f"algorithm {algorithm!r} resumes per-arm QMC, which needs estimator 'auto', 'lrae' or "
                         f"'iae' without mitigation, got estimator {config.estimator!r}, mitigation {config.mitigation!r}")
    target = parse_target(config.target)
    if target.has_device_model:
        raise ValueError(f"algorithm {algorithm!r} resumes per-arm QMC, which has no calibration-aware bias pad; "
                         f"target {config.target!r} has a device model: use a noiseless target (exact, aer) or "
                         "a policy without resume")
