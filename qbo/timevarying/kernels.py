"""Time kernel and product space x time kernel of time-varying GP bandits.

Imamura et al., "Time-varying GP bandit optimization with non-constant evaluation time"
(seed 000), Sec. 2.2: the joint kernel is ``k((x, tau), (x', tau')) = k_space(x, x') *
k_time(tau, tau')`` with the time kernel of Bogunovic et al. (2016), seed Eq. (2):

    k_time(tau, tau') = (1 - eps)^{|tau - tau'| / 2},   eps in [0, 1].

It is the covariance of a stationary AR(1) / Ornstein-Uhlenbeck process, so on a finite
arm set f(., tau) is Markov in tau:  f(tau + t) = a(t) f(tau) + sqrt(1 - a(t)^2) eta with
``a(t) = (1 - eps)^{t/2}`` (``decay``) and eta ~ GP(0, k_space) independent of the past
(Bogunovic et al. Sec. 2, Eq. (2)-(3); the seed's Sec. 5.1 generator with lambda = eps).
The space kernel is any ``qbo.gp.kernels`` kernel (``make_kernel``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qbo.gp.forgetting import check_forgetting, decay
from qbo.gp.kernels import Kernel, as_points, make_kernel

__all__ = ["ProductKernel", "check_forgetting", "decay", "make_product_kernel", "time_kernel"]


def time_kernel(tau1: np.ndarray, tau2: np.ndarray, eps: float) -> np.ndarray:
    """Gram matrix of seed Eq. (2): ``(1 - eps)^{|tau_i - tau'_j| / 2}``, shape (n, m)."""
    e = check_forgetting(eps)
    d = np.abs(np.asarray(tau1, float).reshape(-1, 1) - np.asarray(tau2, float).reshape(1, -1))
    return decay(e, d)


@dataclass(frozen=True)
class ProductKernel:
    """``k((x, tau), (x', tau')) = k_space(x, x') k_time(tau, tau')`` (seed Sec. 2.2)."""

    space: Kernel
    eps: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_forgetting(self.eps))

    def __call__(self, X1: np.ndarray, tau1: np.ndarray, X2: np.ndarray, tau2: np.ndarray) -> np.ndarray:
        """Gram matrix between points ``(X1[i], tau1[i])`` and ``(X2[j], tau2[j])``."""
        A, B = as_points(X1, "X1"), as_points(X2, "X2")
        return self.space(A, B) * time_kernel(tau1, tau2, self.eps)

    def diag(self, X: np.ndarray) -> np.ndarray:
        """``k((x, tau), (x, tau)) = k_space(x, x)`` since ``k_time(tau, tau) = 1``."""
        return self.space.diag(X)


def make_product_kernel(name: str, lengthscale: float, outputscale: float, eps: float) -> ProductKernel:
    """``ProductKernel(make_kernel(name, lengthscale, outputscale), eps)``."""
    return ProductKernel(make_kernel(name, lengthscale, outputscale), eps)
