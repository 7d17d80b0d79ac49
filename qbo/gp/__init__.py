"""Pure-numpy Gaussian-process maths for quantum Bayesian optimisation.

Kernels; the weighted GP posterior of Dai et al., "Quantum Bayesian Optimization"
(NeurIPS 2023), Eq. (3), as one family of ``ArmModel`` posteriors over a finite arm set
(rank-one, incremental Cholesky, random features (App. A Eq. (6), App. J), and the
time-varying forgetting form); the point-space forms ``WeightedGP`` / ``WeightedFeatureGP``;
the direct reference ``weighted_posterior_batch``; and the weighted information gain
(Sec. 5.1).
"""

from qbo.gp.arms import ArmPosterior, ArmStack
from qbo.gp.cholesky import ArmStats, CholeskyArmPosterior, whitened_cholesky
from qbo.gp.features import (
    FeatureArmModel,
    FeatureKernel,
    FeatureMap,
    IdentityFeatures,
    RandomFourierFeatures,
    WeightedFeatureGP,
)
from qbo.gp.forgetting import ForgettingArmPosterior, direct_forgetting_posterior
from qbo.gp.information import (
    chain_rule_information_gain,
    information_gain_increment,
    logdet_information_gain,
    weighted_information_gain,
)
from qbo.gp.kernels import (
    KERNEL_NAMES,
    Kernel,
    Linear,
    Matern,
    SquaredExponential,
    make_kernel,
)
from qbo.gp.model import ArmModel
from qbo.gp.weighted import WeightedGP, gram_posterior, weighted_posterior_batch

__all__ = [
    "ArmModel",
    "ArmPosterior",
    "ArmStack",
    "ArmStats",
    "CholeskyArmPosterior",
    "FeatureArmModel",
    "FeatureKernel",
    "FeatureMap",
    "ForgettingArmPosterior",
    "IdentityFeatures",
    "KERNEL_NAMES",
    "Kernel",
    "Linear",
    "Matern",
    "RandomFourierFeatures",
    "SquaredExponential",
    "WeightedFeatureGP",
    "WeightedGP",
    "chain_rule_information_gain",
    "direct_forgetting_posterior",
    "gram_posterior",
    "information_gain_increment",
    "logdet_information_gain",
    "make_kernel",
    "weighted_information_gain",
    "weighted_posterior_batch",
    "whitened_cholesky",
]
