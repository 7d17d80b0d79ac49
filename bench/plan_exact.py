"""Planned vs actual jobs of a hardware run (issue 25 item 3), and the dry run's cost.

For each target: the cost plan (``qbo.experiments.cost_plan``) as ``qbo submit`` computes it
(a replay on the connection's replica), then the run itself; prints planned and actual jobs
and the seconds each took.  The test service is ``tests/support/fake_service.py``.

    python bench/plan_exact.py [--trials 6] [--budget 3000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qbo.execution import runtime  # noqa: E402
from qbo.execution.jobs import JobJournal  # noqa: E402
from qbo.experiments import runner  # noqa: E402
from qbo.experiments.config import ExperimentConfig  # noqa: E402
from qbo.experiments.cost_plan import cost_plan  # noqa: E402
from tests.support.fake_service import fake_ibm  # noqa: E402

TARGETS = ("fake:FakeBrisbane", "fake:FakeManilaV2", "ibm:ibm_test")


def measure(target: str, trials: int, budget: int, seed: int) -> tuple[int, int, float, float]:
    """(planned jobs, submitted jobs, plan seconds, run seconds) of one small run on ``target``."""
    kind, name = target.split(":")
    connection = fake_ibm() if kind == "ibm" else runtime.LocalConnection()
    runtime.connect = lambda _kind: connection  # the run's executors reach the same service
    config = ExperimentConfig(algorithms=("q-gp-ucb",), budget=budget, trials=trials, target=target, seed=seed)
    started = time.perf_counter()
    plan = cost_plan(config, connection.backend(name), None, None, connection.replica(), "job")
    plan_s = time.perf_counter() - started
    out = Path(tempfile.mkdtemp()) / "run"
    started = time.perf_counter()
    runner.run_experiment(config, out)
    run_s = time.perf_counter() - started
    actual = sum(line["event"] == "submitted" for line in JobJournal.in_run_dir(out).read())
    shutil.rmtree(out.parent)
    return round(plan["algorithms"]["q-gp-ucb"]["jobs"]), actual, plan_s, run_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    print(f"q-gp-ucb, {args.trials} trials, budget {args.budget}, job mode")
    print(f"{'target':<20} {'seed':>4} {'planned':>8} {'actual':>7} {'diff %':>7} {'plan s':>7} {'run s':>7}")
    for target in TARGETS:
        for seed in args.seeds:
            planned, actual, plan_s, run_s = measure(target, args.trials, args.budget, seed)
            diff = 100.0 * (planned - actual) / actual if actual else 0.0
            print(f"{target:<20} {seed:>4} {planned:>8} {actual:>7} {diff:>7.1f} {plan_s:>7.1f} {run_s:>7.1f}")


if __name__ == "__main__":
    main()
