"""The prefix sum in ``qbo.gp.cholesky``'s downdate: ``np.cumsum(pre, axis=0)`` against the
row-by-row sum the code uses, on a block of ``--block`` rows of V (``pre``: block x m, C
order; the default is the module's ``_BLOCK``, 16).

Both give the same sums, bit for bit (checked here); prints the median seconds of each over
``--repeats`` calls per arm count m, and their ratio.

    python bench/prefix_sum.py [--arms 1000,10000,100000] [--repeats 200] [--block 16]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def row_by_row(pre: np.ndarray) -> np.ndarray:
    for r in range(1, pre.shape[0]):
        np.add(pre[r - 1], pre[r], out=pre[r])
    return pre


def timed(fn, pre: np.ndarray, repeats: int) -> tuple[float, np.ndarray]:
    times, out = [], None
    for _ in range(repeats):
        x = pre.copy()
        start = time.perf_counter()
        out = fn(x)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--block", type=int, default=16)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, cores {os.cpu_count()}, block {args.block} rows, median of {args.repeats}")
    print(f"{'arms m':>8s} {'cumsum axis=0 (s)':>18s} {'row by row (s)':>15s} {'ratio':>6s} identical")
    rng = np.random.default_rng(0)
    for m in (int(float(a)) for a in args.arms.split(",")):
        pre = rng.standard_normal((args.block, m))
        t_cum, a = timed(lambda x: np.cumsum(x, axis=0), pre, args.repeats)
        t_row, b = timed(row_by_row, pre, args.repeats)
        print(f"{m:8d} {t_cum:18.2e} {t_row:15.2e} {t_cum / t_row:6.1f} {np.array_equal(a, b)}")


if __name__ == "__main__":
    main()
