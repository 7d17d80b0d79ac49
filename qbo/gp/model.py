"""The one interface of every weighted GP posterior over a finite arm set.

Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), Eq. (3): an observation ``y`` at
arm ``x`` with estimation error ``eps`` has weight ``w = 1/eps^2``, i.e. noise variance
``lambda eps^2`` (Sec. 4.1); ``eps = 1`` is the classical GP of Srinivas et al. (2010)
Eqs. (1)-(2) with noise variance lambda.  Members of the family:

* ``ArmPosterior`` (``qbo.gp.arms``): rank-one update of the m x m covariance, O(m^2).
* ``CholeskyArmPosterior`` (``qbo.gp.cholesky``): incremental Cholesky over the observed
  arms, O(m s) time and memory; ``from_stats`` is the batch refit of length-scale methods.
* ``FeatureArmModel`` (``qbo.gp.features``): the feature form (App. A Eq. (6)) with random
  Fourier features (App. J) or the identity map (LinUCB), O(M^2) per update.
* ``ForgettingArmPosterior`` (``qbo.gp.forgetting``): the same update under a space x time
  kernel with forgetting (Bogunovic et al. 2016), with ``advance(dt)``.

All are pinned against the direct computation ``qbo.gp.weighted_posterior_batch``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["ArmModel", "ucb_from_posterior"]


@runtime_checkable
class ArmModel(Protocol):
    """A weighted posterior over m fixed arms (Dai et al. Eq. (3)).

    ``feature_dim`` D and ``max_feature_norm_sq`` (``max_x ||phi(x)||^2 = max_x k(x, x)``) are
    the constants of the m_bar bound (App. D Eq. (17)).
    """

    lam: float

    @property
    def num_arms(self) -> int: ...

    @property
    def n(self) -> int: ...

    @property
    def feature_dim(self) -> int: ...

    @property
    def max_feature_norm_sq(self) -> float: ...

    @property
    def information_gain(self) -> float: ...

    def add(self, arm: int, y: float, eps: float = 1.0) -> None: ...

    def posterior(self) -> tuple[np.ndarray, np.ndarray]: ...

    def ucb(self, beta: float) -> tuple[np.ndarray, np.ndarray]:
        """``(mu~ + beta sigma~, sigma~)`` at every arm, the score of Dai et al. Alg. 1 line 2
        (Srinivas et al. Eq. (6)); the arrays may be buffers of the model (read them, do not
        modify them), valid until its next ``add``."""
        ...


def ucb_from_posterior(model: ArmModel, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """``ArmModel.ucb`` computed from ``posterior()``: ``(mean + beta sqrt(var), sqrt(var))``."""
    mean, var = model.posterior()
    sd = np.sqrt(var)
    return mean + beta * sd, sd
