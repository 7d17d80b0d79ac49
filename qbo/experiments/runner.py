"""Run an experiment: every (trial, algorithm) unit, journalled stage by stage, resumable.

One runner for every problem: static finite-arm problems and the drifting problem of the
time-varying seed (Imamura et al., seed 000) run the same stage loop
(``qbo.experiments.trial.run_stages``) with a different clock (``qbo.experiments.clock``).
The run folder's files and the stage record's fields are listed in docs/runs.md; the folder
protocol (claim, lock, verify, finish) is ``qbo.experiments.folder``, the per-unit journals
``qbo.experiments.journal``.

Every unit draws its randomness from its own generator, seeded from (seed, trial, algorithm);
a drifting world is drawn from (seed, trial) alone, shared by all algorithms, and rebuilt on
resume by replaying the journal. Units are therefore independent of order and of
interruptions: a killed and resumed run writes the same files as an uninterrupted one, and
units may run in any order or in parallel (``units``, ``run_unit``, ``merge``). The trials of
gp-ucb with a fixed length scale on a static problem step together (``lockstep_groups``,
``run_lockstep_units``: one numpy update serves all trials, bit for bit what each would do
alone; docs/scale-out.md). On the exact target such units, and every classical unit with a
compiled loop, are compact instead (``qbo.experiments.compact``: one kernel run per chunk of
calls, every call in a call file ``calls/KEY.calls``, records at checkpoints).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from qbo.algorithms import Query, is_quantum
from qbo.algorithms.base import PolicyBase
from qbo.algorithms.gp_ucb import GPUCBLockstep
from qbo.execution import parse_target
from qbo.execution.base import Closing
from qbo.experiments.assembly import (
    Unit, check_experiment, make_policy_for, problem_for_trial, stable_seed, stage_settings, unit_executor,
    unit_parts, units,
)
from qbo.experiments.clock import Clock
from qbo.experiments.compact import CompactUnit, compact_unit, verify_calls
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.folder import (
    STAGES, UNITS, RunFolderLock, claim_run_folder, config_hash, finished, mark_finished, open_run_folder,
    remove_units, verify_finished, verify_run_folder,
)
from qbo.experiments.figure import Painter
from qbo.experiments.journal import Replay, UnitJournal, parse_lines
from qbo.experiments.plot import regret_png, save_png
from qbo.experiments.records import EXPLOIT, told
from qbo.experiments.summary import summarise, write_summary_csv
from qbo.experiments.trial import Progress, StageSettings, run_lockstep, run_stages
from qbo.errors import BadFile
from qbo.files import write_bytes_atomic
from qbo.qmc.resumable import arm_state_from_json
from qbo.problems import is_drifting
from qbo.problems.base import Problem
from qbo.problems.drifting import TVProblem

__all__ = [
    "ProgressCallback", "Unit", "check_experiment", "merge", "problem_for_trial", "resume_experiment",
    "run_experiment", "run_unit", "stable_seed", "units",
]

ProgressCallback = Callable[[str, int, int], None]  # (unit key, calls so far, budget)
LOCKSTEP_BYTES = 256 << 20  # what a lockstep group may hold (lockstep_groups, lockstep_bytes)
STAGE_BYTES = 1024  # a stage's history entry and journal line, held until a lockstep group ends
PAINTER_MIN_CALLS = 100_000  # trials x algorithms x budget from which regret.png is drawn by a warm helper
UnitCallback = Callable[[str, int, int], None]  # (unit key, units done, units in the run)


def run_experiment(
    config: ExperimentConfig, out_dir: str | Path, on_progress: ProgressCallback | None = None,
    on_unit: UnitCallback | None = None, *, figure: bool = True,
) -> list[dict[str, Any]]:
    """Run (or finish) every unit in this process, then write stages.jsonl, summary.csv and
    (``figure``) regret.png. ``on_unit`` hears of every finished unit (unit key, units done,
    units). ``figure=False`` is for callers that only read the records, such as a benchmark
    grid of hundreds of runs: no figure is drawn and no painter process started.

    If ``out_dir`` already holds a config.toml it must equal ``config`` (that is a resume).
    """
    out = Path(out_dir)
    lock = prepare(config, out)  # validation first, then the atomic claim (or verify) and the lock
    try:
        with painter_for(config, figure=figure) as painter:
            count, done = len(units(config)), 0

            def finished_unit(unit: Unit) -> None:
                nonlocal done
                done += 1
                if on_unit:
                    on_unit(unit.key, done, count)

            for group in lockstep_groups(config):  # a finished unit's journal is only verified
                run_lockstep_units(config, group, out, on_progress, finished_unit)
            return merge(config, out, painter, figure=figure)
    finally:
        lock.release()


def painter_for(config: ExperimentConfig, busy: int = 1, figure: bool = True) -> Painter:
    """A painter whose helper imports matplotlib on a spare core while the units run (``busy``
    of this machine's cores run units), for a run big enough to hide it (PAINTER_MIN_CALLS; the saving is in
    docs/scale-out.md); small runs, a machine without a spare core, and a process that
    has matplotlib already draw in process; ``figure=False``: nothing to draw, no helper."""
    painter = Painter()
    big = config.trials * len(config.algorithms) * config.budget >= PAINTER_MIN_CALLS
    if figure and big and _cores() > busy and "matplotlib" not in sys.modules:
        painter.start()
    return painter


def _cores() -> int:
    """Cores this process may run on (its affinity, where the platform says)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def run_unit(config: ExperimentConfig, unit: Unit, out_dir: str | Path,
             on_progress: ProgressCallback | None = None, *, remember: bool = True) -> None:
    """Run one unit to its end, or continue it from its journal; a finished unit (or run) is
    left as is. ``remember``: keep the finished journal's scan for a merge in this process
    (off in Dask worker processes, which never merge).

    The folder must be claimed (``run_experiment`` does it); units share nothing but the
    folder, so any process may run any unit, in any order."""
    run_lockstep_units(config, [unit], out_dir, on_progress, remember=remember)


def run_lockstep_units(config: ExperimentConfig, group: list[Unit], out_dir: str | Path,
                       on_progress: ProgressCallback | None = None,
                       on_done: Callable[[Unit], None] | None = None, *, remember: bool = True) -> None:
    """``run_unit`` for each unit of ``group`` (``lockstep_groups``: one classical algorithm,
    several trials), with the units that can be stepped together (``GPUCBLockstep``, at the
    same point of their journals) run in lockstep, the others one by one: the same journals,
    bit for bit, in a fraction of the time.  Each unit's journal is finished as soon as its
    batch ends, and ``on_done`` then hears of it; ``remember`` as for ``run_unit``."""
    out = Path(out_dir)
    run_done = finished(out) is not None
    with ExitStack() as opened:  # every opened unit is closed, also when opening a later one fails
        lives: list[_Live] = []
        for unit in group:
            live = None if run_done else _open_unit(config, unit, out, remember)
            if live is None:
                if on_done:
                    on_done(unit)
            else:
                opened.callback(live.close)
                lives.append(live)
        settings = stage_settings(config, out) if lives else None
        for batch in _lockstep_batches(lives):
            _run_batch(batch, config, settings, on_progress)
            for live in batch:  # a unit is finished as soon as its batch ends
                live.close_executor()
                live.journal.finish()
                if on_done:
                    on_done(live.unit)


@dataclass
class _Live:
    """An unfinished unit, opened: its journal (read), policy and clock replayed to where it
    stands, and its executor."""

    unit: Unit
    journal: UnitJournal
    problem: Problem | TVProblem
    policy: PolicyBase
    clock: Clock
    at: Progress
    executor: Any
    compact: CompactUnit | None = None

    def __post_init__(self) -> None:
        self.key = self.unit.key
        self._executor_open = True

    def close_executor(self) -> None:
        """End an IBM batch or session (once)."""
        if self._executor_open:
            self._executor_open = False
            if isinstance(self.executor, Closing):
                self.executor.close()

    def close(self) -> None:
        """Close the executor, then the journal (written up to its last checkpoint, even after an error)."""
        try:
            self.close_executor()
        finally:
            if self.compact is not None:
                self.compact.close()
            self.journal.close()


def _open_unit(config: ExperimentConfig, unit: Unit, out: Path, remember: bool = True) -> _Live | None:
    """Read a unit's journal and rebuild it where it stands (None, journal closed, if it is done)."""
    rng = np.random.default_rng(unit.seed(config.seed))
    journal = UnitJournal(out / UNITS / f"{unit.key}.jsonl", config_hash(config),
                          fields={"trial": unit.trial, "algorithm": unit.algorithm},
                          state=lambda: {"rng": rng.bit_generator.state},  # for checkpoints, between stages
                          remember=remember)
    compact: CompactUnit | None = None
    try:
        replay = journal.read()
        if replay.done:
            journal.close()
            return None
        parts = unit_parts(config, unit)
        if parse_target(config.target).kind == "exact":  # its executor is built without drawing
            executor = unit_executor(config, rng, out)
            compact = compact_unit(parts.problem, parts.policy, parts.clock, executor, rng, out, unit.key)
        if compact is not None:  # qbo.experiments.compact: every call in a call file, records at checkpoints
            at = compact.resume(replay, journal)
        else:
            at = _replay(parts.policy, parts.clock, rng, replay)
            executor = unit_executor(config, rng, out)  # built with the unit's generator, its state restored
    except BaseException:
        journal.close()
        if compact is not None:
            compact.close()
        raise
    return _Live(unit, journal, parts.problem, parts.policy, parts.clock, at, executor, compact)


def _run_batch(batch: list[_Live], config: ExperimentConfig, settings: StageSettings,
               on_progress: ProgressCallback | None) -> None:
    """Run the units of a batch to their ends: in lockstep where ``GPUCBLockstep`` takes them
    on static clocks, else one after the other."""
    for live in [live for live in batch if live.compact is not None]:  # one kernel loop each
        live.compact.run(live.at, config.budget, live.journal,
                         lambda record, key=live.key: on_progress and on_progress(key, record["cum_calls"], config.budget))
    batch = [live for live in batch if live.compact is None]
    if not batch:
        return
    static = not any(live.clock.design or live.clock.timed for live in batch)
    policies = GPUCBLockstep.of([live.policy for live in batch]) if len(batch) > 1 and static else None
    if policies is None:
        for live in batch:
            for record in run_stages(live.problem, live.policy, live.executor, settings, live.at, clock=live.clock):
                _journal(live, record, config, on_progress)
        return
    for live in batch:  # B journals commit every B flush periods: about one fsync per period, as for one unit
        live.journal.flush_every_s *= len(batch)
    steps = run_lockstep([live.clock for live in batch], policies, [live.executor for live in batch], settings,
                         [live.at for live in batch])
    for records in steps:
        for live, record in zip(batch, records):
            _journal(live, record, config, on_progress)


def _journal(live: _Live, record: dict[str, Any], config: ExperimentConfig,
             on_progress: ProgressCallback | None) -> None:
    live.journal.append(record)
    if on_progress:
        on_progress(live.key, record["cum_calls"], config.budget)


def _lockstep_batches(lives: list[_Live]) -> list[list[_Live]]:
    """The opened units by the number of calls their journals stand at (a batch may step together)."""
    batches: dict[int, list[_Live]] = {}
    for live in lives:
        batches.setdefault(live.at.calls, []).append(live)
    return list(batches.values())


def lockstep_groups(config: ExperimentConfig, todo: list[Unit] | None = None, parts: int = 1) -> list[list[Unit]]:
    """The units of ``todo`` (default: all, in ``units`` order) as they run: the units of each
    algorithm that ``GPUCBLockstep`` takes (gp-ucb with a fixed length scale on the rank-one
    posterior, on a static problem) in groups for ``run_lockstep_units``, as many trials to a
    group as LOCKSTEP_BYTES allow (``lockstep_bytes``) and spread over at least ``parts``
    groups where there are enough (one per worker); every other unit alone."""
    todo = units(config) if todo is None else todo
    if is_drifting(config.problem) or not todo:
        return [[unit] for unit in todo]
    problem = problem_for_trial(config, 0)
    together = {alg for alg in config.algorithms if not is_quantum(alg)
                and GPUCBLockstep.of([make_policy_for(config, alg, problem)]) is not None}
    cap = max(1, LOCKSTEP_BYTES // lockstep_bytes(problem.arms.shape[0], config.budget))
    count: dict[str, int] = {}
    for unit in todo:
        count[unit.algorithm] = count.get(unit.algorithm, 0) + 1
    groups: list[list[Unit]] = []
    open_groups: dict[str, list[Unit]] = {}
    for unit in todo:
        if unit.algorithm not in together:
            groups.append([unit])
            continue
        size = min(cap, -(-count[unit.algorithm] // max(1, parts)))
        group = open_groups.get(unit.algorithm)
        if group is None or len(group) >= size:
            group = open_groups[unit.algorithm] = []
            groups.append(group)
        group.append(unit)
    return groups


def lockstep_bytes(num_arms: int, budget: int) -> int:
    """What one unit holds in a lockstep group until the group ends: its share of the stacked
    posterior, and STAGE_BYTES per stage for its policy's history and its journal's lines
    (docs/scale-out.md gives the size seen on gp-ucb)."""
    return GPUCBLockstep.nbytes(num_arms) + budget * STAGE_BYTES


def merge(config: ExperimentConfig, out_dir: str | Path, painter: Painter | None = None, *,
          figure: bool = True) -> list[dict[str, Any]]:
    """Write stages.jsonl from the finished unit journals, then summary.csv and (``figure``) regret.png,
    mark the run finished in run.json and remove the journals; returns the records, ordered
    by trial and then by the config's algorithms.

    stages.jsonl is the journals' verified stage lines, copied as bytes. A finished run
    (run.json says so) is verified against its mark instead and its summary and plot are
    written again; journals a kill left behind are removed."""
    out = Path(out_dir)
    verify_run_folder(out, config)
    if finished(out) is not None:
        data = verify_finished(out, config)
        records = parse_lines(data.split(b"\n")[:-1])
        verify_calls(out, records)
        _write_results(config, out, records, regret_png(records, config, painter) if figure else None)
    else:
        lines: list[bytes] = []
        for unit in units(config):
            got = UnitJournal(out / UNITS / f"{unit.key}.jsonl", config_hash(config)).stage_lines()
            if got is None:
                raise ValueError(f"unit {unit.key} of '{out}' is not finished; run it before merging")
            lines.extend(got)
        records = parse_lines(lines)
        verify_calls(out, records)
        png = regret_png(records, config, painter) if figure else None  # drawn by the painter's helper while stages.jsonl is written
        data = b"\n".join(lines) + b"\n" if lines else b""
        write_bytes_atomic(out / STAGES, data)
        _write_results(config, out, records, png)
        mark_finished(out, config, data, len(records))  # from here on stages.jsonl holds the records
    remove_units(out)
    return records


def _write_results(config: ExperimentConfig, out: Path, records: list[dict[str, Any]],
                   png: Callable[[], bytes] | None) -> None:
    write_summary_csv(out / "summary.csv", summarise(records, config), config)
    if png is not None:
        save_png(out / "regret.png", png)


def prepare(config: ExperimentConfig, out_dir: str | Path) -> RunFolderLock:
    """Check the experiment (one-line error on bad input) and claim the run folder, or verify
    and lock a resumed one: ``run_experiment`` without running the units, for
    ``qbo.experiments.fanout``. The caller releases the lock once the run is merged."""
    check_experiment(config)
    return claim_run_folder(Path(out_dir), config)


def unit_done(config: ExperimentConfig, out_dir: str | Path, unit: Unit) -> bool:
    """True when the unit's (verified) journal in ``out_dir`` says it finished, or the run has."""
    if finished(out_dir) is not None:
        return True
    return UnitJournal(Path(out_dir) / UNITS / f"{unit.key}.jsonl", config_hash(config)).check()  # writes nothing


def resume_experiment(run_dir: str | Path, on_progress: ProgressCallback | None = None) -> list[dict[str, Any]]:
    """Continue a killed run from its folder."""
    return run_experiment(open_run_folder(run_dir), run_dir, on_progress)


def _replay(policy: PolicyBase, clock: Clock, rng: np.random.Generator, replay: Replay) -> Progress:
    """Re-tell journalled stages to a fresh policy, rebuild the clock's world and restore the
    unit's random state from the last checkpoint (before its executor is built)."""
    lines = replay.records
    idle: Query | None = None  # the stage loop's zero-call guard (qbo.experiments.trial.Progress)
    for line in lines:
        clock.replay(line)
        stage = told(line)
        idle = None
        if stage.method != EXPLOIT:
            resume = arm_state_from_json(stage.qmc) if stage.qmc is not None else None
            query = Query(stage.arm, stage.eps, getattr(policy, "alpha", None), resume=resume)
            policy.tell(query, stage.estimate, epsilon=stage.weight_eps, elapsed=stage.elapsed,
                        calls=stage.honest_calls)
            if stage.honest_calls == 0:  # the query as the stage loop told it (the guard ignores horizons)
                idle = query
    if not lines:
        return Progress()
    if replay.state is None or "rng" not in replay.state:
        raise BadFile("a journal holds stages but no checkpoint of the random state; start the run afresh")
    rng.bit_generator.state = replay.state["rng"]
    last = told(lines[-1])
    return Progress(stage=last.stage, calls=last.cum_calls, regret=last.cum_regret, idle=idle)
