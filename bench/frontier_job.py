"""Time one frontier job (bench/frontier.py): one learner configuration, one cell, a block of
evaluation seeds, through the same ``run_job`` the grid uses. For finding a slow
configuration without running the grid (docs/frontier.md section 9).

    python bench/frontier_job.py q-gp-ucb resume=true,beta=1,delta=0.1,lengthscale=0.2 --horizon 1e6 --trials 10

prints the CPU and wall seconds of the job, each trial's final regret and its record count.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from frontier import EVAL_SEEDS, PLACEMENT_PROBLEMS, Job, parse_variant, readout_points, run_job  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description="time one frontier job")
    parser.add_argument("algorithm")
    parser.add_argument("options", nargs="?", default="", help="key=value,... (delta=1/T allowed)")
    parser.add_argument("--placement", default="centred", choices=sorted(PLACEMENT_PROBLEMS))
    parser.add_argument("--spread", type=float, default=0.01)
    parser.add_argument("--horizon", default="1e6")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--first", type=int, default=EVAL_SEEDS, help="first problem seed")
    args = parser.parse_args()
    name, options = parse_variant(f"{args.algorithm}:{args.options}")
    horizon = int(float(args.horizon))
    with tempfile.TemporaryDirectory(prefix="frontier-job-") as scratch:
        job = Job("eval", args.placement, args.spread, name, name, options, horizon, args.first, args.trials,
                  readout_points(horizon, [horizon]), scratch)
        wall, cpu = time.perf_counter(), time.process_time()
        rows = run_job(job)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{name} {args.options or '-'} T={horizon:.0e} trials={args.trials}: CPU {cpu:.1f} s, wall {wall:.1f} s")
    print("final regret:", " ".join(f"{r['regret'][-1]:.1f}" for r in rows))
    print("records:", " ".join(str(r["stages"]) for r in rows))


if __name__ == "__main__":
    main()
