"""``gp-ts``: GP Thompson sampling over the arms (Chowdhury & Gopalan 2017, "On kernelized
multi-armed bandits", ICML, GP-TS; the exact-posterior variant on a finite arm set).

Round t: draw f ~ N(mu_{t-1}, Sigma_{t-1}) jointly over the m arms from the GP posterior
(Srinivas et al. Eqs. (1)-(2) with noise variance ``noise``; ``qbo.gp.ArmPosterior``) and
play argmax f.  ``scale`` multiplies the posterior covariance's square root (Chowdhury &
Gopalan's v_t; 1 is the plain posterior sample, the usual practical choice).
The noise variance should be the problem's reward-variance bound
(``qbo.problems.noise.noise_variance_bound``), as for ``gp-ucb``.

The posterior is always the rank-one ``ArmPosterior``, at any number of arms: the joint draw
needs the m x m covariance and its root every round, so the Cholesky form
(``qbo.gp.CholeskyArmPosterior``, which ``model="exact"`` means for other policies from
``CHOLESKY_MIN_ARMS`` arms on) would save no memory, and it keeps no m x m covariance to
draw from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from qbo.algorithms.base import Query, argmax_lowest, check_float
from qbo.algorithms.models import GPModelConfig
from qbo.algorithms.thompson import RandomisedPolicy
from qbo.gp.arms import ArmPosterior
from qbo.gp.kernels import make_kernel

__all__ = ["GPTS", "GPTSConfig"]


@dataclass(frozen=True)
class GPTSConfig(GPModelConfig):
    """GP options (``GPModelConfig``; exact model, rank-one at any size, fixed length scale)
    plus ``noise`` (the observation-noise variance lambda) and ``scale``; ``seed`` also seeds
    the sampler."""

    noise: float = 0.25
    scale: float = 1.0

    def __post_init__(self) -> None:
        self._validate_model()
        if self.model != "exact" or self.lengthscale_spec.mode != "fixed":
            raise ValueError(f"gp-ts needs model='exact' and a fixed lengthscale, got model={self.model!r}, lengthscale={self.lengthscale!r}")
        check_float("noise", self.noise, low=0.0)
        check_float("scale", self.scale, low=0.0, low_open=False)


class GPTS(RandomisedPolicy):
    """GP Thompson sampling; one classical sample per round."""

    name = "gp-ts"
    quantum = False

    def __init__(self, arms: np.ndarray, config: GPTSConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else GPTSConfig())
        cfg = self.config
        kernel = make_kernel(cfg.kernel, cfg.lengthscale_spec.value, cfg.outputscale)
        self.model = ArmPosterior(kernel(self.arms, self.arms), float(cfg.noise))  # module docstring
        self._init_rng(self.config.seed)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        return self.model.posterior()

    def recommend(self) -> int:
        return argmax_lowest(self.model.posterior()[0])

    def _select(self) -> Query:
        mean = self.model.mean
        cov = self.model.Sigma
        root = _psd_root(cov)
        draw = mean + self.config.scale * (root @ self.rng.standard_normal(self.num_arms))
        return Query(argmax_lowest(draw), None, None)

    def _update(self, arm: int, value: float, eps: float) -> None:
        self.model.add(arm, value, 1.0)

    def stepper(self) -> Any:
        """This policy's rounds as one compiled loop on the rank-one ``ArmPosterior``
        (``qbo.algorithms.gp_ts_kernel``, which says where it differs from ``ask`` in the last
        bits)."""
        from qbo.algorithms.gp_ts_kernel import GPTSStepper  # numba is imported where it is used

        return GPTSStepper(self)


def _psd_root(cov: np.ndarray) -> np.ndarray:
    """R with R R^T = cov (up to a 1e-12 relative jitter): Cholesky, else eigh for a
    numerically singular covariance."""
    jitter = 1e-12 * max(float(np.max(np.diag(cov))), 1e-300)
    try:
        return np.linalg.cholesky(cov + jitter * np.eye(len(cov)))
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh(0.5 * (cov + cov.T))
        return v * np.sqrt(np.clip(w, 0.0, None))
