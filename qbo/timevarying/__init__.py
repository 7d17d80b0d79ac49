"""Time-varying GP bandits with non-constant evaluation time (Imamura et al., seed 000).

Kernels (``k_space x k_time``, seed Eq. (2)), the incremental closed-form posterior over a
finite arm set, the policies gp-ucb / tv-gp-ucb / ctv-fixed / ctv / ctv-simple (seed Eqs.
(3)-(5)) and q-ctv-gp-ucb (Dai et al. Alg. 1 inside the product kernel), the seed's drifting
synthetic problem (Sec. 5.1) and a time-aware experiment runner.
"""

from qbo.timevarying.kernels import ProductKernel, decay, make_product_kernel, time_kernel
from qbo.timevarying.policies import CLASSICAL_TV_POLICIES, TVConfig, TVPolicy, TVQuery
from qbo.timevarying.problems import (
    ArmSpace, DriftingField, TVProblem, World, ar1_coefficients, biased_time, drifting_oracle,
    make_tv_problem,
)
from qbo.timevarying.qpolicy import QUANTUM_TV_POLICIES, QCTVConfig, QCTVGPUCB
from qbo.timevarying.quadrature import lognormal_mean, lognormal_nodes, quadrature_lognormal_mean
from qbo.timevarying.runner import (
    DEFAULT_ROUNDS, TV_POLICIES, TV_PROBLEMS, is_tv_problem, make_tv_policy, run_tv_experiment,
)

__all__ = [
    "ArmSpace", "CLASSICAL_TV_POLICIES", "DEFAULT_ROUNDS", "DriftingField", "ProductKernel",
    "QCTVConfig", "QCTVGPUCB", "QUANTUM_TV_POLICIES", "TVConfig", "TVPolicy",
    "TVProblem", "TVQuery", "TV_POLICIES", "TV_PROBLEMS", "World", "ar1_coefficients",
    "biased_time", "decay", "drifting_oracle", "is_tv_problem",
    "lognormal_mean", "lognormal_nodes", "make_product_kernel", "make_tv_policy",
    "make_tv_problem", "quadrature_lognormal_mean", "run_tv_experiment", "time_kernel",
]
