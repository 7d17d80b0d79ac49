"""Classical learners at their compiled floor: a policy's whole sample loop as one kernel.

A classical policy of one sample a round (``thompson``, ``kl-ucb``, ``gp-ucb`` with a fixed
length scale on the rank-one or the Cholesky posterior, ``gp-ts``, ``linucb``) spends nearly all its time in Python overhead
around a few floating-point operations per arm. Its ``stepper()`` gives a ``Stepper``: the
same ask, reward draw and tell, round after round, as one loop over scalars that runs
``count`` rounds at a time, on arrays the policy owns (its state is always the policy's).

Mechanism: numba (``pip install 'qbo[fast]'``) compiles the loops (``qbo.algorithms.jit``, imported
only by the kernel modules, so ``import qbo`` does not pay numba's import); without it the very same
functions run as Python, slowly, with the same results. numba is an extra, not a dependency,
because its wheels trail new Python releases and platforms that qbo otherwise supports; the
fallback keeps every platform correct. Identical results both ways: the loops use only IEEE
operations that Python and LLVM round alike (no fast-math, no fused multiply-add), libm's
``log``/``exp``/``sqrt``, and numpy ``Generator`` draws, which numba reproduces bit for bit on
the same bit generator (its state advances in the caller's object). tests/test_compiled.py
checks both against the policy's own ask/tell loop.

A reward table (``RewardTable``) is what a classical sample of every arm draws on qbo's exact
executor (``qbo.sampling.two_outcome_table``): outcome ``first[i]`` with probability
``p_first[i]`` (``rng.binomial(1, p)``), else ``second[i]``; ``gaps[i]`` is arm i's regret.
The kernels draw that binomial as numpy's C code does for n = 1 (``qbo.algorithms.jit.
binomial_one``, the same draws and results) with its exp and log computed once an arm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = ["RewardTable", "Stepper"]


@dataclass(frozen=True)
class RewardTable:
    """Per arm: the constants of numpy's binomial draw of the first outcome (``coins``, m x 4,
    ``binomial_constants``), the two outcomes, the arm's regret f(x*) - f(x_i), and the
    probability of the first outcome itself (``p_first``, for a loop stepped in Python, which
    draws ``rng.binomial(1, p_first)`` as ``qbo.sampling.classical_sampler`` does)."""

    coins: np.ndarray
    first: np.ndarray
    second: np.ndarray
    gaps: np.ndarray
    p_first: np.ndarray

    @classmethod
    def of(cls, p_first: np.ndarray, first: np.ndarray, second: np.ndarray, gaps: np.ndarray) -> RewardTable:
        """The table of arms whose first outcome has probability ``p_first``."""
        coins = np.array([binomial_constants(float(p)) for p in p_first], dtype=float).reshape(-1, 4)
        return cls(coins, np.asarray(first, dtype=float), np.asarray(second, dtype=float), np.asarray(gaps, dtype=float),
                   np.asarray(p_first, dtype=float))


def binomial_constants(p0: float) -> tuple[float, float, float, float]:
    """(p, q, qn, flip) of ``binomial_one`` for ``binomial(1, p0)``: numpy draws 1 - binomial(1, 1 - p0)
    when p0 > 1/2, with q = 1 - p and qn = exp(1 * log(q)) (libm, as numpy's C code)."""
    flip = p0 > 0.5
    p = 1.0 - p0 if flip else p0
    q = 1.0 - p
    return p, q, math.exp(math.log(q)), float(flip)


class ArmSumsStepper:
    """What the deterministic GP steppers share (those keeping per-arm counts ``_n`` and sums
    ``_sum``): their checkpoint statistics and a random state of None."""

    _n: np.ndarray
    _sum: np.ndarray

    def statistics(self) -> dict[str, Any]:
        return {"n": self._n.tolist(), "sum": self._sum.tolist()}

    def random_state(self) -> dict[str, Any] | None:
        return None

    def restore(self, state: dict[str, Any] | None) -> None:
        """Nothing random to restore (the posterior is deterministic given its tells)."""


class Stepper(Protocol):
    """A policy's sample loop as one kernel (module docstring)."""

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        """Play ``count`` rounds: ask, draw the reward from ``table`` with ``rng``, tell;
        the arms and rewards go to ``arms[:count]`` and ``values[:count]``."""

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        """Tell the rounds (``arms``, ``values``) again, without drawing (a resume)."""

    def statistics(self) -> dict[str, Any]:
        """The policy's sufficient statistics (per-arm counts and sums), JSON-able, for checkpoints."""

    def random_state(self) -> dict[str, Any] | None:
        """The policy's own generator state (None for a deterministic policy)."""

    def restore(self, state: dict[str, Any] | None) -> None:
        """Set the generator state ``random_state`` gave (the statistics come from ``replay``)."""
