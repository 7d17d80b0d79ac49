"""What a stage loop needs from the world it runs in: the oracle of an arm now, one classical
sample, and what a stage costs in regret and (for drifting problems) in time.

The stage loop (``qbo.experiments.trial``) is the same for every problem; a clock is the part
that differs.

* ``FixedClock``: a static ``Problem`` (Dai et al. 2023).  There is no time: a stage's
  charged calls each pay the arm's gap ``f(x*) - f(x_s)`` (no regret, None, where the
  problem's exact means are unknown).
* ``RoundClock``: the drifting problem run as the time-varying seed runs it (Imamura et al.,
  seed 000, Sec. 5, Fig. 1), for classical policies only: one round is one noisy evaluation
  ``y_n = f(x_n, tau_n) + z_n`` that takes the arm's evaluation time t(x) (non-constant), the
  field drifts by it, and the round pays seed Eq. (1)'s ``max_x f(x, tau_n) - f(x_n, tau_n)``.
  The first ``init`` rounds play a random design (seed Sec. 5.2).
* ``DriftClock``: the drifting problem with QMC stages (honest accounting): a stage's oracle
  encodes f at the stage's start (``drifting_oracle``); the stage takes ``overhead + calls *
  sec_per_call`` seconds (or its wall time plus the overhead) and its calls are
  charged in up to 8 chunks, each at the gap after that chunk's drift.  The calls left after
  the stop rule are spent on the recommended arm while f drifts on.

Randomness of a drifting world: per (seed, trial), f_0 and the drift innovations
(stream 0), the observation noise and time noise (stream 1) and the initial design (stream 2);
the same for every algorithm (common random numbers).  A clock is a deterministic function of
those seeds and of the stages played, so ``replay`` rebuilds it from a unit's journal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.problems.base import Problem
from qbo.problems.drifting import TVProblem, drifting_oracle
from qbo.sampling import classical_sampler, classical_samples

__all__ = ["Clock", "DriftClock", "FixedClock", "RoundClock", "make_clock"]


class Clock(Protocol):
    """A unit's world, as the stage loop sees it (module doc)."""

    design: tuple[int, ...]  # arms played before the policy is asked (an initial design)
    timed: bool  # True: records carry elapsed, time and per-call regret

    def oracle(self, arm: int) -> Oracle: ...

    def sample(self, arm: int, executor: Executor) -> float: ...

    def stage(self, arm: int, charged: int, honest: int, wall: float) -> tuple[float | None, float]:
        """(elapsed time or None, regret of the ``charged`` calls)."""
        ...

    def exploit(self, arm: int, calls: int) -> tuple[float | None, float]: ...

    def time(self) -> float | None: ...

    def replay(self, line: dict[str, Any]) -> None:
        """Redo a journalled stage's effect on the world (not on the policy)."""
        ...


class FixedClock:
    """A static problem: no time, calls pay the gap of their arm.

    A static arm's oracle, gap and sampler never change, so they are built once per arm
    (the sampler once per executor too: ``qbo.sampling.classical_sampler``, the same draws
    as ``classical_samples``)."""

    design: tuple[int, ...] = ()
    timed = False

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self._known = problem.known_means
        self._gaps: dict[int, float] = {}
        self._samplers: dict[int, Callable[[], float]] = {}
        self._sampled_on: Executor | None = None

    def oracle(self, arm: int) -> Oracle:
        return self.problem.oracle(arm)

    def sample(self, arm: int, executor: Executor) -> float:
        if executor is not self._sampled_on:
            self._samplers, self._sampled_on = {}, executor
        draw = self._samplers.get(arm)
        if draw is None:
            draw = self._samplers[arm] = classical_sampler(executor, self.problem.oracle(arm))
        return draw()

    def stage(self, arm: int, charged: int, honest: int, wall: float) -> tuple[None, float | None]:
        """No time; the stage's regret, None where the problem's exact means are unknown."""
        if not self._known:
            return None, None
        gap = self._gaps.get(arm)
        if gap is None:
            gap = self._gaps[arm] = float(self.problem.regret(arm))
        return None, charged * gap

    def exploit(self, arm: int, calls: int) -> tuple[None, float | None]:
        return self.stage(arm, calls, calls, 0.0)

    def time(self) -> None:
        return None

    def replay(self, line: dict[str, Any]) -> None:
        pass


def _world(problem: TVProblem, seeds: tuple[int, int]):
    return problem.world(np.random.default_rng(seeds + (0,)))


class RoundClock:
    """The seed's rounds on a drifting problem (module doc); classical policies only."""

    timed = True

    def __init__(self, problem: TVProblem, seeds: tuple[int, int], rounds: int) -> None:
        self.world = _world(problem, seeds)
        self.world.rng = np.random.default_rng(seeds + (1,))
        design = np.random.default_rng(seeds + (2,)).choice(problem.num_arms, size=min(problem.init, rounds), replace=False)
        self.design = tuple(int(a) for a in design)
        self._last: tuple[float, float] | None = None

    def oracle(self, arm: int) -> Oracle:
        raise ValueError("a classical time-varying run observes f directly; quantum policies need the QMC stage model")

    def sample(self, arm: int, executor: Executor) -> float:
        """Seed Alg. 1 line 4: the evaluation takes t(x), then ``y = f(x, tau) + z``."""
        y, t, r = self.world.evaluate(arm)
        self._last = (t, r)
        return y

    def stage(self, arm: int, charged: int, honest: int, wall: float) -> tuple[float, float]:
        t, r = self._last
        return t, charged * r

    def exploit(self, arm: int, calls: int) -> tuple[float, float]:
        return 0.0, self.world.charge(arm, 0.0, calls)

    def time(self) -> float:
        return self.world.time

    def replay(self, line: dict[str, Any]) -> None:
        if line["method"] == "exploit":
            self.exploit(line["arm"], line["oracle_calls"])
            return
        y = self.sample(line["arm"], None)
        if y != line["estimate"]:
            raise ValueError(f"journal does not replay: stage {line['stage']} observed {line['estimate']!r}, replay {y!r}")


class DriftClock:
    """QMC stages on a drifting problem (module doc)."""

    design: tuple[int, ...] = ()
    timed = True

    def __init__(self, problem: TVProblem, seeds: tuple[int, int]) -> None:
        self.world = _world(problem, seeds)
        self.model = problem.stages

    def oracle(self, arm: int) -> Oracle:
        m = self.model
        return drifting_oracle(float(self.world.field.values[arm]), m.oracle, m.window, m.std)

    def sample(self, arm: int, executor: Executor) -> float:
        (value,) = classical_samples(executor, self.oracle(arm), 1)
        return float(value)

    def stage(self, arm: int, charged: int, honest: int, wall: float) -> tuple[float, float]:
        m = self.model
        elapsed = m.overhead + (wall if m.clock == "wall" else honest * m.sec_per_call)
        return elapsed, self.world.charge(arm, elapsed, charged)

    def exploit(self, arm: int, calls: int) -> tuple[float, float]:
        elapsed = calls * self.model.sec_per_call
        return elapsed, self.world.charge(arm, elapsed, calls)

    def time(self) -> float:
        return self.world.time

    def replay(self, line: dict[str, Any]) -> None:
        self.world.charge(line["arm"], line["elapsed"], line["oracle_calls"])


def make_clock(problem: Problem | TVProblem, seeds: tuple[int, int], budget: int, staged: bool) -> Clock:
    """The clock of one unit: ``seeds`` = (run seed, trial); ``staged``: some policy of the run
    is quantum (a drifting problem then runs QMC stages for every policy)."""
    if not isinstance(problem, TVProblem):
        return FixedClock(problem)
    return DriftClock(problem, seeds) if staged else RoundClock(problem, seeds, budget)
