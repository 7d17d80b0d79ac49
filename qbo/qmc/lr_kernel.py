"""LRAE's log-likelihood (``qbo.qmc.lr_interval``) as a loop over the pooled powers, at one
theta (``loglik_point``) and on a grid (``loglik_points``: the same loop per point, so a theta
has one value whichever of the two computes it), compiled by numba where the optional extra
``fast`` is installed and run as plain Python where not: the same function, the same
operations in the same order, so the same results either way.

Brent's minimiser and root finder (``scipy.optimize``) evaluate it one theta at a time; a numpy
call on a dozen powers costs tens of microseconds of overhead, the loop a fraction of that.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.compiling import COMPILED, jit

__all__ = ["COMPILED", "loglik_point", "loglik_points"]

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


def _loglik_points(theta: np.ndarray, ks: np.ndarray, ns: np.ndarray, hs: np.ndarray) -> np.ndarray:
    """``loglik_point`` at every theta of a 1-d array (shape P), point by point."""
    out = np.empty(theta.shape[0])
    for i in range(theta.shape[0]):
        out[i] = loglik_point(theta[i], ks, ns, hs)
    return out


loglik_points = jit(_loglik_points)
