"""Weighted information gain.

Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), Sec. 4.2 / 5.1 define the
weighted information gain ``gamma~_s = 1/2 log det(I + K~_s / lambda)`` with
``K~_s = W_s^{1/2} K_s W_s^{1/2}`` and ``W_s = diag(1/eps_1^2, ..., 1/eps_s^2)``.
Its chain-rule form is the weighted analogue of Srinivas et al. (ICML 2010), Lemma 5.3,
``I(y_T; f_T) = 1/2 sum_t log(1 + sigma^-2 sigma_{t-1}^2(x_t))``: since
``W^{1/2}(K~ + lambda I)^{-1} W^{1/2} = (K + lambda W^{-1})^{-1}``, observation ``s`` acts as
noise of variance ``lambda / w_s`` and

    gamma~_m = 1/2 sum_{s=1}^m log(1 + w_s sigma~_{s-1}^2(x_s) / lambda),

which is also Dai et al. App. D, Eqs. (25)-(26) (``det V_m / det V_0``).
"""

from __future__ import annotations

import math

import numpy as np

from qbo.gp.kernels import Kernel, as_points, check_positive

__all__ = [
    "check_eps",
    "check_eps_scalar",
    "information_gain_increment",
    "logdet_information_gain",
    "weighted_information_gain",
    "chain_rule_information_gain",
]


def check_eps(eps: np.ndarray, n: int) -> np.ndarray:
    """Validate a length-``n`` vector of finite, strictly positive estimation errors."""
    e = np.asarray(eps, dtype=float).reshape(-1)
    if e.shape[0] != n:
        raise ValueError(f"eps must have length {n}, got {e.shape[0]}")
    bad = ~(np.isfinite(e) & (e > 0.0))
    if np.any(bad):
        raise ValueError(f"eps must be finite and > 0, got {e[bad][0]!r}")
    return e


def check_eps_scalar(eps: float) -> float:
    """``check_eps(eps, 1)[0]`` as a float, without building an array for a Python or numpy float."""
    if type(eps) is float or (isinstance(eps, (float, int)) and not isinstance(eps, bool)):
        e = float(eps)
        if not (math.isfinite(e) and e > 0.0):
            raise ValueError(f"eps must be finite and > 0, got {e!r}")
        return e
    return float(check_eps(eps, 1)[0])


def logdet_information_gain(K_tilde: np.ndarray, lam: float) -> float:
    """``1/2 log det(I + K~ / lambda)`` for a PSD ``n x n`` ``K~``, via Cholesky (Dai Sec. 5.1)."""
    lam = check_positive("lam", lam)
    Kt = np.asarray(K_tilde, dtype=float)
    if Kt.shape[0] == 0:
        return 0.0
    L = np.linalg.cholesky(np.eye(Kt.shape[0]) + Kt / lam)
    return float(np.sum(np.log(np.diag(L))))


def weighted_information_gain(kernel: Kernel, X: np.ndarray, eps: np.ndarray, lam: float) -> float:
    """``gamma~ = 1/2 log det(I + W^{1/2} K W^{1/2} / lambda)`` for ``X`` (n x d), ``eps`` (n)."""
    A = as_points(X)
    sw = 1.0 / check_eps(eps, A.shape[0])
    return logdet_information_gain(sw[:, None] * kernel(A, A) * sw[None, :], lam)


def information_gain_increment(var_prev: float, weight: float, lam: float) -> float:
    """Chain-rule term ``1/2 log(1 + w_s sigma~_{s-1}^2(x_s) / lambda)`` (Srinivas Lemma 5.3)."""
    return 0.5 * float(np.log1p(weight * max(float(var_prev), 0.0) / lam))


def chain_rule_information_gain(var_prev: np.ndarray, eps: np.ndarray, lam: float) -> float:
    """Sum of chain-rule terms; ``var_prev[s] = sigma~_{s-1}^2(x_s)`` (length n), ``eps`` (n)."""
    lam = check_positive("lam", lam)
    v = np.maximum(np.asarray(var_prev, dtype=float).reshape(-1), 0.0)
    w = 1.0 / check_eps(eps, v.shape[0]) ** 2
    return 0.5 * float(np.sum(np.log1p(w * v / lam)))
