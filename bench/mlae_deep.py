"""MLAE (``auto``) on a deep oracle whose depth model leaves A0 anywhere from ~0 to 1: calls,
interval and the stop reason per seed (issue 24, item 3: never give up cheaply).

    PYTHONPATH=. python bench/mlae_deep.py [--snapshot fake_torino] [--oracle SPEC] [--eps 0.005] [--seeds 4]

Default oracle: gaussian:mean=0.3,std=0.1,qubits=6 (7 qubits), run on Aer with the snapshot's noise.
"""

from __future__ import annotations

import argparse
import time
import warnings

from qbo.execution.aer import AerExecutor
from qbo.noise import load_snapshot
from qbo.oracles import parse_oracle
from qbo.qmc import make_estimator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", default="fake_torino")
    parser.add_argument("--oracle", default="gaussian:mean=0.3,std=0.1,qubits=6")
    parser.add_argument("--eps", type=float, default=0.005)
    parser.add_argument("--seeds", type=int, default=4)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    snapshot = load_snapshot(args.snapshot)
    oracle = parse_oracle(args.oracle)
    print(f"{args.snapshot} x {args.oracle} ({oracle.num_qubits} qubits, mean {oracle.mean:.4f}, window "
          f"[{oracle.low}, {oracle.high}]), eps {args.eps}")
    print(f"{'seed':>4s} {'calls':>7s} {'value':>8s} {'ci_low':>8s} {'ci_high':>8s} {'covers':>6s} {'stopped':>12s} "
          f"{'floor':>7s} {'a0':>6s} {'k_cap':>5s} {'s':>6s}")
    for seed in range(args.seeds):
        start = time.perf_counter()
        est = make_estimator("auto", args.eps, 0.05, snapshot=snapshot).estimate(oracle, AerExecutor(snapshot, seed=seed))
        d = est.diagnostics
        print(f"{seed:4d} {est.oracle_calls:7d} {est.value:8.4f} {est.ci_low:8.4f} {est.ci_high:8.4f} "
              f"{str(est.ci_low <= oracle.mean <= est.ci_high):>6s} {d.get('stopped'):>12s} {d.get('epsilon_floor'):7.4f} "
              f"{d.get('a0'):6.3f} {d.get('k_cap'):5d} {time.perf_counter() - start:6.1f}", flush=True)


if __name__ == "__main__":
    main()
