"""How long a local Dask cluster takes to come up with qbo imported: fork vs spawn workers.

``qbo run --workers N`` forks its workers on Linux (``qbo.experiments.fanout``): they inherit
the imported qbo, qiskit and scipy. Spawned workers import them again. Prints one line per
start method: the seconds from creating the cluster until every worker has run a task that
imports qbo's runner.

    python bench/cluster_start.py [--workers 2] [--methods fork,spawn]
"""

from __future__ import annotations

import argparse
import logging
import time

import dask
from distributed import Client, LocalCluster

import qbo.experiments.runner  # noqa: F401  (imported as in `qbo run`)


def qbo_loaded(_: int) -> bool:
    import qbo.experiments.runner  # noqa: F401  (what a unit needs)

    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--methods", default="fork,spawn")
    args = parser.parse_args()
    print(f"{'method':8s} {'workers':>7s} {'seconds':>8s}")
    for method in args.methods.split(","):
        start = time.perf_counter()
        with dask.config.set({"distributed.worker.multiprocessing-method": method}):
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   memory_limit=0, silence_logs=logging.ERROR)
        with cluster, Client(cluster) as client:
            client.gather(client.map(qbo_loaded, range(args.workers), pure=False))
            print(f"{method:8s} {args.workers:7d} {time.perf_counter() - start:8.1f}")


if __name__ == "__main__":
    main()
