"""Feature-space (primal) form of the weighted GP posterior.

Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), App. A, Eq. (6): with a feature
map ``phi`` such that ``k(x, x') = phi(x)^T phi(x')``, ``V_s = lambda I + Phi_s^T W_s Phi_s``
(``V_0 = lambda I``) and

    mu~_s(x)      = phi(x)^T V_s^{-1} Phi_s^T W_s Y_s
    sigma~^2_s(x) = lambda phi(x)^T V_s^{-1} phi(x),

which equals Eq. (3).  App. J implements this with M random Fourier features (Rahimi & Recht,
2007): ``phi(x) = sqrt(2 s / M) cos(Omega x + b)``, ``b ~ U[0, 2 pi)``, rows of ``Omega`` drawn
from the kernel's normalised spectral density (Gaussian for SE, multivariate Student-t with
``2 nu`` degrees of freedom for Matern).  For the linear kernel the map is the scaled identity
(Q-LinUCB, weighted ridge regression).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from qbo.gp.information import check_eps, information_gain_increment
from qbo.gp.kernels import Kernel, Linear, Matern, SquaredExponential, as_points, check_positive
from qbo.gp.model import ucb_from_posterior

__all__ = [
    "FeatureArmModel",
    "FeatureKernel",
    "FeatureMap",
    "IdentityFeatures",
    "RandomFourierFeatures",
    "WeightedFeatureGP",
]


@runtime_checkable
class FeatureMap(Protocol):
    """``phi: (n x d) -> (n x M)`` with ``num_features == M`` and input dimension ``dim``."""

    @property
    def num_features(self) -> int: ...

    @property
    def dim(self) -> int: ...

    def __call__(self, X: np.ndarray) -> np.ndarray: ...


def _check_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class RandomFourierFeatures:
    """M random Fourier features of an SE or Matern kernel on R^dim (Dai et al. App. J).

    ``phi(X)`` maps ``n x dim -> n x M`` with ``E[phi(x)^T phi(x')] = k(x, x')``; every term
    ``(2 s / M) cos(w^T x + b) cos(w^T x' + b)`` lies in ``[-2s/M, 2s/M]``.  Deterministic
    given ``seed``.
    """

    kernel: Kernel
    M: int
    dim: int
    seed: int = 0
    omega: np.ndarray = field(init=False, repr=False, compare=False)
    bias: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "M", _check_int("M", self.M))
        object.__setattr__(self, "dim", _check_int("dim", self.dim))
        rng = np.random.default_rng(self.seed)
        object.__setattr__(self, "omega", _spectral_sample(self.kernel, self.M, self.dim, rng))
        object.__setattr__(self, "bias", rng.uniform(0.0, 2.0 * np.pi, size=self.M))

    @property
    def num_features(self) -> int:
        """Feature dimension M."""
        return self.M

    def __call__(self, X: np.ndarray) -> np.ndarray:
        A = as_points(X, dim=self.dim)
        scale = np.sqrt(2.0 * self.kernel.outputscale / self.M)
        return scale * np.cos(A @ self.omega.T + self.bias)


def _spectral_sample(kernel: Kernel, M: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """``M x dim`` frequencies: N(0, I / l^2) for SE; Student-t(2 nu) scaled by 1/l for Matern."""
    if isinstance(kernel, SquaredExponential):
        return rng.standard_normal((M, dim)) / kernel.lengthscale
    if isinstance(kernel, Matern):
        z = rng.standard_normal((M, dim))
        u = rng.chisquare(2.0 * kernel.nu, size=(M, 1))
        return z / np.sqrt(u / (2.0 * kernel.nu)) / kernel.lengthscale
    raise ValueError(
        f"random Fourier features need an SE or Matern kernel, got {type(kernel).__name__}"
    )


@dataclass(frozen=True)
class IdentityFeatures:
    """``phi(x) = sqrt(s) x / l`` (n x dim -> n x dim), the feature map of ``Linear(l, s)``."""

    dim: int
    lengthscale: float = 1.0
    outputscale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", _check_int("dim", self.dim))
        object.__setattr__(self, "lengthscale", check_positive("lengthscale", self.lengthscale))
        object.__setattr__(self, "outputscale", check_positive("outputscale", self.outputscale))

    @property
    def num_features(self) -> int:
        """Feature dimension, equal to ``dim``."""
        return self.dim

    @property
    def kernel(self) -> Linear:
        """The linear kernel this map represents exactly."""
        return Linear(self.lengthscale, self.outputscale)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return np.sqrt(self.outputscale) / self.lengthscale * as_points(X, dim=self.dim)


@dataclass(frozen=True)
class FeatureKernel:
    """The finite-rank kernel ``k(x, x') = phi(x)^T phi(x')`` of a feature map (n x m Gram)."""

    feature_map: FeatureMap

    def __call__(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        return self.feature_map(X1) @ self.feature_map(X2).T

    def diag(self, X: np.ndarray) -> np.ndarray:
        P = self.feature_map(X)
        return np.einsum("ij,ij->i", P, P)


class WeightedFeatureGP:
    """Weighted GP / weighted ridge regression in feature space, Dai et al. App. A Eq. (6).

    Maintains ``V^{-1}`` (M x M) by a Sherman-Morrison rank-one update per observation and
    ``b = sum_s w_s phi(x_s) y_s``; ``theta = V^{-1} b`` is the weighted ridge estimate.  The
    running information gain uses ``det V_s / det V_{s-1} = 1 + w_s phi^T V_{s-1}^{-1} phi``
    (App. D, Eqs. (25)-(26)).
    """

    def __init__(self, feature_map: FeatureMap, lam: float) -> None:
        self.feature_map = feature_map
        self.lam = check_positive("lam", lam)
        M = feature_map.num_features
        self._Vinv = np.eye(M) / self.lam
        self._b = np.zeros(M)
        self._n = 0
        self._info = 0.0

    @property
    def n(self) -> int:
        """Number of observations added so far."""
        return self._n

    @property
    def V_inv(self) -> np.ndarray:
        """``V^{-1} = (lambda I + Phi^T W Phi)^{-1}``, M x M (copy)."""
        return self._Vinv.copy()

    @property
    def theta(self) -> np.ndarray:
        """Weighted ridge estimate ``V^{-1} Phi^T W Y`` (length M)."""
        return self._Vinv @ self._b

    @property
    def information_gain(self) -> float:
        """Running ``gamma~ = 1/2 log(det V_n / det V_0)`` (Dai et al. App. D, Eq. (26))."""
        return self._info

    def add(self, x: np.ndarray, y: float, eps: float) -> None:
        """Condition on ``y`` at ``x`` (d) with weight ``1/eps^2``; O(M^2)."""
        phi = self.feature_map(np.asarray(x, dtype=float).reshape(1, -1))[0]
        yv = float(y)
        if not np.isfinite(yv):
            raise ValueError(f"y must be finite, got {yv!r}")
        w = 1.0 / float(check_eps(eps, 1)[0]) ** 2
        u = self._Vinv @ phi
        q = max(float(phi @ u), 0.0)
        self._info += information_gain_increment(self.lam * q, w, self.lam)
        Vinv = self._Vinv - (w / (1.0 + w * q)) * np.outer(u, u)
        self._Vinv = 0.5 * (Vinv + Vinv.T)
        self._b += w * yv * phi
        self._n += 1

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """``(V^{-1}, b)``: the model's own arrays, for a compiled loop that does ``add``'s
        operations on them in place (``qbo.algorithms.feature_kernel``); it then hands the count
        and information gain back with ``adopt``."""
        return self._Vinv, self._b

    def adopt(self, n: int, information_gain: float) -> None:
        """Take the count and information gain a compiled loop reached (``buffers``)."""
        self._n, self._info = int(n), float(information_gain)

    def extend(self, X: np.ndarray, Y: np.ndarray, eps: np.ndarray) -> None:
        """``add`` each row of ``X`` (n x d) with ``Y`` (n) and ``eps`` (n), in order."""
        A = np.asarray(X, dtype=float)
        y, e = np.asarray(Y, dtype=float).reshape(-1), check_eps(eps, A.shape[0])
        if y.shape[0] != A.shape[0]:
            raise ValueError(f"Y must have length {A.shape[0]}, got {y.shape[0]}")
        for i in range(A.shape[0]):
            self.add(A[i], y[i], e[i])

    def posterior(self, Xq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (6) at ``Xq`` (m x d): ``(mean (m), var (m))``, var clipped at 0; O(m M^2)."""
        P = self.feature_map(Xq)
        mean = P @ self.theta
        var = self.lam * np.einsum("ij,ij->i", P @ self._Vinv, P)
        return mean, np.maximum(var, 0.0)


class FeatureArmModel:
    """``WeightedFeatureGP`` (Dai et al. App. A Eq. (6)) evaluated on a fixed arm set (m x d).

    A ``qbo.gp.ArmModel`` with ``feature_dim`` M and ``max_feature_norm_sq`` max ||phi(x)||^2.
    """

    def __init__(self, feature_map: FeatureMap, arms: np.ndarray, lam: float) -> None:
        self.gp = WeightedFeatureGP(feature_map, lam)
        self.lam = self.gp.lam
        self.arms = np.asarray(arms, dtype=float)
        self.Phi = feature_map(self.arms)
        self.feature_dim = feature_map.num_features
        self.max_feature_norm_sq = float(np.max(np.einsum("ij,ij->i", self.Phi, self.Phi)))

    @property
    def num_arms(self) -> int:
        """Number of arms m."""
        return self.Phi.shape[0]

    @property
    def n(self) -> int:
        """Number of observations added so far."""
        return self.gp.n

    def add(self, arm: int, y: float, eps: float = 1.0) -> None:
        """Condition on ``y`` at arm index ``arm`` with weight ``1/eps^2``; O(M^2)."""
        self.gp.add(self.arms[arm], y, eps)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (6) at every arm: ``mean = Phi theta``, ``var = lam ||phi||^2_{V^-1}``."""
        mean = self.Phi @ self.gp.theta
        var = self.lam * np.einsum("ij,ij->i", self.Phi @ self.gp.V_inv, self.Phi)
        return mean, np.maximum(var, 0.0)

    def ucb(self, beta: float) -> tuple[np.ndarray, np.ndarray]:
        """``(mean + beta sigma, sigma)`` at every arm (``qbo.gp.ArmModel.ucb``)."""
        return ucb_from_posterior(self, beta)

    @property
    def information_gain(self) -> float:
        """``1/2 log(det V / det V_0)`` (Dai et al. App. D Eq. (26))."""
        return self.gp.information_gain
