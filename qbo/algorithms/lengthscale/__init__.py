"""Unknown length scales for the GP policies.

Ziomek, Adachi & Osborne, "Bayesian Optimisation with Unknown Hyperparameters: Regret Bounds
Logarithmically Closer to Optimal" (NeurIPS 2024): LB-GP-UCB (Algorithm 1), and its baselines
A-GP-UCB (Berkenkamp et al., JMLR 2019) and marginal-likelihood refits (Sec. 5).

* ``spec``: the ``lengthscale`` option (number, ``fixed:V``, ``mle``, ``lb``, ``a-gp-ucb``).
* ``growth``: g(t) = max(t0, sqrt t) and the candidates q(i) = theta_0 e^{-i/d}.
* ``bounds``: the suspected regret bounds R^theta and xi_t of the balancing rule.
* ``mle``: the marginal-likelihood fit.
* ``surrogates``: the strategies the GP policies use (``qbo.algorithms.models.build_surrogate``).
"""

from qbo.algorithms.lengthscale.growth import candidate, default_t0, growth
from qbo.algorithms.lengthscale.mle import fit_hyperparameters, negative_log_likelihood
from qbo.algorithms.lengthscale.spec import LENGTHSCALE_MODES, LengthscaleSpec, parse_lengthscale
from qbo.algorithms.lengthscale.surrogates import (
    BalancedSurrogate,
    FixedSurrogate,
    MLESurrogate,
    ScheduleSurrogate,
    SurrogateSettings,
)

__all__ = [
    "LENGTHSCALE_MODES", "BalancedSurrogate", "FixedSurrogate", "LengthscaleSpec", "MLESurrogate",
    "ScheduleSurrogate", "SurrogateSettings", "candidate", "default_t0", "fit_hyperparameters", "growth",
    "negative_log_likelihood", "parse_lengthscale",
]
