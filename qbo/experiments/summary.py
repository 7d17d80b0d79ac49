"""Final cumulative regret per algorithm: mean and standard error over trials."""

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


_UNIT = itemgetter("trial", "algorithm")


def final_rows(records: list[dict[str, Any]]) -> dict[tuple[int, str], dict[str, Any]]:
    """The last record of every (trial, algorithm)."""
    return dict(zip(map(_UNIT, records), records))  # later records of a unit replace earlier ones


def mean_stderr(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def summarise(records: list[dict[str, Any]], config: ExperimentConfig) -> list[dict[str, Any]]:
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
            "accounting": config.accounting + (" (UNDERCOUNTS oracle calls)" if config.accounting == "reference" else ""),
        })
    return rows


def write_summary_csv(path, rows: list[dict[str, Any]], config: ExperimentConfig) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    write_text_atomic(path, buffer.getvalue())


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'algorithm':12s} {'final cumulative regret':>28s} {'oracle calls':>13s} {'stages':>8s}"]
    for r in rows:
        lines.append(
            f"{r['algorithm']:12s} {r['final_regret_mean']:16.2f} ± {r['final_regret_stderr']:8.2f}  "
            f"{r['calls_mean']:13.0f} {r['stages_mean']:8.1f}"
        )
    return "\n".join(lines)
