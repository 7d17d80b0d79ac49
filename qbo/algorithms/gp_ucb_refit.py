"""The exact GP posterior over the arms from per-arm statistics, as scalar code (compiled where numba is).

What the compiled GP-UCB loops with a changing length scale share: A-GP-UCB's
(``qbo.algorithms.gp_ucb_schedule``), the MLE baseline's (``qbo.algorithms.gp_ucb_mle``) and
the MLE search (``qbo.algorithms.lengthscale.mle_search``):

* the stationary kernels of ``qbo.gp.kernels`` by code (``KERNEL_CODES``), as a function of
  the scaled distance ``r = ||x - x'|| / theta`` (``kernel_value``) and as a row over the arms
  (``kernel_row``);
* the posterior refit from the statistics (``refit``; Dai et al. Eq. (3) with eps = 1, the
  maths of ``CholeskyArmPosterior.from_stats``): the kernel rows of the s observed arms
  (s x m), ``L = chol(S K_UU S + lambda I)``, ``V = L^{-1} S K_{U,:}``, ``E = colsum(V^2)``,
  the mean ``V^T L^{-1} S ybar`` and the information gain ``sum log L_ii - s/2 log lambda``:
  O(m s^2 + s^3);
* room for more observed arms (``grown_rows``; ``qbo.algorithms.gp_ucb_cholesky``'s layout).

Every operation is IEEE arithmetic with libm's ``sqrt``, ``exp`` and ``log``, so the results
are the same with numba and without it (``qbo.compiling.jit``).
"""

from __future__ import annotations

import math

import numpy as np

from qbo.algorithms.jit import jit

__all__ = ["KERNEL_CODES", "grown", "grown_rows", "kernel_row", "kernel_value", "refit"]

KERNEL_CODES: dict[str, int] = {"se": 0, "matern12": 1, "matern32": 2, "matern52": 3}  # the stationary kernels


@jit
def kernel_value(code: int, r: float, scale: float) -> float:
    """k(r) of ``qbo.gp.kernels`` at the scaled distance r = ||x - x'|| / theta (``KERNEL_CODES``)."""
    if code == 0:
        return scale * math.exp(-0.5 * r * r)
    if code == 1:
        return scale * math.exp(-r)
    if code == 2:
        z = math.sqrt(3.0) * r
        return scale * (1.0 + z) * math.exp(-z)
    z = math.sqrt(5.0) * r
    return scale * (1.0 + z + z * z / 3.0) * math.exp(-z)


@jit
def kernel_row(code: int, theta: float, scale: float, points: np.ndarray, j: int, out: np.ndarray) -> None:
    """``out[i] = k(x_i, x_j)`` at length scale ``theta`` and output scale ``scale``."""
    m, d = points.shape
    for i in range(m):
        acc = 0.0
        for c in range(d):
            diff = points[i, c] - points[j, c]
            acc += diff * diff
        out[i] = kernel_value(code, math.sqrt(acc) / theta, scale)


@jit
def refit(code: int, theta: float, scale: float, lam: float, points: np.ndarray, s: int, mu: np.ndarray,
          E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, W: np.ndarray,
          b: np.ndarray, work: np.ndarray) -> float:
    """The posterior from the statistics of the s observed arms (rows ``arm_of[:s]``, weights
    ``W``, weighted sums ``b``) at (theta, scale): K, L, V, E and mu in place (module
    docstring); ``work[0]`` and ``work[1]`` are scratch. Returns the information gain."""
    m = mu.shape[0]
    for r in range(s):
        kernel_row(code, theta, scale, points, arm_of[r], K[r])
    # L = chol(S K_UU S + lambda I) and V = L^{-1} S K_{U,:}: gp_ucb_cholesky._refit's sums, each
    # element's in its order, with the loops over the m columns innermost (contiguous rows)
    sw, z = work[0], work[1]
    for i in range(s):
        sw[i] = math.sqrt(W[i])
    for i in range(s):  # Cholesky-Banachiewicz, by rows
        for k in range(i + 1):
            acc = sw[i] * K[k, arm_of[i]] * sw[k] + (lam if i == k else 0.0)
            for t in range(k):
                acc -= L[i, t] * L[k, t]
            L[i, k] = math.sqrt(acc) if i == k else acc / L[k, k]
        for k in range(i + 1, L.shape[1]):
            L[i, k] = 0.0
    for i in range(s):
        row, krow, x = V[i], K[i], sw[i]
        for col in range(m):
            row[col] = x * krow[col]
        for t in range(i):
            above, c = V[t], L[i, t]
            for col in range(m):
                row[col] -= c * above[col]
        d = L[i, i]
        for col in range(m):
            row[col] = row[col] / d
    for i in range(s):  # z = L^{-1} S ybar
        acc = sw[i] * (b[i] / W[i])
        for k in range(i):
            acc -= L[i, k] * z[k]
        z[i] = acc / L[i, i]
    for col in range(m):
        E[col], mu[col] = 0.0, 0.0
    for i in range(s):  # E = colsum(V^2), mu = V^T z, each summed over the rows in order
        row, x = V[i], z[i]
        for col in range(m):
            v = row[col]
            E[col] += v * v
            mu[col] += v * x
    logdet = 0.0
    for i in range(s):
        logdet += math.log(L[i, i])
    return logdet - 0.5 * s * math.log(lam)


def grown(old: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A zero array of ``shape`` (each side at least ``old``'s) with ``old`` in its corner."""
    new = np.zeros(shape, dtype=old.dtype)
    new[tuple(slice(0, n) for n in old.shape)] = old
    return new


def grown_rows(cap: int, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, W: np.ndarray,
               b: np.ndarray) -> tuple[np.ndarray, ...]:
    """(V, K, L, arm_of, W, b) with room for ``cap`` observed arms: V and K's rows (cap x m),
    L (cap x cap), and each row's arm, weight and weighted sum; what is there is kept."""
    m = V.shape[1]
    return (grown(V, (cap, m)), grown(K, (cap, m)), grown(L, (cap, cap)), grown(arm_of, (cap,)), grown(W, (cap,)),
            grown(b, (cap,)))
