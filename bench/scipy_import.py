"""What importing scipy.stats adds to a process that has numpy and scipy.special, the cost
``qbo.qmc.mlae_fit`` avoids by taking chi2 and the normal quantile from scipy.special.

Each line runs in ``--repeats`` fresh interpreters; prints the median wall seconds of each.

    python bench/scipy_import.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

LINES = (
    "import numpy, scipy.special",
    "import numpy, scipy.special, scipy.stats",
)


def wall(line: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", line], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, cores {os.cpu_count()}, median of {args.repeats} fresh interpreters")
    medians = []
    for line in LINES:
        times = [wall(line) for _ in range(args.repeats)]
        medians.append(statistics.median(times))
        print(f"{medians[-1]:7.3f} s  python -c {line!r}")
    print(f"{medians[1] - medians[0]:7.3f} s  added by scipy.stats")


if __name__ == "__main__":
    main()
