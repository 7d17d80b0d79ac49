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
   the regret of each, the CPU seconds of each.

    OPENBLAS_NUM_THREADS=1 python bench/mle_fit.py [--calls 1000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.optimize import minimize

import qbo.algorithms.lengthscale.surrogates as surrogates
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.algorithms.lengthscale.mle import GRID, LENGTHSCALE_BOUNDS, fit_hyperparameters, negative_log_likelihood
from qbo.experiments.assembly import make_policy_for
from qbo.gp.cholesky import ArmStats
from qbo.problems.synthetic import se_gp_sample

from tests.support.steppers import play, setup


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
        config, instance, table = setup("gp-ucb", problem, {}, 0, calls, {"lengthscale": "mle"})
        out = {}
        for name in ("new", "old"):
            patched = surrogates.fit_hyperparameters
            if name == "old":
                surrogates.fit_hyperparameters = old_fit
            try:
                stepper = SurrogateStepper(make_policy_for(config, "gp-ucb", instance))
                (arms, _, _), cpu = _timed(play, stepper, table, 0, calls)
            finally:
                surrogates.fit_hyperparameters = patched
            out[name] = (arms, float(table.gaps[arms].sum()), stepper.surrogate.theta, cpu)
        differ = np.flatnonzero(out["new"][0] != out["old"][0])
        first = str(int(differ[0]) + 1) if differ.size else "none"
        print(f"   {problem:30s} {first:>10s} {out['new'][1]:11.2f} {out['old'][1]:11.2f} {out['new'][2]:10.4f} "
              f"{out['old'][2]:10.4f} {out['new'][3]:8.2f} {out['old'][3]:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    example()
    random_statistics()
    runs(args.calls)


if __name__ == "__main__":
    main()
