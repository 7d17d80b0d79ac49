"""Where a run's calls went: per quantum algorithm of a finished run folder, the final regret
(mean +- s.e. over trials), QMC stages, zero-call stages, the honest calls of its resumed
refinements (``*-resumed`` stages; the last stage's overrun past T included), the calls
charged at the recommended arm after the stop (``exploit``) and the least eps asked.

    python bench/refinement_calls.py RUN_FOLDER [RUN_FOLDER ...]

Reads ``stages.jsonl`` only (docs/runs.md describes it).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def summarise(folder: Path) -> list[str]:
    """One table row per quantum algorithm of ``folder``'s stages.jsonl."""
    regret: dict[str, dict[int, float]] = defaultdict(dict)
    counts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    least: dict[str, float] = defaultdict(lambda: math.inf)
    with (folder / "stages.jsonl").open() as lines:
        for line in lines:
            r = json.loads(line)
            alg = r["algorithm"]
            regret[alg][r["trial"]] = r["cum_regret"]
            if r["method"].endswith("-resumed"):
                counts[alg]["stages"] += 1
                counts[alg]["zero"] += r["honest_calls"] == 0
                counts[alg]["refine"] += r["honest_calls"]
                least[alg] = min(least[alg], r["eps"])
            elif r["method"] == "exploit":
                counts[alg]["exploit"] += r["honest_calls"]
    rows = []
    for alg, c in counts.items():
        finals = list(regret[alg].values())
        n = len(finals)
        se = statistics.stdev(finals) / math.sqrt(n) if n > 1 else math.nan
        rows.append(f"{folder.name:<24} {alg:<12} {n:>6} {statistics.mean(finals):>9.2f} +- {se:>6.2f} "
                    f"{c['stages'] / n:>8.1f} {int(c['zero']):>6} {int(c['refine']):>12} "
                    f"{int(c['exploit']):>10} {least[alg]:>10.2e}")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="finished run folders (holding stages.jsonl)")
    args = parser.parse_args()
    for folder in args.folders:
        if not (folder / "stages.jsonl").is_file():
            print(f"run folder '{folder}' has no stages.jsonl; expected a finished run folder", file=sys.stderr)
            return 2
    print(f"{'run':<24} {'algorithm':<12} {'trials':>6} {'regret':>9}    {'s.e.':>6} {'stages':>8} {'zero':>6} "
          f"{'refine calls':>12} {'exploit':>10} {'least eps':>10}")
    for folder in args.folders:
        print("\n".join(summarise(folder)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
