"""Do ``qbo run --workers N``'s local workers end when the run process is killed (kill -9)?

Starts ``python -m qbo.cli run --workers N`` on a run long enough not to finish, waits until
the run process has N or more descendant processes and a unit journal exists, sends SIGKILL
to the run process alone, and prints how many seconds pass until none of its descendants is
left (or that some were still alive after ``--wait`` seconds). psutil comes with distributed.

    python bench/kill_workers.py [--workers 2] [--repeats 3] [--wait 30]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil


def one_kill(workers: int, wait: float) -> tuple[float, int, float | None]:
    """(seconds until the workers were up, descendants then, seconds from SIGKILL until every
    descendant is gone, or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        command = [sys.executable, "-m", "qbo.cli", "run", "--workers", str(workers), "--trials", "20",
                   "--budget", "200000", "--yes", "--quiet", "--out", str(out)]
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        parent = psutil.Process(proc.pid)
        children: list[psutil.Process] = []
        while time.perf_counter() - start < 120:
            children = parent.children(recursive=True)
            started = (out / "units").is_dir() and any((out / "units").iterdir())
            if len(children) >= workers and started:
                break
            if proc.poll() is not None:
                raise SystemExit(f"the run ended before it could be killed (exit {proc.returncode})")
            time.sleep(0.05)
        up = time.perf_counter() - start
        children = parent.children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)
        killed = time.perf_counter()
        proc.wait()
        while time.perf_counter() - killed < wait:
            if not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children):
                return up, len(children), time.perf_counter() - killed
            time.sleep(0.02)
        for c in children:  # clean up what the run left behind
            if c.is_running():
                c.kill()
        return up, len(children), None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--wait", type=float, default=30.0)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, cores {os.cpu_count()}, --workers {args.workers}")
    print(f"{'try':>4s} {'workers up (s)':>15s} {'descendants':>12s} {'all gone after kill -9 (s)':>27s}")
    for i in range(args.repeats):
        up, n, gone = one_kill(args.workers, args.wait)
        print(f"{i + 1:4d} {up:15.2f} {n:12d} {f'{gone:.2f}' if gone is not None else f'still alive after {args.wait:g}':>27s}")


if __name__ == "__main__":
    main()
