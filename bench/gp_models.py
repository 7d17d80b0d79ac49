"""Stage cost and peak memory of the weighted-posterior models vs the number of arms.

One UCB stage = ``posterior()`` at every arm, ``argmax mu + 2 sigma`` (a random arm in one stage
of four, so arms repeat and new arms keep arriving), then ``add(arm, y, eps = 0.5)``.
Models (``qbo.gp``, Dai et al. Eq. (3)): ``rank-one`` (``ArmPosterior``, O(m^2)),
``cholesky`` (``CholeskyArmPosterior``, O(m s)) and ``rff`` (``FeatureArmModel``, M = 100
random Fourier features, Dai et al. App. J).  Arms: uniform in [0, 1]^d, SE kernel with
length scale 0.2, lambda = 1.

Each cell runs ``--stages`` stages, or fewer if ``--cell-seconds`` of wall time run out
first (the ``stages`` column says how many ran).  ``ms/stage`` (wall) and ``cpu ms`` (process
CPU time, all BLAS threads; less sensitive to other load on a shared machine) are means over
the last ``min(50, stages)`` stages (for ``cholesky`` the cost grows with s, so this is the
cost at the end), ``setup s`` the construction time, ``peak MB`` the tracemalloc peak of the whole cell
(numpy buffers included).  Cells whose m x m matrices would need more than ``--max-gb`` are
skipped.

    python bench/gp_models.py [--arms 100 1000 10000 100000] [--stages 500] [--dim 4]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from qbo.gp import ArmPosterior, CholeskyArmPosterior, FeatureArmModel, RandomFourierFeatures, make_kernel

MODELS = ("rank-one", "cholesky", "rff")


def build(model: str, arms: np.ndarray, lam: float):
    kern = make_kernel("se", 0.2, 1.0)
    if model == "rank-one":
        return ArmPosterior(kern(arms, arms), lam)
    if model == "cholesky":
        return CholeskyArmPosterior(kern, arms, lam)
    return FeatureArmModel(RandomFourierFeatures(kern, 100, arms.shape[1], seed=0), arms, lam)


def run_cell(model: str, m: int, dim: int, stages: int, seconds: float,
             seed: int) -> tuple[int, float, float, float, float]:
    """``(stages run, wall ms and CPU ms per stage over the last 50, setup seconds, peak MB)``."""
    rng = np.random.default_rng(seed)
    arms = rng.uniform(size=(m, dim))
    f = np.sin(3.0 * arms).sum(axis=1)
    tracemalloc.start()
    t0 = time.perf_counter()
    post = build(model, arms, 1.0)
    setup = time.perf_counter() - t0
    times, cpu = [], []
    start = time.perf_counter()
    for _ in range(stages):
        t1, c1 = time.perf_counter(), time.process_time()
        mean, var = post.posterior()
        if rng.random() < 0.25:
            arm = int(rng.integers(m))
        else:
            arm = int(np.argmax(mean + 2.0 * np.sqrt(var)))
        post.add(arm, float(f[arm] + 0.1 * rng.standard_normal()), 0.5)
        times.append(time.perf_counter() - t1)
        cpu.append(time.process_time() - c1)
        if time.perf_counter() - start > seconds:
            break
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    k = min(50, len(times))
    return len(times), 1e3 * float(np.mean(times[-k:])), 1e3 * float(np.mean(cpu[-k:])), setup, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arms", type=int, nargs="+", default=[100, 1000, 10000, 100000])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--stages", type=int, default=500)
    ap.add_argument("--dim", type=int, default=4)
    ap.add_argument("--cell-seconds", type=float, default=30.0)
    ap.add_argument("--max-gb", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"# d={args.dim}, SE(0.2), lambda=1, up to {args.stages} stages or {args.cell_seconds:g} s per cell")
    print(f"{'model':<10} {'arms':>8} {'stages':>7} {'ms/stage':>9} {'cpu ms':>8} {'setup s':>8} {'peak MB':>9}")
    for m in args.arms:
        for model in args.models:
            if model == "rank-one" and 3 * 8 * m * m / 2**30 > args.max_gb:
                print(f"{model:<10} {m:>8} {'skipped: needs ~' + format(3 * 8 * m * m / 2**30, '.0f') + ' GB':>45}")
                continue
            n, ms, cms, setup, peak = run_cell(model, m, args.dim, args.stages, args.cell_seconds, args.seed)
            print(f"{model:<10} {m:>8} {n:>7} {ms:>9.2f} {cms:>8.2f} {setup:>8.2f} {peak:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
