"""The learners' compiled helpers (``qbo.compiling.jit``: numba where installed, plain Python where not)."""

from __future__ import annotations

import numpy as np

from qbo.compiling import COMPILED, jit

__all__ = ["COMPILED", "draw_reward", "jit"]


@jit
def binomial_one(rng: np.random.Generator, p: float, q: float, qn: float, flip: bool) -> int:
    """``rng.binomial(1, p0)`` as numpy draws it (its inversion branch, ``random_binomial``
    with n = 1), with the per-arm constants precomputed by ``qbo.algorithms.compiled.binomial_constants``: the same
    draws from ``rng`` and the same result, without numpy's exp and log of every call."""
    if p == 0.0 and not flip:  # numpy returns 0 for p0 = 0 without a draw (p0 = 1 draws once)
        return 0
    x, px, u = 0, qn, rng.random()
    while u > px:
        x += 1
        if x > 1:  # numpy's bound, min(n, np + 10 sqrt(np q + 1)), is 1 for n = 1
            x, px, u = 0, qn, rng.random()
        else:
            u -= px
            px = (p * px) / q
    return 1 - x if flip else x


@jit
def draw_reward(rng: np.random.Generator, coin: np.ndarray, first: float, second: float) -> float:
    """One classical sample on the exact executor (``qbo.sampling.classical_sampler``:
    ``first if rng.binomial(1, p0) else second``); ``coin`` is a row of ``RewardTable.coins``."""
    return first if binomial_one(rng, coin[0], coin[1], coin[2], coin[3] != 0.0) else second
