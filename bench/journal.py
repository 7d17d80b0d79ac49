"""Journal cost per stage record: one line per write with the RNG state in every record (the
journal before issue 13's group commit) against the hash-chained group-commit journal of
format 2 (qbo.experiments.journal: stage lines in their stages.jsonl form, the RNG state in
one checkpoint per commit), and what merge then spends per record to verify and copy them.

    python bench/journal.py [--records 20000] [--repeats 3]

Prints a table of microseconds per record (median of the repeats, wall and CPU), measured
side by side in one run on a GP-UCB-like record (one classical sample).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from qbo.experiments.journal import UnitJournal
from qbo.files import append_line


RNG = np.random.default_rng(0)


def records(n: int) -> list[dict]:
    out = []
    for s in range(1, n + 1):
        out.append({"stage": s, "arm": int(s % 17), "eps": None, "method": "sample", "oracle_calls": 1, "honest_calls": 1,
                    "estimate": float(RNG.random() < 0.5), "cum_calls": s, "cum_regret": 0.1 * s, "weight_eps": None})
    return out


def per_line(folder: Path, recs: list[dict]) -> None:
    path = folder / "old.jsonl"
    for r in recs:
        append_line(path, r | {"rng": RNG.bit_generator.state})
    append_line(path, {"done": True})


def _journal(folder: Path) -> UnitJournal:
    return UnitJournal(folder / "trial000-x.jsonl", "0" * 64, fields={"trial": 0, "algorithm": "x"},
                       state=lambda: {"rng": RNG.bit_generator.state})


def group_commit(folder: Path, recs: list[dict]) -> None:
    journal = _journal(folder)
    journal.read()
    for r in recs:
        journal.append(r)
    journal.finish()


def verify_and_copy(folder: Path, recs: list[dict]) -> None:
    """What merge does per unit, timed without writing the journal (done beforehand)."""
    (folder / "stages.jsonl").write_bytes(b"\n".join(_journal(folder).stage_lines()) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    recs = records(args.records)
    rows = {}
    for name, write in (("one write per line (before)", per_line), ("group commit + hash chain", group_commit),
                        ("merge: verify + copy", verify_and_copy)):
        walls, cpus = [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as tmp:
                if write is verify_and_copy:
                    group_commit(Path(tmp), recs)
                w, c = time.perf_counter(), time.process_time()
                write(Path(tmp), recs)
                walls.append(time.perf_counter() - w)
                cpus.append(time.process_time() - c)
        rows[name] = (statistics.median(walls), statistics.median(cpus))
    print(f"{args.records} records, median of {args.repeats}")
    print(f"{'journal':32s} {'wall us/record':>15s} {'cpu us/record':>14s}")
    for name, (w, c) in rows.items():
        print(f"{name:32s} {1e6 * w / args.records:15.1f} {1e6 * c / args.records:14.1f}")
    (wb, cb), (wa, ca), _ = rows.values()
    print(f"ratio before/after: wall {wb / wa:.2f}x, cpu {cb / ca:.2f}x")


if __name__ == "__main__":
    main()
