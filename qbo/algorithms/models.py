"""Surrogate models over a finite arm set (the stage-count bound m_bar is in ``qbo.algorithms.staged``).

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

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from qbo.algorithms.base import check_float, check_int_opt
from qbo.gp.arms import ArmPosterior
from qbo.gp.features import FeatureMap, RandomFourierFeatures, WeightedFeatureGP
from qbo.gp.kernels import KERNEL_NAMES, make_kernel
from qbo.algorithms.lengthscale.growth import default_t0
from qbo.algorithms.lengthscale.spec import LengthscaleSpec, parse_lengthscale
from qbo.algorithms.lengthscale.surrogates import (
    BalancedSurrogate,
    FixedSurrogate,
    MLESurrogate,
    ScheduleSurrogate,
    Surrogate,
    SurrogateSettings,
)

__all__ = [
    "ArmModel",
    "ExactArmModel",
    "FeatureArmModel",
    "GPModelConfig",
    "NOISE_CASES",
    "build_gp_model",
    "build_surrogate",
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
    there.  ``lengthscale`` may also be a mode string (``qbo.algorithms.lengthscale.spec``):
    ``"fixed:V"``, ``"mle[:V]"``, ``"mle+outputscale[:V]"``, ``"lb[:THETA0]"`` (LB-GP-UCB,
    Ziomek et al. 2024 Alg. 1) or ``"a-gp-ucb[:THETA0]"`` (Berkenkamp et al. 2019).
    ``outputscale`` 1.0 (k <= 1, Sec. 3.1; App. J AutoML used 0.5).  ``model``:
    ``"exact"`` (default) or ``"rff"`` with ``num_features`` M (100 synthetic, 200 AutoML)
    drawn with ``seed``.  Length-scale tuning (ignored by ``fixed``): ``growth_t0`` t0 and
    ``growth_power`` p of ``g(t) = max(t0, t^p)`` (None -> ``e^{5/d}``, Ziomek et al. Sec. 5),
    ``lb_norm`` N of ``B(theta, N)`` (Sec. 2), ``mle_every``: refit after every k-th tell.
    """

    kernel: str = "se"
    lengthscale: float | str = 0.2
    outputscale: float = 1.0
    model: str = "exact"
    num_features: int = 100
    seed: int = 0
    growth_t0: float | None = None
    growth_power: float = 0.5
    lb_norm: float = 1.0
    mle_every: int = 1

    @property
    def lengthscale_spec(self) -> LengthscaleSpec:
        """The parsed ``lengthscale`` option."""
        return parse_lengthscale(self.lengthscale)

    def _validate_model(self) -> None:
        if self.kernel not in KERNEL_NAMES:
            raise ValueError(f"kernel must be one of {KERNEL_NAMES}, got {self.kernel!r}")
        spec = self.lengthscale_spec
        check_float("outputscale", self.outputscale, low=0.0)
        if self.model not in MODEL_NAMES:
            raise ValueError(f"model must be one of {MODEL_NAMES}, got {self.model!r}")
        check_int_opt("num_features", self.num_features)
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if self.model == "rff" and self.kernel == "linear":
            raise ValueError("model='rff' needs an SE or Matern kernel, got kernel='linear'")
        self._validate_lengthscale_mode(spec)

    def _validate_lengthscale_mode(self, spec: LengthscaleSpec) -> None:
        if self.growth_t0 is not None:
            check_float("growth_t0", self.growth_t0, low=1.0, low_open=False)
        check_float("growth_power", self.growth_power, low=0.0, low_open=False)
        check_float("lb_norm", self.lb_norm, low=0.0, low_open=False)
        check_int_opt("mle_every", self.mle_every)
        if spec.adaptive and self.kernel == "linear":
            raise ValueError(f"lengthscale {self.lengthscale!r} needs an SE or Matern kernel, got kernel='linear'")
        if spec.mode in ("mle", "mle+outputscale", "a-gp-ucb") and self.model != "exact":
            raise ValueError(f"lengthscale {self.lengthscale!r} needs model='exact', got model={self.model!r}")


def build_gp_model(config: GPModelConfig, arms: np.ndarray, lam: float,
                   lengthscale: float | None = None) -> ArmModel:
    """The surrogate selected by ``config.model`` on ``arms`` (m x d) with regulariser ``lam``;
    ``lengthscale`` overrides the config's (needed when that is a mode string)."""
    theta = config.lengthscale_spec.value if lengthscale is None else lengthscale
    kernel = make_kernel(config.kernel, theta, config.outputscale)
    if config.model == "exact":
        return ExactArmModel(kernel(arms, arms), lam)
    rff = RandomFourierFeatures(kernel, config.num_features, arms.shape[1], seed=config.seed)
    return FeatureArmModel(rff, arms, lam)


def build_surrogate(config: GPModelConfig, arms: np.ndarray, lam: float,
                    noise_var: float, delta: float) -> Surrogate:
    """The length-scale strategy of ``config.lengthscale`` (``qbo.algorithms.lengthscale.surrogates``).

    ``noise_var`` is sigma_N^2 and ``delta`` the confidence of LB-GP-UCB's xi_t (Thm 4.1).
    """
    spec = config.lengthscale_spec
    if spec.mode == "fixed":
        return FixedSurrogate(build_gp_model(config, arms, lam, spec.value), spec.value)
    t0 = config.growth_t0 if config.growth_t0 is not None else default_t0(arms.shape[1])
    settings = SurrogateSettings(config.kernel, float(config.outputscale), arms, float(lam),
                                 spec.value, float(t0), float(config.growth_power))
    if spec.mode == "a-gp-ucb":
        return ScheduleSurrogate(settings)
    if spec.mode in ("mle", "mle+outputscale"):
        return MLESurrogate(settings, config.mle_every, spec.fit_outputscale)
    return BalancedSurrogate(settings, lambda theta: build_gp_model(config, arms, lam, theta),
                             noise_var, delta, config.lb_norm)
