"""Reproduce the ordering of Imamura et al. (seed 000) Fig. 1, and a quantum variant.

Classical part: for data kernel in {se, matern52} x evaluation times in {uniform (t = 3),
biased (t(x) = 2 (sin(sqrt2 pi ||x||) + 2))}, every policy runs 130 rounds (30 random initial
points, as the seed) on the same drifting field (50 x 50 grid, lambda = 0.01 / s, noise 0.01);
the models use Matern-5/2 (l = 0.2) as the seed's Sec. 5.  Printed: R_n / n at n = 130 (and
over the 100 post-initialisation rounds), mean +- standard error over the repetitions.
Expected (seed Sec. 5.3): ctv-fixed <= ctv <= ctv-simple < tv-gp-ucb < gp-ucb.

Quantum part (--quantum): q-ctv-gp-ucb vs time-unaware q-gp-ucb vs classical tv-gp-ucb /
gp-ucb (one sample per call) on a drifting Bernoulli oracle (window (-3, 3)), honest oracle
calls, time per call ``--sec-per-call``; cumulative regret per call after T calls.

    python bench/timevarying.py [--reps 30] [--rounds 130] [--quantum --qreps 5 --budget 20000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from qbo.algorithms import make_policy
from qbo.execution import ExactExecutor
from qbo.experiments.clock import DriftClock, RoundClock
from qbo.experiments.defaults import policy_inputs, policy_options
from qbo.experiments.trial import StageSettings, run_stages
from qbo.problems import make_tv_problem

CLASSICAL = ("ctv-fixed", "ctv", "ctv-simple", "tv-gp-ucb", "gp-ucb")
QUANTUM = ("q-ctv-gp-ucb", "q-gp-ucb", "tv-gp-ucb", "gp-ucb")


def policy(alg: str, problem, budget: int, staged: bool, options: dict | None = None):
    """``alg`` with the runner's defaults for the drifting problem (qbo.experiments.defaults)."""
    opts = policy_options(alg, problem, budget, options or {}, staged)
    return make_policy(alg, problem.arms, policy_inputs(problem), **opts)


def mean_se(x: list[float]) -> tuple[float, float]:
    a = np.asarray(x, float)
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else float("nan")


def classical(reps: int, rounds: int, init: int, seed: int, time_noise: float) -> None:
    print(f"# classical: R_n/n at n={rounds} (incl. {init} random initial rounds) and over rounds "
          f"{init + 1}..{rounds}; mean +- SE over {reps} reps")
    for kernel in ("se", "matern52"):
        for times in ("uniform", "biased"):
            start = time.perf_counter()
            res = {a: ([], []) for a in CLASSICAL}
            for rep in range(reps):
                problem = make_tv_problem(kernel=kernel, times=times, time_noise=time_noise, init=init)
                for alg in CLASSICAL:
                    clock = RoundClock(problem, (seed, rep), rounds)
                    recs = list(run_stages(problem, policy(alg, problem, rounds, False), ExactExecutor(0),
                                           StageSettings(rounds), clock=clock))
                    r = np.array([x["regret"] for x in recs])
                    res[alg][0].append(r.sum() / rounds)
                    res[alg][1].append(r[init:].mean())
            print(f"\n## data kernel {kernel}, {times} times ({time.perf_counter() - start:.0f} s)")
            print(f"{'algorithm':12s} {'R_n/n (all)':>18s} {'R/n (post-init)':>18s} {'paired diff vs ctv':>20s}")
            ref = np.asarray(res["ctv"][0])
            for alg in CLASSICAL:
                m, s = mean_se(res[alg][0])
                m2, s2 = mean_se(res[alg][1])
                d, ds = mean_se(list(np.asarray(res[alg][0]) - ref))
                print(f"{alg:12s} {m:9.4f} ± {s:6.4f} {m2:9.4f} ± {s2:6.4f} {d:+9.4f} ± {ds:6.4f}")
            order = sorted(CLASSICAL, key=lambda a: np.mean(res[a][0]))
            print("ordering (best first):", " < ".join(order))


def quantum(reps: int, budget: int, seed: int, sec_per_call: float, grid: int, overhead: float) -> None:
    print(f"\n# quantum (honest accounting): drifting Bernoulli oracle, {grid}x{grid} arms, SE data, uniform "
          f"(unused) times, {sec_per_call} s per oracle call + {overhead} s per stage, lambda 0.01/s, T = {budget}")
    res = {a: [] for a in QUANTUM}
    stages = {a: [] for a in QUANTUM}
    start = time.perf_counter()
    for rep in range(reps):
        problem = make_tv_problem(kernel="se", grid_size=grid, sec_per_call=sec_per_call, overhead=overhead)
        for i, alg in enumerate(QUANTUM):
            recs = list(run_stages(problem, policy(alg, problem, budget, True, {"kernel": "se"}),
                                   ExactExecutor(1000 * rep + i), StageSettings(budget),
                                   clock=DriftClock(problem, (seed, rep))))
            res[alg].append(recs[-1]["cum_regret"] / recs[-1]["cum_calls"])
            stages[alg].append(len(recs))
    print(f"({time.perf_counter() - start:.0f} s)")
    print(f"{'algorithm':14s} {'R_T/T (per call)':>20s} {'stages':>8s}")
    for alg in QUANTUM:
        m, s = mean_se(res[alg])
        print(f"{alg:14s} {m:9.4f} ± {s:6.4f} {np.mean(stages[alg]):8.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=130)
    ap.add_argument("--init", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-noise", type=float, default=0.0)
    ap.add_argument("--skip-classical", action="store_true")
    ap.add_argument("--quantum", action="store_true")
    ap.add_argument("--qreps", type=int, default=5)
    ap.add_argument("--budget", type=int, default=20000)
    ap.add_argument("--sec-per-call", type=float, default=0.01)
    ap.add_argument("--overhead", type=float, default=0.0)
    ap.add_argument("--grid", type=int, default=10)
    a = ap.parse_args()
    if a.reps < 2 or a.qreps < 2:
        raise SystemExit(f"--reps and --qreps must be >= 2, got {a.reps}, {a.qreps}")
    if not a.skip_classical:
        classical(a.reps, a.rounds, a.init, a.seed, a.time_noise)
    if a.quantum:
        quantum(a.qreps, a.budget, a.seed, a.sec_per_call, a.grid, a.overhead)


if __name__ == "__main__":
    main()
