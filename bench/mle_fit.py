"""qbo's MLE search (grid starts + Brent, ``qbo.algorithms.lengthscale.mle_search``) against the
multi-start L-BFGS-B fit it replaced (issue 21): how far the fits and a run's arms move.

The old fit is rebuilt here as it was (the best 3 of the same 16-point log grid, each refined by
scipy's L-BFGS-B over log theta within the bounds, on ``mle.negative_log_likelihood``):

1. one example: 80 points of an SE-GP draw (length scale 0.15, noise sd 0.05; the data of
   tests/test_lengthscale.py), both fits and their NLLs and times;
2. 200 random Bernoulli statistics on 20 arms (2 to 3,000 draws of arms of means in
   [0.3, 0.7], lambda 0.25): |log theta_new - log theta_old| quantiles, how often each NLL is
   lower by more than 1e-9, the time a fit takes;
3. one gp-ucb run with ``lengthscale="mle"`` on the centred problem and on berkenkamp-bernoulli
   (the Python stepper; the old fit patched in for the old run): the first call whose arm differs,
   the regret of each, the CPU seconds of each;
4. the fits (``mle`` and ``mle+outputscale``) against the least NLL of a dense grid on random
   statistics: how often the local search settles in a worse local minimum (the design's
   limitation: a multi-start local search, as L-BFGS-B's was), and how often it is worse than
   its own start grid (never, by construction);
5. one fit, qbo's against bench/scale_reference.py's, on the same statistics: CPU time and result.

    OPENBLAS_NUM_THREADS=1 python bench/mle_fit.py [--calls 1000] [--cases 100] [--sections 1,2,3,4,5]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.optimize import minimize

import qbo.algorithms.lengthscale.surrogates as surrogates
from qbo.algorithms.gp_ucb_refit import KERNEL_CODES
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.algorithms.jit import jit
from qbo.algorithms.lengthscale.mle import (GRID, LENGTHSCALE_BOUNDS, SCALE_GRID, fit_hyperparameters,
                                            negative_log_likelihood)
from qbo.algorithms.lengthscale.mle_search import nll
from qbo.execution import make_executor
from qbo.experiments.assembly import make_policy_for, problem_for_trial
from qbo.experiments.compact import reward_table
from qbo.experiments.config import ExperimentConfig
from qbo.gp.cholesky import ArmStats
from qbo.problems.synthetic import se_gp_sample


def setup(problem: str, seed: int, budget: int, options: dict) -> tuple:
    """(config, gp-ucb's problem instance of trial 0, its reward table on the exact executor)."""
    config = ExperimentConfig(problem=problem, algorithms=("gp-ucb",), budget=budget, trials=1, seed=seed,
                              algorithm_options={"gp-ucb": options})
    instance = problem_for_trial(config, 0)
    return config, instance, reward_table(instance, make_executor("exact", seed=np.random.default_rng(seed)))


def play(stepper, table, seed: int, budget: int) -> np.ndarray:
    """The arms of ``budget`` rounds of ``stepper`` (its ``run``, rewards drawn from ``table``)."""
    rng, arms, values = np.random.default_rng(seed), np.empty(budget, np.int64), np.empty(budget)
    stepper.run(budget, table, rng, arms, values)
    return arms


def old_fit(kernel, arms, stats, lam, outputscale, fit_outputscale=False, n_starts=3):
    """The fit before issue 21's search (length scale only): multi-start L-BFGS-B from the grid."""
    if fit_outputscale:
        raise SystemExit("this bench compares the length-scale fit only")

    def f(v):
        return negative_log_likelihood(kernel, math.exp(v[0]), outputscale, arms, stats, lam)

    values = [f([v]) for v in GRID]
    bounds = [(math.log(LENGTHSCALE_BOUNDS[0]), math.log(LENGTHSCALE_BOUNDS[1]))]
    best_v, best_f = None, math.inf
    for i in np.argsort(values, kind="stable")[:n_starts]:
        res = minimize(f, np.array([GRID[i]]), method="L-BFGS-B", bounds=bounds)
        if res.fun < best_f:
            best_v, best_f = res.x, float(res.fun)
    return math.exp(best_v[0]), outputscale


def _timed(fn, *args):
    start = time.process_time()
    result = fn(*args)
    return result, time.process_time() - start


def example() -> None:
    x = np.linspace(0.0, 1.0, 80)[:, None]
    rng = np.random.default_rng(0)
    y = se_gp_sample(x, 0.15, rng) + 0.05 * rng.standard_normal(80)
    stats = ArmStats(80)
    for i in range(80):
        stats.add(i, float(y[i]), 1.0)
    lam = 0.05 ** 2
    fit_hyperparameters("se", x, stats, lam, 1.0)  # numba's cache loaded
    (new, _), t_new = _timed(fit_hyperparameters, "se", x, stats, lam, 1.0)
    (old, _), t_old = _timed(old_fit, "se", x, stats, lam, 1.0)
    f = lambda t: negative_log_likelihood("se", t, 1.0, x, stats, lam)  # noqa: E731
    print("1. SE-GP draw, 80 points (length scale 0.15): theta, NLL, CPU ms a fit")
    print(f"   new (grid + Brent)    {new:.10f}  {f(new):.12f}  {1e3 * t_new:8.2f}")
    print(f"   old (grid + L-BFGS-B) {old:.10f}  {f(old):.12f}  {1e3 * t_old:8.2f}")
    print(f"   |log(new / old)| = {abs(math.log(new / old)):.2e}")


def random_statistics() -> None:
    diffs, new_better, old_better, t_new, t_old = [], 0, 0, 0.0, 0.0
    X = np.linspace(0.0, 1.0, 20)[:, None]
    for seed in range(200):
        r = np.random.default_rng(seed)
        stats, p = ArmStats(20), r.uniform(0.3, 0.7, 20)
        for _ in range(int(r.integers(2, 3000))):
            j = int(r.integers(0, 20))
            stats.add(j, float(r.random() < p[j]), 1.0)
        if np.count_nonzero(stats.W) < 2:
            continue
        (new, _), tn = _timed(fit_hyperparameters, "se", X, stats, 0.25, 1.0)
        (old, _), to = _timed(old_fit, "se", X, stats, 0.25, 1.0)
        t_new, t_old = t_new + tn, t_old + to
        fn, fo = (negative_log_likelihood("se", t, 1.0, X, stats, 0.25) for t in (new, old))
        diffs.append(abs(math.log(new / old)))
        new_better += fn < fo - 1e-9
        old_better += fo < fn - 1e-9
    d = np.array(diffs)
    print(f"2. {d.size} random Bernoulli statistics on 20 arms: |log(theta_new / theta_old)| "
          f"median {np.median(d):.1e}, "
          f"90% {np.quantile(d, 0.9):.1e}, 99% {np.quantile(d, 0.99):.1e}, max {d.max():.2f}; "
          f"NLL lower by > 1e-9: new {new_better}, old {old_better}; CPU ms a fit: new {1e3 * t_new / d.size:.2f}, "
          f"old {1e3 * t_old / d.size:.2f}")


def runs(calls: int) -> None:
    print(f"3. gp-ucb, lengthscale 'mle', {calls} calls, the Python stepper (seed 0)")
    print(f"   {'problem':30s} {'first diff':>10s} {'regret new':>11s} {'regret old':>11s} {'theta new':>10s} "
          f"{'theta old':>10s} {'CPU new':>8s} {'CPU old':>8s}")
    for problem in ("synthetic-bernoulli-centred", "berkenkamp-bernoulli"):
        config, instance, table = setup(problem, 0, calls, {"lengthscale": "mle"})
        out = {}
        for name in ("new", "old"):
            patched = surrogates.fit_hyperparameters
            if name == "old":
                surrogates.fit_hyperparameters = old_fit
            try:
                stepper = SurrogateStepper(make_policy_for(config, "gp-ucb", instance))
                arms, cpu = _timed(play, stepper, table, 0, calls)
            finally:
                surrogates.fit_hyperparameters = patched
            out[name] = (arms, float(table.gaps[arms].sum()), stepper.surrogate.theta, cpu)
        differ = np.flatnonzero(out["new"][0] != out["old"][0])
        first = str(int(differ[0]) + 1) if differ.size else "none"
        print(f"   {problem:30s} {first:>10s} {out['new'][1]:11.2f} {out['old'][1]:11.2f} {out['new'][2]:10.4f} "
              f"{out['old'][2]:10.4f} {out['new'][3]:8.2f} {out['old'][3]:8.2f}")


@jit
def _dense_min(code: int, lam: float, dist: np.ndarray, sw: np.ndarray, z: np.ndarray, const: float, A: np.ndarray,
               y: np.ndarray, log_thetas: np.ndarray, log_scales: np.ndarray) -> float:
    """The least NLL (``mle_search.nll``) over the grid ``log_thetas`` x ``log_scales``."""
    best = np.inf
    for v in log_thetas:
        for w in log_scales:
            f = nll(code, math.exp(v), math.exp(w), lam, dist, sw, z, const, A, y)
            if f < best:
                best = f
    return best


def dense_grid(cases: int) -> None:
    """The fits against the least NLL of a dense grid of log theta (600 points) and, with the
    output scale, of log theta x log s (600 x 120), on random statistics of a reviewer's probe's
    kind (the same draws): 3 to 24 arms in [0, 1]^d (d 1 or 2), means in [0.2, 0.8], 3 to 2,000
    draws, the four kernels in turn, lambda 0.01, 0.25 or 1."""
    dense = np.linspace(GRID[0], GRID[-1], 600)
    dense_s = np.linspace(SCALE_GRID[0], SCALE_GRID[-1], 120)
    kernels = ("se", "matern12", "matern32", "matern52")
    print(f"4. the fit's NLL less the least of a dense grid, {cases} random statistics each "
          "(gap > 1e-6, > 1e-2, > 0.1 of the cases; the largest gap; the fit worse than its own start grid)")
    for fit_scale in (False, True):
        gaps, worse_than_start, trial = [], 0, -1
        rng = np.random.default_rng(1)
        while len(gaps) < cases:
            trial += 1
            m, d = int(rng.integers(3, 25)), int(rng.integers(1, 3))
            X, p = rng.random((m, d)), rng.uniform(0.2, 0.8, m)
            W, b = np.zeros(m), np.zeros(m)
            for _ in range(int(rng.integers(3, 2001))):
                j = int(rng.integers(0, m))
                W[j] += 1.0
                b[j] += float(rng.random() < p[j])
            if np.count_nonzero(W) < 2:
                continue
            kernel, lam = kernels[trial % 4], float(rng.choice([0.01, 0.25, 1.0]))
            stats = ArmStats(m)
            stats.W, stats.b, stats.n = W, b, int(W.sum())
            theta, scale = fit_hyperparameters(kernel, X, stats, lam, 1.0, fit_scale)
            value = negative_log_likelihood(kernel, theta, scale, X, stats, lam)
            U = np.flatnonzero(W > 0)
            P = X[U]
            dist = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
            sw = np.sqrt(W[U])
            z, const = sw * (b[U] / W[U]), 0.5 * U.size * math.log(2.0 * math.pi) - 0.5 * float(np.log(W[U]).sum())
            A, y = np.empty((U.size, U.size)), np.empty(U.size)
            scales = SCALE_GRID if fit_scale else np.zeros(1)
            dense_scales = dense_s if fit_scale else np.zeros(1)
            code = KERNEL_CODES[kernel]
            start = _dense_min(code, lam, dist, sw, z, const, A, y, GRID, scales)
            worse_than_start += value > start + 1e-9 * (1.0 + abs(start))
            gaps.append(value - _dense_min(code, lam, dist, sw, z, const, A, y, dense, dense_scales))
        g = np.array(gaps)
        name = "mle+outputscale (600 x 120)" if fit_scale else "mle (600)"
        print(f"   {name:28s} gap > 1e-6: {int((g > 1e-6).sum()):3d}, > 1e-2: {int((g > 1e-2).sum()):3d}, "
              f"> 0.1: {int((g > 0.1).sum()):3d} of {g.size}; largest {g.max():.3g}; worse than its start grid: "
              f"{int(worse_than_start)}")


def against_reference(repeats: int = 200) -> None:
    """qbo's fit against bench/scale_reference.py's (written independently) on the same
    statistics: the centred problem's first m of 20 arms, 100 to 20,000 draws an arm of means
    0.5 + 0.01 N(0, 1), SE, lambda 0.25; CPU microseconds a fit, least of 3 runs of ``repeats``."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import scale_reference as reference

    from qbo.algorithms.lengthscale.mle import BOUNDS, N_STARTS, XTOL
    from qbo.algorithms.lengthscale.mle_search import fit

    print("5. one fit, qbo's (mle_search.fit) against the scale reference's (mle_fit), the same statistics: "
          "CPU us a fit, theta, s")
    rng = np.random.default_rng(3)
    for m in (4, 8, 20):
        X = np.linspace(0.0, 1.0, 20)[:m, None]
        W = rng.integers(100, 20001, m).astype(float)
        b = np.round(W * (0.5 + 0.01 * rng.standard_normal(m)))
        U, D2, B, h, out = np.arange(m), (X - X.T) ** 2, np.zeros((m, m)), np.zeros(m), np.empty(4)
        for fit_scale in (False, True):
            def ours():
                fit(X, W, b, 0, 0.25, 1.0, fit_scale, N_STARTS, GRID, SCALE_GRID, XTOL, BOUNDS, out)
                return out[0], out[1]

            def theirs():
                return reference.mle_fit(D2, U, m, W, b, 0.25, 1.0, fit_scale, GRID, SCALE_GRID, N_STARTS, XTOL, B, h)

            row = []
            for fn in (ours, theirs):
                result = fn()  # compiled or loaded from numba's cache
                cpu = min(_timed(lambda: [fn() for _ in range(repeats)])[1] for _ in range(3))
                row.append((1e6 * cpu / repeats, *result))
            name = "mle+outputscale" if fit_scale else "mle"
            print(f"   {m:2d} arms {name:16s} qbo {row[0][0]:7.1f} us ({row[0][1]:.6g}, {row[0][2]:.6g})   "
                  f"reference {row[1][0]:7.1f} us ({row[1][1]:.6g}, {row[1][2]:.6g})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=100, help="random statistics of section 4")
    parser.add_argument("--sections", default="1,2,3,4,5")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    if "1" in sections:
        example()
    if "2" in sections:
        random_statistics()
    if "3" in sections:
        runs(args.calls)
    if "4" in sections:
        dense_grid(args.cases)
    if "5" in sections:
        against_reference()


if __name__ == "__main__":
    main()
