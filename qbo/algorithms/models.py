"""Surrogate models over a finite arm set, and the stage-count bound m_bar.

Every surrogate is a ``qbo.gp.ArmModel`` (Dai et al. Eq. (3)); ``GPModelConfig.model`` picks:

* ``"exact"`` (default): the exact posterior, rank-one ``qbo.gp.ArmPosterior`` below
  ``CHOLESKY_MIN_ARMS`` arms and ``qbo.gp.CholeskyArmPosterior`` from there on (the faster of
  the two at that size, ``bench/gp_models.py``; both agree to rounding).
* ``"exact-rank-one"``: ``ArmPosterior``, O(m^2) time and memory per observation.
* ``"exact-cholesky"``: ``CholeskyArmPosterior``, O(m s) for s distinct observed arms.
* ``"rff"``: ``qbo.gp.FeatureArmModel`` with M random Fourier features (Dai et al. App. J,
  feature form App. A Eq. (6)), O(M^2) per observation and O(m M^2) per posterior.

See docs/models.md for where each is the right choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qbo.algorithms.base import check_float, check_int_opt
from qbo.gp.arms import ArmPosterior
from qbo.gp.cholesky import CholeskyArmPosterior
from qbo.gp.features import FeatureArmModel, RandomFourierFeatures
from qbo.gp.kernels import KERNEL_NAMES, make_kernel
from qbo.gp.model import ArmModel
from qbo.lengthscale.growth import default_t0
from qbo.lengthscale.spec import LengthscaleSpec, parse_lengthscale
from qbo.lengthscale.surrogates import (
    BalancedSurrogate,
    FixedSurrogate,
    MLESurrogate,
    ScheduleSurrogate,
    Surrogate,
    SurrogateSettings,
)

__all__ = [
    "CHOLESKY_MIN_ARMS",
    "GPModelConfig",
    "MODEL_NAMES",
    "NOISE_CASES",
    "build_gp_model",
    "build_surrogate",
    "default_m_bar",
]

MODEL_NAMES: tuple[str, ...] = ("exact", "exact-rank-one", "exact-cholesky", "rff")
NOISE_CASES: tuple[str, ...] = ("bounded", "variance")
# from this many arms on, "exact" means CholeskyArmPosterior (measured by bench/gp_models.py)
CHOLESKY_MIN_ARMS = 2000


@dataclass(frozen=True)
class GPModelConfig:
    """Kernel / surrogate options shared by ``q-gp-ucb`` and ``gp-ucb``.

    ``kernel`` in ``qbo.gp.KERNEL_NAMES`` (default SE, Dai et al. Sec. 3.1); ``lengthscale``
    default 0.2 (Dai et al. App. J grid-search choice for Q-GP-UCB on AutoML, and Srinivas et
    al. Sec. 6); the synthetic problem was generated with 0.1, so pass ``lengthscale=0.1``
    there.  ``lengthscale`` may also be a mode string (``qbo.lengthscale.spec``):
    ``"fixed:V"``, ``"mle[:V]"``, ``"mle+outputscale[:V]"``, ``"lb[:THETA0]"`` (LB-GP-UCB,
    Ziomek et al. 2024 Alg. 1) or ``"a-gp-ucb[:THETA0]"`` (Berkenkamp et al. 2019).
    ``outputscale`` 1.0 (k <= 1, Sec. 3.1; App. J AutoML used 0.5).  ``model``:
    ``"exact"`` (default; ``"exact-rank-one"`` / ``"exact-cholesky"`` force one exact form)
    or ``"rff"`` with ``num_features`` M (100 synthetic, 200 AutoML) drawn with ``seed``.  Length-scale tuning (ignored by ``fixed``): ``growth_t0`` t0 and
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
        if spec.mode in ("mle", "mle+outputscale", "a-gp-ucb") and self.model == "rff":
            raise ValueError(f"lengthscale {self.lengthscale!r} needs an exact model, got model={self.model!r}")


def build_gp_model(config: GPModelConfig, arms: np.ndarray, lam: float,
                   lengthscale: float | None = None) -> ArmModel:
    """The surrogate selected by ``config.model`` on ``arms`` (m x d) with regulariser ``lam``;
    ``lengthscale`` overrides the config's (needed when that is a mode string)."""
    theta = config.lengthscale_spec.value if lengthscale is None else lengthscale
    kernel = make_kernel(config.kernel, theta, config.outputscale)
    if config.model == "rff":
        rff = RandomFourierFeatures(kernel, config.num_features, arms.shape[1], seed=config.seed)
        return FeatureArmModel(rff, arms, lam)
    if config.model == "exact-cholesky" or (config.model == "exact" and arms.shape[0] >= CHOLESKY_MIN_ARMS):
        return CholeskyArmPosterior(kernel, arms, lam)
    return ArmPosterior(kernel(arms, arms), lam)


def build_surrogate(config: GPModelConfig, arms: np.ndarray, lam: float,
                    noise_var: float, delta: float) -> Surrogate:
    """The length-scale strategy of ``config.lengthscale`` (``qbo.lengthscale.surrogates``).

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
