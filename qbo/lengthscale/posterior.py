"""Weighted GP posterior on a finite arm set from per-arm sufficient statistics.

For models whose length scale changes between stages (A-GP-UCB, MLE) a rank-one updated
``ArmPosterior`` would have to be rebuilt by replaying every observation, O(n m^2).  With
Gaussian noise of variance ``lambda eps^2`` (Dai et al., "Quantum Bayesian Optimization",
Eq. (3), Sec. 4.1), the observations at arm i are summarised by ``W_i = sum 1/eps^2`` and
``b_i = sum y/eps^2``: their weighted mean ``ybar_i = b_i/W_i`` has noise variance
``lambda/W_i`` and the rest of the likelihood does not involve f.  Over the u observed arms U,
with ``s = sqrt(W_U)`` and the well-conditioned ``A = diag(s) K_UU diag(s) + lambda I``
(eigenvalues >= lambda, the form of Eq. (3)):

    mean = K_{:U} diag(s) A^{-1} (s * ybar),   var = diag K - ||L^{-1} diag(s) K_{U:}||^2,
    gamma~ = 1/2 log det(A / lambda) = sum log diag(L) - (u/2) log lambda,

costing O(m u^2 + u^3) per fit, with L the Cholesky factor of A.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from qbo.gp.kernels import Kernel

__all__ = ["ArmStats", "DirectArmModel"]


class ArmStats:
    """Per-arm sufficient statistics ``W_i = sum 1/eps^2`` and ``b_i = sum y/eps^2``."""

    def __init__(self, num_arms: int) -> None:
        self.W = np.zeros(num_arms)
        self.b = np.zeros(num_arms)
        self.n = 0

    def add(self, arm: int, y: float, eps: float) -> None:
        """Record ``y`` at ``arm`` with weight ``1/eps^2``."""
        w = 1.0 / float(eps) ** 2
        self.W[arm] += w
        self.b[arm] += w * float(y)
        self.n += 1

    def observed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(U, W_U, ybar_U)`` over the observed arms U (ascending index)."""
        U = np.flatnonzero(self.W > 0)
        return U, self.W[U], self.b[U] / self.W[U]


def whitened_cholesky(K_UU: np.ndarray, W: np.ndarray, lam: float) -> np.ndarray:
    """Lower Cholesky factor of ``diag(sqrt W) K_UU diag(sqrt W) + lam I``."""
    s = np.sqrt(W)
    A = s[:, None] * K_UU * s[None, :] + lam * np.eye(len(W))
    return cholesky(A, lower=True)


class DirectArmModel:
    """The ``ArmModel`` interface (``posterior``, ``information_gain``) for one kernel,
    computed directly from ``ArmStats``; built per stage, never updated in place."""

    def __init__(self, kernel: Kernel, arms: np.ndarray, lam: float, stats: ArmStats) -> None:
        self.lam = float(lam)
        self.arms = arms
        self.feature_dim = arms.shape[0]
        diag = kernel.diag(arms)
        self.max_feature_norm_sq = float(np.max(diag))
        self._mean, self._var, self._info = self._fit(kernel, diag, stats)

    def _fit(self, kernel: Kernel, diag: np.ndarray, stats: ArmStats) -> tuple[np.ndarray, np.ndarray, float]:
        U, W, ybar = stats.observed()
        if U.size == 0:
            return np.zeros(len(diag)), diag.copy(), 0.0
        K_mU = kernel(self.arms, self.arms[U])
        L = whitened_cholesky(K_mU[U], W, self.lam)
        s = np.sqrt(W)
        mean = K_mU @ (s * cho_solve((L, True), s * ybar))
        V = solve_triangular(L, s[:, None] * K_mU.T, lower=True)
        var = np.maximum(diag - np.einsum("ij,ij->j", V, V), 0.0)
        info = float(np.sum(np.log(np.diag(L)))) - 0.5 * U.size * math.log(self.lam)
        return mean, var, info

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mean (m), var (m))`` at every arm (Dai et al. Eq. (3))."""
        return self._mean.copy(), self._var.copy()

    @property
    def information_gain(self) -> float:
        """``1/2 log det(I + W^{1/2} K_UU W^{1/2} / lambda)`` = weighted gamma~ of all data."""
        return self._info
