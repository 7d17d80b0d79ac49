"""LRAE's scalar log-likelihood (``qbo.qmc.lr_interval``) as a loop over the pooled powers,
compiled by numba where the optional extra ``fast`` is installed and run as plain Python where
not: the same function, the same operations in the same order, so the same results either way.

Brent's minimiser and root finder (``scipy.optimize``) evaluate it one theta at a time; a numpy
call on a dozen powers costs tens of microseconds of overhead, the loop a fraction of that.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.compiling import COMPILED, jit

__all__ = ["COMPILED", "loglik_point"]

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


loglik_point = jit(_loglik_point)
