"""Benchmark the mean estimators on the exact target.

For eps in {0.03, 0.01, 0.003, 0.001}: qbo IAE, qbo MC, and (if the `bench` extra is
installed) qiskit-algorithms IAE with shots 32 and 100, counted the same honest way.
Columns: mean oracle calls, eps * calls, coverage over N random amplitudes, ms per estimate.

    python bench/qmc.py [--amplitudes 200] [--alpha 0.05] [--eps 0.03,0.01,0.003,0.001]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from qbo.execution import ExactExecutor
from qbo.oracles import bernoulli
from qbo.qmc import IterativeAmplitudeEstimation, MonteCarloEstimator

sys.path.insert(0, str(Path(__file__).parent))


def run_qbo(estimator, amplitudes, seed):
    ex = ExactExecutor(seed)
    rows = []
    for a in amplitudes:
        start = time.perf_counter()
        e = estimator.estimate(bernoulli(float(a)), ex)
        rows.append((e.oracle_calls, e.ci_low <= a <= e.ci_high, time.perf_counter() - start))
    return rows


def run_qiskit_algorithms(eps, alpha, shots, amplitudes):
    from qiskit_algorithms_baseline import qiskit_algorithms_iae

    rows = []
    for i, a in enumerate(amplitudes):
        start = time.perf_counter()
        _, (lo, hi), calls = qiskit_algorithms_iae(bernoulli(float(a)).circuit, eps, alpha, shots, i)
        rows.append((calls, lo <= a <= hi, time.perf_counter() - start))
    return rows


def summarise(name, eps, rows):
    calls = np.array([r[0] for r in rows], dtype=float)
    cover = np.mean([r[1] for r in rows])
    ms = 1000 * np.mean([r[2] for r in rows])
    print(f"| {name:28s} | {eps:6.3f} | {calls.mean():12.1f} | {eps * calls.mean():8.1f} | {cover:6.3f} | {ms:8.2f} |", flush=True)
    return calls.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amplitudes", type=int, default=200)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--eps", default="0.03,0.01,0.003,0.001")
    parser.add_argument("--no-baseline", action="store_true", help="skip qiskit-algorithms")
    args = parser.parse_args()
    amplitudes = np.random.default_rng(2024).uniform(0, 1, args.amplitudes)
    try:
        import qiskit_algorithms  # noqa: F401
        baseline = not args.no_baseline
    except ImportError:
        baseline = False
        print("(qiskit-algorithms not installed: pip install -e '.[bench]' for the baseline rows)")
    print(f"exact target, alpha={args.alpha}, {args.amplitudes} uniform random amplitudes; calls = sum shots*(2k+1)")
    print("| estimator                    |    eps |   mean calls | eps*calls | cover  | ms/est   |")
    print("|------------------------------|--------|--------------|-----------|--------|----------|")
    for eps in (float(e) for e in args.eps.split(",")):
        ours = summarise("qbo IAE", eps, run_qbo(IterativeAmplitudeEstimation(eps, args.alpha), amplitudes, 1))
        summarise("qbo MC", eps, run_qbo(MonteCarloEstimator(eps, args.alpha), amplitudes, 2))
        if baseline:
            best = min(
                summarise(f"qiskit-algorithms IAE s={s}", eps, run_qiskit_algorithms(eps, args.alpha, s, amplitudes))
                for s in (32, 100)
            )
            print(f"|   qbo IAE / best baseline    | {eps:6.3f} | {ours / best:12.3f} |           |        |          |")


if __name__ == "__main__":
    main()
