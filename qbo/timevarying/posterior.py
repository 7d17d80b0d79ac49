"""Exact time-varying GP posterior on a finite arm set, updated incrementally.

Model (seed 000 Sec. 2.2): f ~ GP(0, k_space x k_time) with k_time of Eq. (2), observations
``y_i = f(x_i, tau_i) + z_i``, z_i ~ N(0, r_i) (r_i = sigma^2 classically, lambda eps_i^2 for a
QMC stage weighted 1/eps_i^2 as in Dai et al. Eq. (3)).

Representation.  With ``a(t) = (1 - eps)^{t/2}`` and data taken at tau_i <= tau_n, the
cross-covariance of ``f(x, tau_n + t)`` with ``y_i`` is ``a(t) a(tau_n - tau_i) k_s(x, x_i)``:
every prediction at a later time is the prediction at tau_n with all data cross-covariances
scaled by a(t).  Hence (derivation below, the seed uses it implicitly in App. B; it is the
Kalman predict step of the AR(1) state f(., tau)):

    mu_n(x, tau_n + t)      = a(t) mu_n(x, tau_n)
    sigma_n^2(x, tau_n + t) = k(x, x) - a(t)^2 (k(x, x) - sigma_n^2(x, tau_n))
                            = k(x, x) - (1 - eps)^t (k(x, x) - sigma_n^2(x, tau_n)).

Derivation: mu_n(x, tau) = c(x, tau)^T G^{-1} y and sigma_n^2 = k(x,x) - c^T G^{-1} c with
``c_i(x, tau_n + t) = a(t) c_i(x, tau_n)`` (a(tau_n + t - tau_i) = a(t) a(tau_n - tau_i) for
tau_i <= tau_n), so the mean scales by a(t) and the explained variance c^T G^{-1} c by a(t)^2.

State kept (m arms, n observations): the rows ``v_i`` (n x m) of the square-root factor
with ``K - Sigma_n = V^T V`` at the current time, the mean mu (m) and the explained variance
``E = diag(V^T V)`` (m).  ``advance(t)`` scales V, mu by a(t) and E by a(t)^2 (the closed form
above); ``add`` is the rank-one Kalman update with ``c = Sigma_n e_j = K e_j - V^T V e_j``,
``v_{n+1} = c / sqrt(c_j + r)``: O(n m) per observation, vectorised, no refit.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from qbo.gp.time_kernels import ProductKernel, check_forgetting, decay

__all__ = ["TVPosterior", "direct_posterior"]


class TVPosterior:
    """GP posterior of ``f(arm, tau)`` under ``k_space x k_time`` (seed Eq. (2)) at time ``tau``.

    ``kernel_matrix``: the m x m space Gram matrix over the arms (shared, not copied);
    ``eps``: forgetting rate per unit time (0 gives the static GP of Srinivas et al. Eqs. 1-2);
    ``noise``: default observation-noise variance sigma^2.
    """

    def __init__(self, kernel_matrix: np.ndarray, eps: float, noise: float) -> None:
        K = np.asarray(kernel_matrix, dtype=float)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
            raise ValueError(f"kernel_matrix must be a non-empty square m x m array, got shape {K.shape}")
        self.eps = check_forgetting(eps)
        self.noise = _check_noise(noise)
        self._K = K
        self._kdiag = np.diag(K).copy()
        self._V = np.zeros((16, K.shape[0]))
        self._n = 0
        self._mu = np.zeros(K.shape[0])
        self._E = np.zeros(K.shape[0])
        self.tau = 0.0
        self.information_gain = 0.0

    @property
    def num_arms(self) -> int:
        """Number of arms m."""
        return self._K.shape[0]

    @property
    def n(self) -> int:
        """Number of observations so far."""
        return self._n

    @property
    def prior_var(self) -> np.ndarray:
        """``k(x, x)`` at every arm (m)."""
        return self._kdiag

    @property
    def explained(self) -> np.ndarray:
        """``k(x, x) - sigma_n^2(x, tau_n)`` at every arm (m)."""
        return self._E

    @property
    def mean(self) -> np.ndarray:
        """``mu_n(x, tau_n)`` at every arm (m, copy)."""
        return self._mu.copy()

    @property
    def var(self) -> np.ndarray:
        """``sigma_n^2(x, tau_n)`` at every arm (m), clipped at 0."""
        return np.maximum(self._kdiag - self._E, 0.0)

    def future(self, t: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(mu_n(x, tau_n + t), sigma_n^2(x, tau_n + t))`` by the closed forms (module doc).

        ``t`` is a scalar, one horizon per arm (m,), or a matrix (m, Q) of horizons per arm.
        """
        a = decay(self.eps, _check_horizon(t))
        a = np.asarray(a, dtype=float)
        mu, E, kd = self._mu, self._E, self._kdiag
        if a.ndim == 2:
            mu, E, kd = mu[:, None], E[:, None], kd[:, None]
        return a * mu, np.maximum(kd - a * a * E, 0.0)

    def advance(self, dt: float) -> None:
        """Move the posterior from tau_n to ``tau_n + dt`` (no data): the closed forms above."""
        t = float(dt)
        if not (math.isfinite(t) and t >= 0.0):
            raise ValueError(f"dt must be a finite number >= 0, got {dt!r}")
        a = decay(self.eps, t)
        if a != 1.0:
            self._V[: self._n] *= a
            self._mu *= a
            self._E *= a * a
        self.tau += t

    def column(self, arm: int) -> np.ndarray:
        """Posterior covariance ``Sigma_n(., x_arm)`` at the current time (m): O(n m)."""
        V = self._V[: self._n]
        return self._K[:, arm] - V.T @ V[:, arm]

    def add(self, arm: int, y: float, noise: float | None = None) -> None:
        """Condition on ``y = f(x_arm, tau_n) + z``, z ~ N(0, noise) at the current time; O(n m)."""
        j = self._check_arm(arm)
        yv = float(y)
        if not math.isfinite(yv):
            raise ValueError(f"y must be finite, got {y!r}")
        r = self.noise if noise is None else _check_noise(noise)
        c = self.column(j)
        s = max(float(c[j]), 0.0) + r
        v = c / math.sqrt(s)
        self._mu += v * ((yv - self._mu[j]) / math.sqrt(s))
        self._E += v * v
        self._append(v)
        self.information_gain += 0.5 * math.log(s / r)

    def _append(self, v: np.ndarray) -> None:
        if self._n == self._V.shape[0]:
            self._V = np.vstack([self._V, np.zeros_like(self._V)])
        self._V[self._n] = v
        self._n += 1

    def _check_arm(self, arm: int) -> int:
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)) or not 0 <= int(arm) < self.num_arms:
            raise ValueError(f"arm must be an integer in [0, {self.num_arms}), got {arm!r}")
        return int(arm)


def direct_posterior(
    kernel: ProductKernel, X: np.ndarray, tau: np.ndarray, y: np.ndarray, noise: np.ndarray | float,
    Xq: np.ndarray, tauq: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Reference batch posterior (R&W Eq. 2.25-2.26) at points ``(Xq[j], tauq[j])``; O(n^3)."""
    n = len(y)
    G = kernel(X, tau, X, tau) + np.diag(np.broadcast_to(np.asarray(noise, float), (n,)))
    C = kernel(X, tau, Xq, tauq)
    L = cho_factor(G, lower=True)
    mean = C.T @ cho_solve(L, np.asarray(y, float))
    var = kernel.diag(Xq) - np.einsum("ij,ij->j", C, cho_solve(L, C))
    return mean, var


def _check_noise(noise: float) -> float:
    try:
        v = float(noise)
    except (TypeError, ValueError):
        raise ValueError(f"noise must be a finite variance > 0, got {noise!r}") from None
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"noise must be a finite variance > 0, got {noise!r}")
    return v


def _check_horizon(t: float | np.ndarray) -> float | np.ndarray:
    arr = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"horizon t must be finite and >= 0, got {t!r}")
    return arr
