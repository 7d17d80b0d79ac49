"""LRAE's scalar log-likelihood (``qbo.qmc.lr_interval``) as a loop over the pooled powers,
compiled by numba where the optional extra ``fast`` is installed and run as plain Python where
not: the same function, the same operations in the same order, so the same results either way.

Brent's minimiser and root finder (``scipy.optimize``) evaluate it one theta at a time; a numpy
call on a dozen powers costs tens of microseconds of overhead, the loop a fraction of that.
"""

from __future__ import annotations

import math

import numpy as np

try:  # the optional extra 'fast'; the same function runs as Python without it
    import numba as _numba
except ImportError:  # pragma: no cover - exercised where numba is not installed
    _numba = None

__all__ = ["COMPILED", "loglik_point"]

COMPILED = _numba is not None
TINY = 1e-300


def _loglik_point(theta: float, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> float:
    """l(theta) = sum_K h_K log sin^2(K theta) + (n_K - h_K) log cos^2(K theta), each factor
    floored at TINY (``qbo.qmc.lr_interval.loglik`` at one theta)."""
    total = 0.0
    for j in range(ks.shape[0]):
        sn = math.sin(theta * ks[j])
        s = sn * sn  # not sn ** 2: Python's pow and numba's square may round differently
        c = 1.0 - s
        total += hs[j] * math.log(max(s, TINY)) + (ns[j] - hs[j]) * math.log(max(c, TINY))
    return total


loglik_point = _numba.njit(cache=True, nogil=True)(_loglik_point) if _numba is not None else _loglik_point
