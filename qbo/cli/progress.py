"""Progress of `qbo run`: a bar with the time left on a terminal, one line every few seconds
without one (a log file, CI, nohup), nothing with ``--quiet``.

Progress goes to stderr, so stdout keeps only the summary table. The time left is the
elapsed time scaled by the work left (``eta_seconds``): units of different policies run at
different speeds, so it is a guide, not a promise. A Ctrl-C stops the periodic line at once
(the ticker waits on an event, and the bar's refresh thread is rich's own).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import typer

from qbo.errors import BadInput

EVERY_DEFAULT_S = 10.0
EVERY_MAX_S = 3600.0


def check_every(seconds: float) -> float:
    """The period of the progress line: a number in (0, EVERY_MAX_S]; BadInput otherwise."""
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and 0 < seconds <= EVERY_MAX_S):
        raise BadInput(f"--progress-every must be seconds in (0, {EVERY_MAX_S:g}], got {seconds}")
    return float(seconds)


def eta_seconds(done: float, total: float, elapsed: float) -> float | None:
    """Seconds left if the rest goes at the pace so far; None before any work is done."""
    if done <= 0 or total <= 0:
        return None
    return max(0.0, elapsed * (total - done) / done)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def progress_line(done: float, total: float, elapsed: float, what: str, last: str = "") -> str:
    """One line: percent of ``what``, the unit last heard of, elapsed and about how long is left."""
    share = 100.0 * done / total if total else 100.0
    eta = eta_seconds(done, total, elapsed)
    if done >= total:
        left = "writing the results"
    else:
        left = "time left unknown yet" if eta is None else f"about {_duration(eta)} left"
    at = f" ({last})" if last else ""
    return f"progress: {share:5.1f}% of {what}{at}, {_duration(elapsed)} elapsed, {left}"


class RunProgress:
    """Reports a run's progress (module docstring) through ``report(unit, calls, budget)``, or
    with ``units=True`` through ``report(unit, units_done, units_in_all)`` (a fanned-out run).

    ``units``: the number of run units (trials x policies); ``budget``: oracle calls per unit.
    ``terminal`` None asks stderr; ``clock`` and ``echo`` are replaceable for tests.
    """

    def __init__(
        self, units: int, budget: int, *, by_unit: bool = False, every: float = EVERY_DEFAULT_S,
        quiet: bool = False, terminal: bool | None = None,
        clock: Callable[[], float] = time.monotonic, echo: Callable[[str], Any] | None = None,
    ) -> None:
        self.by_unit = by_unit
        self.total = units * (1 if by_unit else budget)
        self.what = "units" if by_unit else "trials x budget"
        self.every = check_every(every)
        self.quiet = quiet
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self._clock = clock
        self._echo = echo or (lambda line: typer.echo(line, err=True))
        self._step = max(1, budget // 500)
        self._done: dict[str, int] = {}
        self._completed = 0
        self._last = ""
        self._start = clock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._bar: Any = None

    # --- the reporter the runner calls -------------------------------------------------
    def report(self, unit: str, calls: int, budget: int) -> None:
        if self.by_unit:  # (unit, units done, units in all)
            self._completed, self._last = calls, unit
        else:
            if calls - self._done.get(unit, 0) < self._step and calls < budget:
                return  # every 1/500 of a unit's budget, not on each of a run's ~10^5 stages
            self._done[unit] = calls
            self._completed, self._last = sum(self._done.values()), unit
        if self._bar is not None:
            self._bar.update(self._task, completed=self._completed, description=self._last)

    def line(self) -> str:
        """The progress line as of now."""
        return progress_line(self._completed, self.total, self._clock() - self._start, self.what, self._last)

    # --- context ------------------------------------------------------------------------
    def __enter__(self) -> Callable[[str, int, int], None]:
        self._start = self._clock()
        if self.quiet:
            return self.report
        if self.terminal:
            from rich.console import Console  # rich is typer's; only a terminal needs the bar
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
                TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), transient=True,
                console=Console(stderr=True),
            )
            self._bar.start()
            self._task = self._bar.add_task(self.what, total=self.total)
        else:
            self._ticker = threading.Thread(target=self._tick, name="qbo-progress", daemon=True)
            self._ticker.start()
        return self.report

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._echo(self.line())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1.0)
        if self._bar is not None:
            self._bar.stop()
