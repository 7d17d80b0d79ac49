"""One estimator's coverage at fixed amplitudes over many executor seeds (issue 24, item 1).

The grid (``bench/noise_grid.py``) runs each amplitude once; a miss there says little about
whether that amplitude is one where the interval under-covers. This runs ``--seeds`` executor
seeds at each of ``--amplitudes`` on one snapshot x oracle and prints, per amplitude, the
misses, the coverage with its Wilson 95% interval (to hold against the nominal 1 - alpha), the
runs that stopped under ``--early`` honest calls and the misses among them, the runs reporting
``reached_epsilon`` and the misses among them, the mean calls, and the mean |estimate - a| in
units of the reported half-width. Executor seeds are ``--seed-base`` + 0, 1, ...
Same exact channels and binomial sampling as the grid (``bench/noise.py``); the estimator is
``make_estimator(method, eps, alpha, snapshot=..., max_calls=budget)``, as the grid runs ``auto``
(the grid runs ``mlae`` at eps 1e-4: pass ``--eps 1e-4`` for its rows).

    PYTHONPATH=. python bench/noise_seeds.py --snapshot fake_sherbrooke --oracle entangled2 --method auto \\
        --budget 7813 --eps 0.01 --seeds 200 --amplitudes 0.9773,0.96,0.985,0.03,0.015
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from noise import DeviceModel, ExactBinomialExecutor, snapshot_of, wilson_lower  # bench/noise.py
from noise_grid import grid_oracle
from qbo.qmc import make_estimator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", required=True)
    parser.add_argument("--oracle", required=True, help="bernoulli, entangled2, entangled or discrete")
    parser.add_argument("--method", default="auto", help="a make_estimator method (auto, mlae, ...)")
    parser.add_argument("--budget", type=float, required=True, help="max_calls")
    parser.add_argument("--eps", type=float, default=0.01)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--amplitudes", required=True, help="comma-separated amplitudes in (0, 1)")
    parser.add_argument("--early", type=int, default=200, help="a run under this many calls counts as an early stop")
    parser.add_argument("--seed-base", type=int, default=7_000_000,
                        help="executor seeds are seed-base + 0 .. seeds - 1")
    args = parser.parse_args()
    amps = [float(x) for x in args.amplitudes.split(",") if x]
    snapshot = snapshot_of(args.snapshot)
    model = DeviceModel(snapshot)
    oracles = [grid_oracle(args.oracle, a) for a in amps]
    for oracle in oracles:
        model.add(oracle)
    estimator = make_estimator(args.method, args.eps, args.alpha, snapshot=snapshot, max_calls=max(1, int(args.budget)))
    print(f"{args.snapshot} {args.oracle} {args.method} max_calls {args.budget:.0f} eps {args.eps}: "
          f"{args.seeds} executor seeds per amplitude from {args.seed_base}; nominal coverage {1 - args.alpha:.1%}; "
          f"early = under {args.early} calls", flush=True)
    print(f"{'a':>7s} {'miss':>5s} {'cover':>6s} {'Wilson 95%':>15s} {'early':>5s} {'miss|early':>10s} "
          f"{'reached':>7s} {'miss|rch':>8s} {'mean calls':>10s} {'|err|/half':>10s} {'CPU s':>6s}", flush=True)
    for a, oracle in zip(amps, oracles):
        cpu = time.process_time()
        miss = early = miss_early = reached = miss_reached = 0
        calls, rel = [], []
        for s in range(args.seeds):
            out = estimator.estimate(oracle, ExactBinomialExecutor(model, seed=args.seed_base + s))
            hit = out.ci_low <= oracle.mean <= out.ci_high
            short = out.oracle_calls < args.early
            miss += not hit
            early += short
            miss_early += short and not hit
            reached += out.reached_epsilon
            miss_reached += out.reached_epsilon and not hit
            calls.append(out.oracle_calls)
            half = 0.5 * (out.ci_high - out.ci_low)
            rel.append(abs(out.value - oracle.mean) / half if half > 0 else np.inf)
        wilson = f"[{wilson_lower(args.seeds - miss, args.seeds):6.1%}, {1 - wilson_lower(miss, args.seeds):6.1%}]"
        print(f"{a:7.4f} {miss:5d} {1 - miss / args.seeds:6.1%} {wilson} "
              f"{early:5d} {miss_early:10d} {reached:7d} {miss_reached:8d} {np.mean(calls):10.0f} {np.mean(rel):10.2f} "
              f"{time.process_time() - cpu:6.0f}", flush=True)


if __name__ == "__main__":
    main()
