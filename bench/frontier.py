"""The frontier of docs/frontier.md (issue 23): every quantum learner against every classical
one under the fair protocol: tuning on training seeds, evaluation of the theory and tuned
settings on evaluation seeds, mean/s.e./median tables, best-quantum / best-classical with a
bootstrap interval, crossover T, log-log slopes and the ratio figure.

Run through ``bench/regret.py --section frontier`` (which holds the shared options and adds
these with ``add_arguments``):

    python bench/regret.py --section frontier --plan              # what the grid will run
    python bench/regret.py --section frontier --quick --workers 1 # a tiny grid, seconds

Jobs (a block of trials of one learner configuration in one cell) run through
``qbo.experiments.runner.run_experiment`` on local Dask workers; each finished job is
appended to a journal, so a killed grid resumes from it.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import math
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from qbo.algorithms import is_quantum
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import run_experiment
from qbo.experiments.summary import mean_stderr
from qbo.files import append_line, read_lines, write_bytes_atomic, write_text_atomic


PLACEMENT_PROBLEMS = {"centred": "synthetic-bernoulli-centred", "top": "synthetic-bernoulli-top"}
ONE_OVER_T = "1/T"  # an option value resolved to 1 / horizon when a run is built
TRAIN_SEEDS = 0  # training problem seeds 0, 1, ... (--train-seeds of them; 10 in the protocol)
EVAL_SEEDS = 100  # evaluation problem seeds 100, 101, ... (40 for gp-ucb, --trials for the others)
SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True)
class Learner:
    """One learner of the frontier: its policy, its theory configuration and its tuning grid
    (<= 8 configurations; docs/frontier.md says why each knob and value)."""

    label: str
    algorithm: str
    theory: tuple
    grid: tuple[tuple, ...]
    quantum: bool
    base: tuple = ()  # options every configuration carries (e.g. resume)


def _grid(**axes) -> tuple[tuple, ...]:
    """The product of the axes, in order: _grid(beta=(1, 2), lengthscale=(0.1,)) ->
    ((("beta", 1), ("lengthscale", 0.1)), (("beta", 2), ("lengthscale", 0.1)))."""
    combos: list[tuple] = [()]
    for key, values in axes.items():
        combos = [c + ((key, v),) for c in combos for v in values]
    return tuple(combos)


LEARNERS = (
    Learner("thompson", "thompson", (), tuple((("a0", v), ("b0", v)) for v in (1.0, 0.5, 2.0)), False),
    Learner("kl-ucb", "kl-ucb", (("c", 3.0),), _grid(c=(0.0, 1.0, 3.0)), False),
    Learner("gp-ucb", "gp-ucb", (("beta", "theorem1"), ("delta", ONE_OVER_T)),
            _grid(beta=(0.5, 1.0, SQRT2, 2.0), lengthscale=(0.1, 0.2)), False),
    Learner("gp-ts", "gp-ts", (("scale", 1.0),), _grid(scale=(0.25, 0.5, 1.0, 2.0), lengthscale=(0.1, 0.2)), False),
    Learner("q-gp-ucb", "q-gp-ucb", (("beta", "theory"), ("delta", ONE_OVER_T)),
            _grid(beta=(1.0, SQRT2), delta=(ONE_OVER_T, 0.1), lengthscale=(0.1, 0.2)), True),
    Learner("q-gp-ucb resume", "q-gp-ucb", (("beta", "theory"), ("delta", ONE_OVER_T)),
            _grid(beta=(1.0, SQRT2), delta=(ONE_OVER_T, 0.1), lengthscale=(0.1, 0.2)), True, (("resume", True),)),
    Learner("q-ucb-halve", "q-ucb-halve", (("delta", ONE_OVER_T),), _grid(delta=(ONE_OVER_T, 1e-4, 1e-2, 0.1)), True),
    Learner("q-se", "q-se", (("delta", ONE_OVER_T),), _grid(delta=(ONE_OVER_T, 1e-4, 1e-2, 0.1)), True),
)
MAX_CONFIGS = 8  # the protocol's tuning budget per learner


def options_label(options: tuple) -> str:
    """'beta=1.41 lengthscale=0.1' (``-`` for the defaults)."""
    return " ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in options) or "-"


def resolve_options(options: tuple, horizon: int) -> dict:
    """The options a run at ``horizon`` gets: ``1/T`` becomes 1 / horizon."""
    return {k: (1.0 / horizon if v == ONE_OVER_T else v) for k, v in options}


def parse_variant(text: str) -> tuple[str, tuple]:
    """'q-gp-ucb:beta=1.414,resume=true,delta=2e-6' -> ("q-gp-ucb", (("beta", 1.414), ...))."""
    name, _, rest = text.partition(":")
    options = []
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        parsed: object = {"true": True, "false": False}.get(value.lower(), value)
        if isinstance(parsed, str) and value != ONE_OVER_T:
            try:
                parsed = float(value) if any(c in value for c in ".e") else int(value)
            except ValueError:
                pass
        options.append((key, parsed))
    return name, tuple(options)


@dataclass(frozen=True)
class Job:
    """One run folder: ``count`` trials of one learner configuration on one cell, problem seeds
    ``first`` .. ``first + count - 1``, read out at ``readouts`` (calls) from its records."""

    setting: str  # theory | tuned | train
    placement: str
    spread: float
    learner: str
    algorithm: str
    options: tuple
    horizon: int
    first: int
    count: int
    readouts: tuple
    scratch: str

    @property
    def key(self) -> tuple:
        """What determines the job's results (the setting does not: a tuned pick equal to the
        theory configuration reuses its runs; nor does the placement at spread 1, where centred
        and top are one problem, f' = f, so the two cells share their runs)."""
        placement = "centred" if self.spread == 1 else self.placement  # the problem's name is not in a row
        return (placement, self.spread, self.algorithm, self.options, self.horizon, self.first, self.count, self.readouts)


def regret_at(calls: np.ndarray, regret: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Cumulative regret after ``points`` calls, from records (cum_calls, cum_regret) increasing
    in calls: linear between records. Every call of a stage plays one arm, so between two
    consecutive stage records the regret is linear in calls and this is exact; between
    checkpoint records of a compact unit (issue 21), exact at the checkpoints themselves.
    A point past the last record takes the last record's regret (the run ended there)."""
    calls = np.concatenate([[0.0], np.asarray(calls, dtype=float)])
    regret = np.concatenate([[0.0], np.asarray(regret, dtype=float)])
    return np.interp(np.asarray(points, dtype=float), calls, regret)


def readout_points(horizon: int, wanted: list[int]) -> tuple[int, ...]:
    """The calls at which a run of ``horizon`` is read: the wanted horizons it reaches and
    floor(10^(j/10)) from 10^2 (ten a decade, for the slopes; these are also checkpoints of a
    compact unit, floor(10^(k/100)) with k = 10 j), and the horizon itself."""
    grid = {int(math.floor(10 ** (j / 10) + 1e-9)) for j in range(20, 10 * int(math.log10(horizon)) + 11)}
    return tuple(sorted({p for p in grid | set(wanted) | {horizon} if 1 <= p <= horizon}))


def run_job(job: Job) -> list[dict]:
    """Run the job's trials through ``qbo.experiments.runner.run_experiment`` (the same path as
    ``qbo run``: compact records, compiled learners, lockstep, whatever the runner does) in a
    scratch folder, read each trial's regret at the read-out points from the records, remove
    the folder. One row per trial."""
    options = resolve_options(job.options, job.horizon)
    config = ExperimentConfig(
        problem=PLACEMENT_PROBLEMS[job.placement], algorithms=(job.algorithm,), budget=job.horizon, trials=job.count,
        seed=job.first, problem_options={"spread": job.spread},
        algorithm_options={job.algorithm: options} if options else {})
    Path(job.scratch).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="frontier-", dir=job.scratch))
    start, cpu = time.perf_counter(), time.process_time()
    try:
        records = run_experiment(config, folder / "run", figure=False)  # the folder is removed: no regret.png
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = []
    for trial in range(job.count):
        mine = [r for r in records if r["trial"] == trial]
        calls = np.array([r["cum_calls"] for r in mine], dtype=float)
        regret = np.array([r["cum_regret"] for r in mine], dtype=float)
        rows.append({
            "setting": job.setting, "placement": job.placement, "spread": job.spread, "learner": job.learner,
            "algorithm": job.algorithm, "config": options_label(job.options), "horizon": job.horizon,
            "seed": job.first + trial, "stages": len(mine), "calls": int(calls[-1]) if len(calls) else 0,
            "wall_s": wall / job.count, "cpu_s": cpu / job.count, "points": list(job.readouts),
            "regret": [float(v) for v in regret_at(calls, regret, np.array(job.readouts))],
        })
    return rows


# --- statistics: pure functions on arrays (tests/test_frontier.py) --------------------------

def bootstrap_ratio(quantum: list[np.ndarray], classical: list[np.ndarray], draws: int = 2000,
                    seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(ratio, low, high): best-quantum / best-classical mean regret, min over each side's
    learners of their mean over trials, and its percentile bootstrap interval. Each learner's
    trials are resampled independently (learners have different trial counts), and the best
    learner of each side is picked again in every resample, so the selection is inside the
    interval. A side whose best mean is 0 gives ratio inf (0/0 -> nan)."""
    rng = np.random.default_rng(seed)

    def best(samples: list[np.ndarray]) -> np.ndarray:
        means = []
        for x in samples:
            x = np.asarray(x, dtype=float)
            idx = rng.integers(0, x.size, size=(draws, x.size))
            means.append(x[idx].mean(axis=1))
        return np.min(means, axis=0)

    with np.errstate(divide="ignore", invalid="ignore"):
        point = min(float(np.mean(x)) for x in quantum) / min(float(np.mean(x)) for x in classical)
        ratios = best(quantum) / best(classical)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(point), float(low), float(high)


def crossing(horizons: list[float], values: list[float]) -> float | None:
    """The first T at which ``values`` (positive, at increasing ``horizons``) goes from >= 1 to
    < 1, interpolated linearly in (log T, log value) between the two horizons around it; the
    first horizon if the first value is already below 1; None if no value is below 1."""
    t = np.log(np.asarray(horizons, dtype=float))
    v = np.log(np.asarray(values, dtype=float))
    for i, x in enumerate(v):
        if x < 0.0:
            if i == 0:
                return float(horizons[0])
            frac = v[i - 1] / (v[i - 1] - x)  # v[i-1] >= 0 > x
            return float(np.exp(t[i - 1] + frac * (t[i] - t[i - 1])))
    return None


def crossover(horizons: list[float], low: list[float], ratio: list[float], high: list[float]) -> dict:
    """Where best-quantum / best-classical crosses 1 (``crossing`` of each curve): ``at`` for the
    point ratio, ``from``..``to`` for the interval: the lower end crosses first (quantum may
    win from there), the upper end last (it wins for certain from there). None: no crossing
    within the grid; ``below_first``: the ratio's interval is below 1 already at the first T."""
    return {"from": crossing(horizons, low), "at": crossing(horizons, ratio), "to": crossing(horizons, high),
            "below_first": bool(high[0] < 1.0)}


def loglog_slope(horizons: np.ndarray, regret: np.ndarray) -> float:
    """Least-squares slope of log regret against log T (1: linear regret, 0: none added)."""
    x, y = np.log(np.asarray(horizons, dtype=float)), np.log(np.asarray(regret, dtype=float))
    return float(np.polyfit(x, y, 1)[0])


# --- the grid ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Grid:
    placements: tuple
    spreads: tuple
    horizons: tuple  # the T of the table, each read from a run of horizon >= T
    long_horizon: int | None  # T = 1e7 runs for the long cells (None: none)
    long_cells: tuple  # (placement, spread) with a long run
    learners: tuple
    trials: int
    trials_gp_ucb: int
    train_seeds: int
    tune_budget: int | None  # None: the cell's run horizon
    tune_cells: tuple | None  # None: every cell
    block: int
    scratch: str
    settings: tuple = ("theory", "tuned")
    long_learners: tuple | None = None  # labels with a long run (None: all)
    caps: tuple = ()  # (label, H): that learner's runs stop at H (its table ends there)
    tune_horizons: tuple = ()  # ((placement, spread), H): that cell's training horizon (--tune-cells CELL@H)


def run_horizon(grid: Grid) -> int:
    return max(grid.horizons)


def cell_horizons(grid: Grid, placement: str, spread: float, label: str | None = None) -> list[int]:
    """The run horizons of a cell (of one learner): max(T) for all, and the long one for the
    long cells (and the learners of ``--long-learners``)."""
    cap = dict(grid.caps).get(label, math.inf)
    out = [min(run_horizon(grid), cap)]
    if grid.long_horizon and (placement, spread) in grid.long_cells and grid.long_horizon <= cap and (
            label is None or grid.long_learners is None or label in grid.long_learners):
        out.append(grid.long_horizon)
    return out


def _jobs(grid: Grid, setting: str, placement: str, spread: float, learner: Learner, options: tuple,
          horizon: int, first: int, count: int) -> list[Job]:
    readouts = readout_points(horizon, [T for T in grid.horizons if T <= horizon] + [horizon])
    return [Job(setting, placement, spread, learner.label, learner.algorithm, learner.base + options, horizon, s,
                min(grid.block, first + count - s), readouts, grid.scratch)
            for s in range(first, first + count, grid.block)]


def eval_trials(grid: Grid, learner: Learner) -> int:
    return grid.trials_gp_ucb if learner.algorithm == "gp-ucb" else grid.trials


def evaluation_jobs(grid: Grid, setting: str, picks: dict) -> list[Job]:
    """Every cell x learner x run horizon on the evaluation seeds, with the theory
    configuration or the tuned pick (``picks[(placement, spread, label)]``)."""
    jobs = []
    for pl in grid.placements:
        for v in grid.spreads:
            for learner in grid.learners:
                if setting == "theory":
                    options = learner.theory
                elif (pl, v, learner.label) in picks:
                    options = picks[(pl, v, learner.label)]
                else:
                    continue
                for H in cell_horizons(grid, pl, v, learner.label):
                    jobs += _jobs(grid, setting, pl, v, learner, options, H, EVAL_SEEDS, eval_trials(grid, learner))
    return jobs


def tuned_cells(grid: Grid) -> list[tuple]:
    cells = [(pl, v) for pl in grid.placements for v in grid.spreads]
    return cells if grid.tune_cells is None else [c for c in cells if c in grid.tune_cells]


def tune_horizon(grid: Grid, placement: str, spread: float) -> int:
    """The horizon of a cell's training runs: its own (``--tune-cells CELL@H``), else
    ``--tune-budget``, else the run horizon."""
    return dict(grid.tune_horizons).get((placement, spread)) or grid.tune_budget or run_horizon(grid)


def training_jobs(grid: Grid) -> list[Job]:
    """Every configuration of every learner with more than one, on the training seeds."""
    jobs = []
    for pl, v in tuned_cells(grid):
        for learner in grid.learners:
            if len(learner.grid) > 1:
                H = min(tune_horizon(grid, pl, v), dict(grid.caps).get(learner.label, math.inf))
                for options in learner.grid:
                    jobs += _jobs(grid, "train", pl, v, learner, options, H, TRAIN_SEEDS, grid.train_seeds)
    return jobs


def pick_configurations(grid: Grid, rows: list[dict]) -> tuple[dict, list[dict]]:
    """Each learner's configuration with the lowest mean final regret on the training seeds
    (the first in grid order on a tie); a learner with one configuration takes it untuned."""
    picks, table = {}, []
    for pl, v in tuned_cells(grid):
        for learner in grid.learners:
            if len(learner.grid) <= 1:
                picks[(pl, v, learner.label)] = learner.grid[0] if learner.grid else learner.theory
                continue
            scores = []
            for options in learner.grid:
                label = options_label(learner.base + options)
                mine = [r for r in rows if r["setting"] == "train" and r["placement"] == pl and r["spread"] == v
                        and r["learner"] == learner.label and r["config"] == label]
                finals = [r["regret"][-1] for r in mine]
                mean, se = mean_stderr(finals)
                scores.append((mean, options))
                table.append({"placement": pl, "spread": v, "learner": learner.label, "config": label,
                              "horizon": mine[0]["horizon"] if mine else None, "n": len(finals), "mean": mean, "se": se})
            best = min(range(len(scores)), key=lambda i: (scores[i][0], i))
            picks[(pl, v, learner.label)] = scores[best][1]
            for row in table[-len(scores):]:
                row["picked"] = row["config"] == options_label(learner.base + scores[best][1])
    return picks, table


def _longest_first(jobs: list[Job], learners: tuple) -> list[Job]:
    quantum = {learner.label: learner.quantum for learner in learners}
    return sorted(jobs, key=lambda j: (-j.horizon, quantum[j.learner], -j.count))


def job_id(job: Job) -> str:
    """``Job.key`` as one JSON string (the key of the job journal)."""
    return json.dumps(job.key)  # tuples become lists


def run_jobs(jobs: list[Job], workers: int, learners: tuple, cache: dict, journal: Path | None = None) -> list[dict]:
    """Run the jobs not in ``cache`` (by ``job_id``), longest first, on ``workers`` local Dask
    workers (one cluster for all of them), fill the cache, and return every job's rows with its
    own setting. With ``journal``, each job is appended to it (fsync) as soon as it finishes,
    so a grid killed or cut off at any point resumes from every job that had finished
    (``section_frontier`` reads the journal back and removes it once the outputs are written)."""
    todo = _longest_first([j for j in {job_id(j): j for j in jobs if job_id(j) not in cache}.values()], learners)
    start, done = time.perf_counter(), 0
    for job, rows in run_streamed(run_job, todo, workers):
        cache[job_id(job)] = rows
        done += 1
        if journal is not None:
            append_line(journal, {"job": job_id(job), "rows": rows}, fsync=True)
            print(f"frontier: {done}/{len(todo)} jobs run, {time.perf_counter() - start:.0f} s "
                  f"(last: {job.setting} {job.placement} {job.spread:g} {job.learner} T={job.horizon:.0e})", flush=True)
    return [dict(r, setting=j.setting, placement=j.placement) for j in jobs for r in cache[job_id(j)]]


def run_streamed(fn, jobs: list, workers: int):
    """``(job, fn(job))`` for every job as each finishes: in this process (``workers <= 1``, in
    order), or on a local Dask cluster of ``workers`` single-threaded processes forked from
    this one (as ``qbo.experiments.fanout`` starts them), submitted in order. Unlike
    ``fanout.fan_out``, which returns when every job is done, a finished job is handed back at
    once, so the caller can journal it before the rest finish."""
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            yield job, fn(job)
        return
    import dask  # Dask only where workers are asked for (qbo's optional extra)
    from distributed import Client, LocalCluster, as_completed

    method = "fork" if sys.platform == "linux" else dask.config.get("distributed.worker.multiprocessing-method")
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        # dashboard ":0": any free port (None still binds :8787 with distributed 2026.8 and warns if taken)
        cluster = LocalCluster(n_workers=min(workers, len(jobs)), threads_per_worker=1, processes=True,
                               dashboard_address=":0", memory_limit=0, silence_logs=logging.ERROR)
    with cluster, Client(cluster) as client:
        futures = {client.submit(fn, job, pure=False): job for job in jobs}
        for future in as_completed(futures):
            yield futures[future], future.result()


# --- tables --------------------------------------------------------------------------------

def cell_rows(grid: Grid, rows: list[dict]) -> list[dict]:
    """Mean, s.e. and median of the regret at each T of the table, per setting x cell x learner;
    T is read from the cell's shortest run horizon >= T."""
    out = []
    for setting in grid.settings:
        for pl in grid.placements:
            for v in grid.spreads:
                for T in sorted(set(grid.horizons) | set(cell_horizons(grid, pl, v))):
                    for learner in grid.learners:
                        Hs = [h for h in cell_horizons(grid, pl, v, learner.label) if h >= T]
                        mine = [r for r in rows if r["setting"] == setting and r["placement"] == pl and r["spread"] == v
                                and r["learner"] == learner.label and Hs and r["horizon"] == min(Hs)]
                        if not mine:
                            continue
                        values = [r["regret"][r["points"].index(T)] for r in mine]
                        mean, se = mean_stderr(values)
                        out.append({"setting": setting, "placement": pl, "spread": v, "T": T, "learner": learner.label,
                                    "quantum": learner.quantum, "config": mine[0]["config"], "n": len(values),
                                    "mean": mean, "se": se, "median": float(np.median(values)),
                                    "values": values, "wall_s": float(np.sum([r["wall_s"] for r in mine]))})
    return out


def ratio_rows(cells: list[dict], draws: int) -> list[dict]:
    """best-quantum / best-classical with its bootstrap interval per setting x cell x T."""
    out = []
    keys = sorted({(c["setting"], c["placement"], c["spread"], c["T"]) for c in cells},
                  key=lambda k: (k[0], k[1], -k[2], k[3]))
    for key in keys:
        group = [c for c in cells if (c["setting"], c["placement"], c["spread"], c["T"]) == key]
        q = [c for c in group if c["quantum"]]
        k = [c for c in group if not c["quantum"]]
        if not q or not k:
            continue
        ratio, low, high = bootstrap_ratio([np.array(c["values"]) for c in q], [np.array(c["values"]) for c in k],
                                           draws=draws)
        out.append({"setting": key[0], "placement": key[1], "spread": key[2], "T": key[3],
                    "best_quantum": min(q, key=lambda c: c["mean"])["learner"],
                    "best_classical": min(k, key=lambda c: c["mean"])["learner"],
                    "ratio": ratio, "low": low, "high": high, "compared": f"{len(q)}q/{len(k)}c"})
    return out


def crossover_rows(ratios: list[dict]) -> list[dict]:
    out = []
    for key in sorted({(r["setting"], r["placement"], r["spread"]) for r in ratios}, key=lambda k: (k[0], k[1], -k[2])):
        mine = sorted((r for r in ratios if (r["setting"], r["placement"], r["spread"]) == key), key=lambda r: r["T"])
        cross = crossover([r["T"] for r in mine], [r["low"] for r in mine], [r["ratio"] for r in mine],
                          [r["high"] for r in mine])
        out.append({"setting": key[0], "placement": key[1], "spread": key[2]} | cross)
    return out


def slope_rows(grid: Grid, rows: list[dict]) -> list[dict]:
    """Log-log slope of the mean regret over the last decade of each run horizon (ten points)."""
    out = []
    groups: dict = {}
    for r in rows:
        if r["setting"] in grid.settings:
            groups.setdefault((r["setting"], r["placement"], r["spread"], r["learner"], r["horizon"]), []).append(r)
    for (setting, pl, v, label, H), mine in groups.items():
        points = np.array(mine[0]["points"], dtype=float)
        window = points >= H / 10.0
        mean = np.mean([r["regret"] for r in mine], axis=0)[window]
        if window.sum() < 2 or np.any(mean <= 0):
            continue
        out.append({"setting": setting, "placement": pl, "spread": v, "learner": label, "horizon": H,
                    "from": float(points[window][0]), "slope": loglog_slope(points[window], mean)})
    return sorted(out, key=lambda r: (r["setting"], r["placement"], -r["spread"], r["horizon"], r["learner"]))


def _fmt_T(T: float | None) -> str:
    return "-" if T is None else f"{T:.2g}"


def time_table(rows: list[dict]) -> str:
    """CPU seconds per learner-trial, by learner and run horizon (for the time model)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["learner"], r["horizon"], r["placement"], r["spread"]), []).append(r["cpu_s"])
    lines = ["", "CPU s per learner-trial (mean over trials and configurations)",
             f"| {'learner':16s} | {'run T':>8s} | {'cell':18s} | {'n':>3s} | {'CPU s':>9s} |"]
    for (label, H, pl, v), values in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2], -kv[0][3])):
        lines.append(f"| {label:16s} | {H:8.0e} | {pl:7s} {v:<10g} | {len(values):3d} | {np.mean(values):9.2f} |")
    return "\n".join(lines)


def print_tables(cells: list[dict], ratios: list[dict], crossings: list[dict], slopes: list[dict],
                 tuning: list[dict]) -> str:
    lines = []
    if tuning:
        lines += ["", "Tuning (training seeds): mean final regret per configuration (* = picked)",
                  f"| {'cell':18s} | {'learner':16s} | {'configuration':52s} | {'run T':>8s} | {'n':>3s} | "
                  f"{'mean ± s.e.':>22s} |"]
        for t in tuning:
            lines.append(f"| {t['placement']:7s} {t['spread']:<10g} | {t['learner']:16s} | "
                         f"{('* ' if t['picked'] else '  ') + t['config']:52s} | {t['horizon'] or 0:8.0e} | {t['n']:3d} | "
                         f"{t['mean']:10.1f} ± {t['se']:9.1f} |")
    lines += ["", "Regret at T (evaluation seeds): mean ± s.e., median",
              f"| {'setting':7s} | {'cell':18s} | {'T':>8s} | {'learner':16s} | {'configuration':48s} | {'n':>3s} | "
              f"{'mean ± s.e.':>22s} | {'median':>10s} |"]
    for c in cells:
        lines.append(f"| {c['setting']:7s} | {c['placement']:7s} {c['spread']:<10g} | {c['T']:8.0e} | "
                     f"{c['learner']:16s} | {c['config']:48.48s} | {c['n']:3d} | {c['mean']:10.1f} ± {c['se']:9.1f} | "
                     f"{c['median']:10.1f} |")
    lines += ["", "best quantum / best classical (bootstrap 95% interval)",
              f"| {'setting':7s} | {'cell':18s} | {'T':>8s} | {'ratio':>6s} | {'95% interval':>17s} | "
              f"{'best quantum':16s} | {'best classical':16s} | learners |"]
    for r in ratios:
        lines.append(f"| {r['setting']:7s} | {r['placement']:7s} {r['spread']:<10g} | {r['T']:8.0e} | "
                     f"{r['ratio']:6.3f} | [{r['low']:6.3f}, {r['high']:6.3f}] | {r['best_quantum']:16s} | "
                     f"{r['best_classical']:16s} | {r['compared']:8s} |")
    lines += ["", "Crossover T (ratio = 1): point ratio; interval from lower end to upper end crossing",
              f"| {'setting':7s} | {'cell':18s} | {'at':>8s} | {'from':>8s} | {'to':>8s} | below 1 at the first T |"]
    for x in crossings:
        lines.append(f"| {x['setting']:7s} | {x['placement']:7s} {x['spread']:<10g} | {_fmt_T(x['at']):>8s} | "
                     f"{_fmt_T(x['from']):>8s} | {_fmt_T(x['to']):>8s} | {str(x['below_first']):21s} |")
    lines += ["", "Log-log regret slope over the last decade of each run",
              f"| {'setting':7s} | {'cell':18s} | {'run T':>8s} | {'learner':16s} | {'slope':>6s} |"]
    for s in slopes:
        lines.append(f"| {s['setting']:7s} | {s['placement']:7s} {s['spread']:<10g} | {s['horizon']:8.0e} | "
                     f"{s['learner']:16s} | {s['slope']:6.3f} |")
    text = "\n".join(lines)
    print(text, flush=True)
    return text


def ratio_figure(ratios: list[dict], path: Path) -> None:
    """Ratio vs T (log-log), one line per spread, band = bootstrap interval; a panel per
    setting x placement."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    settings = sorted({r["setting"] for r in ratios}, key=lambda k: k != "theory")
    placements = sorted({r["placement"] for r in ratios})
    colours = {v: f"C{i}" for i, v in enumerate(sorted({r["spread"] for r in ratios}, reverse=True))}  # one per spread
    fig, axes = plt.subplots(len(settings), len(placements), figsize=(5.0 * len(placements), 3.6 * len(settings)),
                             squeeze=False, sharey=True)
    for (i, setting), (j, pl) in [(a, b) for a in enumerate(settings) for b in enumerate(placements)]:
        ax = axes[i][j]
        spreads = sorted({r["spread"] for r in ratios if (r["setting"], r["placement"]) == (setting, pl)}, reverse=True)
        for v in spreads:
            mine = sorted((r for r in ratios if (r["setting"], r["placement"], r["spread"]) == (setting, pl, v)),
                          key=lambda r: r["T"])
            T = [r["T"] for r in mine]
            ax.plot(T, [r["ratio"] for r in mine], marker="o", ms=3, color=colours[v], label=f"spread {v:g}")
            ax.fill_between(T, [r["low"] for r in mine], [r["high"] for r in mine], color=colours[v], alpha=0.18)
        if not spreads:
            ax.text(0.5, 0.5, "not run", transform=ax.transAxes, ha="center", va="center", color="0.4")
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}" if f"{y:.1g}"[0] in "25" else ""))
        ax.set_title(f"{setting}, {pl}", fontsize=10)
        ax.set_xlabel("T (oracle calls)")
        ax.grid(True, which="both", alpha=0.25)
    for row in axes:
        row[0].set_ylabel("best quantum / best classical regret")
    for row in axes:
        for ax in row:
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    write_bytes_atomic(path, buffer.getvalue())


def _csv(rows: list[dict], columns: list[str]) -> str:
    out = [",".join(columns)]
    for r in rows:
        out.append(",".join("" if r.get(c) is None else (f"{r[c]:.6g}" if isinstance(r[c], float) else str(r[c]))
                            for c in columns))
    return "\n".join(out) + "\n"


def write_outputs(out: Path, prefix: str, rows: list[dict], cells: list[dict], ratios: list[dict],
                  crossings: list[dict], slopes: list[dict], tuning: list[dict], text: str, meta: dict) -> list[Path]:
    """JSONL of every learner-trial, CSVs of the tables, the printed text; atomic writes."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        f"{prefix}_runs.jsonl": "".join(json.dumps(r) + "\n" for r in rows),
        f"{prefix}_cells.csv": _csv(cells, ["setting", "placement", "spread", "T", "learner", "quantum", "config", "n",
                                            "mean", "se", "median", "wall_s"]),
        f"{prefix}_ratio.csv": _csv(ratios, ["setting", "placement", "spread", "T", "ratio", "low", "high",
                                             "best_quantum", "best_classical", "compared"]),
        f"{prefix}_crossover.csv": _csv(crossings, ["setting", "placement", "spread", "at", "from", "to",
                                                    "below_first"]),
        f"{prefix}_slopes.csv": _csv(slopes, ["setting", "placement", "spread", "learner", "horizon", "from", "slope"]),
        f"{prefix}_tuning.csv": _csv(tuning, ["placement", "spread", "learner", "config", "horizon", "n", "mean", "se",
                                              "picked"]),
        f"{prefix}.txt": "\n".join(f"{k}: {v}" for k, v in meta.items()) + "\n" + text + "\n",
    }
    written = []
    for name, content in files.items():
        written.append(write_text_atomic(out / name, content))
    return written


def check_frontier_args(args) -> None:
    """One-line ValueError naming a bad frontier option (exit 2 in ``main``), before any run."""
    if "frontier" not in args.section.split(","):
        return

    def numbers(name: str, text: str, low: float, high: float = math.inf) -> list[float]:
        try:
            values = [float(v) for v in text.split(",")]
        except ValueError:
            raise ValueError(f"--{name} must be comma-separated numbers, got {text!r}") from None
        if not values or any(not low <= v <= high for v in values):
            raise ValueError(f"--{name} values must lie in [{low:g}, {high:g}], got {text!r}")
        return values

    for placement in args.placements.split(","):
        if placement not in PLACEMENT_PROBLEMS:
            raise ValueError(f"--placements: unknown placement {placement!r}, expected {', '.join(PLACEMENT_PROBLEMS)}")
    numbers("spreads", args.spreads, 1e-9, 1.0)
    numbers("budgets", args.budgets, 1.0)
    if args.long_budget not in (None, "none", "0"):
        numbers("long-budget", args.long_budget, 1.0)
    if args.tune_budget is not None:
        numbers("tune-budget", args.tune_budget, 1.0)
    for name in ("trials", "trials_gp_ucb", "train_seeds", "block", "workers"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if args.bootstrap < 100:
        raise ValueError(f"--bootstrap must be >= 100, got {args.bootstrap}")
    settings = args.settings.split(",")
    if not settings or any(s not in ("theory", "tuned") for s in settings):
        raise ValueError(f"--settings must be theory, tuned or both, got {args.settings!r}")
    labels = {learner.label for learner in LEARNERS}
    for option, text in (("algorithms", args.algorithms), ("long-learners", args.long_learners)):
        for label in ([] if text in (None, "all") else text.split(",")):
            if label not in labels and label != "none":
                raise ValueError(f"--{option}: unknown learner {label!r}, expected some of {', '.join(sorted(labels))}")
    for cap in args.cap:
        label, _, horizon = cap.rpartition("=")
        if label not in labels:
            raise ValueError(f"--cap: expected LABEL=H with a learner label, got {cap!r}")
        numbers("cap", horizon, 1.0)
    if args.tune_cells != "all":
        for cell in args.tune_cells.split(","):
            placement, _, rest = cell.partition(":")
            spread, at, horizon = rest.partition("@")
            if placement not in PLACEMENT_PROBLEMS or not spread or (at and not horizon):
                raise ValueError(f"--tune-cells: expected PLACEMENT:SPREAD[@H] (e.g. centred:0.01@1e5), got {cell!r}")
            numbers("tune-cells", spread, 1e-9, 1.0)
            if horizon:
                numbers("tune-cells", horizon, 1.0)
    for text in args.variant:
        name, _ = parse_variant(text)
        try:
            is_quantum(name)
        except ValueError as exc:
            raise ValueError(f"--variant {text!r}: {exc}") from None


def frontier_grid(args) -> Grid:
    """The grid from the command line (``--quick``: a tiny one, seconds, for tests)."""
    labels = None if args.algorithms is None else set(args.algorithms.split(","))
    learners = tuple(learner for learner in LEARNERS if labels is None or learner.label in labels)
    for text in args.variant:
        name, options = parse_variant(text)
        learners += (Learner(f"{name} {options_label(options)}", name, options, (options,), is_quantum(name)),)
    if args.quick:
        keep = {"thompson", "q-ucb-halve"}
        learners = tuple(replace(learner, grid=learner.grid[:2]) for learner in learners if learner.label in keep)
        return Grid(("centred",), (0.01,), (100, 500), None, (), learners, 2, 2, 2, None, None, 2, args.scratch)
    horizons = tuple(sorted(int(float(b)) for b in args.budgets.split(",")))
    spreads = tuple(float(v) for v in args.spreads.split(","))
    long_cells = tuple(("centred", v) for v in spreads if v <= 0.01)
    long_h = None if args.long_budget in (None, "none", "0") else int(float(args.long_budget))
    tune_cells, tune_horizons = None, ()
    if args.tune_cells != "all":
        parsed = [(c.split(":")[0], *c.split(":")[1].partition("@")[::2]) for c in args.tune_cells.split(",")]
        tune_cells = tuple((pl, float(v)) for pl, v, _ in parsed)
        tune_horizons = tuple(((pl, float(v)), int(float(h))) for pl, v, h in parsed if h)
    tune_budget = None if args.tune_budget is None else int(float(args.tune_budget))
    settings = tuple(args.settings.split(","))
    long_learners = None if args.long_learners == "all" else tuple(args.long_learners.split(","))
    caps = tuple((c.rpartition("=")[0], int(float(c.rpartition("=")[2]))) for c in args.cap)
    return Grid(tuple(args.placements.split(",")), spreads, horizons, long_h, long_cells, learners, args.trials,
                args.trials_gp_ucb, args.train_seeds, tune_budget, tune_cells, args.block, args.scratch, settings,
                long_learners, caps, tune_horizons)


def section_frontier(args) -> None:
    """The frontier of docs/frontier.md: tune on training seeds, evaluate both settings on the
    evaluation seeds, tables, ratio intervals, crossovers, slopes, figure."""
    scratch = args.scratch or tempfile.mkdtemp(prefix="qbo-frontier-")
    try:
        _frontier(argparse.Namespace(**(vars(args) | {"scratch": scratch})))
    finally:
        if args.scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)


def plan_table(grid: Grid) -> str:
    """Learner-trials and calls the grid will run, per stage x learner x run horizon (the tuned
    evaluation counted in full, before any reuse of theory runs): the time model's input."""
    counts: dict = {}
    jobs = training_jobs(grid) if "tuned" in grid.settings else []
    for setting in grid.settings:
        tuned = {(pl, v, learner.label): learner.grid[0] for pl, v in tuned_cells(grid) for learner in grid.learners}
        jobs += evaluation_jobs(grid, setting, tuned)
    for j in jobs:
        counts[(j.setting, j.learner, j.horizon)] = counts.get((j.setting, j.learner, j.horizon), 0) + j.count
    lines = ["", f"| {'stage':7s} | {'learner':16s} | {'run T':>8s} | {'trials':>6s} | {'calls':>9s} |"]
    for (setting, label, H), n in sorted(counts.items(), key=lambda kv: (kv[0][0] != "train", kv[0][0], kv[0][1], kv[0][2])):
        lines.append(f"| {setting:7s} | {label:16s} | {H:8.0e} | {n:6d} | {n * H:9.2e} |")
    lines.append(f"jobs: {len(jobs)}")
    return "\n".join(lines)


def _frontier(args) -> None:
    grid = frontier_grid(args)
    if args.plan:
        print(plan_table(grid))
        return
    for learner in grid.learners:
        if len(learner.grid) > MAX_CONFIGS:
            raise SystemExit(f"learner {learner.label} has {len(learner.grid)} configurations, the protocol allows {MAX_CONFIGS}")
    start = time.perf_counter()
    prefix = "frontier_quick" if args.quick else args.prefix
    journal = Path(args.out) / f"{prefix}_jobs.partial.jsonl"
    if args.fresh and journal.exists():
        journal.unlink()
    cache = {line["job"]: line["rows"] for line in read_lines(journal)} if journal.exists() else {}
    if cache:
        print(f"frontier: {len(cache)} jobs done before, read from {journal}", flush=True)
    tuned = "tuned" in grid.settings
    first = (training_jobs(grid) if tuned else []) + (evaluation_jobs(grid, "theory", {}) if "theory" in grid.settings else [])
    print(f"frontier: {len(first)} jobs (training + theory), workers {args.workers}", flush=True)
    rows = run_jobs(first, args.workers, grid.learners, cache, journal)
    picks, tuning = pick_configurations(grid, rows) if tuned else ({}, [])
    if tuned:
        second = evaluation_jobs(grid, "tuned", picks)
        print(f"frontier: {len(second)} tuned evaluation jobs ({sum(job_id(j) not in cache for j in second)} new)", flush=True)
        rows += run_jobs(second, args.workers, grid.learners, cache, journal)
    wall = time.perf_counter() - start
    evaluation = [r for r in rows if r["setting"] != "train"]
    cells = cell_rows(grid, evaluation)
    ratios = ratio_rows(cells, args.bootstrap)
    crossings = crossover_rows(ratios)
    slopes = slope_rows(grid, evaluation)
    text = print_tables(cells, ratios, crossings, slopes, tuning)
    cpu = sum(r["cpu_s"] for r in rows)
    meta = {"command": "python bench/regret.py " + " ".join(sys.argv[1:]), "wall_s": round(wall, 1),
            "cpu_s_of_runs": round(cpu, 1), "workers": args.workers}
    timing = f"\nwall {wall:.1f} s on {args.workers} workers; CPU s of the runs {cpu:.1f}\n" + time_table(rows)
    print(timing, flush=True)
    text += "\n" + timing
    for path in write_outputs(Path(args.out), prefix, rows, cells, ratios, crossings, slopes, tuning, text, meta):
        print(f"wrote {path}")
    figure = Path(args.figure) if args.figure else Path(args.out) / f"{prefix}.png"
    if ratios:
        ratio_figure(ratios, figure)
        print(f"wrote {figure}")
    if not args.keep_journal:
        journal.unlink(missing_ok=True)  # every job's rows are in PREFIX_runs.jsonl now


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The frontier's options (``bench/regret.py --section frontier``)."""
    frontier = parser.add_argument_group("frontier (docs/frontier.md)")
    frontier.add_argument("--quick", action="store_true", help="a tiny grid (seconds), for tests")
    frontier.add_argument("--fresh", action="store_true", help="ignore the job journal of a killed grid (start over)")
    frontier.add_argument("--keep-journal", action="store_true",
                          help="keep the job journal after the outputs are written (a larger grid reuses its jobs)")
    frontier.add_argument("--plan", action="store_true", help="print the learner-trials and calls to run, run nothing")
    frontier.add_argument("--settings", default="theory,tuned")
    frontier.add_argument("--long-budget", default="1e7", help="the long run of the centred spreads <= 0.01 ('none': skip)")
    frontier.add_argument("--long-learners", default="all", help="learners (labels) with the long run (default all)")
    frontier.add_argument("--cap", action="append", default=[],
                          help="LABEL=H: that learner's runs stop at H, its table ends there (repeatable)")
    frontier.add_argument("--trials-gp-ucb", type=int, default=40)
    frontier.add_argument("--train-seeds", type=int, default=10)
    frontier.add_argument("--tune-budget", default=None, help="horizon of the training runs (default: max --budgets)")
    frontier.add_argument("--tune-cells", default="all", help="'all' or PLACEMENT:SPREAD[@H],... tuned (others: theory only); @H: that cell's training horizon")
    frontier.add_argument("--block", type=int, default=10, help="trials per job (one run folder)")
    frontier.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples of the ratio")
    frontier.add_argument("--out", default="bench/results")
    frontier.add_argument("--prefix", default="frontier")
    frontier.add_argument("--figure", default=None, help="the PNG (default OUT/PREFIX.png)")
    frontier.add_argument("--scratch", default=None, help="where run folders live while a job runs (default: a temp dir)")
