"""Weighted GP posterior on a finite arm set under a space x time kernel with forgetting.

Model (Imamura et al., seed 000, Sec. 2.2; Bogunovic et al. 2016): f ~ GP(0, k_space x k_time)
with ``k_time(tau, tau') = (1 - eps)^{|tau - tau'|/2}`` (seed Eq. (2)); an observation at arm
x_i and time tau_i has noise variance ``lambda eps_i^2`` (weight ``1/eps_i^2``, Dai et al.
"Quantum Bayesian Optimization" Eq. (3); ``eps_i = 1`` classically, lambda = sigma^2).

With ``a(t) = (1 - eps)^{t/2}`` (``decay``) and data at tau_i <= tau_n, the cross-covariance
of ``f(x, tau_n + t)`` with ``y_i`` is ``a(t) a(tau_n - tau_i) k_s(x, x_i)``, so a prediction
at a later time is the one at tau_n with every data cross-covariance scaled by a(t) (the
Kalman predict step of the AR(1) state f(., tau)):

    mu_n(x, tau_n + t)      = a(t) mu_n(x, tau_n)
    sigma_n^2(x, tau_n + t) = k(x, x) - a(t)^2 (k(x, x) - sigma_n^2(x, tau_n)).

(``mu = c^T G^{-1} y``, ``sigma^2 = k - c^T G^{-1} c`` with ``c_i(x, tau_n + t) = a(t)
c_i(x, tau_n)``.)  State: the square-root rows V (``qbo.gp.square_root``) with
``K - Sigma_n = V^T V`` at the current time, one row per observation (observations at
different times are not exchangeable, so repeats are not merged).  ``advance(t)`` scales V
and mu by a(t) and the explained variance by a(t)^2; ``add`` is the Kalman row, O(n m).

``dense=True`` keeps ``P = V^T V`` (m x m) instead of V: ``advance`` scales it by a(t)^2,
``add`` adds the Kalman row's outer product, and the column is ``K e_j - P e_j``, O(m^2) a
round and constant memory whatever n (the same posterior; cheaper once n > m, as in a long
run). ``qbo.algorithms.tv_gp_ucb_kernel`` compiles this form, operation for operation.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.gp.information import check_eps
from qbo.gp.square_root import SquareRootArms
from qbo.gp.weighted import gram_posterior

__all__ = ["ForgettingArmPosterior", "check_forgetting", "decay", "direct_forgetting_posterior"]


def check_forgetting(eps: float, name: str = "eps") -> float:
    """The forgetting rate eps of seed Eq. (2) as a float in [0, 1), else a one-line ValueError.

    eps = 1 would make every pair of distinct times independent (a(t) = 0 for t > 0); it is
    excluded so that ``log(1 - eps)`` stays finite.
    """
    try:
        v = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in [0, 1), got {eps!r}") from None
    if isinstance(eps, bool) or not math.isfinite(v) or not 0.0 <= v < 1.0:
        raise ValueError(f"{name} must be a real number in [0, 1), got {eps!r}")
    return v


def decay(eps: float, t: float | np.ndarray) -> float | np.ndarray:
    """``a(t) = (1 - eps)^{t/2} = k_time(tau, tau + t)`` (seed Eq. (2)); exactly 1 when eps = 0."""
    out = np.exp(0.5 * np.asarray(t, dtype=float) * math.log1p(-eps))
    return float(out) if out.ndim == 0 else out


class ForgettingArmPosterior(SquareRootArms):
    """GP posterior of ``f(arm, tau)`` under ``k_space x k_time`` at the current time ``tau``.

    ``kernel_matrix``: the m x m space Gram matrix over the arms (shared, not copied);
    ``eps``: forgetting rate per unit time (0 gives the static GP of Srinivas et al. Eqs. 1-2);
    ``lam``: regulariser lambda, the noise variance of an ``eps_obs = 1`` observation.
    A ``qbo.gp.ArmModel``.
    """

    def __init__(self, kernel_matrix: np.ndarray, eps: float, lam: float, dense: bool = False) -> None:
        K = np.asarray(kernel_matrix, dtype=float)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
            raise ValueError(f"kernel_matrix must be a non-empty square m x m array, got shape {K.shape}")
        self.eps = check_forgetting(eps)
        self.lam = _check_noise(lam)
        self._K = K
        super().__init__(np.diag(K).copy(), lambda j: self._K[:, j])
        self.tau = 0.0
        self._P = np.zeros(K.shape) if dense else None  # ``dense``: P = V^T V, and no V (module docstring)
        self._count = 0

    @property
    def n(self) -> int:
        """Number of observations so far."""
        return self._count

    @property
    def kernel_matrix(self) -> np.ndarray:
        """The m x m space Gram matrix K (shared, not a copy)."""
        return self._K

    @property
    def feature_dim(self) -> int:
        """The number of arms m (for m_bar)."""
        return self.num_arms

    @property
    def max_feature_norm_sq(self) -> float:
        """``max_i k(x_i, x_i)`` (for m_bar)."""
        return float(np.max(self._kdiag))

    def future(self, t: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(mu_n(x, tau_n + t), sigma_n^2(x, tau_n + t))`` by the closed forms (module doc).

        ``t`` is a scalar, one horizon per arm (m,), or a matrix (m, Q) of horizons per arm.
        """
        a = np.asarray(decay(self.eps, _check_horizon(t)), dtype=float)
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
            self._mu *= a
            self._E *= a * a
            if self._P is None:
                self._V[: self._rows] *= a
            else:
                self._P *= a * a
        self.tau += t

    def column(self, arm: int) -> np.ndarray:
        """Posterior covariance ``Sigma e_arm``: ``K e_arm - V^T V e_arm``, O(n m), or
        ``K e_arm - P e_arm``, O(m), in the dense form."""
        if self._P is None:
            return super().column(arm)
        return self._K[:, arm] - self._P[:, arm]

    def add(self, arm: int, y: float, eps: float = 1.0) -> None:
        """Condition on ``y = f(x_arm, tau_n) + z``, z ~ N(0, lam eps^2), at the current time;
        O(n m), or O(m^2) in the dense form."""
        j = self._check_arm(arm)
        yv = float(y)
        if not math.isfinite(yv):
            raise ValueError(f"y must be finite, got {y!r}")
        e = float(check_eps(eps, 1)[0])
        v, _ = self._kalman(j, yv, self.lam * e * e)
        if self._P is None:
            self._append(v)
        else:
            self._P += np.outer(v, v)
        self._count += 1


def direct_forgetting_posterior(
    kernel, X: np.ndarray, tau: np.ndarray, y: np.ndarray, noise: np.ndarray | float,
    Xq: np.ndarray, tauq: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Reference batch posterior at ``(Xq[j], tauq[j])`` for a space x time ``kernel`` (called as
    ``kernel(X1, tau1, X2, tau2)``, with ``kernel.diag(X)``) and per-point noise variances; O(n^3)."""
    n = len(y)
    G = kernel(X, tau, X, tau) + np.diag(np.broadcast_to(np.asarray(noise, float), (n,)))
    return gram_posterior(G, kernel(X, tau, Xq, tauq), kernel.diag(Xq), np.asarray(y, float))


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
