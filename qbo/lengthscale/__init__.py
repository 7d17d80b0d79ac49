"""Unknown length scales for the GP policies.

Ziomek, Adachi & Osborne, "Bayesian Optimisation with Unknown Hyperparameters: Regret Bounds
Logarithmically Closer to Optimal" (NeurIPS 2024): LB-GP-UCB (Algorithm 1), and its baselines
A-GP-UCB (Berkenkamp et al., JMLR 2019) and marginal-likelihood refits (Sec. 5).

* ``spec``: the ``lengthscale`` option (number, ``fixed:V``, ``mle``, ``lb``, ``a-gp-ucb``).
* ``growth``: g(t) = max(t0, sqrt t) and the candidates q(i) = theta_0 e^{-i/d}.
* ``bounds``: the suspected regret bounds R^theta and xi_t of the balancing rule.
* ``posterior``, ``mle``: sufficient-statistics posterior and likelihood fit.
* ``surrogates``: the strategies the policies use (``qbo.algorithms.models.build_surrogate``).
* ``problems``: the Berkenkamp 1-D toy and Michalewicz 5-D benchmarks.

This package never imports ``qbo.algorithms`` (which imports it).
"""

from qbo.lengthscale.growth import candidate, default_t0, growth
from qbo.lengthscale.mle import fit_hyperparameters, negative_log_likelihood
from qbo.gp.cholesky import ArmStats
from qbo.lengthscale.spec import LENGTHSCALE_MODES, LengthscaleSpec, parse_lengthscale
from qbo.lengthscale.surrogates import (
    BalancedSurrogate,
    FixedSurrogate,
    MLESurrogate,
    ScheduleSurrogate,
    SurrogateSettings,
)

__all__ = [
    "LENGTHSCALE_MODES", "ArmStats", "BalancedSurrogate", "FixedSurrogate",
    "LengthscaleSpec", "MLESurrogate", "ScheduleSurrogate", "SurrogateSettings", "candidate",
    "default_t0", "fit_hyperparameters", "growth", "negative_log_likelihood", "parse_lengthscale",
]
