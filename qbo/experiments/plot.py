"""regret.png: mean +- standard error of cumulative regret against oracle calls, or, for a
classical run on a drifting problem, of R_n / n against rounds (Imamura et al., seed 000, Fig. 1).

A run writes regret.png in the default style; ``qbo plot`` (``write_figure``) redraws it for
publication: PNG, SVG or PDF at a chosen dpi, optionally on a log x-axis, with a line style and
marker per curve (legible in grayscale) and a title naming the problem, target, estimator and
mitigation."""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from qbo.algorithms import is_quantum
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.figure import Curves, Painter, Style, render
from qbo.experiments.summary import regret_known
from qbo.files import write_bytes_atomic
from qbo.problems import is_drifting

_POINT = itemgetter("algorithm", "trial", "cum_calls", "cum_regret")
_UNIT, _CALLS, _REGRET = itemgetter(0, 1), itemgetter(2), itemgetter(3)


def regret_curves(
    records: list[dict[str, Any]], budget: int, points: int = 400, log_grid: bool = False,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per algorithm: (calls grid, mean, stderr) of the cumulative regret step functions.

    Regret accrues linearly within a stage (every call of stage s costs r_s). The grid is
    linear from 0, or (``log_grid``) geometric from 1 call, for a logarithmic x-axis.
    """
    grid = np.geomspace(1, max(budget, 2), points) if log_grid else np.linspace(0, budget, points)
    # (calls, regret) points per algorithm and trial, starting at (0, 0); a unit's records are
    # contiguous in stages.jsonl, so grouping runs of one unit keeps the loops in C
    per: dict[str, dict[int, tuple[list[int], list[float]]]] = {}
    for (alg, trial), rows in groupby(map(_POINT, records), key=_UNIT):
        calls, regret = per.setdefault(alg, {}).setdefault(trial, ([0], [0.0]))
        block = list(rows)
        calls.extend(map(_CALLS, block))
        regret.extend(map(_REGRET, block))
    curves = {}
    for alg, trials in per.items():
        ys = np.array([np.interp(grid, calls, regret) for calls, regret in trials.values()])
        se = ys.std(axis=0, ddof=1) / np.sqrt(len(ys)) if len(ys) > 1 else np.zeros_like(grid)
        curves[alg] = (grid, ys.mean(axis=0), se)
    return curves


def reward_curves(records: list[dict[str, Any]], budget: int, points: int = 400, log_grid: bool = False) -> Curves:
    """Per algorithm: (calls grid, mean, stderr) of the calls-weighted mean of the rewards a
    unit observed so far (its estimates and samples), for problems without exact means; the
    grid as ``regret_curves``'."""
    grid = np.geomspace(1, max(budget, 2), points) if log_grid else np.linspace(0, budget, points)
    per: dict[str, list[np.ndarray]] = {}
    for (alg, _), rows in groupby(records, key=itemgetter("algorithm", "trial")):
        calls, means, total, weight = [], [], 0.0, 0
        for r in rows:
            if r["estimate"] is not None:
                total += r["oracle_calls"] * r["estimate"]
                weight += r["oracle_calls"]
            if weight:
                calls.append(r["cum_calls"])
                means.append(total / weight)
        if calls:
            per.setdefault(alg, []).append(np.interp(grid, calls, means, left=np.nan))
    curves = {}
    for alg, rows in per.items():
        ys = np.array(rows)
        se = ys.std(axis=0, ddof=1) / np.sqrt(len(ys)) if len(ys) > 1 else np.zeros_like(grid)
        curves[alg] = (grid, ys.mean(axis=0), se)
    return curves


def regret_figure(
    records: list[dict[str, Any]], config: ExperimentConfig, logx: bool = False, full_title: bool = False,
) -> tuple[Curves, str, str, str]:
    """(curves, x label, y label, title) of the regret figure: cumulative regret against oracle
    calls, labelled with the accounting used; R_n / n against rounds for a classical run on a
    drifting problem. ``logx``: curves on a geometric grid. ``full_title``: a second title line
    naming target, estimator and mitigation (quantum runs) and the accounting."""
    quantum = any(is_quantum(a) for a in config.algorithms)
    if is_drifting(config.problem):
        figure = _drifting(records, config, per_round=not quantum, logx=logx)
    elif not regret_known(records):  # a user's problem without exact means: no regret to draw
        figure = (reward_curves(records, config.budget, log_grid=logx), "oracle calls (honest: shots x (2k+1))",
                  "mean reward observed so far (estimates)",
                  f"{config.problem}: exact means unknown, no regret; {config.trials} trials")
    else:
        accounting = " (reference accounting: UNDERCOUNTS)" if config.accounting == "reference" else " (honest: shots x (2k+1))"
        figure = (regret_curves(records, config.budget, log_grid=logx), "oracle calls" + accounting, "cumulative regret",
                  f"{config.problem}, target {config.target}, {config.trials} trials")
    if not full_title:
        return figure
    setting = (f"target {config.target}, estimator {config.estimator}, mitigation {config.mitigation}" if quantum
               else f"target {config.target} (classical policies: no estimator)")
    unknown = ": exact means unknown, no regret" if figure[1].startswith("oracle calls") and figure[2].startswith("mean reward") else ""
    return (*figure[:3], f"{config.problem}{unknown}, {config.trials} trials, budget {config.budget}\n{setting}")


def regret_png(records: list[dict[str, Any]], config: ExperimentConfig, painter: Painter | None = None) -> Callable[[], bytes]:
    """regret.png of ``records`` in the default style, being drawn (by ``painter``'s helper
    where it has one): the returned function gives its bytes (``regret_figure``)."""
    return (painter or Painter()).submit(*regret_figure(records, config))


def plot_regret(records: list[dict[str, Any]], config: ExperimentConfig, path: str | Path,
                painter: Painter | None = None) -> None:
    """Draw ``regret_png`` and write it to ``path``."""
    save_png(path, regret_png(records, config, painter))


def write_figure(records: list[dict[str, Any]], config: ExperimentConfig, path: str | Path, style: Style) -> None:
    """The publication figure (module docstring) in ``style``, written atomically to ``path``."""
    figure = regret_figure(records, config, logx=style.logx, full_title=True)
    write_bytes_atomic(path, render(*figure, style))


def save_png(path: str | Path, png: Callable[[], bytes]) -> None:
    """Write the PNG ``png()`` gives (``regret_png``) atomically."""
    write_bytes_atomic(path, png())


def _drifting(
    records: list[dict[str, Any]], config: ExperimentConfig, per_round: bool, logx: bool = False,
) -> tuple[Curves, str, str, str]:
    """Mean +- stderr of R_n / n against n (seed Fig. 1), or of R_T against oracle calls."""
    points = config.budget + 1 if per_round and not logx else 400
    curves = regret_curves(records, config.budget, points, log_grid=logx)
    if per_round:  # R_n / n, undefined at n = 0
        curves = {a: (x, m / np.where(x > 0, x, np.nan), se / np.where(x > 0, x, np.nan)) for a, (x, m, se) in curves.items()}
    opts = dict(config.problem_options)
    return (
        curves,
        "round n" if per_round else "oracle calls (honest: shots x (2k+1))",
        "R_n / n (seed Eq. (1))" if per_round else "cumulative regret (per call, drifting)",
        f"{config.problem} ({opts.get('kernel', 'se')}, {opts.get('times', 'uniform')}), {config.trials} trials",
    )
