"""Final cumulative regret per algorithm: mean and standard error over trials.

Where the problem's exact means are unknown (a user's black box, ``qbo.problems.custom``)
regret is undefined and the records hold ``cum_regret`` None: the summary then reports, per
algorithm, the best arm found (the arm recommended at the end, else the arm with the highest
mean estimate) and the mean of the rewards observed at it, over trials."""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from operator import itemgetter
from typing import Any

from qbo.experiments.config import ExperimentConfig
from qbo.files import write_text_atomic

COLUMNS = ("algorithm", "trials", "final_regret_mean", "final_regret_stderr", "calls_mean", "stages_mean", "accounting")
REWARD_COLUMNS = ("algorithm", "trials", "best_arm", "best_arm_trials", "best_reward_mean", "best_reward_stderr",
                  "calls_mean", "stages_mean", "accounting")
UNKNOWN_MEANS = ("exact means unknown: no regret; reported are the best arm found and the mean reward observed "
                 "at it (estimates, not exact means)")


_UNIT = itemgetter("trial", "algorithm")


def final_rows(records: list[dict[str, Any]]) -> dict[tuple[int, str], dict[str, Any]]:
    """The last record of every (trial, algorithm)."""
    return dict(zip(map(_UNIT, records), records))  # later records of a unit replace earlier ones


def mean_stderr(values: list[float]) -> tuple[float, float]:
    """Mean and standard error of the mean; the standard error is NaN (undefined) for one value."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def regret_known(records: list[dict[str, Any]]) -> bool:
    """False when the records hold no regret (the problem's exact means are unknown)."""
    return not records or records[-1]["cum_regret"] is not None


def summarise(records: list[dict[str, Any]], config: ExperimentConfig) -> list[dict[str, Any]]:
    if not regret_known(records):
        return _rewards(records, config)
    by_alg: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (_, alg), r in sorted(final_rows(records).items()):
        by_alg[alg].append(r)
    rows = []
    for alg in config.algorithms:
        finals = by_alg.get(alg, [])
        if not finals:
            continue
        mean, se = mean_stderr([r["cum_regret"] for r in finals])
        rows.append({
            "algorithm": alg, "trials": len(finals), "final_regret_mean": mean, "final_regret_stderr": se,
            "calls_mean": sum(r["cum_calls"] for r in finals) / len(finals),
            "stages_mean": sum(r["stage"] for r in finals) / len(finals),
            "accounting": _accounting(config),
        })
    return rows


def _accounting(config: ExperimentConfig) -> str:
    return config.accounting + (" (UNDERCOUNTS oracle calls)" if config.accounting == "reference" else "")


def best_arm_found(unit_records: list[dict[str, Any]]) -> tuple[int, float | None]:
    """A unit's best arm found (its final recommendation, else its highest mean estimate) and
    the mean of the rewards observed at that arm (None if it was never observed)."""
    seen: dict[int, list[float]] = defaultdict(list)
    for r in unit_records:
        if r["estimate"] is not None:
            seen[r["arm"]].append(r["estimate"])
    last = unit_records[-1]
    if last["method"] == "exploit" or not seen:
        arm = last["arm"]
    else:
        arm = max(seen, key=lambda a: (sum(seen[a]) / len(seen[a]), -a))
    values = seen.get(arm)
    return arm, (sum(values) / len(values) if values else None)


def _rewards(records: list[dict[str, Any]], config: ExperimentConfig) -> list[dict[str, Any]]:
    units: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        units[_UNIT(r)].append(r)
    rows = []
    for alg in config.algorithms:
        mine = [rs for (_, a), rs in sorted(units.items()) if a == alg]
        if not mine:
            continue
        found = [best_arm_found(rs) for rs in mine]
        arms = [arm for arm, _ in found]
        best = max(set(arms), key=lambda a: (arms.count(a), -a))
        rewards = [v for _, v in found if v is not None]
        mean, se = mean_stderr(rewards) if rewards else (float("nan"), float("nan"))
        rows.append({
            "algorithm": alg, "trials": len(mine), "best_arm": best, "best_arm_trials": arms.count(best),
            "best_reward_mean": mean, "best_reward_stderr": se,
            "calls_mean": sum(rs[-1]["cum_calls"] for rs in mine) / len(mine),
            "stages_mean": sum(rs[-1]["stage"] for rs in mine) / len(mine),
            "accounting": _accounting(config),
        })
    return rows


def write_summary_csv(path, rows: list[dict[str, Any]], config: ExperimentConfig) -> None:
    buffer = io.StringIO()
    fields = REWARD_COLUMNS if rows and "best_arm" in rows[0] else COLUMNS
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(v) for k, v in row.items()})
    write_text_atomic(path, buffer.getvalue())


def _csv_value(value: Any) -> Any:
    """Floats to 6 significant digits; an undefined one (NaN: one trial's standard error) is
    an empty field, which pandas.read_csv reads back as NaN."""
    if not isinstance(value, float):
        return value
    return "" if math.isnan(value) else f"{value:.6g}"


def _stderr(value: float, width: int, digits: int) -> str:
    return f"{'n/a':>{width}s}" if math.isnan(value) else f"{value:{width}.{digits}f}"


def format_table(rows: list[dict[str, Any]]) -> str:
    """The summary as a table; a standard error that one trial leaves undefined prints n/a."""
    if rows and "best_arm" in rows[0]:
        lines = [f"{'algorithm':12s} {'best arm found (trials)':>24s} {'mean reward observed there':>30s} "
                 f"{'oracle calls':>13s} {'stages':>8s}"]
        for r in rows:
            lines.append(f"{r['algorithm']:12s} {r['best_arm']:>14d} ({r['best_arm_trials']:>2d}/{r['trials']:<2d})   "
                         f"{r['best_reward_mean']:18.4f} ± {_stderr(r['best_reward_stderr'], 8, 4)} "
                         f"{r['calls_mean']:13.0f} {r['stages_mean']:8.1f}")
        lines.append(f"note: {UNKNOWN_MEANS}")
        return "\n".join(lines)
    lines = [f"{'algorithm':12s} {'final cumulative regret':>28s} {'oracle calls':>13s} {'stages':>8s}"]
    for r in rows:
        lines.append(
            f"{r['algorithm']:12s} {r['final_regret_mean']:16.2f} ± {_stderr(r['final_regret_stderr'], 8, 2)}  "
            f"{r['calls_mean']:13.0f} {r['stages_mean']:8.1f}"
        )
    return "\n".join(lines)
