"""MLAE alone on ``bench/noise.py``'s device models (exact channels, binomial sampling), at
given budgets: a quick way to measure MLAE with more amplitudes than the full study affords.

For each snapshot x oracle x budget (budgets as ``bench/noise.py`` prints them, B1 and B2),
MLAE runs with ``budget`` and epsilon 1e-4 (i.e. "spend the budget"), as in ``bench/noise.py``.
Columns: honest calls (mean), MAE (amplitude units) +- se, coverage with its Wilson 95% lower
bound, mean interval width, runs flagged by the goodness of fit.

    PYTHONPATH=. python bench/mlae_noise.py --cells fake_torino:entangled:1297,19998 [--amplitudes 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from bench.noise import DeviceModel, make_oracle, run_cell
from qbo.noise import load_snapshot
from qbo.qmc import make_estimator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", required=True, help="snapshot:oracle:budget,budget;... (';' between cells)")
    parser.add_argument("--amplitudes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    amplitudes = np.random.default_rng(args.seed).uniform(0.02, 0.98, args.amplitudes)
    print(f"MLAE, {args.amplitudes} amplitudes x 1 run, alpha = 0.05, epsilon 1e-4 with a budget")
    print(f"{'snapshot':16s} {'oracle':10s} {'budget':>7s} {'calls':>7s} {'MAE':>8s} {'+-se':>8s} "
          f"{'coverage':>8s} {'Wilson95':>8s} {'width':>7s} {'flagged':>7s} {'CPU s':>6s}")
    for cell in args.cells.split(";"):
        name, kind, budgets = cell.split(":")
        model = DeviceModel(load_snapshot(name))
        oracles = [make_oracle(kind, float(a)) for a in amplitudes]
        for oracle in oracles:
            model.add(oracle)
        for budget in (int(b) for b in budgets.split(",")):
            est = dataclasses.replace(make_estimator("mlae", 0.01, 0.05), budget=budget, epsilon=1e-4)
            row = run_cell(est, oracles, model, replicates=1, seed=args.seed + 4)  # as bench/noise.py seeds its mlae rows
            print(f"{name:16s} {kind:10s} {budget:7d} {row['calls']:7.0f} {row['mae']:8.5f} {row['mae_se']:8.5f} "
                  f"{row['coverage']:8.1%} {row['wilson']:8.1%} {row['width']:7.4f} {row['flagged']:7d} {row['cpu']:6.0f}")


if __name__ == "__main__":
    main()
