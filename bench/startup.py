"""How fast the CLI answers: `qbo --help` and refused bad inputs, in fresh interpreters.

    python bench/startup.py [--repeats 5] [--tree PATH ...]

Each TREE is a checkout whose ``qbo`` is put first on PYTHONPATH (default: this one), so a
before/after pair runs side by side at the same machine load. Prints wall seconds of each run,
their median and the load average when the table was made.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = (
    ("qbo --help", ["--help"]),
    ("qbo estimate --oracle bernoulli:1.7 --epsilon 0.1", ["estimate", "--oracle", "bernoulli:1.7", "--epsilon", "0.1"]),
    ("qbo estimate --target nope", ["estimate", "--target", "nope"]),
    ("qbo estimate --method nope", ["estimate", "--method", "nope"]),
    ("qbo run --trials 0", ["run", "--trials", "0"]),
    ("qbo run --algorithms nope", ["run", "--algorithms", "nope"]),
    ("qbo run --budget 0", ["run", "--budget", "0"]),
)


def wall_seconds(tree: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qbo.cli", *args], env=env, cwd=tree, capture_output=True, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tree", type=Path, action="append")
    args = parser.parse_args()
    trees = args.tree or [Path(__file__).resolve().parents[1]]
    print("| tree | command | runs (s) | median (s) |")
    print("|---|---|---|---|")
    for label, argv in COMMANDS:
        for tree in trees:
            runs = [wall_seconds(tree, argv) for _ in range(args.repeats)]
            print(f"| {tree} | `{label}` | {' '.join(f'{t:.2f}' for t in runs)} | {statistics.median(runs):.2f} |")
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
