"""numba where it is installed (the extra ``fast``), plain Python where not (``qbo.algorithms.compiled``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

try:  # the optional extra 'fast'; the same functions run as Python without it
    import numba as _numba
except ImportError:  # pragma: no cover - exercised where numba is not installed
    _numba = None

__all__ = ["COMPILED", "draw_reward", "jit"]

F = TypeVar("F", bound=Callable[..., Any])
COMPILED = _numba is not None


def jit(function: F) -> F:
    """``function`` compiled by numba (no Python objects, cached on disk), or itself without numba."""
    if _numba is None:
        return function
    return _numba.njit(cache=True, nogil=True)(function)


@jit
def draw_reward(rng: np.random.Generator, p_first: float, first: float, second: float) -> float:
    """One classical sample on the exact executor (``qbo.sampling.classical_sampler``)."""
    return first if rng.binomial(1, p_first) else second
