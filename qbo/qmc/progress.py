"""Progress of a running estimate: rounds, honest calls and a predicted time left.

An estimator reports each round it runs to a ``Tracker``; the tracker passes a ``Progress``
value to the listener installed around the estimate with ``listening(listener)``. The
listener lives in a context variable, so an estimator that wraps another (the calibration-
aware IAE, ``auto``) passes it on without knowing of it, and a caller that runs many
estimates (``qbo run``) installs one listener around all of them. Without a listener a
tracker does nothing, and the cost model (``planned``) is never evaluated for it.

The ETA is the elapsed time scaled by the calls left of the plan (calls planned by the
estimator's cost model or budget, Dai et al. 2023 Alg. 1 line 5); a plan the estimate has
already passed gives no ETA. ``ProgressPrinter`` is a listener that shows one line.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TextIO

from qbo.qmc.result import Round


@dataclass(frozen=True)
class Progress:
    """What an estimate has done so far."""

    method: str
    rounds: int
    calls: int
    planned_calls: float | None
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        """Seconds left if the rest of the plan runs at the rate so far (None: no plan, no
        calls yet, or the plan already spent)."""
        if self.planned_calls is None or self.calls <= 0 or self.calls >= self.planned_calls:
            return None
        return self.elapsed_s * (self.planned_calls - self.calls) / self.calls


ProgressListener = Callable[[Progress], None]
PLAN_AFTER_S = 2.0
_LISTENER: ContextVar[tuple[ProgressListener, float] | None] = ContextVar("qbo_progress_listener", default=None)


@contextlib.contextmanager
def listening(listener: ProgressListener | None, plan_after_s: float = PLAN_AFTER_S) -> Iterator[None]:
    """Report the progress of every estimate run inside the block to ``listener``; an
    estimate's plan (its cost model, which can take seconds) is asked for only once it has
    run ``plan_after_s`` seconds, so short estimates never pay for an ETA."""
    token = _LISTENER.set(None if listener is None else (listener, plan_after_s))
    try:
        yield
    finally:
        _LISTENER.reset(token)


class Tracker:
    """Counts one estimate's rounds and calls and tells the current listener, if any."""

    def __init__(self, method: str, planned: Callable[[], float | None]) -> None:
        heard = _LISTENER.get()
        self.listener, self.plan_after = (None, 0.0) if heard is None else heard
        self.method, self.plan = method, planned
        self.planned: float | None = None
        self.asked = False  # the plan was asked for (once)
        self.rounds = self.calls = 0
        self.start = time.perf_counter()
        self._tell()

    def add(self, rounds: Iterable[Round]) -> None:
        """Count rounds that just ran (each at ``Round.oracle_calls``)."""
        if self.listener is None:
            return
        for r in rounds:
            self.rounds += 1
            self.calls += r.oracle_calls
        self._tell()

    def told(self, rounds: tuple[Round, ...]) -> tuple[Round, ...]:
        """``add`` the rounds and hand them back (for a sampler: ``lambda k, n: told(run(k, n))``)."""
        self.add(rounds)
        return rounds

    def _tell(self) -> None:
        if self.listener is None:
            return
        if not self.asked and time.perf_counter() - self.start >= self.plan_after:
            self.asked = True
            self.planned = self.plan()
        self.listener(Progress(self.method, self.rounds, self.calls, self.planned, time.perf_counter() - self.start))


class ProgressPrinter:
    """A listener that shows the latest progress as one line on ``stream``: every ``period``
    seconds while the block runs (a ticker thread, so a long round still shows the time
    passing), from ``delay`` seconds on (short estimates print nothing). On a terminal the
    line is rewritten in place; elsewhere (a log, a pipe) each report is its own line.

    Use as ``with ProgressPrinter(sys.stderr) as printer, listening(printer): ...``.
    """

    def __init__(self, stream: TextIO, period: float = 4.0, delay: float = 3.0, label: str = "estimate") -> None:
        self.stream, self.period, self.delay, self.label = stream, period, delay, label
        self._latest: tuple[Progress, float] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = time.perf_counter()
        self._shown = False
        self._tty = stream.isatty()

    def __call__(self, progress: Progress) -> None:
        with self._lock:
            self._latest = (progress, time.perf_counter())

    def __enter__(self) -> ProgressPrinter:
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._tick, name="qbo-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown and self._tty:
            self.stream.write("\n")
            self.stream.flush()

    def _tick(self) -> None:
        due = self._start + min(self.delay, self.period)  # then a fixed grid: a slow write or a busy GIL does not push later ticks
        while not self._stop.wait(max(0.0, due - time.perf_counter())):
            now = time.perf_counter()
            due += self.period * max(1, int((now - due) // self.period) + 1)
            if now - self._start >= self.delay:
                self.stream.write(("\r" if self._tty else "") + self.line(now) + ("" if self._tty else "\n"))
                self.stream.flush()
                self._shown = True

    def line(self, now: float) -> str:
        """The progress line at time ``now`` (``time.perf_counter``)."""
        with self._lock:
            latest = self._latest
        elapsed = now - self._start
        if latest is None:
            return f"{self.label}: {elapsed:.0f} s, first round running"
        progress, heard = latest
        plan = "" if progress.planned_calls is None else f" of ~{progress.planned_calls:,.0f} planned"
        eta = progress.eta_s
        left = "" if eta is None else f", ETA {max(eta - (now - heard), 0.0):.0f} s"
        return (f"{self.label}: {progress.method} {progress.rounds} rounds, {progress.calls:,} calls{plan}, "
                f"{elapsed:.0f} s{left}")
