"""Side by side: the CPU seconds of frontier jobs (bench/frontier_job.py) on two checkouts.

Each learner configuration runs as one job of ``--trials`` trials on each tree in turn (old,
new, old, new, ...), in fresh interpreters, so both see the same machine load; the table gives
CPU s per job, the ratio old / new, and whether the final regrets agree trial by trial (a speed
change must not change a run).

    python bench/frontier_costs.py --old /work/wt/old --new . --horizon 1e6 --trials 10

``--old`` is a checkout of the earlier commit (``git worktree add /work/wt/old COMMIT``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

CONFIGS = (  # section 12.1's tuned picks (centred 0.01) and the theory-setting quantum learners
    ("thompson", "a0=1,b0=1"),
    ("kl-ucb", "c=0"),
    ("gp-ucb", "beta=2,lengthscale=0.1"),
    ("gp-ts", "scale=0.5,lengthscale=0.2"),
    ("q-gp-ucb", "beta=1,delta=0.1,lengthscale=0.2"),
    ("q-gp-ucb", "resume=true,beta=1,delta=0.1,lengthscale=0.2"),
    ("q-ucb-halve", "delta=0.1"),
    ("q-se", "delta=0.1"),
    ("q-gp-ucb", "resume=true,beta=theory,delta=1/T"),
    ("q-ucb-halve", "delta=1/T"),
)


def job(tree: Path, algorithm: str, options: str, horizon: str, trials: int) -> tuple[float, str]:
    """CPU s of one frontier job in ``tree`` and its final regrets (as printed)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "bench/frontier_job.py", algorithm, options, "--horizon", horizon,
                          "--trials", str(trials)], cwd=tree, env=env, capture_output=True, text=True, check=True).stdout
    cpu = float(re.search(r"CPU ([0-9.]+) s", out).group(1))
    regrets = re.search(r"final regret: (.*)", out).group(1).strip()
    return cpu, regrets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, type=Path)
    parser.add_argument("--new", default=".", type=Path)
    parser.add_argument("--horizon", default="1e6")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--only", default="", help="comma-separated algorithms to keep (default all)")
    args = parser.parse_args()
    keep = set(filter(None, args.only.split(",")))
    print(f"T = {args.horizon}, {args.trials} trials a job; old {args.old}, new {args.new}")
    print(f"| {'learner':12s} | {'options':44s} | {'old CPU s':>9s} | {'new CPU s':>9s} | {'old/new':>7s} | same regrets |")
    print("|---|---|---|---|---|---|")
    for algorithm, options in CONFIGS:
        if keep and algorithm not in keep:
            continue
        old_cpu, old_regret = job(args.old.resolve(), algorithm, options, args.horizon, args.trials)
        new_cpu, new_regret = job(args.new.resolve(), algorithm, options, args.horizon, args.trials)
        print(f"| {algorithm:12s} | {options:44s} | {old_cpu:9.1f} | {new_cpu:9.1f} | {old_cpu / new_cpu:7.1f} | "
              f"{'yes' if old_regret == new_regret else 'NO: ' + old_regret + ' / ' + new_regret} |", flush=True)


if __name__ == "__main__":
    main()
