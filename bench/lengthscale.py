"""Length-scale strategies on the LB-GP-UCB paper's benchmarks (Ziomek et al. 2024, Sec. 5).

For each problem (Berkenkamp 1-D toy, Michalewicz 5-D), policy (gp-ucb; q-gp-ucb under honest
accounting) and length-scale option (lb, a-gp-ucb, mle, a deliberately wrong fixed 1.0, and
the "right" fixed one), runs ``reps`` seeded units through ``qbo.experiments.trial.run_stages``
on the exact executor and prints mean +- stderr of

* cum: cumulative regret R_T = sum over oracle calls of f* - f(x) at the budget T;
* best: best (simple) regret f* - max_{queried x} f(x) over the queried arms;
* stages, and the geometric-mean length scale the policy used (cf. the paper's Fig. 2).

"Right" length scale: Berkenkamp's bump has sd 0.08, the SE length scale that matches it.
Michalewicz's is unknown (the paper's theta*-hat recipe degenerates on 1000 points, see
``right_lengthscale_estimate``); qbo's default fixed 0.2 is shown instead.

    python bench/lengthscale.py [--reps 5] [--budget 150] [--qbudget 30000] [--problems berkenkamp,michalewicz]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from qbo.algorithms import make_policy
from qbo.execution import ExactExecutor
from qbo.experiments.trial import StageSettings, run_stages
from qbo.algorithms.lengthscale import fit_hyperparameters
from qbo.gp.cholesky import ArmStats
from qbo.problems.lengthscale_benchmarks import berkenkamp, michalewicz
from qbo.problems.base import Problem

STD = 0.05


def right_lengthscale(problem: Problem) -> float:
    """Berkenkamp: the bump's sd; otherwise the MLE on the top 5 % arms (theta*-hat, Sec. 5)."""
    if problem.name.startswith("berkenkamp"):
        return 0.08
    return float("nan")  # Michalewicz: unknown (see right_lengthscale_estimate)


def right_lengthscale_estimate(problem: Problem) -> float:
    """The paper's theta*-hat recipe; on 1000 uniform 5-D points the top 5 % are too sparse
    and the MLE runs to the lower bound 1e-3 (measured), so the bench does not use it."""
    top = np.argsort(-problem.means)[: max(10, problem.num_arms // 20)]
    y = problem.means[top]
    y = (y - y.mean()) / y.std()  # standardised, as the paper's GP fits (Sec. 5)
    stats = ArmStats(problem.num_arms)
    for i, v in zip(top, y):
        stats.add(int(i), float(v), 1.0)
    return fit_hyperparameters("se", problem.arms, stats, STD**2, 1.0)[0]


def policy_options(policy: str, lengthscale: str, budget: int) -> dict:
    """gp-ucb: noise = std^2; both: the practical beta 1 + ln t (Dai et al. App. J)."""
    opts: dict = {"lengthscale": lengthscale, "beta": "practical"}
    if policy == "gp-ucb":
        opts["noise"] = STD**2
    else:
        opts.update(budget=budget, noise_case="variance")
    return opts


def run_unit(problem: Problem, policy_name: str, lengthscale: str, budget: int, seed: int) -> dict:
    """One seeded run; returns cum regret, best regret, stages and mean log length scale."""
    policy = make_policy(policy_name, problem.arms, **policy_options(policy_name, lengthscale, budget))
    settings = StageSettings(budget, "iae", "honest", "recommend")
    logs, best, last = [], math.inf, None
    for record in run_stages(problem, _Logged(policy, logs), ExactExecutor(seed), settings):
        last = record
        if record["method"] != "exploit":
            best = min(best, problem.regret(record["arm"]))
    return {"cum": last["cum_regret"], "best": best, "stages": len(logs),
            "theta": float(np.exp(np.mean(np.log(logs)))) if logs else float("nan")}


class _Logged:
    """Wraps a policy so that every ask logs the length scale behind it."""

    def __init__(self, policy, logs: list) -> None:
        self._p, self._logs = policy, logs

    def ask(self):
        q = self._p.ask()
        return q

    def tell(self, query, value, epsilon=None) -> None:
        self._logs.append(self._p.lengthscale)
        self._p.tell(query, value, epsilon)

    def __getattr__(self, name):
        return getattr(self._p, name)


def table(problem: Problem, policy: str, budget: int, reps: int, only: str = "") -> None:
    """Print one table: a row per length-scale option."""
    right = right_lengthscale(problem)
    options = ["lb", "a-gp-ucb", "mle", "fixed:1.0", f"fixed:{right:.4g}"]
    if right != right:  # unknown: qbo's default 0.2 as a second fixed reference
        right, options[-1] = 0.2, "fixed:0.2"
    if only:
        options = [o for o in options if o.split(":")[0] in only.split(",") or o in only.split(",")]
    print(f"\n{problem.name} ({problem.num_arms} arms, d={problem.dim}), {policy}, budget {budget} "
          f"oracle calls, {reps} reps, honest accounting; right lengthscale {right:.4g}")
    print(f"{'lengthscale':>16} {'cum regret':>18} {'best regret':>18} {'stages':>7} {'theta':>8} {'s/unit':>7}")
    for opt in options:
        start = time.perf_counter()
        jobs = [(problem, policy, opt, budget, seed) for seed in range(reps)]
        rows = _map(jobs)
        secs = (time.perf_counter() - start) / reps
        cum, best = np.array([r["cum"] for r in rows]), np.array([r["best"] for r in rows])
        se = lambda a: a.std(ddof=1) / math.sqrt(len(a)) if len(a) > 1 else 0.0
        print(f"{opt:>16} {cum.mean():10.2f} +- {se(cum):5.2f} {best.mean():10.4f} +- {se(best):5.4f} "
              f"{np.mean([r['stages'] for r in rows]):7.1f} {np.exp(np.mean(np.log([r['theta'] for r in rows]))):8.4f} {secs:7.2f}")


WORKERS = 1


def _run_job(job: tuple) -> dict:
    return run_unit(*job)


def _map(jobs: list[tuple]) -> list[dict]:
    """Run units serially, or on --workers local Dask workers (qbo.experiments.fanout; same results)."""
    from qbo.experiments.fanout import fan_out

    return fan_out(_run_job, jobs, workers=WORKERS)


def main() -> None:
    global WORKERS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--budget", type=int, default=150, help="gp-ucb budget (oracle calls = samples)")
    ap.add_argument("--qbudget", type=int, default=30000, help="q-gp-ucb budget (honest oracle calls)")
    ap.add_argument("--problems", default="berkenkamp,michalewicz")
    ap.add_argument("--policies", default="gp-ucb,q-gp-ucb")
    ap.add_argument("--workers", type=int, default=1, help="local Dask workers (units are independent)")
    ap.add_argument("--options", default="", help="comma-separated subset of length-scale options")
    args = ap.parse_args()
    WORKERS = args.workers
    builders = {"berkenkamp": lambda: berkenkamp(std=STD), "michalewicz": lambda: michalewicz(std=STD)}
    for name in args.problems.split(","):
        problem = builders[name]()
        for policy in args.policies.split(","):
            table(problem, policy, args.budget if policy == "gp-ucb" else args.qbudget, args.reps, args.options)


if __name__ == "__main__":
    main()
