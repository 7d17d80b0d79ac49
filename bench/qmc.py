"""Benchmark the mean estimators on the exact target.

For eps in {0.03, 0.01, 0.003, 0.001}: qbo IAE (rigorous), qbo MLAE (decay fixed at none;
asymptotic profile-likelihood interval), qbo MC, and (if the `bench` extra is installed)
qiskit-algorithms IAE with shots 32 and 100, counted the same honest way.
Columns: mean oracle calls (with its standard error), eps * mean calls, median calls, the
99.9th percentile of calls and its ratio to the median (the cost tail), coverage over N
random amplitudes with its Wilson 95% lower bound, ms per estimate.

    python bench/qmc.py [--amplitudes 200] [--alpha 0.05] [--eps 0.03,0.01,0.003,0.001] [--only iae,mlae]

C(delta) mode (issue 22): eps * calls per method at each failure probability delta, with
coverage, its Wilson 95% lower bound, median and p99.9 of calls; amplitudes uniform on (0, 1)
(so near 0 and 1 too). LRAE runs on a Bernoulli sampler drawn here with numpy (its estimator
code, ``LikelihoodRatioAE.run``, is the one ``estimate`` runs); IAE and MLAE run on the exact
executor. Then resumed LRAE: six refinements eps 2^5, ..., eps of one arm against a fresh
estimate at eps, with simultaneous coverage of all six intervals, for the spending rules in
``--spendings`` (index; by eps above a floor at eps or eps/8); ``--resumed-only`` skips the rest.
The "LRAE tail" table is the share of runs whose Wilks statistic at the truth exceeds the
chi^2_1 quantile at 0.05 ... 1e-4, on each delta's schedule (docs/estimators.md: how the tail
is extrapolated to 1e-6).

    python bench/qmc.py --eps 0.001 --deltas 0.05,0.01,0.001,1e-6 --runs 2000 --slow-runs 40 --resumed-runs 400
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
from qbo.qmc.lr_interval import loglik1, pooled
from qbo.qmc.lrae import LikelihoodRatioAE, LRState, refine, threshold
from qbo.qmc.result import Round

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


def bernoulli_sampler(rng: np.random.Generator, a: float):
    """sample(k, shots) -> Round with ones ~ Binomial(shots, sin^2((2k + 1) theta)), a = sin^2 theta."""
    theta = np.arcsin(np.sqrt(a))

    def sample(k: int, shots: int) -> Round:
        return Round(k, shots, int(rng.binomial(shots, np.sin((2 * k + 1) * theta) ** 2)))
    return sample


def run_lrae(eps: float, delta: float, amplitudes: np.ndarray, seed: int, stats: list | None = None):
    """Rows (calls, covered, seconds); ``stats`` collects Wilks' statistic at the truth,
    2 (l(theta_hat) - l(theta*)), of every run (theta_hat: the maximiser within the plausible set)."""
    rng = np.random.default_rng(seed)
    est = LikelihoodRatioAE(eps, delta)
    rows = []
    for a in amplitudes:
        start = time.perf_counter()
        rounds, iv = est.run(eps, bernoulli_sampler(rng, float(a)))
        low, high, _ = iv.amplitude()
        rows.append((sum(r.oracle_calls for r in rounds), low <= a <= high, time.perf_counter() - start))
        if stats is not None:
            ks, ns, hs = pooled(rounds)
            stats.append(2.0 * (loglik1(iv.theta_hat, ks, ns, hs) - loglik1(float(np.arcsin(np.sqrt(a))), ks, ns, hs)))
    return rows


def run_resumed(eps: float, delta: float, amplitudes: np.ndarray, seed: int, visits: int = 6, eps_floor: float = 0.0):
    """Per amplitude: total calls of ``visits`` refinements eps 2^(visits-1), ..., eps, and
    whether every interval along the way covered. ``eps_floor`` 0: index spending
    delta / (j (j + 1)); else spending by eps with that floor (``qbo.qmc.lrae``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in amplitudes:
        start = time.perf_counter()
        sample = bernoulli_sampler(rng, float(a))
        state, calls, every = LRState(delta, eps_floor=eps_floor), 0, True
        for j in range(visits - 1, -1, -1):
            state, new = refine(state, eps * 2**j, sample)
            calls += sum(r.oracle_calls for r in new)
            low, high = state.interval
            every = every and low <= a <= high
        rows.append((calls, every, time.perf_counter() - start))
    return rows


def delta_tables(args) -> None:
    eps = float(args.eps.split(",")[-1])
    methods = args.methods.split(",")
    rng = np.random.default_rng(2026)
    print(f"C(delta): exact target, eps={eps}, amplitudes uniform on (0, 1); calls = sum shots*(2k+1), every round")
    print("| method          | delta  |  runs | eps*mean calls | cover  | Wilson lb | 1-2 delta | median calls | p99.9 calls | p99.9/med | ms/est |")
    print("|-----------------|--------|-------|----------------|--------|-----------|-----------|--------------|-------------|-----------|--------|")
    tails = {}
    for delta in (float(d) for d in args.deltas.split(",") if not args.resumed_only):
        for method in methods:
            runs = args.runs if method == "lrae" else args.slow_runs
            amps = rng.uniform(0.0, 1.0, runs)
            if method == "lrae":
                rows = run_lrae(eps, delta, amps, 7, tails.setdefault(delta, []))
            elif method == "iae":
                rows = run_qbo(IterativeAmplitudeEstimation(eps, delta), amps, 1)
            elif method == "mlae":
                rows = run_qbo(MaximumLikelihoodAE(eps, delta), amps, 3)
            else:
                raise SystemExit(f"--methods: unknown method '{method}' (expected lrae, iae, mlae)")
            delta_row(method, delta, eps, rows)
    if tails:
        print()
        print("LRAE tail: share of runs whose Wilks statistic at the truth exceeds chi^2_1(1 - d) (chi^2 limit: d);")
        print("runs of the schedule for delta; 'max' the largest statistic seen")
        print("| delta  |  runs | d=0.05  | d=1e-2  | d=1e-3  | d=1e-4  |   max |")
        print("|--------|-------|---------|---------|---------|---------|-------|")
        for delta, st in tails.items():
            st_a = np.array(st)
            cells = " | ".join(f"{np.mean(st_a > threshold(d)):7.4f}" for d in (0.05, 1e-2, 1e-3, 1e-4))
            print(f"| {delta:6.0e} | {len(st_a):5d} | {cells} | {st_a.max():5.1f} |", flush=True)
    if args.resumed_runs <= 0:
        return
    print()
    print("Resumed LRAE: 6 refinements eps*32 ... eps of one arm vs a fresh LRAE at eps; spending 'index':")
    print("levels delta/(j(j+1)); 'floor f': levels delta 2^-(b+1) by eps bin above the floor f (qbo.qmc.lrae)")
    print("| delta  | spending  |  runs | resumed eps*calls | fresh eps*calls | ratio | all 6 cover | Wilson lb |")
    print("|--------|-----------|-------|-------------------|-----------------|-------|-------------|-----------|")
    for delta in (float(d) for d in args.deltas.split(",")):
        amps = rng.uniform(0.0, 1.0, args.resumed_runs)
        fresh = run_lrae(eps, delta, amps, 13)
        fc = np.mean([r[0] for r in fresh])
        variants = {"index": ("index", 0.0), "eps": ("floor eps", eps), "eps/8": ("floor eps/8", eps / 8)}
        for spending, floor in (variants[v] for v in args.spendings.split(",")):
            res = run_resumed(eps, delta, amps, 11, eps_floor=floor)
            rc = np.mean([r[0] for r in res])
            cov = sum(bool(r[1]) for r in res)
            print(f"| {delta:6.0e} | {spending:9s} | {len(res):5d} | {eps * rc:17.2f} | {eps * fc:15.2f} | {rc / fc:5.2f} | "
                  f"{cov / len(res):11.4f} | {wilson_lower(cov, len(res)):9.4f} |", flush=True)


def delta_row(method: str, delta: float, eps: float, rows) -> None:
    calls = np.array([r[0] for r in rows], dtype=float)
    covered = int(sum(bool(r[1]) for r in rows))
    med, tail = np.median(calls), np.percentile(calls, 99.9)
    print(f"| {method:15s} | {delta:6.0e} | {len(rows):5d} | {eps * calls.mean():14.2f} | {covered / len(rows):6.4f} | "
          f"{wilson_lower(covered, len(rows)):9.4f} | {1 - 2 * delta:9.4f} | {med:12.0f} | {tail:11.0f} | {tail / med:9.2f} | "
          f"{1000 * np.mean([r[2] for r in rows]):6.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amplitudes", type=int, default=200)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--eps", default="0.03,0.01,0.003,0.001")
    parser.add_argument("--no-baseline", action="store_true", help="skip qiskit-algorithms")
    parser.add_argument("--only", default="iae,mlae,mc", help="comma list of qbo estimators: iae, mlae, mc")
    parser.add_argument("--deltas", default="", help="comma list of failure probabilities: C(delta) mode")
    parser.add_argument("--methods", default="lrae,iae,mlae", help="C(delta) mode: methods to run")
    parser.add_argument("--runs", type=int, default=2000, help="C(delta) mode: LRAE runs per delta")
    parser.add_argument("--slow-runs", type=int, default=200, help="C(delta) mode: IAE and MLAE runs per delta")
    parser.add_argument("--resumed-runs", type=int, default=500, help="C(delta) mode: resumed-vs-fresh runs per delta")
    parser.add_argument("--spendings", default="index,eps,eps/8", help="C(delta) mode: resumed spending rules (index, eps, eps/8: floor at eps or eps/8)")
    parser.add_argument("--resumed-only", action="store_true", help="C(delta) mode: only the resumed table")
    args = parser.parse_args()
    if args.deltas:
        delta_tables(args)
        return
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
