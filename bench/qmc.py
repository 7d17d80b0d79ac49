"""Benchmark the mean estimators on the exact target.

For eps in {0.03, 0.01, 0.003, 0.001}: qbo IAE (rigorous), qbo MLAE (decay fixed at none;
asymptotic profile-likelihood interval), qbo MC, and (if the `bench` extra is installed)
qiskit-algorithms IAE with shots 32 and 100, counted the same honest way.
Columns: mean oracle calls (with its standard error), eps * mean calls, median calls, the
99.9th percentile of calls and its ratio to the median (the cost tail), coverage over N
random amplitudes with its Wilson 95% lower bound, ms per estimate.

    python bench/qmc.py [--amplitudes 200] [--alpha 0.05] [--eps 0.03,0.01,0.003,0.001] [--only iae,mlae]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from qbo.execution import ExactExecutor
from qbo.oracles import bernoulli
from qbo.qmc import IterativeAmplitudeEstimation, MaximumLikelihoodAE, MonteCarloEstimator

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


def wilson_lower(successes: float, n: int, z: float = 1.959964) -> float:
    """Wilson score 95% lower bound of a binomial proportion."""
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre - spread) / (1 + z * z / n))


def summarise(name, eps, rows):
    calls = np.array([r[0] for r in rows], dtype=float)
    covered = int(sum(bool(r[1]) for r in rows))
    ms = 1000 * np.mean([r[2] for r in rows])
    se = calls.std(ddof=1) / np.sqrt(len(calls)) if len(calls) > 1 else 0.0
    med, tail = np.median(calls), np.percentile(calls, 99.9)
    print(
        f"| {name:28s} | {eps:6.3f} | {calls.mean():10.1f} ± {se:7.1f} | {eps * calls.mean():8.2f} | {med:10.0f} "
        f"| {tail:10.0f} | {tail / med:5.2f} | {covered / len(rows):6.3f} | {wilson_lower(covered, len(rows)):6.3f} | {ms:8.2f} |",
        flush=True,
    )
    return calls.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amplitudes", type=int, default=200)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--eps", default="0.03,0.01,0.003,0.001")
    parser.add_argument("--no-baseline", action="store_true", help="skip qiskit-algorithms")
    parser.add_argument("--only", default="iae,mlae,mc", help="comma list of qbo estimators: iae, mlae, mc")
    args = parser.parse_args()
    amplitudes = np.random.default_rng(2024).uniform(0, 1, args.amplitudes)
    try:
        import qiskit_algorithms  # noqa: F401
        baseline = not args.no_baseline
    except ImportError:
        baseline = False
        print("(qiskit-algorithms not installed: pip install -e '.[bench]' for the baseline rows)")
    print(f"exact target, alpha={args.alpha}, {args.amplitudes} uniform random amplitudes; calls = sum shots*(2k+1)")
    print("| estimator                    |    eps |   mean calls ± se    | eps*calls |     median |    p99.9   | p99.9/med | cover  | Wilson lb | ms/est   |")
    print("|------------------------------|--------|----------------------|-----------|------------|------------|-----------|--------|-----------|----------|")
    only = set(args.only.split(","))
    for eps in (float(e) for e in args.eps.split(",")):
        ours = None
        if "iae" in only:
            ours = summarise("qbo IAE (rigorous)", eps, run_qbo(IterativeAmplitudeEstimation(eps, args.alpha), amplitudes, 1))
        if "mlae" in only:
            summarise("qbo MLAE (asymptotic)", eps, run_qbo(MaximumLikelihoodAE(eps, args.alpha), amplitudes, 3))
        if "mc" in only:
            summarise("qbo MC", eps, run_qbo(MonteCarloEstimator(eps, args.alpha), amplitudes, 2))
        if baseline and ours is not None:
            best = min(
                summarise(f"qiskit-algorithms IAE s={s}", eps, run_qiskit_algorithms(eps, args.alpha, s, amplitudes))
                for s in (32, 100)
            )
            print(f"|   qbo IAE / best baseline    | {eps:6.3f} | {ours / best:12.3f} |           |        |          |")


if __name__ == "__main__":
    main()
