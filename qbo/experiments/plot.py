"""regret.png: mean +- standard error of cumulative regret against oracle calls."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from qbo.experiments.config import ExperimentConfig
from qbo.files import write_bytes_atomic


def regret_curves(records: list[dict[str, Any]], budget: int, points: int = 400) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per algorithm: (calls grid, mean, stderr) of the cumulative regret step functions.

    Regret accrues linearly within a stage (every call of stage s costs r_s).
    """
    grid = np.linspace(0, budget, points)
    per: dict[str, dict[int, list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(lambda: [(0, 0.0)]))
    for r in records:
        per[r["algorithm"]][r["trial"]].append((r["cum_calls"], r["cum_regret"]))
    curves = {}
    for alg, trials in per.items():
        ys = np.array([np.interp(grid, *zip(*pts)) for pts in trials.values()])
        se = ys.std(axis=0, ddof=1) / np.sqrt(len(ys)) if len(ys) > 1 else np.zeros_like(grid)
        curves[alg] = (grid, ys.mean(axis=0), se)
    return curves


Curves = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def plot_regret(records: list[dict[str, Any]], config: ExperimentConfig, path: str | Path) -> None:
    """Cumulative regret against oracle calls, labelled with the accounting used."""
    accounting = " (reference accounting: UNDERCOUNTS)" if config.accounting == "reference" else " (honest: shots x (2k+1))"
    save_curves(
        regret_curves(records, config.budget), path, xlabel="oracle calls" + accounting,
        ylabel="cumulative regret", title=f"{config.problem}, target {config.target}, {config.trials} trials",
    )


def save_curves(curves: Curves, path: str | Path, xlabel: str, ylabel: str, title: str) -> None:
    """Draw mean +- stderr bands, one per algorithm, and write the PNG atomically; the y-axis
    is logarithmic when the final means span a decade or more."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for alg, (x, mean, se) in curves.items():
        ax.plot(x, mean, label=alg)
        ax.fill_between(x, mean - se, mean + se, alpha=0.25)
    finals = [float(mean[-1]) for _, mean, _ in curves.values() if len(mean) and mean[-1] > 0]
    if len(finals) > 1 and max(finals) >= 10 * min(finals):  # curves span a decade or more
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(title="mean; band: ± one standard error", title_fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(fig)
    write_bytes_atomic(path, buffer.getvalue())
