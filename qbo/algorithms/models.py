"""Surrogate models over a finite arm set, and the stage-count bound m_bar.

Two interchangeable weighted-GP surrogates (both implement Dai et al. Eq. (3)):

* ``"exact"``: ``qbo.gp.ArmPosterior`` on the exact kernel Gram matrix of the arms, O(m^2)
  per observation (Sherman-Morrison), independent of the number of observations.
* ``"rff"``: ``qbo.gp.WeightedFeatureGP`` with M random Fourier features (Dai et al. App. J,
  feature form App. A Eq. (6)), O(M^2) per observation and O(m M^2) per posterior.

Both expose ``add(arm, y, eps)``, ``posterior() -> (mean (m), var (m))``,
``information_gain`` and the two constants the m_bar bound needs (``feature_dim`` D and
``max_feature_norm_sq`` = max_x ||phi(x)||^2 = max_x k(x, x) over the arms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from qbo.algorithms.base import check_float, check_int_opt
from qbo.gp.arms import ArmPosterior
from qbo.gp.features import FeatureMap, RandomFourierFeatures, WeightedFeatureGP
from qbo.gp.kernels import KERNEL_NAMES, make_kernel

__all__ = [
    "ArmModel",
    "ExactArmModel",
    "FeatureArmModel",
    "GPModelConfig",
    "NOISE_CASES",
    "build_gp_model",
    "default_m_bar",
]

MODEL_NAMES: tuple[str, ...] = ("exact", "rff")
NOISE_CASES: tuple[str, ...] = ("bounded", "variance")


class ArmModel(Protocol):
    """A weighted posterior over m fixed arms."""

    lam: float
    feature_dim: int
    max_feature_norm_sq: float

    def add(self, arm: int, y: float, eps: float) -> None: ...

    def posterior(self) -> tuple[np.ndarray, np.ndarray]: ...

    @property
    def information_gain(self) -> float: ...


class ExactArmModel(ArmPosterior):
    """``ArmPosterior`` plus the m_bar constants: D = m (rank K <= m), max k(x, x)."""

    @property
    def feature_dim(self) -> int:
        """Rank bound of the Gram matrix: the number of arms."""
        return self.num_arms

    @property
    def max_feature_norm_sq(self) -> float:
        """``max_i K_ii`` (``||phi(x_i)||^2`` for ``phi = rows of K^{1/2}``)."""
        return float(np.max(np.diag(self._K)))


class FeatureArmModel:
    """``WeightedFeatureGP`` (Dai et al. App. A Eq. (6)) evaluated on a fixed arm set (m x d)."""

    def __init__(self, feature_map: FeatureMap, arms: np.ndarray, lam: float) -> None:
        self.gp = WeightedFeatureGP(feature_map, lam)
        self.lam = self.gp.lam
        self.arms = np.asarray(arms, dtype=float)
        self.Phi = feature_map(self.arms)
        self.feature_dim = feature_map.num_features
        self.max_feature_norm_sq = float(np.max(np.einsum("ij,ij->i", self.Phi, self.Phi)))

    def add(self, arm: int, y: float, eps: float) -> None:
        """Condition on ``y`` at arm index ``arm`` with weight ``1/eps^2``; O(M^2)."""
        self.gp.add(self.arms[arm], y, eps)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (6) at every arm: ``mean = Phi theta``, ``var = lam ||phi||^2_{V^-1}``."""
        mean = self.Phi @ self.gp.theta
        var = self.lam * np.einsum("ij,ij->i", self.Phi @ self.gp.V_inv, self.Phi)
        return mean, np.maximum(var, 0.0)

    @property
    def information_gain(self) -> float:
        """``1/2 log(det V / det V_0)`` (Dai et al. App. D Eq. (26))."""
        return self.gp.information_gain


@dataclass(frozen=True)
class GPModelConfig:
    """Kernel / surrogate options shared by ``q-gp-ucb`` and ``gp-ucb``.

    ``kernel`` in ``qbo.gp.KERNEL_NAMES`` (default SE, Dai et al. Sec. 3.1); ``lengthscale``
    default 0.2 (Dai et al. App. J grid-search choice for Q-GP-UCB on AutoML, and Srinivas et
    al. Sec. 6); the synthetic problem was generated with 0.1, so pass ``lengthscale=0.1``
    there.  ``outputscale`` 1.0 (k <= 1, Sec. 3.1; App. J AutoML used 0.5).  ``model``:
    ``"exact"`` (default) or ``"rff"`` with ``num_features`` M (100 synthetic, 200 AutoML)
    drawn with ``seed``.
    """

    kernel: str = "se"
    lengthscale: float = 0.2
    outputscale: float = 1.0
    model: str = "exact"
    num_features: int = 100
    seed: int = 0

    def _validate_model(self) -> None:
        if self.kernel not in KERNEL_NAMES:
            raise ValueError(f"kernel must be one of {KERNEL_NAMES}, got {self.kernel!r}")
        check_float("lengthscale", self.lengthscale, low=0.0)
        check_float("outputscale", self.outputscale, low=0.0)
        if self.model not in MODEL_NAMES:
            raise ValueError(f"model must be one of {MODEL_NAMES}, got {self.model!r}")
        check_int_opt("num_features", self.num_features)
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if self.model == "rff" and self.kernel == "linear":
            raise ValueError("model='rff' needs an SE or Matern kernel, got kernel='linear'")


def build_gp_model(config: GPModelConfig, arms: np.ndarray, lam: float) -> ArmModel:
    """The surrogate selected by ``config.model`` on ``arms`` (m x d) with regulariser ``lam``."""
    kernel = make_kernel(config.kernel, config.lengthscale, config.outputscale)
    if config.model == "exact":
        return ExactArmModel(kernel(arms, arms), lam)
    rff = RandomFourierFeatures(kernel, config.num_features, arms.shape[1], seed=config.seed)
    return FeatureArmModel(rff, arms, lam)


def default_m_bar(
    budget: int, feature_dim: int, max_norm_sq: float, lam: float, noise_case: str = "bounded"
) -> int:
    """Upper bound on the number of stages m (DERIVED from Dai et al. App. D).

    Doubling identity (Eq. 25): ``m log 2 = 2 gamma~_m <= D log(1 + sum_s w_s k(x_s,x_s)/(D lam))``
    (Eq. 17), with ``sum_s 1/eps_s^2 <= T^2`` (Lemma 2, Eq. 8; bounded noise) or
    ``<= 9 sqrt(2) T^2`` (App. G Eq. 51; bounded variance).  Hence
    ``m_bar = min(T, ceil(D log2(1 + c T^2 max k / (D lam))))``; ``T`` itself is always valid
    because each stage uses at least one oracle query.
    """
    c = 1.0 if noise_case == "bounded" else 9.0 * math.sqrt(2.0)
    D = int(feature_dim)
    bound = D * math.log2(1.0 + c * budget**2 * max_norm_sq / (D * lam))
    return max(1, min(int(budget), math.ceil(bound)))
