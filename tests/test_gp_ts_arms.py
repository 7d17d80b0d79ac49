"""gp-ts at any number of arms (issue 21): its joint draw needs the m x m covariance, so it keeps
the rank-one posterior where ``model="exact"`` means the Cholesky form for the other policies
(from ``CHOLESKY_MIN_ARMS`` arms on), and so has its compiled loop and compact records there."""

from __future__ import annotations

import numpy as np

from qbo.algorithms.gp_ts import GPTS, GPTSConfig
from qbo.algorithms.gp_ts_kernel import GPTSStepper
from qbo.algorithms.gp_ucb import GPUCB, GPUCBConfig
from qbo.algorithms.models import CHOLESKY_MIN_ARMS, build_gp_model
from qbo.gp.arms import ArmPosterior
from qbo.gp.cholesky import CholeskyArmPosterior


def test_gp_ts_keeps_the_rank_one_posterior_where_exact_means_cholesky():
    arms = np.linspace(0.0, 1.0, CHOLESKY_MIN_ARMS)[:, None]
    assert type(GPUCB(arms, GPUCBConfig(lengthscale=0.1)).surrogate.model) is CholeskyArmPosterior
    policy = GPTS(arms, GPTSConfig(lengthscale=0.1, seed=4))
    assert type(policy.model) is ArmPosterior
    assert type(policy.stepper()) is GPTSStepper  # a compact unit there too
    query = policy.ask()  # the draw from the m x m posterior (it raised AttributeError on CholeskyArmPosterior)
    policy.tell(query, 1.0)
    assert policy.model.n == 1 and 0 <= query.arm < CHOLESKY_MIN_ARMS


def test_below_that_size_gp_ts_builds_the_model_it_built_before():
    arms = np.linspace(0.0, 1.0, 30)[:, None]
    config = GPTSConfig(lengthscale=0.2, outputscale=0.5, kernel="matern52")
    ours = GPTS(arms, config).model
    before = build_gp_model(config, arms, config.noise)  # what GPTS built before (exact: rank-one below 2000 arms)
    assert type(before) is ArmPosterior
    assert np.array_equal(ours.kernel_matrix, before.kernel_matrix) and ours.lam == before.lam
