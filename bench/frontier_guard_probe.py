"""How each theory-setting ``q-gp-ucb resume`` trial of a frontier cell ends (docs/frontier.md
section 12.3): re-runs the grid's job (same placement, spread, first seed, block of 10 and
options, so the same draws: its final regrets equal the grid's rows) in a kept temporary
folder, with two read-only hooks, and prints one line per trial.

``end`` is ``exhausted`` (the policy's stopping rule, ``QGPUCBResumable.exhausted``, read by a
hook), ``guard`` (not that, and the last stage spent no call: the stage loop's zero-call guard
of ``qbo.experiments.trial.run_stages``), ``line5`` (neither, yet the loop stopped before T:
the predicted cost did not fit; a line-5 stop right after a zero-call stage would read as
``guard``) or ``budget``. ``exploit`` is the rest of T charged at
``recommend()`` and the regret it added.

    nice python bench/frontier_guard_probe.py top 0.01 100     # seeds 100-109, ~35 CPU s
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import qbo.experiments.runner as runner
import qbo.experiments.trial as trial
from frontier import ONE_OVER_T, PLACEMENT_PROBLEMS, resolve_options
from qbo.algorithms.q_gp_ucb_resume import QGPUCBResumable
from qbo.experiments.config import ExperimentConfig

HORIZON = 1_000_000
BLOCK = 10


def main() -> None:
    parser = argparse.ArgumentParser(description="how theory-setting q-gp-ucb resume trials end")
    parser.add_argument("placement", choices=sorted(PLACEMENT_PROBLEMS))
    parser.add_argument("spread", type=float)
    parser.add_argument("first", type=int, help="the job's first seed (a block of 10 seeds)")
    args = parser.parse_args()
    placement, spread, first = args.placement, args.spread, args.first
    ends: list[str] = []  # one entry per trial: how its stage loop stopped (filled by the hooks)

    stages, exhausted = trial.run_stages, QGPUCBResumable.exhausted

    def counted_stages(*args, **kwargs):
        ends.append("")
        yield from stages(*args, **kwargs)

    def counted_exhausted(self) -> bool:
        value = exhausted.fget(self)
        if value:
            ends[-1] = "exhausted"
        return value

    runner.run_stages = counted_stages
    QGPUCBResumable.exhausted = property(counted_exhausted)
    options = resolve_options((("resume", True), ("beta", "theory"), ("delta", ONE_OVER_T)), HORIZON)
    config = ExperimentConfig(problem=PLACEMENT_PROBLEMS[placement], algorithms=("q-gp-ucb",), budget=HORIZON,
                              trials=BLOCK, seed=first, problem_options={"spread": spread},
                              algorithm_options={"q-gp-ucb": options})
    records = runner.run_experiment(config, Path(tempfile.mkdtemp(prefix="frontier-probe-")) / "run")
    print("| seed | stages | zero-call stages | end | calls at the end | exploit calls | exploit regret | regret at T |")
    for t in range(BLOCK):
        mine = [r for r in records if r["trial"] == t]
        played = [r for r in mine if r["method"] != "exploit"]
        tail = [r for r in mine if r["method"] == "exploit"]
        zero = sum(1 for r in played if r["honest_calls"] == 0)
        end = ends[t] or (("guard" if played[-1]["honest_calls"] == 0 else "line5") if tail else "budget")
        exploit = tail[0]["oracle_calls"] if tail else 0
        added = tail[0]["cum_regret"] - played[-1]["cum_regret"] if tail else 0.0
        print(f"| {first + t} | {len(played)} | {zero} | {end} | {played[-1]['cum_calls']} | {exploit} | "
              f"{added:.2f} | {mine[-1]['cum_regret']:.2f} |")


if __name__ == "__main__":
    main()
