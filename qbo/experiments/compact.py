"""Compact units: a classical learner's every call in a binary call file, its records at checkpoints.

A classical unit on a static problem makes one oracle call a stage (Srinivas et al. Alg. 1;
Dai et al. Alg. 1 with eps = None), so at T = 10^6 a JSON line a call is most of the run's
time, memory and disk. Where the policy has a compiled ``Stepper``
(``qbo.algorithms.compiled``) and every arm's sample is a two-outcome draw on the exact
executor, the unit is *compact*:

* ``calls/KEY.calls`` holds every call, in order, as a packed little-endian record of
  ``CALL_DTYPE`` (uint32 arm, float64 reward: 12 bytes), appended chunk by chunk;
  ``np.fromfile(path, CALL_DTYPE)`` reads it.
* The journal (``qbo.experiments.journal``) holds stage records only at the checkpoint calls
  (``checkpoints``): at least 100 per decade (log-spaced), the two calls either side of each
  point of regret.png's grids (so a figure is the one every call would draw) and the last.
  A record describes that call (``stage`` is its number) and carries ``calls_sha256``, the
  digest of the call file through it, so the hash chain covers the call file.
* A journal checkpoint holds the unit's generator, the policy's own generator and its
  sufficient statistics, and the call count (the offset in the call file). A resume truncates
  the call file to that offset, checks its digest, replays it through the stepper (compiled:
  the same posterior bit for bit), checks the statistics, restores the generators, and goes
  on: the same files as an uninterrupted run.

Memory is O(arms + records): chunks of at most ``MAX_CHUNK`` calls pass through, the call
file is streamed on a resume. docs/runs.md describes the files.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from qbo.algorithms.base import PolicyBase
from qbo.algorithms.compiled import RewardTable, Stepper
from qbo.errors import BadFile
from qbo.experiments.clock import Clock, FixedClock
from qbo.experiments.folder import unit_key
from qbo.experiments.journal import Replay, UnitJournal
from qbo.experiments.records import STAGE_KEYS
from qbo.experiments.trial import Progress
from qbo.files import fsync_folder
from qbo.problems.base import Problem
from qbo.sampling import two_outcome_table

CALLS = "calls"  # the run folder's directory of call files
CALL_DTYPE = np.dtype([("arm", "<u4"), ("reward", "<f8")])  # packed: 12 bytes a call
MAX_CHUNK = 1 << 16  # calls of one kernel run (the buffers hold 28 bytes a call)
PER_DECADE = 100  # log-spaced checkpoints per decade of calls
PLOT_POINTS = 400  # regret.png's grids (qbo.experiments.plot.regret_curves)
_READ = 1 << 16  # calls read at a time on a resume or a check


def checkpoints(budget: int) -> np.ndarray:
    """The calls after which a compact unit writes a record, increasing, ending at ``budget``:
    floor(10^(k/100)) for k = 0, 1, ... (every call below 100), both calls around each point
    of ``linspace(0, budget, PLOT_POINTS)`` and of ``geomspace(1, budget, PLOT_POINTS)`` (the
    grids of ``qbo.experiments.plot.regret_curves``, linear and for ``qbo plot --logx``), and
    ``budget``."""
    k = np.arange(int(math.ceil(PER_DECADE * math.log10(max(budget, 1)))) + 1)
    logs = np.floor(10.0 ** (k / PER_DECADE)).astype(np.int64)
    grid = np.floor(np.concatenate([np.linspace(0, budget, PLOT_POINTS),
                                    np.geomspace(1, max(budget, 2), PLOT_POINTS)])).astype(np.int64)
    points = np.concatenate([np.arange(1, 101), logs, grid, grid + 1, [budget]])
    return np.unique(points[(points >= 1) & (points <= budget)])


def call_file(out: Path, key: str) -> Path:
    """Where unit ``key``'s call file lives in run folder ``out``."""
    return out / CALLS / f"{key}.calls"


class CompactUnit:
    """A compact unit's loop, call file and checkpoints (module docstring)."""

    def __init__(self, path: Path, stepper: Stepper, table: RewardTable, rng: np.random.Generator) -> None:
        self.path = path
        self.stepper = stepper
        self.table = table
        self.rng = rng
        self._sha = hashlib.sha256()
        self._fd: int | None = None
        self._calls = 0

    # ------------------------------------------------------------------ resume

    def resume(self, replay: Replay, journal: UnitJournal) -> Progress:
        """Continue from the journal's last checkpoint (module docstring); a fresh unit starts
        an empty call file. Installs the checkpoint state on ``journal``."""
        journal.state = self.state
        records = replay.records
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not records:
            self._open(truncate_to=0)
            return Progress()
        last = records[-1]
        if "calls_sha256" not in last:
            raise BadFile(f"journal '{journal.path}' holds a record a call, where this qbo writes a compact unit "
                          "(docs/runs.md); finish the run with the qbo that started it, or start afresh")
        calls, state = last["cum_calls"], replay.state
        if state is None or state.get("calls") != calls or "policy" not in state:
            raise BadFile(f"journal '{journal.path}': its last checkpoint does not match its last record "
                          f"(call {calls}); the journal was tampered with")
        size = self.path.stat().st_size if self.path.exists() else 0
        if size < calls * CALL_DTYPE.itemsize:
            raise BadFile(f"call file '{self.path}' holds {size // CALL_DTYPE.itemsize} calls, its journal "
                          f"{calls}; the unit cannot be resumed")
        self._open(truncate_to=calls * CALL_DTYPE.itemsize)
        for chunk in _chunks(self.path, calls):
            self._sha.update(chunk.tobytes())
            self.stepper.replay(chunk["arm"].astype(np.int64), chunk["reward"])
        self._calls = calls
        if self._digest() != last["calls_sha256"]:
            raise BadFile(f"call file '{self.path}' differs from what its journal recorded at call {calls}: "
                          "it was edited; the unit cannot be resumed")
        if self.stepper.statistics() != state["policy"]["statistics"]:
            raise BadFile(f"journal '{journal.path}': the call file replays to other statistics than its "
                          "checkpoint holds; the journal or call file was tampered with")
        self.stepper.restore(state["policy"]["rng"])
        self.rng.bit_generator.state = state["rng"]
        return Progress(stage=calls, calls=calls, regret=last["cum_regret"])

    def state(self) -> dict[str, Any]:
        """A journal checkpoint: the call file made durable first, then what a resume needs."""
        self.sync()
        return {"rng": self.rng.bit_generator.state, "calls": self._calls,
                "policy": {"statistics": self.stepper.statistics(), "rng": self.stepper.random_state()}}

    # ------------------------------------------------------------------ running

    def run(self, at: Progress, budget: int, journal: UnitJournal, on_record) -> None:
        """Play the unit to ``budget`` calls in kernel runs of at most ``MAX_CHUNK`` calls,
        each ending at the last checkpoint within its reach: its calls are appended to the call
        file and a record of every checkpoint it passed to ``journal`` (``on_record`` hears of
        each); the journal commits, at most every ``flush_every_s``, after a run's last record,
        where the state is the one that record describes."""
        cap = min(MAX_CHUNK, max(budget, 1))
        arms, values = np.empty(cap, dtype=np.int64), np.empty(cap)
        block = np.empty(cap, dtype=CALL_DTYPE)
        gaps, size = self.table.gaps, CALL_DTYPE.itemsize
        pending = checkpoints(budget)
        pending = pending[pending > at.calls]
        every, journal.flush_every_s = journal.flush_every_s, math.inf  # commits happen here
        last_commit, k = time.monotonic(), 0
        while at.calls < budget:
            start = at.calls
            reach = int(np.searchsorted(pending, start + cap, side="right")) - 1
            count = int(pending[reach]) - start if reach >= k else min(cap, budget - start)
            self.stepper.run(count, self.table, self.rng, arms, values)
            block["arm"][:count], block["reward"][:count] = arms[:count], values[:count]
            data = block[:count].tobytes()
            self._write(data)
            cum = np.add.accumulate(np.concatenate(([at.regret], gaps[arms[:count]])))
            done = 0
            while k < pending.shape[0] and pending[k] <= start + count:
                c = int(pending[k]) - start
                self._sha.update(data[done * size:c * size])
                done = c
                record = dict(zip(STAGE_KEYS, (start + c, int(arms[c - 1]), None, "sample", 1, 1,
                                               float(values[c - 1]), start + c, float(cum[c]), None)))
                record["calls_sha256"] = self._digest()
                self._calls = start + c
                journal.append(record)
                on_record(record)
                k += 1
            self._sha.update(data[done * size:])
            at.calls, at.regret, self._calls = start + count, float(cum[count]), start + count
            at.stage = at.calls
            if done == count and time.monotonic() - last_commit >= every:  # the state of the last record
                journal.commit()
                last_commit = time.monotonic()
        journal.flush_every_s = every
        self.sync()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def _digest(self) -> str:
        return self._sha.copy().hexdigest()[:16]

    def _open(self, truncate_to: int) -> None:
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.ftruncate(self._fd, truncate_to)
        os.lseek(self._fd, truncate_to, os.SEEK_SET)
        if created:
            fsync_folder(self.path.parent)

    def sync(self) -> None:
        """Make the call file durable (before a journal checkpoint refers to it)."""
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def compact_unit(problem: Problem, policy: PolicyBase, clock: Clock, executor: Any, rng: np.random.Generator,
                 out: Path, key: str) -> CompactUnit | None:
    """The unit as a compact one, or None: a classical policy with a ``stepper()``, on a static
    problem (no initial design, no time) whose exact means are known, every arm a two-outcome
    draw on the exact executor."""
    if policy.quantum or type(clock) is not FixedClock or clock.design or clock.timed or not problem.known_means:
        return None  # unknown means: the summary reads every reward (qbo.experiments.summary)
    stepper = policy.stepper()
    if stepper is None:
        return None
    table = reward_table(problem, executor)
    if table is None:
        return None
    return CompactUnit(call_file(out, key), stepper, table, executor.rng)


def reward_table(problem: Problem, executor: Any) -> RewardTable | None:
    """Every arm's two-outcome reward draw on ``executor`` and its regret, as one table; None
    if some arm's oracle is not a two-outcome draw (``qbo.sampling.two_outcome_table``)."""
    rows = [two_outcome_table(executor, problem.oracle(arm)) for arm in range(problem.arms.shape[0])]
    if any(row is None for row in rows):
        return None
    p_first, first, second = (np.array(column, dtype=float) for column in zip(*rows))
    gaps = np.array([float(problem.regret(arm)) for arm in range(len(rows))])
    return RewardTable.of(p_first, first, second, gaps)


def _chunks(path: Path, calls: int):
    """The first ``calls`` records of a call file, ``_READ`` at a time."""
    with open(path, "rb") as f:
        left = calls
        while left:
            n = min(left, _READ)
            block = np.frombuffer(f.read(n * CALL_DTYPE.itemsize), dtype=CALL_DTYPE)
            if block.shape[0] != n:
                raise BadFile(f"call file '{path}' ends after {calls - left + block.shape[0]} calls, expected {calls}")
            yield block
            left -= n


def verify_calls(out: Path, records: list[dict[str, Any]]) -> None:
    """Check every compact unit's call file against its records: its size, and its digest at
    every checkpoint record; one-line ``BadFile`` naming the file otherwise."""
    units: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for record in records:
        if "calls_sha256" in record:
            units.setdefault((record["trial"], record["algorithm"]), []).append(record)
    for (trial, algorithm), rows in units.items():
        path = call_file(out, unit_key(trial, algorithm))
        calls = rows[-1]["cum_calls"]
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise BadFile(f"cannot read call file '{path}': {exc.strerror}") from None
        if size != calls * CALL_DTYPE.itemsize:
            raise BadFile(f"call file '{path}' holds {size} bytes, its records {calls} calls of "
                          f"{CALL_DTYPE.itemsize} bytes; the run's records are damaged")
        sha, seen, at = hashlib.sha256(), 0, 0
        for chunk in _chunks(path, calls):
            data, done = chunk.tobytes(), 0  # bytes of the chunk already hashed
            while at < len(rows) and rows[at]["cum_calls"] <= seen + chunk.shape[0]:
                cut = (rows[at]["cum_calls"] - seen) * CALL_DTYPE.itemsize
                sha.update(data[done:cut])
                done = cut
                if sha.copy().hexdigest()[:16] != rows[at]["calls_sha256"]:
                    raise BadFile(f"call file '{path}' differs from its records at call {rows[at]['cum_calls']}: "
                                  "it was edited; the run's records are damaged")
                at += 1
            sha.update(data[done:])
            seen += chunk.shape[0]
