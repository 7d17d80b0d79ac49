"""MLAE's promise at two budgets on a device model no test ships (issue 24, item 1).

Cells: a snapshot (default ``fake:FakeKingston``, exported from qiskit-ibm-runtime) x oracles
``entangled2`` (2 qubits: RY on qubit 1, CX(1, 0); the 2-qubit circuit oracle), ``bernoulli``
(1 qubit) and ``discrete`` (4 qubits, 8 values), on ``bench/noise.py``'s exact channels of the
compiled blocks, sampled binomially. Per cell, N amplitudes uniform on [0.02, 0.98] (seeded),
one run each, MLAE as ``make_estimator("mlae", eps, alpha, snapshot=...)`` gives it:

- ``default``: eps = 0.01 and no budget (its own stopping rule);
- ``budget B``: the budget given (epsilon 1e-4, i.e. spend it), e.g. ~10x the default.

Columns: honest calls (mean), MAE (amplitude units) +- se, coverage of the reported interval
with its Wilson 95% lower bound, mean width, share with ``reached_epsilon`` True and the
coverage among those, runs whose interval was widened for misfit (``widened`` in the
interval method). ``--iae`` adds zne+rem IAE at eps (the comparison of the done-when ratio).
``--misses`` prints every uncovered run (amplitude, interval, fit, goodness of fit) and every
run stopped by max_calls or max_rounds.

    PYTHONPATH=. python bench/mlae_budget.py [--oracles entangled2,bernoulli,discrete]
        [--budgets default,15000] [--amplitudes 30] [--eps 0.01] [--seed 0] [--iae] [--misses]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np

from bench.noise import DeviceModel, ExactBinomialExecutor, make_oracle, snapshot_of, wilson_lower
from qbo.mitigation import make_mitigation
from qbo.qmc import IterativeAmplitudeEstimation, make_estimator


def oracle_of(kind: str, a: float):
    if kind == "entangled2":
        return make_oracle("entangled", a, 2)
    return make_oracle(kind, a)


def run(estimator, oracles, model: DeviceModel, seed: int, misses: bool) -> dict:
    rows = []
    cpu = time.process_time()
    for i, oracle in enumerate(oracles):
        out = estimator.estimate(oracle, ExactBinomialExecutor(model, seed=seed * 1000 + i))
        a = float(oracle.mean)
        hit = out.ci_low <= a <= out.ci_high
        d = out.diagnostics
        widened = "widened" in str(d.get("interval_method", ""))
        rows.append((abs(out.value - a), hit, out.ci_high - out.ci_low, out.oracle_calls, out.reached_epsilon, widened))
        if misses and d.get("stopped") in ("max_calls", "max_rounds"):
            print(f"   runaway a={a:.4f} calls={out.oracle_calls} stopped={d.get('stopped')} rounds={len(out.rounds)} "
                  f"half-width={0.5 * (out.ci_high - out.ci_low):.4f} phi={d.get('dispersion', float('nan')):.2f}", flush=True)
        if misses and not hit:
            ks = sorted({r.k for r in out.rounds})
            print(f"   miss a={a:.4f} value={out.value:.5f} [{out.ci_low:.5f}, {out.ci_high:.5f}] calls={out.oracle_calls} "
                  f"a0={d.get('a0', float('nan')):.4f} r={d.get('r', float('nan')):.4f} off={d.get('offset', float('nan')):.4f} "
                  f"dev={d.get('deviance', float('nan')):.1f}/{d.get('dof')} p={d.get('gof_p_value', float('nan')):.3g} "
                  f"phi={d.get('dispersion', float('nan')):.2f} ks={ks[:12]} {d.get('interval_method', '')}", flush=True)
    err, hit, width, calls, reached, widened = (np.array(c) for c in zip(*rows))
    n = len(rows)
    among = hit[reached.astype(bool)]
    return {"calls": calls.mean(), "mae": err.mean(), "se": err.std() / math.sqrt(n), "cov": hit.mean(),
            "wilson": wilson_lower(int(hit.sum()), n), "width": width.mean(), "reached": reached.mean(),
            "cov_reached": among.mean() if among.size else float("nan"),
            "wilson_reached": wilson_lower(int(among.sum()), int(among.size)) if among.size else float("nan"),
            "widened": int(widened.sum()), "cpu": time.process_time() - cpu, "n": n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", default="fake:FakeKingston")
    parser.add_argument("--oracles", default="entangled2,bernoulli,discrete")
    parser.add_argument("--budgets", default="default,15000")
    parser.add_argument("--amplitudes", type=int, default=30)
    parser.add_argument("--eps", type=float, default=0.01)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iae", action="store_true", help="add zne+rem IAE at eps (the MAE the done-when compares to)")
    parser.add_argument("--misses", action="store_true", help="print every uncovered run")
    args = parser.parse_args()
    amplitudes = np.random.default_rng(args.seed).uniform(0.02, 0.98, args.amplitudes)
    snapshot = snapshot_of(args.snapshot)
    model = DeviceModel(snapshot)
    print(f"MLAE on {args.snapshot} (exact channels, binomial sampling), {args.amplitudes} amplitudes x 1 run, "
          f"eps {args.eps}, alpha {args.alpha}, seed {args.seed}")
    print(f"{'oracle':11s} {'method':8s} {'budget':>8s} {'calls':>8s} {'MAE':>8s} {'+-se':>8s} {'coverage':>8s} "
          f"{'Wilson95':>8s} {'width':>7s} {'reached':>7s} {'cov|rch':>7s} {'W95|rch':>7s} {'widened':>7s} {'CPU s':>6s}")
    for kind in args.oracles.split(","):
        oracles = [oracle_of(kind, float(a)) for a in amplitudes]
        for oracle in oracles:
            model.add(oracle)
        jobs = []
        if args.iae:
            zr = make_mitigation("zne+rem", snapshot)
            jobs.append(("iae+zr", "eps", IterativeAmplitudeEstimation(args.eps, args.alpha, mitigation=zr)))
        base = make_estimator("mlae", args.eps, args.alpha, snapshot=snapshot)
        for budget in args.budgets.split(","):
            est = base if budget == "default" else dataclasses.replace(base, budget=int(budget), epsilon=1e-4)
            jobs.append(("mlae", budget, est))
        for method, budget, est in jobs:
            r = run(est, oracles, model, args.seed + 4, args.misses)
            print(f"{kind:11s} {method:8s} {budget:>8s} {r['calls']:8.0f} {r['mae']:8.5f} {r['se']:8.5f} {r['cov']:8.1%} "
                  f"{r['wilson']:8.1%} {r['width']:7.4f} {r['reached']:7.0%} {r['cov_reached']:7.1%} "
                  f"{r['wilson_reached']:7.1%} {r['widened']:7d} {r['cpu']:6.0f}", flush=True)


if __name__ == "__main__":
    main()
