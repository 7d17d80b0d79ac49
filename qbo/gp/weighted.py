"""Weighted GP posterior, Dai et al. "Quantum Bayesian Optimization" (NeurIPS 2023), Eq. (3).

With observations ``(x_s, y_s, eps_s)``, weights ``w_s = 1/eps_s^2``, ``W = diag(w)``,
``K~ = W^{1/2} K W^{1/2}``, ``k~(x) = W^{1/2} k(x)``, ``Y~ = W^{1/2} Y`` (Sec. 4.1):

    mu~(x)      = k~(x)^T (K~ + lambda I)^{-1} Y~
    sigma~^2(x) = k(x, x) - k~(x)^T (K~ + lambda I)^{-1} k~(x)

With ``eps = 1`` this is the ordinary GP posterior Eq. (1) with noise ``lambda``.  The paper's
theory takes ``lambda > 1``; here any ``lambda > 0`` is accepted.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from qbo.gp.information import check_eps, information_gain_increment
from qbo.gp.kernels import Kernel, as_points, check_positive

__all__ = ["WeightedGP", "gram_posterior", "weighted_posterior_batch"]


def weighted_posterior_batch(
    kernel: Kernel,
    X: np.ndarray,
    Y: np.ndarray,
    eps: np.ndarray,
    lam: float,
    Xq: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (3) by one dense solve: ``X`` (n x d), ``Y`` (n), ``eps`` (n), ``Xq`` (m x d).

    Returns ``(mean, var)``, each of length m; ``var`` is clipped at 0.  Reference
    implementation, O(n^3); use ``WeightedGP`` inside loops.
    """
    lam = check_positive("lam", lam)
    A = as_points(X)
    Q = as_points(Xq, "Xq", dim=A.shape[1])
    y = _check_y(Y, A.shape[0])
    sw = 1.0 / check_eps(eps, A.shape[0])
    K_t = sw[:, None] * kernel(A, A) * sw[None, :] + lam * np.eye(A.shape[0])
    mean, var = gram_posterior(K_t, sw[:, None] * kernel(A, Q), kernel.diag(Q), sw * y)
    return mean, np.maximum(var, 0.0)


def gram_posterior(
    G: np.ndarray, C: np.ndarray, kdiag: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Direct GP posterior from Gram matrices (Rasmussen & Williams Eqs. 2.25-2.26):
    ``mean = C^T G^{-1} y``, ``var = kdiag - diag(C^T G^{-1} C)`` (not clipped), where ``G``
    (n x n) is the observation covariance including noise and ``C`` (n x m) the
    cross-covariance to the query points; one Cholesky solve, O(n^3 + n^2 m)."""
    L = cho_factor(G, lower=True)
    mean = C.T @ cho_solve(L, y)
    var = kdiag - np.einsum("ij,ij->j", C, cho_solve(L, C))
    return mean, var


def _check_y(Y: np.ndarray, n: int) -> np.ndarray:
    y = np.asarray(Y, dtype=float).reshape(-1)
    if y.shape[0] != n:
        raise ValueError(f"Y must have length {n}, got {y.shape[0]}")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"Y must be finite, got {y[~np.isfinite(y)][0]!r}")
    return y


def _grow(a: np.ndarray, cap: int, axes: tuple[int, ...]) -> np.ndarray:
    """Zero-padded copy of ``a`` whose length along each of ``axes`` becomes ``cap``."""
    shape = list(a.shape)
    for ax in axes:
        shape[ax] = cap
    out = np.zeros(shape)
    out[tuple(slice(0, s) for s in a.shape)] = a
    return out


class WeightedGP:
    """Incremental weighted GP posterior, Dai et al. Eq. (3).

    Keeps the lower Cholesky factor ``L`` of ``A = K~ + lambda I`` and ``z = L^{-1} Y~``;
    ``add`` appends one row to ``L`` (block Cholesky, O(n^2)), whose new pivot is
    ``L_nn^2 = lambda + w sigma~^2_{n-1}(x)``, the chain-rule term of the running
    weighted information gain (Srinivas et al. Lemma 5.3; Dai et al. App. D, Eq. (25)).
    Posteriors use ``V = L^{-1} k~(Xq)``: ``mean = V^T z``, ``var = k(x,x) - ||V||^2``.
    This is the point-space form (queries anywhere); on a fixed finite arm set use
    ``qbo.gp.CholeskyArmPosterior``, which keeps V over the arms and merges repeated arms.
    """

    def __init__(self, kernel: Kernel, lam: float) -> None:
        self.kernel = kernel
        self.lam = check_positive("lam", lam)
        self._n, self._cap, self._dim = 0, 0, None
        self._X = np.zeros((0, 0))
        self._y, self._eps, self._sw, self._z = (np.zeros(0) for _ in range(4))
        self._L = np.zeros((0, 0))
        self._info = 0.0
        self._alpha: np.ndarray | None = None

    # ------------------------------------------------------------------ state
    @property
    def n(self) -> int:
        """Number of observations added so far."""
        return self._n

    @property
    def X(self) -> np.ndarray:
        """Observed inputs, n x d (copy)."""
        return self._X[: self._n].copy()

    @property
    def y(self) -> np.ndarray:
        """Observed outputs, length n (copy)."""
        return self._y[: self._n].copy()

    @property
    def eps(self) -> np.ndarray:
        """Estimation errors eps_s, length n (copy); weights are ``1/eps^2``."""
        return self._eps[: self._n].copy()

    @property
    def cholesky(self) -> np.ndarray:
        """Lower Cholesky factor of ``K~ + lambda I``, n x n (copy)."""
        return self._L[: self._n, : self._n].copy()

    @property
    def alpha(self) -> np.ndarray:
        """``(K~ + lambda I)^{-1} Y~`` (length n), so ``mu~(x) = k~(x)^T alpha``; O(n^2), cached."""
        if self._alpha is None:
            n = self._n
            self._alpha = solve_triangular(self._L[:n, :n].T, self._z[:n], lower=False)
        return self._alpha.copy()

    @property
    def information_gain(self) -> float:
        """Running ``gamma~_n = 1/2 sum_s log(1 + w_s sigma~^2_{s-1}(x_s) / lambda)``."""
        return self._info

    # ------------------------------------------------------------------ updates
    def add(self, x: np.ndarray, y: float, eps: float) -> None:
        """Condition on one observation ``y`` at ``x`` (d) with estimation error ``eps > 0``."""
        x = self._check_x(x)
        y = float(_check_y(y, 1)[0])
        sw = 1.0 / float(check_eps(eps, 1)[0])
        n = self._n
        self._reserve(n + 1)
        l, var_prev = self._new_row(x, sw)
        d = np.sqrt(self.lam + sw * sw * var_prev)
        z_new = (sw * y - l @ self._z[:n]) / d
        self._L[n, :n], self._L[n, n], self._z[n] = l, d, z_new
        self._X[n], self._y[n], self._eps[n], self._sw[n] = x, y, 1.0 / sw, sw
        self._info += information_gain_increment(var_prev, sw * sw, self.lam)
        self._n, self._alpha = n + 1, None

    def extend(self, X: np.ndarray, Y: np.ndarray, eps: np.ndarray) -> None:
        """``add`` each row of ``X`` (n x d) with ``Y`` (n) and ``eps`` (n), in order."""
        A = as_points(X, dim=self._dim)
        y, e = _check_y(Y, A.shape[0]), check_eps(eps, A.shape[0])
        for i in range(A.shape[0]):
            self.add(A[i], y[i], e[i])

    def _new_row(self, x: np.ndarray, sw: float) -> tuple[np.ndarray, float]:
        """New Cholesky row ``l = L^{-1} a`` and the prior-to-update variance at ``x``."""
        n, xr = self._n, x[None, :]
        kxx = float(self.kernel.diag(xr)[0])
        if n == 0:
            return np.zeros(0), max(kxx, 0.0)
        a = sw * self._sw[:n] * self.kernel(self._X[:n], xr)[:, 0]
        l = solve_triangular(self._L[:n, :n], a, lower=True)
        return l, max(kxx - (l @ l) / (sw * sw), 0.0)

    def _check_x(self, x: np.ndarray) -> np.ndarray:
        xv = np.asarray(x, dtype=float)
        if xv.ndim == 2 and xv.shape[0] == 1:
            xv = xv[0]
        if xv.ndim != 1:
            raise ValueError(f"x must be a single point of shape (d,), got shape {xv.shape}")
        xv = as_points(xv[None, :], "x", dim=self._dim)[0]
        self._dim = xv.shape[0]
        return xv

    def _reserve(self, size: int) -> None:
        if size <= self._cap:
            return
        cap = max(8, 2 * self._cap, size)
        if self._X.shape[1] != self._dim:
            self._X = np.zeros((0, self._dim))
        self._X = _grow(self._X, cap, (0,))
        self._L = _grow(self._L, cap, (0, 1))
        self._y, self._eps, self._sw, self._z = (
            _grow(a, cap, (0,)) for a in (self._y, self._eps, self._sw, self._z)
        )
        self._cap = cap

    # ------------------------------------------------------------------ posterior
    def posterior(self, Xq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (3) at ``Xq`` (m x d): ``(mean (m), var (m))``, var clipped at 0; O(n^2 m)."""
        Q = as_points(Xq, "Xq", dim=self._dim)
        V = self._solve_cols(Q)
        mean = V.T @ self._z[: self._n]
        var = self.kernel.diag(Q) - np.einsum("ij,ij->j", V, V)
        return mean, np.maximum(var, 0.0)

    def _solve_cols(self, Q: np.ndarray) -> np.ndarray:
        """``V = L^{-1} W^{1/2} K(X_obs, Q)``, n x m."""
        n = self._n
        if n == 0:
            return np.zeros((0, Q.shape[0]))
        K_t = self._sw[:n, None] * self.kernel(self._X[:n], Q)
        return solve_triangular(self._L[:n, :n], K_t, lower=True)
