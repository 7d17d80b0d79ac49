"""Run an experiment: every (trial, algorithm) unit, journalled stage by stage, resumable.

Output folder::

    config.toml      the resolved configuration
    units/*.jsonl    one journal per unit (see qbo.experiments.journal); resume reads these
    stages.jsonl     one line per stage: trial, algorithm, stage, arm, eps, method,
                     oracle_calls (charged), honest_calls, estimate, cum_calls, cum_regret,
                     weight_eps (the eps of the observation's weight 1/eps^2; None if classical)
    summary.csv      final cumulative regret (mean, stderr) per algorithm
    regret.png       mean +- stderr of cumulative regret against oracle calls

Every unit draws its randomness from its own generator, seeded from (seed, trial,
algorithm), so units are independent of order and of interruptions: a killed and resumed
run writes the same files as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from qbo.algorithms import make_policy
from qbo.execution import make_executor, parse_target
from qbo.execution.base import Executor
from qbo.experiments.config import ExperimentConfig, load_config
from qbo.experiments.defaults import policy_options
from qbo.files import write_text_atomic
from qbo.experiments.journal import UnitJournal
from qbo.experiments.summary import summarise, write_summary_csv
from qbo.experiments.trial import Progress, StageSettings, run_stages
from qbo.problems import make_problem
from qbo.problems.base import Problem

ProgressCallback = Callable[[str, int, int], None]  # (unit key, calls so far, budget)


@dataclass(frozen=True)
class Unit:
    """One run of one algorithm in one trial."""

    trial: int
    algorithm: str

    @property
    def key(self) -> str:
        return f"trial{self.trial:03d}-{self.algorithm}"

    def seed(self, base: int) -> int:
        return stable_seed(f"{base}/{self.trial}/{self.algorithm}")


def stable_seed(text: str) -> int:
    """A 64-bit seed from ``text`` that is the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def problem_for_trial(config: ExperimentConfig, trial: int) -> Problem:
    """Trial t draws its problem with seed ``config.seed + t`` unless the config fixes one."""
    options = {"seed": config.seed + trial} | dict(config.problem_options)
    return make_problem(config.problem, **options)


def run_experiment(
    config: ExperimentConfig, out_dir: str | Path, on_progress: ProgressCallback | None = None
) -> list[dict[str, Any]]:
    """Run (or finish) every unit, then write stages.jsonl, summary.csv and regret.png.

    If ``out_dir`` already holds a config.toml it must equal ``config`` (that is a resume).
    Time-varying problems (``tv-*``) go to ``qbo.timevarying.runner.run_tv_experiment``.
    """
    out = Path(out_dir)
    from qbo.timevarying.runner import is_tv_problem, run_tv_experiment  # builds on this module

    if is_tv_problem(config.problem):
        if (out / "config.toml").exists():
            raise ValueError(f"time-varying runs cannot be resumed yet; start afresh instead of '{out}'")
        return run_tv_experiment(config, out, on_progress)
    settings, first = check_experiment(config)  # what can fail on bad input, before any file
    # the run folder holds the hardware job journal (jobs.jsonl) and execution settings
    executor = make_executor(config.target, seed=config.seed, run_dir=out)
    _claim(out, config)
    records: list[dict[str, Any]] = []
    try:
        for trial in range(config.trials):
            problem = first if trial == 0 else problem_for_trial(config, trial)
            for algorithm in config.algorithms:
                unit = Unit(trial, algorithm)
                lines = _run_unit(unit, problem, executor, config, settings, out, on_progress)
                records.extend({"trial": trial, "algorithm": algorithm} | _public(line) for line in lines)
    finally:
        close = getattr(executor, "close", None)  # ends an IBM batch or session
        if close is not None:
            close()
    write_results(out, config, records)
    return records


def check_experiment(config: ExperimentConfig) -> tuple[StageSettings, Problem]:
    """Build trial 0's problem and every policy, and resolve the mitigation: a bad name or
    option fails here, with a one-line ValueError, before a run folder is claimed.
    Returns the stage settings and trial 0's problem (for the run to reuse)."""
    problem = problem_for_trial(config, 0)
    for algorithm in config.algorithms:
        make_policy(algorithm, problem.arms, **policy_options(
            algorithm, problem, config.budget, config.algorithm_options.get(algorithm, {})))
    settings = StageSettings(
        config.budget, config.estimator, config.accounting, config.leftover, _mitigation(config), config.weights
    )
    return settings, problem


def _mitigation(config: ExperimentConfig):
    """The Mitigation for config.mitigation on config.target (None for 'none')."""
    if config.mitigation == "none":
        return None
    from qbo.mitigation import make_mitigation

    snapshot = parse_target(config.target).snapshot()
    if snapshot is None:
        raise ValueError(f"mitigation '{config.mitigation}' needs a device model target (aer:NAME or fake:NAME), got '{config.target}'")
    return make_mitigation(config.mitigation, snapshot)


def resume_experiment(run_dir: str | Path, on_progress: ProgressCallback | None = None) -> list[dict[str, Any]]:
    """Continue a killed run from its folder."""
    path = Path(run_dir) / "config.toml"
    if not path.exists():
        raise ValueError(f"'{run_dir}' is not a qbo run folder: no config.toml")
    return run_experiment(load_config(path), run_dir, on_progress)


def write_results(out: Path, config: ExperimentConfig, records: list[dict[str, Any]]) -> None:
    from qbo.experiments.plot import plot_regret

    write_text_atomic(out / "stages.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    write_summary_csv(out / "summary.csv", summarise(records, config), config)
    plot_regret(records, config, out / "regret.png")


# --- the per-unit seam (issue 13): any process may run any unit; the folder is the record ---


def units(config: ExperimentConfig) -> list[Unit]:
    """Every unit of the run, in the order ``merge`` writes them."""
    return [Unit(trial, algorithm) for trial in range(config.trials) for algorithm in config.algorithms]


def prepare(config: ExperimentConfig, out_dir: str | Path) -> None:
    """Check the experiment (one-line ValueError on bad input) and claim the run folder."""
    from qbo.timevarying.runner import is_tv_problem  # builds on this module

    if is_tv_problem(config.problem):
        raise ValueError(f"--workers/--scheduler do not run time-varying problems yet, got '{config.problem}'")
    check_experiment(config)
    _claim(Path(out_dir), config)


def unit_done(out_dir: str | Path, unit: Unit) -> bool:
    """True when the unit's journal in ``out_dir`` says it finished."""
    return UnitJournal(Path(out_dir) / "units" / f"{unit.key}.jsonl").read()[1]


def run_unit(config: ExperimentConfig, unit: Unit, out_dir: str | Path,
             on_progress: ProgressCallback | None = None) -> None:
    """Run one unit to its end, or continue it from its journal, with its own problem and
    executor (its random numbers come from the unit's seed alone)."""
    out = Path(out_dir)
    settings = StageSettings(
        config.budget, config.estimator, config.accounting, config.leftover, _mitigation(config), config.weights
    )
    executor = make_executor(config.target, seed=config.seed, run_dir=out)
    try:
        _run_unit(unit, problem_for_trial(config, unit.trial), executor, config, settings, out, on_progress)
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()


def merge(config: ExperimentConfig, out_dir: str | Path) -> list[dict[str, Any]]:
    """stages.jsonl, summary.csv and regret.png from the finished unit journals, in ``units``
    order (so the files do not depend on which process ran what, or when)."""
    out = Path(out_dir)
    records: list[dict[str, Any]] = []
    for unit in units(config):
        lines, done = UnitJournal(out / "units" / f"{unit.key}.jsonl").read()
        if not done:
            raise ValueError(f"unit {unit.key} of '{out}' is not finished; resume the run")
        records.extend({"trial": unit.trial, "algorithm": unit.algorithm} | _public(line) for line in lines)
    write_results(out, config, records)
    return records


def _claim(out: Path, config: ExperimentConfig) -> None:
    path = out / "config.toml"
    if path.exists():
        if load_config(path) != config:
            raise ValueError(f"'{out}' holds a different experiment; use a fresh --out or --resume {out}")
        return
    write_text_atomic(path, config.to_toml())


def _run_unit(
    unit: Unit, problem: Problem, executor: Executor, config: ExperimentConfig,
    settings: StageSettings, out: Path, on_progress: ProgressCallback | None,
) -> list[dict[str, Any]]:
    journal = UnitJournal(out / "units" / f"{unit.key}.jsonl")
    lines, done = journal.read()
    if done:
        return lines
    policy = make_policy(unit.algorithm, problem.arms, **policy_options(
        unit.algorithm, problem, config.budget, config.algorithm_options.get(unit.algorithm, {})))
    executor.rng = np.random.default_rng(unit.seed(config.seed))
    at = _replay(policy, executor, lines)
    for record in run_stages(problem, policy, executor, settings, at):
        record["rng"] = executor.rng.bit_generator.state
        journal.append(record)
        lines.append(record)
        if on_progress:
            on_progress(unit.key, record["cum_calls"], config.budget)
    journal.finish()
    return lines


def _replay(policy, executor: Executor, lines: list[dict[str, Any]]) -> Progress:
    """Re-tell journalled stages to a fresh policy and restore the random state."""
    from qbo.algorithms import Query

    for line in lines:
        if line["method"] != "exploit":
            query = Query(line["arm"], line["eps"], getattr(policy, "alpha", None))
            policy.tell(query, line["estimate"], epsilon=line.get("weight_eps"))
    if not lines:
        return Progress()
    executor.rng.bit_generator.state = lines[-1]["rng"]
    last = lines[-1]
    return Progress(stage=last["stage"], calls=last["cum_calls"], regret=last["cum_regret"])


def _public(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k != "rng"}
