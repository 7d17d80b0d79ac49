"""Square-root (Kalman) form of a GP posterior on a finite arm set.

On m arms the prior is ``f ~ N(0, K)``; after data the posterior covariance is kept as
``Sigma = K - V^T V`` with V an s x m factor (one row per observed point), never as an m x m
matrix.  Conditioning on ``y = f_j + z``, ``z ~ N(0, r)``, is the rank-one Kalman update with
``c = Sigma e_j = K e_j - V^T V e_j`` (O(s m)) and ``s_j = c_j + r``:

    v = c / sqrt(s_j),   mu <- mu + v (y - mu_j) / sqrt(s_j),   E <- E + v^2,

where ``E = diag(V^T V)`` is the explained variance (``sigma^2 = diag K - E``).  Appending
``v`` as a new row of V keeps ``Sigma = K - V^T V``.  For the weighted posterior of Dai et al.
(NeurIPS 2023) Eq. (3) an observation with error eps is ``r = lambda eps^2`` (Sec. 4.1), and
the chain-rule information gain gains ``1/2 log(s_j / r)`` (App. D Eq. (25)).  The row ``v`` is
also the new row of ``L^{-1} W^{1/2} K(X_obs, arms)`` for the Cholesky factor L of
``K~ + lambda I``, which ``CholeskyArmPosterior`` uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["SquareRootArms"]


class SquareRootArms:
    """State ``(V, mu, E)`` with ``Sigma = K - V^T V``; ``kernel_column(j)`` gives ``K e_j``.

    ``kdiag`` is ``diag K`` (m).  Subclasses decide when a Kalman row is appended.
    """

    def __init__(self, kdiag: np.ndarray, kernel_column: Callable[[int], np.ndarray]) -> None:
        self._kdiag = np.asarray(kdiag, dtype=float)
        self._kcol = kernel_column
        m = self._kdiag.shape[0]
        self._V = np.zeros((16, m))
        self._rows = 0
        self._mu = np.zeros(m)
        self._E = np.zeros(m)
        self.information_gain = 0.0
        self._sd = np.empty(m)
        self._score = np.empty(m)

    @property
    def num_arms(self) -> int:
        """Number of arms m."""
        return self._kdiag.shape[0]

    @property
    def prior_var(self) -> np.ndarray:
        """``k(x, x)`` at every arm (m)."""
        return self._kdiag

    @property
    def explained(self) -> np.ndarray:
        """``k(x, x) - sigma^2(x)`` at every arm (m)."""
        return self._E

    @property
    def mean(self) -> np.ndarray:
        """Posterior mean at every arm (m, copy)."""
        return self._mu.copy()

    @property
    def var(self) -> np.ndarray:
        """Posterior variance at every arm (m), clipped at 0."""
        return np.maximum(self._kdiag - self._E, 0.0)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mean (m), var (m))`` at every arm."""
        return self.mean, self.var

    def ucb(self, beta: float) -> tuple[np.ndarray, np.ndarray]:
        """``(mu + beta sigma, sigma)`` at every arm (``qbo.gp.ArmModel.ucb``), in the model's
        buffers (valid until the next update; the same operations as from ``posterior()``)."""
        sd = np.subtract(self._kdiag, self._E, out=self._sd)
        np.maximum(sd, 0.0, out=sd)
        np.sqrt(sd, out=sd)
        score = np.multiply(sd, beta, out=self._score)
        score += self._mu
        return score, sd

    def column(self, arm: int) -> np.ndarray:
        """Posterior covariance ``Sigma e_arm = K e_arm - V^T V e_arm`` (m); O(s m)."""
        V = self._V[: self._rows]
        return self._kcol(arm) - V.T @ V[:, arm]

    def _kalman(self, j: int, y: float, r: float) -> tuple[np.ndarray, float]:
        """Condition mean, explained variance and information gain on ``y`` at arm ``j`` with
        noise variance ``r``; return the Kalman row ``v`` and ``s_j = sigma_j^2 + r``."""
        c = self.column(j)
        s = max(float(c[j]), 0.0) + r
        v = c / math.sqrt(s)
        self._mu += v * ((y - self._mu[j]) / math.sqrt(s))
        self._E += v * v
        self.information_gain += 0.5 * math.log(s / r)
        return v, s

    def _append(self, v: np.ndarray) -> None:
        if self._rows == self._V.shape[0]:
            self._V = np.vstack([self._V, np.zeros_like(self._V)])
        self._V[self._rows] = v
        self._rows += 1

    def _check_arm(self, arm: int) -> int:
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)) or not 0 <= int(arm) < self.num_arms:
            raise ValueError(f"arm must be an integer in [0, {self.num_arms}), got {arm!r}")
        return int(arm)
