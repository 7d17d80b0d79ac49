"""Pure-numpy Gaussian-process maths for quantum Bayesian optimisation.

Kernels, the weighted GP posterior of Dai et al., "Quantum Bayesian Optimization"
(NeurIPS 2023), Eq. (3), its feature-space form (App. A, Eq. (6)) with random Fourier
features (App. J), and the weighted information gain (Sec. 5.1).
"""

from qbo.gp.arms import ArmPosterior
from qbo.gp.features import (
    FeatureKernel,
    FeatureMap,
    IdentityFeatures,
    RandomFourierFeatures,
    WeightedFeatureGP,
)
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
from qbo.gp.weighted import WeightedGP, weighted_posterior_batch

__all__ = [
    "ArmPosterior",
    "KERNEL_NAMES",
    "FeatureKernel",
    "FeatureMap",
    "IdentityFeatures",
    "Kernel",
    "Linear",
    "Matern",
    "RandomFourierFeatures",
    "SquaredExponential",
    "WeightedFeatureGP",
    "WeightedGP",
    "chain_rule_information_gain",
    "information_gain_increment",
    "logdet_information_gain",
    "make_kernel",
    "weighted_information_gain",
    "weighted_posterior_batch",
]
