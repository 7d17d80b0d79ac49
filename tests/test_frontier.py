"""bench/regret.py --section frontier (bench/frontier.py, docs/frontier.md): the statistics on synthetic data with
known answers, the read-out of anytime regret from records, the protocol's grid, and a tiny
end-to-end grid (``--quick``) whose files are checked for structure."""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.problems.registry import make_problem
from tests.support.bench import BENCH


def _load_regret():
    """bench/regret.py as a module registered in ``sys.modules`` (``tests.support.bench.bench_module``
    does not register); it imports bench/frontier.py as ``frontier``."""
    spec = importlib.util.spec_from_file_location("bench_regret_frontier", BENCH / "regret.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench_regret = _load_regret()
frontier = sys.modules["frontier"]  # the module bench/regret.py runs the section from


# --- regret read-out from records --------------------------------------------------------

def test_regret_at_is_exact_within_a_stage():
    """Stages of 10, 30 and 60 calls at per-call regrets 0.5, 0.1, 0: the cumulative regret
    after any number of calls is the sum of whole stages plus the partial one."""
    calls = np.array([10, 40, 100])
    cum = np.array([5.0, 8.0, 8.0])
    got = frontier.regret_at(calls, cum, np.array([0, 4, 10, 25, 40, 70, 100, 150]))
    assert got.tolist() == pytest.approx([0.0, 2.0, 5.0, 6.5, 8.0, 8.0, 8.0, 8.0])


def test_readout_points_hold_the_table_horizons_and_compact_checkpoints():
    points = frontier.readout_points(10**6, [10**4, 10**5, 10**6])
    assert {10**4, 10**5, 10**6} <= set(points)
    assert points == tuple(sorted(points)) and points[-1] == 10**6
    # ten a decade, each floor(10^(k/100)) for k a multiple of 10 (a compact unit's checkpoints)
    assert sum(1 for p in points if 10**5 < p <= 10**6) == 10
    assert all(p == math.floor(10 ** (round(100 * math.log10(p)) / 100) + 1e-9) for p in points)


# --- the statistics ------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.05, 1.5), c=st.floats(1e-3, 1e3), lo=st.integers(1, 3), span=st.integers(1, 4))
def test_loglog_slope_recovers_a_power_law(a, c, lo, span):
    T = np.logspace(lo, lo + span, 10 * span + 1)
    assert frontier.loglog_slope(T, c * T**a) == pytest.approx(a, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(star=st.floats(1.5, 5.5), s=st.floats(0.05, 2.0))
def test_crossing_of_a_power_law_is_its_root(star, s):
    """ratio(T) = (T / T*)^-s crosses 1 at T* exactly (log-log interpolation is exact on it)."""
    T = np.logspace(1, 6, 11)
    T_star = 10**star
    got = frontier.crossing(list(T), list((T / T_star) ** (-s)))
    assert got == pytest.approx(T_star, rel=1e-9)


def test_crossing_edges():
    assert frontier.crossing([1e4, 1e5, 1e6], [2.0, 1.5, 1.1]) is None
    assert frontier.crossing([1e4, 1e5, 1e6], [0.9, 0.5, 0.4]) == 1e4
    assert frontier.crossing([1e4, 1e5], [1.0, 0.1]) == pytest.approx(1e4)  # at 1: crossed at the left end
    cross = frontier.crossover([1e4, 1e5, 1e6], [0.8, 0.5, 0.2], [1.2, 0.7, 0.3], [2.0, 1.0 + 1e-12, 0.5])
    assert cross["from"] < cross["at"] < cross["to"] and not cross["below_first"]


def test_bootstrap_of_constant_samples_is_the_exact_ratio():
    q = [np.full(20, 30.0), np.full(20, 50.0)]
    k = [np.full(40, 100.0), np.full(20, 60.0)]
    assert frontier.bootstrap_ratio(q, k, draws=500) == pytest.approx((0.5, 0.5, 0.5))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), scale=st.floats(1e-3, 1e3))
def test_bootstrap_is_scale_invariant_and_brackets_the_ratio(seed, scale):
    rng = np.random.default_rng(seed)
    q = [rng.gamma(2.0, 10.0, 20), rng.gamma(2.0, 12.0, 20)]
    k = [rng.gamma(2.0, 20.0, 40), rng.gamma(2.0, 25.0, 20)]
    base = frontier.bootstrap_ratio(q, k, draws=400, seed=3)
    scaled = frontier.bootstrap_ratio([scale * x for x in q], [scale * x for x in k], draws=400, seed=3)
    assert scaled == pytest.approx(base, rel=1e-9)
    ratio, low, high = base
    assert low <= high and low < ratio * 1.5 and high > ratio / 1.5


def test_bootstrap_interval_covers_a_known_ratio():
    """Exponential regrets with means 30 (quantum) and 60 (classical): the true ratio 0.5 lies
    in the 95% interval in at least 85 of 100 seeded repetitions (binomial(100, 0.95) falls
    below 86 with probability < 1e-4; the percentile interval of a ratio is slightly
    anti-conservative at n = 20, which this margin absorbs)."""
    covered = 0
    for rep in range(100):
        rng = np.random.default_rng(1000 + rep)
        _, low, high = frontier.bootstrap_ratio([rng.exponential(30.0, 20)], [rng.exponential(60.0, 40)], draws=400,
                                              seed=rep)
        covered += low <= 0.5 <= high
    assert covered >= 85


# --- the protocol --------------------------------------------------------------------------

def test_protocol_grid_budget_and_symmetry():
    """<= 8 configurations a learner; every confidence of the theory setting is 1/T."""
    labels = [learner.label for learner in frontier.LEARNERS]
    assert labels == ["thompson", "kl-ucb", "gp-ucb", "gp-ts", "q-gp-ucb", "q-gp-ucb resume", "q-ucb-halve", "q-se"]
    for learner in frontier.LEARNERS:
        assert 1 <= len(learner.grid) <= frontier.MAX_CONFIGS
        assert len(set(learner.grid)) == len(learner.grid)
        theory = dict(learner.theory)
        if "delta" in theory:
            assert theory["delta"] == frontier.ONE_OVER_T
    assert dict(frontier.LEARNERS[1].theory) == {"c": 3.0}  # KL-UCB: log t + 3 log log t
    assert frontier.resolve_options((("delta", frontier.ONE_OVER_T), ("beta", 2.0)), 10**6) == {"delta": 1e-6, "beta": 2.0}


def run_main(args: list[str]) -> None:
    sys_argv, sys.argv = sys.argv, ["regret.py", *args]
    try:
        bench_regret.main()
    finally:
        sys.argv = sys_argv


@pytest.mark.parametrize("bad, named", [(["--spreads", "0.01,abc"], "--spreads"), (["--placements", "middle"], "--placements"),
                                        (["--algorithms", "ucb9"], "--algorithms"), (["--tune-cells", "centred"], "--tune-cells"),
                                        (["--block", "0"], "--block"), (["--tune-cells", "centred:0.01@"], "--tune-cells"),
                                        (["--tune-cells", "top:0.01@0"], "--tune-cells")])
def test_bad_frontier_option_is_one_line_exit_2(tmp_path, capsys, bad, named):
    with pytest.raises(SystemExit) as exit_:
        run_main(["--section", "frontier", *bad, "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and named in err
    assert not (tmp_path / "o").exists()


# --- a tiny grid end to end ------------------------------------------------------------------

def test_quick_grid_writes_every_output(tmp_path, capsys):
    """The tiny grid end to end, resumed from a job journal holding one (made-up) finished job:
    its rows are used as they are, the others run; ``--keep-journal`` keeps the journal, so a
    second run reads every job from it and writes the same tables, and then removes it."""
    out = tmp_path / "out"
    grid = frontier.frontier_grid(regret_args(["--quick"]))
    done = next(j for j in frontier.evaluation_jobs(grid, "theory", {}) if j.learner == "thompson")
    made_up = [{"setting": "theory", "placement": done.placement, "spread": done.spread, "learner": done.learner,
                "algorithm": done.algorithm, "config": "-", "horizon": done.horizon, "seed": done.first + i,
                "stages": 1, "calls": done.horizon, "wall_s": 0.0, "cpu_s": 0.0, "points": list(done.readouts),
                "regret": [0.001 * p * (i + 1) for p in done.readouts]} for i in range(done.count)]
    journal = out / "frontier_quick_jobs.partial.jsonl"
    out.mkdir()
    journal.write_text(json.dumps({"job": frontier.job_id(done), "rows": made_up}) + "\n")
    args = ["--section", "frontier", "--quick", "--workers", "1", "--out", str(out), "--bootstrap", "200"]
    run_main(args + ["--keep-journal"])
    printed = capsys.readouterr().out
    assert "1 jobs done before" in printed and journal.exists()
    jobs = len(journal.read_text().splitlines())
    first = {name: (out / f"frontier_quick{name}").read_text() for name in ("_ratio.csv", "_tuning.csv", "_runs.jsonl")}
    run_main(args)
    assert f"{jobs} jobs done before" in capsys.readouterr().out and not journal.exists()
    assert {name: (out / f"frontier_quick{name}").read_text() for name in first} == first
    assert "best quantum / best classical" in printed and "Crossover T" in printed
    names = {p.name for p in out.iterdir()}
    assert names == {f"frontier_quick{s}" for s in ("_runs.jsonl", "_cells.csv", "_ratio.csv", "_crossover.csv",
                                                  "_slopes.csv", "_tuning.csv", ".txt", ".png")}
    rows = [json.loads(line) for line in (out / "frontier_quick_runs.jsonl").read_text().splitlines()]
    assert [r for r in rows if r["setting"] == "theory" and r["learner"] == "thompson"] == made_up
    evaluation = [r for r in rows if r["setting"] != "train"]
    assert {r["setting"] for r in rows} == {"train", "theory", "tuned"}
    assert {r["seed"] for r in evaluation} == {100, 101}
    assert {r["seed"] for r in rows if r["setting"] == "train"} == {0, 1}
    for r in rows:  # the regret at the run's horizon is the run's final regret, and it never decreases
        assert r["points"][-1] == r["horizon"] == r["calls"]
        assert all(b >= a - 1e-9 for a, b in zip(r["regret"], r["regret"][1:]))
    cells = list(csv.DictReader((out / "frontier_quick_cells.csv").open()))
    assert {(c["setting"], int(c["T"])) for c in cells} == {(s, T) for s in ("theory", "tuned") for T in grid.horizons}
    for c in cells:  # mean and median recomputed from the per-trial rows
        mine = [r["regret"][r["points"].index(int(c["T"]))] for r in evaluation
                if r["setting"] == c["setting"] and r["learner"] == c["learner"]]
        assert float(c["mean"]) == pytest.approx(np.mean(mine), rel=1e-5)
        assert float(c["median"]) == pytest.approx(np.median(mine), rel=1e-5)
    ratios = list(csv.DictReader((out / "frontier_quick_ratio.csv").open()))
    assert len(ratios) == 2 * len(grid.horizons)
    for r in ratios:
        assert float(r["low"]) <= float(r["high"])
        mine = [c for c in cells if c["setting"] == r["setting"] and c["T"] == r["T"]]
        q = min(float(c["mean"]) for c in mine if c["quantum"] == "True")
        k = min(float(c["mean"]) for c in mine if c["quantum"] == "False")
        assert float(r["ratio"]) == pytest.approx(q / k, rel=1e-4)
    tuning = list(csv.DictReader((out / "frontier_quick_tuning.csv").open()))
    for learner in {t["learner"] for t in tuning}:
        mine = [t for t in tuning if t["learner"] == learner]
        picked = [t for t in mine if t["picked"] == "True"]
        assert len(picked) == 1 and float(picked[0]["mean"]) == min(float(t["mean"]) for t in mine)
    assert (out / "frontier_quick.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def regret_args(extra: list[str]) -> argparse.Namespace:
    """What ``frontier_grid`` reads of the namespace ``main`` builds."""
    return argparse.Namespace(quick="--quick" in extra, algorithms=None, variant=[], scratch="/nonexistent")


def test_grid_horizons_caps_and_long_runs():
    """A learner's runs stop at its cap; the long run is for the long cells and learners only;
    every evaluation job reads the table's horizons it reaches."""
    full = argparse.Namespace(quick=False, algorithms=None, variant=[], scratch="/nonexistent", budgets="1e4,1e5,1e6",
                              spreads="1,0.01", long_budget="1e7", tune_cells="centred:0.01", tune_budget="1e5",
                              settings="theory,tuned", long_learners="thompson,q-se", cap=["gp-ts=1e5"],
                              placements="centred,top", trials=20, trials_gp_ucb=40, train_seeds=10, block=10)
    grid = frontier.frontier_grid(full)
    assert frontier.cell_horizons(grid, "centred", 0.01, "thompson") == [10**6, 10**7]
    assert frontier.cell_horizons(grid, "centred", 0.01, "kl-ucb") == [10**6]
    assert frontier.cell_horizons(grid, "top", 0.01, "thompson") == [10**6]
    assert frontier.cell_horizons(grid, "centred", 1.0, "thompson") == [10**6]
    assert frontier.cell_horizons(grid, "centred", 0.01, "gp-ts") == [10**5]
    jobs = frontier.evaluation_jobs(grid, "theory", {})
    assert sum(j.count for j in jobs if j.learner == "gp-ucb" and j.horizon == 10**6) == 4 * 40
    assert all({10**4, 10**5} <= set(j.readouts) and j.readouts[-1] == j.horizon for j in jobs)
    train = frontier.training_jobs(grid)
    assert {(j.placement, j.spread) for j in train} == {("centred", 0.01)}
    assert {j.horizon for j in train} == {10**5} and {j.first for j in train} == {frontier.TRAIN_SEEDS}
    assert all(j.learner != "thompson" or len(dict(j.options)) == 2 for j in train)  # Beta(a, a)
    per_cell = frontier.frontier_grid(argparse.Namespace(**(vars(full) | {"tune_cells": "centred:0.01@1e6,top:1"})))
    assert {(j.placement, j.spread, j.horizon) for j in frontier.training_jobs(per_cell) if j.learner != "gp-ts"} == {
        ("centred", 0.01, 10**6), ("top", 1.0, 10**5)}  # a cell's own @H, else --tune-budget (gp-ts: its cap)
    plan = frontier.plan_table(grid)
    assert "| theory  | gp-ts            |    1e+05 |     80 |" in plan


@pytest.mark.slow
def test_quick_grid_on_two_dask_workers_equals_one(tmp_path, capsys):
    """Jobs streamed back from two Dask workers as they finish: the same rows (in job order)
    and tables as in one process; the journal got one line per job."""
    outs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        run_main(["--section", "frontier", "--quick", "--workers", str(workers), "--out", str(out), "--bootstrap", "200",
                  "--keep-journal"])
        rows = [json.loads(line) for line in (out / "frontier_quick_runs.jsonl").read_text().splitlines()]
        outs[workers] = ([{k: v for k, v in r.items() if k not in ("wall_s", "cpu_s")} for r in rows],
                         (out / "frontier_quick_ratio.csv").read_text(), (out / "frontier_quick_tuning.csv").read_text())
        printed = capsys.readouterr().out
        jobs = len((out / "frontier_quick_jobs.partial.jsonl").read_text().splitlines())
        assert printed.count(" jobs run, ") == jobs
    assert outs[1] == outs[2]


def test_spread_one_runs_once_for_both_placements():
    """At spread 1 centred and top are one problem (f' = f): their jobs share one key, so the
    grid runs it once and hands each cell the rows under its own placement; at any other
    spread the placements stay apart."""
    grid = frontier.frontier_grid(regret_args(["--quick"]))
    base = frontier.evaluation_jobs(grid, "theory", {})[0]
    centred, top = (frontier.Job(**(vars(base) | {"placement": p, "spread": 1.0})) for p in ("centred", "top"))
    assert frontier.job_id(centred) == frontier.job_id(top)
    apart = [frontier.Job(**(vars(base) | {"placement": p, "spread": 0.01})) for p in ("centred", "top")]
    assert frontier.job_id(apart[0]) != frontier.job_id(apart[1])
    ran = [{"placement": "centred", "seed": 100, "regret": [1.0]}]
    cache = {frontier.job_id(centred): ran}
    rows = frontier.run_jobs([centred, top], 1, grid.learners, cache)  # nothing left to run: both come from the cache
    assert [(r["placement"], r["setting"]) for r in rows] == [("centred", "theory"), ("top", "theory")]
    assert problem_means("centred") == problem_means("top")


def problem_means(placement: str) -> list[float]:
    return [float(v) for v in make_problem(f"synthetic-bernoulli-{placement}", spread=1.0, seed=3).means]
