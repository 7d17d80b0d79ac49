"""Q-LinUCB (Dai et al., "Quantum Bayesian Optimization", NeurIPS 2023, Sec. 5.6 / App. H,
building on Wan et al. AAAI 2023) and classical LinUCB = OFUL (Abbasi-Yadkori et al. 2011).

Both run (weighted) ridge regression in feature space with ``qbo.gp.WeightedFeatureGP`` and
``IdentityFeatures``: ``V = lam I + sum_k w_k x_k x_k^T``, ``theta_hat = V^{-1} sum_k w_k x_k y_k``
(``w_k = 1/eps_k^2`` for Q-LinUCB, 1 for LinUCB), and select
``x = argmax x^T theta_hat + rho ||x||_{V^{-1}}`` (lowest index on ties; the OFUL form of the
optimistic choice in App. H Eq. (65)).  By default each arm is augmented with a constant 1
feature (``intercept=True``) so that affine rewards ``a^T x + c`` are linear in the features;
``d`` below is the feature dimension including that column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from qbo.algorithms.base import PolicyBase, Query, argmax_lowest, check_float, check_int_opt
from qbo.algorithms.models import NOISE_CASES
from qbo.algorithms.staged import StagedPolicy, resolve_alpha
from qbo.gp.features import FeatureArmModel, IdentityFeatures

__all__ = ["LinUCB", "LinUCBConfig", "QLinUCB", "QLinUCBConfig"]

RADIUS_NAMES: tuple[str, ...] = ("eq64", "eq61")


@dataclass(frozen=True)
class _LinearConfig:
    """Shared options: ``lam`` (ridge, default 1.0), ``delta`` in (0, 1), ``S`` >= ||theta*||,
    ``L`` >= max ||x|| (None -> computed from the (augmented) arms), ``intercept``."""

    lam: float = 1.0
    delta: float = 0.1
    S: float = 1.0
    L: float | None = None
    intercept: bool = True

    def _validate_linear(self) -> None:
        check_float("lam", self.lam, low=0.0)
        check_float("delta", self.delta, low=0.0, high=1.0, high_open=True)
        check_float("S", self.S, low=0.0, low_open=False)
        if self.L is not None:
            check_float("L", self.L, low=0.0)
        if not isinstance(self.intercept, bool):
            raise ValueError(f"intercept must be a bool, got {self.intercept!r}")


class _LinearPolicy(PolicyBase):
    """Ridge-regression bookkeeping shared by Q-LinUCB and LinUCB."""

    def __init__(self, arms: np.ndarray, config: _LinearConfig) -> None:
        super().__init__(arms, config)
        X = self.arms
        if config.intercept:
            X = np.hstack([X, np.ones((X.shape[0], 1))])
        self.features = X
        self.d = X.shape[1]
        self.lam = float(config.lam)
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        self.L = float(config.L) if config.L is not None else float(np.max(norms))
        if self.L < float(np.max(norms)) * (1.0 - 1e-12):
            raise ValueError(f"L must be >= max ||x|| = {np.max(norms)!r}, got {self.L!r}")
        self.model = FeatureArmModel(IdentityFeatures(self.d), X, self.lam)

    @property
    def theta(self) -> np.ndarray:
        """Weighted ridge estimate ``theta_hat = V^{-1} X^T W Y`` (length d)."""
        return self.model.gp.theta

    @property
    def V_inv(self) -> np.ndarray:
        """``V^{-1}`` (d x d)."""
        return self.model.gp.V_inv

    @property
    def information_gain(self) -> float:
        """``1/2 log(det V / det(lam I))`` (Dai et al. App. D Eq. (26))."""
        return self.model.information_gain

    def widths(self) -> np.ndarray:
        """``||x||_{V^{-1}}`` for every arm (m)."""
        return np.sqrt(self.model.posterior()[1] / self.lam)

    def recommend(self) -> int:
        """Arm maximising ``x^T theta_hat`` (lowest index on ties)."""
        return argmax_lowest(self.features @ self.theta)

    def radius(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _ucb_arm(self) -> tuple[int, float]:
        """``argmax x^T theta_hat + rho ||x||_{V^{-1}}`` and that arm's width."""
        w = self.widths()
        arm = argmax_lowest(self.features @ self.theta + self.radius() * w)
        return arm, float(w[arm])

    def _update(self, arm: int, value: float, eps: float) -> None:
        self.model.add(arm, value, eps)


@dataclass(frozen=True)
class QLinUCBConfig(_LinearConfig):
    """``q-linucb`` options: the shared linear ones plus ``budget`` (T), ``m_bar``,
    ``noise_case``, ``eps_min`` (as ``q-gp-ucb``) and ``radius`` ("eq64" default, App. H
    Eq. (64); "eq61" the tighter pre-simplification form)."""

    budget: int | None = None
    m_bar: int | None = None
    noise_case: str = "bounded"
    eps_min: float = 1e-6
    radius: str = "eq64"

    def __post_init__(self) -> None:
        self._validate_linear()
        check_int_opt("budget", self.budget)
        check_int_opt("m_bar", self.m_bar)
        if self.noise_case not in NOISE_CASES:
            raise ValueError(f"noise_case must be one of {NOISE_CASES}, got {self.noise_case!r}")
        check_float("eps_min", self.eps_min, low=0.0)
        if self.radius not in RADIUS_NAMES:
            raise ValueError(f"radius must be one of {RADIUS_NAMES}, got {self.radius!r}")


class QLinUCB(_LinearPolicy, StagedPolicy):
    """Q-LinUCB with the improved radius of Dai et al. Thm 6 / App. H; one ask/tell per stage.

    ``eps_s = ||x_s||_{V_{s-1}^{-1}}`` (Sec. 5.6; floored at ``eps_min``, ``exhausted`` below it),
    ``alpha = delta/(2 m_bar)`` and weight ``1/eps_s^2``, exactly as Q-GP-UCB.
    """

    name = "q-linucb"

    def __init__(self, arms: np.ndarray, config: QLinUCBConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else QLinUCBConfig())
        self._sum_w = 0.0
        self.m_bar, self.alpha = resolve_alpha(
            self.config.delta, self.config.budget, self.config.m_bar, self.model.feature_dim,
            self.model.max_feature_norm_sq, self.lam, self.config.noise_case)

    def radius(self) -> float:
        """rho_{s-1} with ``sum_k eps_k^-2`` over the stages so far.

        eq64: ``sqrt(2 d log((1 + L^2 sum w / lam) / delta)) + sqrt(lam) S``;
        eq61: ``sqrt(d log(1 + L^2 sum w / (d lam)) + 2 log(1/delta)) + sqrt(lam) S``.
        """
        c, d, sw = self.config, self.d, self._sum_w
        if c.radius == "eq64":
            r = math.sqrt(2 * d * math.log((1 + self.L**2 * sw / self.lam) / c.delta))
        else:
            r = math.log1p(self.L**2 * sw / (d * self.lam))
            r = math.sqrt(d * r + 2 * math.log(1 / c.delta))
        return r + math.sqrt(self.lam) * c.S

    def _select(self) -> Query:
        w = self.widths()
        return self._stage_query(self.features @ self.theta + self.radius() * w, w)

    def _update(self, arm: int, value: float, eps: float) -> None:
        super()._update(arm, value, eps)
        self._sum_w += 1.0 / eps**2


@dataclass(frozen=True)
class LinUCBConfig(_LinearConfig):
    """``linucb`` options: the shared linear ones plus ``R``, the sub-Gaussian noise scale
    (default 0.5: any reward in [0, 1], e.g. Bernoulli, is 1/2-sub-Gaussian)."""

    R: float = 0.5

    def __post_init__(self) -> None:
        self._validate_linear()
        check_float("R", self.R, low=0.0)


class LinUCB(_LinearPolicy):
    """OFUL (Abbasi-Yadkori et al. 2011): unweighted ridge regression, one sample per ask.

    Radius after t samples: ``R sqrt(d log((1 + t L^2/lam)/delta)) + sqrt(lam) S``.
    """

    name = "linucb"
    quantum = False

    def __init__(self, arms: np.ndarray, config: LinUCBConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else LinUCBConfig())

    def radius(self) -> float:
        """OFUL confidence radius with the determinant bound (Abbasi-Yadkori Thm 2)."""
        c = self.config
        r = math.sqrt(self.d * math.log((1 + self.t * self.L**2 / self.lam) / c.delta))
        return c.R * r + math.sqrt(self.lam) * c.S

    def _select(self) -> Query:
        return Query(self._ucb_arm()[0], None, None)

    def stepper(self) -> Any:
        """This policy's rounds as one compiled loop (``qbo.algorithms.feature_kernel``)."""
        from qbo.algorithms.feature_kernel import FeatureStepper  # numba is imported where it is used

        return FeatureStepper(self, self.model, self.features, linear=True)
