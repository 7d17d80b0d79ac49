"""Coherent over-rotation of Q on hardware, at the default budget (issue 24, item 2): how often
each estimator's interval holds the amplitude, or its goodness of fit flags the error, when
every Grover step over-rotates by delta.

The executor samples the decay + readout model of ``bench/mlae_coherent.py`` with the contrast
A0, per-step contrast r and readout flips that the snapshot's depth model predicts for the
Bernoulli oracle (``qbo.qmc.mlae.calibration_prior``'s centres: the device the estimators are
told about), plus the over-rotation delta. Its target label is ``ibm:model_executor`` (real
hardware, where an over-rotation is possible and the intervals hold it,
``qbo.qmc.over_rotation``); ``--label fake:model`` runs the same counts as a simulator label,
where nothing is widened, to show what holding the over-rotation costs in width.

Each estimator is ``make_estimator(METHOD, eps, snapshot=...)`` at its own default budget (no
``max_calls``, no check rounds): ``auto`` is the ``qbo estimate`` default, ``iae`` the estimator
of a bandit run on a device target (``qbo.qmc.auto.choose_method(..., run=True)``). Columns: the
method that ran, runs whose interval holds a (and the Wilson 95% lower bound), runs flagged
(MLAE's ``model_fits`` False or the score test's p below 1e-3), runs held-or-flagged, runs that
report ``reached_epsilon``, mean width, mean honest calls, median ``rotation_sd`` (rad), runs
wider than 0.5 after fewer than 1,000 calls (``cheap``: issue 24 item 3 forbids them unless the
result reports a proven floor, ``floor_proven``; runs with one are not counted), those of them
that report a caller's budget as the binding limit (``cap``: ``budget_bound``), CPU s.
``--range LOW,HIGH`` draws the amplitudes from another range (e.g. 0.001,0.05 near a = 0, where
the counts resolve an over-rotation poorly); ``--max-calls`` passes a budget.

    PYTHONPATH=. python bench/over_rotation.py [--snapshot fake_torino] [--methods auto,iae,mlae]
        [--deltas 0,0.05,0.1,0.2] [--amplitudes 30] [--eps 0.01] [--label ibm:model_executor]
        [--range 0.05,0.95] [--max-calls N]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mlae_coherent import ModelExecutor  # noqa: E402  (a bench script beside this one)
from noise import wilson_lower  # noqa: E402  (the Wilson bound bench/noise.py reports)

from qbo.noise import load_snapshot  # noqa: E402
from qbo.oracles import bernoulli  # noqa: E402
from qbo.qmc import make_estimator  # noqa: E402
from qbo.qmc.mlae import calibration_prior  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", default="fake_torino")
    parser.add_argument("--methods", default="auto,iae,mlae")
    parser.add_argument("--deltas", default="0,0.05,0.1,0.2")
    parser.add_argument("--amplitudes", type=int, default=30)
    parser.add_argument("--eps", type=float, default=0.01)
    parser.add_argument("--label", default="ibm:model_executor")
    parser.add_argument("--range", default="0.05,0.95", help="LOW,HIGH of the uniform amplitudes")
    parser.add_argument("--max-calls", type=int, default=None, help="a call budget for every estimator")
    args = parser.parse_args()
    snapshot = load_snapshot(args.snapshot)
    low, high = (float(x) for x in args.range.split(","))
    amplitudes = np.random.default_rng(11).uniform(low, high, args.amplitudes)
    prior = calibration_prior(snapshot, bernoulli(0.5))
    model = dict(a0=prior.a0, r=prior.r, p01=prior.p01, p10=prior.p10)
    print(f"{args.snapshot} x bernoulli, label {args.label}, eps {args.eps}, {args.amplitudes} amplitudes in "
          f"[{low}, {high}], max calls {args.max_calls}; "
          f"model A0 {prior.a0:.4f}, r {prior.r:.5f}, readout {prior.p01:.4f}/{prior.p10:.4f} (the depth model's)")
    print(f"{'method':>6s} {'delta':>6s} {'ran':>10s} {'held':>7s} {'Wilson':>7s} {'flagged':>7s} {'held|fl':>7s} "
          f"{'reached':>7s} {'width':>7s} {'calls':>7s} {'rot sd':>7s} {'cheap':>5s} {'cap':>3s} {'CPU s':>6s}")
    for method in args.methods.split(","):
        for delta in (float(d) for d in args.deltas.split(",")):
            start = time.process_time()
            held = flagged = either = reached = cheap = capped = 0
            ran: dict[str, int] = {}
            widths, calls, sds = [], [], []
            for i, a in enumerate(amplitudes):
                ex = ModelExecutor(float(a), **model, delta=delta, seed=7919 * i + 1, target=args.label)
                est = make_estimator(method, args.eps, snapshot=snapshot, max_calls=args.max_calls).estimate(
                    bernoulli(float(a)), ex)
                d = est.diagnostics
                choice = (d.get("auto_choice") or {}).get("method") or est.method
                ran[choice] = ran.get(choice, 0) + 1
                covers = est.ci_low <= a <= est.ci_high
                flag = d.get("model_fits") is False or (d.get("rotation_p_value") or 1.0) < 1e-3
                held += covers
                flagged += flag
                either += covers or flag
                reached += est.reached_epsilon
                wide = est.ci_high - est.ci_low > 0.5 and est.oracle_calls < 1000 and not d.get("floor_proven")
                cheap += wide
                capped += wide and bool(d.get("budget_bound"))
                widths.append(est.ci_high - est.ci_low)
                calls.append(est.oracle_calls)
                sds.append(d["rotation_sd"] if d.get("rotation_sd") is not None else math.inf)
            n = len(amplitudes)
            names = "+".join(f"{k}:{v}" for k, v in sorted(ran.items()))
            print(f"{method:>6s} {delta:6.3f} {names:>10s} {held:3d}/{n:<3d} {wilson_lower(held, n):7.1%} {flagged:3d}/{n:<3d} "
                  f"{either:3d}/{n:<3d} {reached:3d}/{n:<3d} {np.mean(widths):7.4f} {np.mean(calls):7.0f} "
                  f"{np.median(sds):7.3f} {cheap:5d} {capped:3d} {time.process_time() - start:6.1f}", flush=True)


if __name__ == "__main__":
    main()
