"""Covariance kernels for the (weighted) GP surrogate.

Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), Sec. 3.1 uses the squared
exponential (SE) kernel ``k(x, x') = exp(-||x - x'||^2 / (2 l^2))`` (App. J adds an output
scale ``sigma_0^2``), extends the analysis to Matern kernels (Sec. 5.7 / App. I) and to the
linear kernel (Q-LinUCB, Sec. 5.6).  Matern closed forms follow Rasmussen & Williams (2006),
Eqs. (4.14)-(4.17).  Every kernel is a frozen dataclass with ``lengthscale`` ``l`` and
``outputscale`` ``s``; ``k(X1, X2)`` maps ``(n x d, m x d) -> n x m`` and ``diag(X)``
maps ``n x d -> n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = [
    "KERNEL_NAMES",
    "Kernel",
    "Linear",
    "Matern",
    "SquaredExponential",
    "as_points",
    "make_kernel",
]

KERNEL_NAMES: tuple[str, ...] = ("se", "matern12", "matern32", "matern52", "linear")
_MATERN_NUS: tuple[float, ...] = (0.5, 1.5, 2.5)


@runtime_checkable
class Kernel(Protocol):
    """Anything with ``k(X1: n x d, X2: m x d) -> n x m`` and ``diag(X: n x d) -> n``."""

    def __call__(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray: ...

    def diag(self, X: np.ndarray) -> np.ndarray: ...


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise ``ValueError`` unless it is finite and > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number > 0, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v!r}")
    if v <= 0.0:
        raise ValueError(f"{name} must be > 0, got {v!r}")
    return v


def as_points(X: np.ndarray, name: str = "X", dim: int | None = None) -> np.ndarray:
    """Validate a finite ``n x d`` float array (``dim`` fixes ``d`` when given)."""
    A = np.asarray(X, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n x d) array, got shape {A.shape}")
    if dim is not None and A.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} must be finite, got non-finite entries")
    return A


def _pair(X1: np.ndarray, X2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A = as_points(X1, "X1")
    return A, as_points(X2, "X2", dim=A.shape[1])


@dataclass(frozen=True)
class _ScaledKernel:
    """Shared ``lengthscale`` / ``outputscale`` fields and their validation."""

    lengthscale: float = 1.0
    outputscale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "lengthscale", check_positive("lengthscale", self.lengthscale))
        object.__setattr__(self, "outputscale", check_positive("outputscale", self.outputscale))

    def _scaled_dist(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """``||x - x'|| / l`` (exact zeros on the diagonal, via ``cdist``), ``n x m``."""
        A, B = _pair(X1, X2)
        from scipy.spatial.distance import cdist  # lazy: scipy.spatial costs ~0.3 s to import

        return cdist(A, B) / self.lengthscale

    def diag(self, X: np.ndarray) -> np.ndarray:
        """Stationary kernels: ``k(x, x) = outputscale`` for every row of ``X`` (n x d)."""
        return np.full(as_points(X).shape[0], self.outputscale)


@dataclass(frozen=True)
class SquaredExponential(_ScaledKernel):
    """SE kernel ``k(x, x') = s * exp(-||x - x'||^2 / (2 l^2))`` (Dai et al. Sec. 3.1, App. J)."""

    def __call__(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        r = self._scaled_dist(X1, X2)
        return self.outputscale * np.exp(-0.5 * r * r)


@dataclass(frozen=True)
class Matern(_ScaledKernel):
    """Matern kernel with ``nu`` in {1/2, 3/2, 5/2} (Dai et al. Sec. 5.7; R&W Eq. 4.14).

    With ``r = ||x - x'|| / l``: nu=1/2: ``s e^{-r}``; nu=3/2: ``s (1 + sqrt3 r) e^{-sqrt3 r}``;
    nu=5/2: ``s (1 + sqrt5 r + 5 r^2 / 3) e^{-sqrt5 r}``.
    """

    nu: float = 2.5

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.nu not in _MATERN_NUS:
            raise ValueError(f"nu must be one of {_MATERN_NUS}, got {self.nu!r}")
        object.__setattr__(self, "nu", float(self.nu))

    def __call__(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        r = self._scaled_dist(X1, X2)
        if self.nu == 0.5:
            poly, z = 1.0, r
        elif self.nu == 1.5:
            z = math.sqrt(3.0) * r
            poly = 1.0 + z
        else:
            z = math.sqrt(5.0) * r
            poly = 1.0 + z + z * z / 3.0
        return self.outputscale * poly * np.exp(-z)


@dataclass(frozen=True)
class Linear(_ScaledKernel):
    """Linear kernel ``k(x, x') = s * <x, x'> / l^2`` (Q-LinUCB, Dai et al. Sec. 5.6).

    Equivalent to the explicit feature map ``phi(x) = sqrt(s) x / l`` (``IdentityFeatures``).
    """

    def __call__(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        A, B = _pair(X1, X2)
        return (self.outputscale / self.lengthscale**2) * (A @ B.T)

    def diag(self, X: np.ndarray) -> np.ndarray:
        A = as_points(X)
        return (self.outputscale / self.lengthscale**2) * np.einsum("ij,ij->i", A, A)


def make_kernel(name: str, lengthscale: float = 1.0, outputscale: float = 1.0) -> Kernel:
    """Build a kernel by name: one of ``"se", "matern12", "matern32", "matern52", "linear"``."""
    if name == "se":
        return SquaredExponential(lengthscale, outputscale)
    if name == "linear":
        return Linear(lengthscale, outputscale)
    nus = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}
    if name in nus:
        return Matern(lengthscale, outputscale, nu=nus[name])
    raise ValueError(f"kernel name must be one of {KERNEL_NAMES}, got {name!r}")
