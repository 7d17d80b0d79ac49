"""gp-ucb on the Cholesky posterior: the compiled loop (qbo.algorithms.gp_ucb_cholesky) against
the Python-stepped one (qbo.algorithms.gp_ucb_steps, the policy's own surrogate, i.e.
``CholeskyArmPosterior`` with BLAS and LAPACK), the same seeds and reward draws (issue 21).

For each problem, seed and horizon: whether both play the same arms and rewards, the first
call where they part (if they do), the largest gaps in the final posterior mean and variance
and in the information gain, the rows the compiled loop moved last, and each side's CPU
seconds for the loop alone (the compiled side's first chunk, with numba's cache load, left out).

    python bench/cholesky_agreement.py [--cases centred:20000:0,1,2,3 ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from qbo.algorithms.gp_ucb_cholesky import CholeskyStepper
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.execution import make_executor
from qbo.experiments.assembly import make_policy_for, problem_for_trial
from qbo.experiments.compact import reward_table
from qbo.experiments.config import ExperimentConfig

PROBLEMS = {"centred": ("synthetic-bernoulli-centred", {}), "berkenkamp": ("berkenkamp-bernoulli", {}),
            "synthetic100": ("synthetic-bernoulli", {"num_arms": 100})}
DEFAULT = ("centred:20000:0,1,2,3", "centred:100000:0,1", "berkenkamp:5000:0,1", "synthetic100:3000:0,1")


def compare(problem: str, budget: int, seed: int) -> str:
    name, options = PROBLEMS[problem]
    config = ExperimentConfig(problem=name, problem_options=options, algorithms=("gp-ucb",), budget=budget,
                              trials=1, seed=seed, algorithm_options={"gp-ucb": {"model": "exact-cholesky"}})
    instance = problem_for_trial(config, 0)
    executor = make_executor("exact", seed=np.random.default_rng(seed))
    table = reward_table(instance, executor)
    played = []
    for kind in (SurrogateStepper, CholeskyStepper):
        policy = make_policy_for(config, "gp-ucb", instance)
        stepper, rng = kind(policy), np.random.default_rng(seed)
        arms, values = np.empty(budget, np.int64), np.empty(budget)
        stepper.run(10, table, rng, arms, values)
        start = time.process_time()
        stepper.run(budget - 10, table, rng, arms[10:], values[10:])
        cpu = time.process_time() - start
        model = policy.surrogate.model if kind is SurrogateStepper else stepper
        played.append((arms, values, model.posterior(), model.information_gain, stepper, cpu))
    (a1, v1, (m1, s1), i1, _, c1), (a2, v2, (m2, s2), i2, compiled, c2) = played
    same = bool(np.array_equal(a1, a2) and np.array_equal(v1, v2))
    first = "-" if same else str(int(np.argmax((a1 != a2) | (v1 != v2))) + 1)
    return (f"{problem:13s} {instance.arms.shape[0]:5d} {budget:8d} {seed:4d} {str(same):>5s} {first:>7s} "
            f"{np.max(np.abs(m1 - m2)):9.1e} {np.max(np.abs(s1 - s2)):9.1e} {abs(i1 - i2):9.1e} "
            f"{compiled.moves:5d} {c1:8.2f} {c2:8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(DEFAULT), help="PROBLEM:BUDGET:SEED,SEED,...")
    args = parser.parse_args()
    print(f"{'problem':13s} {'arms':>5s} {'T':>8s} {'seed':>4s} {'same':>5s} {'parts':>7s} {'|d mean|':>9s} "
          f"{'|d var|':>9s} {'|d info|':>9s} {'moves':>5s} {'python s':>8s} {'loop s':>8s}")
    for case in args.cases:
        problem, budget, seeds = case.split(":")
        for seed in seeds.split(","):
            print(compare(problem, int(float(budget)), int(seed)), flush=True)
    print("same: the same arms and rewards at every call; parts: the first call where they differ; |d ...|: the "
          "largest gap at any arm in the final posterior mean and variance, and in the information gain; moves: "
          "rows the compiled loop moved last; python s / loop s: CPU seconds of each loop")


if __name__ == "__main__":
    main()
