"""The ``qbo.gp.ArmModel`` family pinned against a direct Eq. (3) computation.

Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), Eq. (3): every member (rank-one
``ArmPosterior``, incremental ``CholeskyArmPosterior`` and its ``from_stats`` refit,
``ForgettingArmPosterior`` with no forgetting, ``FeatureArmModel`` on a finite-rank kernel)
must equal ``weighted_posterior_batch`` on the same data, and its running information gain
must equal ``1/2 log det(I + K~/lambda)`` (Sec. 5.1).

Tolerances: a backward-stable solve of a system with condition number kappa has relative
error O(kappa u), u = 2^-53.  The whitened matrix ``K~ + lambda I`` has
``kappa <= 1 + n max(w) max k / lambda``; the tests allow ``1e3 kappa u`` (the factor 1e3
covers the O(n) growth of rounding over n <= 40 updates) in absolute terms, since |y| <= 1
and k <= 1.5 bound mean and variance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.algorithms import make_policy
from qbo.gp import (
    ArmModel,
    ArmPosterior,
    ArmStats,
    CholeskyArmPosterior,
    FeatureArmModel,
    FeatureKernel,
    ForgettingArmPosterior,
    direct_forgetting_posterior,
    RandomFourierFeatures,
    make_kernel,
    weighted_information_gain,
    weighted_posterior_batch,
)
from qbo.gp.time_kernels import make_product_kernel

U = 2.0**-53
LAM = 1.3


def _problem(seed: int, m: int, d: int, kernel: str = "se"):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.0, 1.0, size=(m, d)), make_kernel(kernel, lengthscale=0.4, outputscale=1.5)


def _tolerance(kern, arms, eps: np.ndarray, lam: float) -> float:
    kappa = 1.0 + len(eps) * float(np.max(1.0 / eps**2)) * float(np.max(kern.diag(arms))) / lam
    return 1e3 * kappa * U


def _family(kern, arms, lam):
    return {
        "rank-one": ArmPosterior.from_kernel(kern, arms, lam),
        "cholesky": CholeskyArmPosterior(kern, arms, lam),
        "forgetting-0": ForgettingArmPosterior(kern(arms, arms), 0.0, lam),
    }


observations = st.lists(
    st.tuples(st.integers(0, 7), st.floats(-1.0, 1.0), st.floats(0.05, 1.0)), min_size=1, max_size=40
)


@settings(max_examples=15, deadline=None)
@given(obs=observations, seed=st.integers(0, 3), kernel=st.sampled_from(["se", "matern52", "matern12"]))
def test_every_arm_model_equals_direct_eq3(obs, seed, kernel):
    """Sequences with repeated arms: each model equals the one dense solve of Eq. (3)."""
    arms, kern = _problem(seed, 12, 2, kernel)
    idx = np.array([o[0] for o in obs])
    y = np.array([o[1] for o in obs])
    eps = np.array([o[2] for o in obs])
    ref_mean, ref_var = weighted_posterior_batch(kern, arms[idx], y, eps, LAM, arms)
    ref_info = weighted_information_gain(kern, arms[idx], eps, LAM)
    tol = _tolerance(kern, arms, eps, LAM)
    stats = ArmStats(len(arms))
    models = _family(kern, arms, LAM)
    for i in range(len(obs)):
        stats.add(int(idx[i]), y[i], eps[i])
        for model in models.values():
            model.add(int(idx[i]), y[i], eps[i])
    models["refit"] = CholeskyArmPosterior.from_stats(kern, arms, LAM, stats)
    for name, model in models.items():
        assert isinstance(model, ArmModel), name
        mean, var = model.posterior()
        np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=tol, err_msg=name)
        np.testing.assert_allclose(var, ref_var, rtol=0, atol=tol, err_msg=name)
        assert abs(model.information_gain - ref_info) <= tol * len(obs), name
        assert model.n == len(obs), name


@settings(max_examples=10, deadline=None)
@given(obs=observations, seed=st.integers(0, 3))
def test_feature_model_equals_direct_eq3_on_its_kernel(obs, seed):
    """App. A Eq. (6) == Eq. (3) for the finite-rank kernel ``phi(x)^T phi(x')`` of M RFF."""
    arms, kern = _problem(seed, 12, 2)
    phi = RandomFourierFeatures(kern, 30, 2, seed=seed)
    model = FeatureArmModel(phi, arms, LAM)
    idx = np.array([o[0] for o in obs])
    y = np.array([o[1] for o in obs])
    eps = np.array([o[2] for o in obs])
    for i in range(len(obs)):
        model.add(int(idx[i]), y[i], eps[i])
    fk = FeatureKernel(phi)
    ref_mean, ref_var = weighted_posterior_batch(fk, arms[idx], y, eps, LAM, arms)
    # Eq. (6) inverts V = lam I + Phi^T W Phi (M x M) by Sherman-Morrison: same kappa bound
    tol = _tolerance(fk, arms, eps, LAM)
    mean, var = model.posterior()
    np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=tol)
    np.testing.assert_allclose(var, ref_var, rtol=0, atol=tol)
    assert isinstance(model, ArmModel)
    assert abs(model.information_gain - weighted_information_gain(fk, arms[idx], eps, LAM)) <= tol * len(obs)


@settings(max_examples=15, deadline=None)
@given(obs=st.lists(st.tuples(st.integers(0, 5), st.floats(-1.0, 1.0), st.floats(1e-4, 1.0)),
                    min_size=2, max_size=40),
       seed=st.integers(0, 3))
def test_cholesky_factor_invariant_after_repeats(obs, seed):
    """After rank-one downdates for repeats, ``L L^T = S K_UU S + lambda I`` (relative to
    ||A||, backward error O(s u)) and the mean/variance follow Eq. (3) even at weights 1e8."""
    arms, kern = _problem(seed, 10, 3)
    post = CholeskyArmPosterior(kern, arms, LAM)
    for a, yv, e in obs:
        post.add(a, yv, e)
    Uo = post.observed_arms
    s = np.sqrt(post.weights[Uo])
    A = s[:, None] * kern(arms[Uo], arms[Uo]) * s[None, :] + LAM * np.eye(len(Uo))
    L = post.cholesky
    assert np.allclose(L, np.tril(L))
    assert np.max(np.abs(L @ L.T - A)) <= 1e3 * len(obs) * U * np.max(np.abs(A))
    np.testing.assert_allclose(post.weights.sum(), sum(1.0 / e**2 for _, _, e in obs), rtol=1e-12)


def test_cholesky_refit_fallback_equals_direct(monkeypatch):
    """If a downdate is refused the factor is rebuilt from the per-arm statistics."""
    arms, kern = _problem(5, 15, 2)
    rng = np.random.default_rng(5)
    idx, y, eps = rng.integers(0, 6, 30), rng.uniform(-1, 1, 30), rng.uniform(0.1, 1.0, 30)
    post = CholeskyArmPosterior(kern, arms, LAM)
    monkeypatch.setattr(CholeskyArmPosterior, "_downdate", lambda self, p, a, b: False)
    post.extend(idx, y, eps)
    assert post.refits == len(idx) - len(set(idx.tolist()))
    ref_mean, ref_var = weighted_posterior_batch(kern, arms[idx], y, eps, LAM, arms)
    tol = _tolerance(kern, arms, eps, LAM)
    np.testing.assert_allclose(post.posterior()[0], ref_mean, rtol=0, atol=tol)
    np.testing.assert_allclose(post.posterior()[1], ref_var, rtol=0, atol=tol)


class _NoSquareKernel:
    """Wraps a kernel and fails if asked for an m x m (or larger than m x s) Gram matrix."""

    def __init__(self, kern, limit: int) -> None:
        self.kern, self.limit = kern, limit

    def __call__(self, X1, X2):
        assert min(len(X1), len(X2)) <= self.limit, (len(X1), len(X2))
        return self.kern(X1, X2)

    def diag(self, X):
        return self.kern.diag(X)


def test_cholesky_never_forms_an_arm_by_arm_matrix():
    """O(m s) memory: only kernel columns are evaluated and V has O(s) rows."""
    m = 3000
    arms, kern = _problem(1, m, 4)
    post = CholeskyArmPosterior(_NoSquareKernel(kern, 1), arms, 1.0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        mean, var = post.posterior()
        arm = int(np.argmax(mean + 2.0 * np.sqrt(var))) if rng.random() < 0.5 else int(rng.integers(m))
        post.add(arm, float(rng.normal()), 0.3)
    assert post._V.shape[0] <= 2 * max(post.num_observed, 16)
    assert post._L.shape[0] <= 2 * max(post.num_observed, 16)


@pytest.mark.parametrize("policy", ["q-gp-ucb", "gp-ucb"])
def test_exact_models_agree_to_1e9_along_a_policy_run(policy):
    """The rank-one and Cholesky exact posteriors give the same asks and posteriors (1e-9)
    along a run with many repeats (Q-GP-UCB weights reach 1/eps_min^2)."""
    grid = np.linspace(0.0, 1.0, 30)[:, None]
    f = np.sin(7.0 * grid[:, 0])
    kw = dict(lengthscale=0.1) | (dict(budget=2000) if policy == "q-gp-ucb" else {})
    pols = [make_policy(policy, grid, model=m, **kw) for m in ("exact-rank-one", "exact-cholesky")]
    assert type(pols[0].model).__name__ == "ArmPosterior"
    assert type(pols[1].model).__name__ == "CholeskyArmPosterior"
    rng = np.random.default_rng(3)
    for _ in range(60):
        qs = [p.ask() for p in pols]
        assert qs[0].arm == qs[1].arm
        if qs[0].epsilon is not None:
            assert abs(qs[0].epsilon - qs[1].epsilon) <= 1e-9
        y = float(f[qs[0].arm] + 0.1 * rng.normal())
        for p, q in zip(pols, qs):
            p.tell(q, y)
    (m0, v0), (m1, v1) = (p.posterior() for p in pols)
    np.testing.assert_allclose(m1, m0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(v1, v0, rtol=0, atol=1e-9)
    assert abs(pols[0].information_gain - pols[1].information_gain) <= 1e-9


def test_exact_model_switches_to_cholesky_at_threshold():
    from qbo.algorithms.models import CHOLESKY_MIN_ARMS

    small = make_policy("gp-ucb", np.linspace(0, 1, 20)[:, None], lengthscale=0.1)
    large = make_policy("gp-ucb", np.linspace(0, 1, CHOLESKY_MIN_ARMS)[:, None], lengthscale=0.1)
    assert type(small.model).__name__ == "ArmPosterior"
    assert type(large.model).__name__ == "CholeskyArmPosterior"


def test_forgetting_advance_is_the_predict_step():
    """With forgetting, ``advance(t)`` then ``posterior`` equals ``future(t)`` (seed Eq. (2))."""
    arms, kern = _problem(2, 9, 2)
    post = ForgettingArmPosterior(kern(arms, arms), 0.1, LAM)
    post.add(3, 0.5, 0.4)
    post.add(3, -0.2, 1.0)
    fut_mean, fut_var = post.future(2.5)
    post.advance(2.5)
    mean, var = post.posterior()
    np.testing.assert_allclose(mean, fut_mean, rtol=0, atol=1e-15)
    np.testing.assert_allclose(var, fut_var, rtol=0, atol=1e-15)
    assert math.isclose(post.tau, 2.5)


@settings(max_examples=15, deadline=None)
@given(obs=st.lists(st.tuples(st.integers(0, 7), st.floats(-1.0, 1.0), st.floats(0.05, 1.0),
                              st.floats(0.0, 3.0)), min_size=1, max_size=25),
       forgetting=st.floats(0.0, 0.3), horizon=st.floats(0.0, 4.0))
def test_forgetting_posterior_equals_direct_space_time_solve(obs, forgetting, horizon):
    """Weighted observations (noise lambda eps^2) at times tau_i under k_space x k_time: the
    incremental form at ``tau_n + t`` equals the dense solve over (x_i, tau_i)."""
    arms, _ = _problem(4, 12, 2)
    pk = make_product_kernel("matern52", 0.4, 1.5, forgetting)
    post = ForgettingArmPosterior(pk.space(arms, arms), forgetting, LAM)
    idx, taus, ys, noise = [], [], [], []
    for a, yv, e, dt in obs:
        post.advance(dt)
        post.add(a, yv, e)
        idx.append(a), taus.append(post.tau), ys.append(yv), noise.append(LAM * e * e)
    mean, var = post.future(horizon)
    ref_mean, ref_var = direct_forgetting_posterior(
        pk, arms[idx], np.array(taus), np.array(ys), np.array(noise), arms, np.full(len(arms), post.tau + horizon))
    eps = np.array([o[2] for o in obs])
    tol = _tolerance(pk.space, arms, eps, LAM)
    np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=tol)
    np.testing.assert_allclose(var, np.maximum(ref_var, 0.0), rtol=0, atol=tol)


class _PlainRankOne:
    """The rank-one update written out with fresh arrays (``ArmPosterior`` before its buffers)."""

    def __init__(self, K: np.ndarray, lam: float) -> None:
        self.lam, self.Sigma, self.mu, self.info = lam, 0.5 * (K + K.T), np.zeros(len(K)), 0.0

    def add(self, i: int, y: float, eps: float) -> None:
        w = 1.0 / float(eps) ** 2
        u = self.Sigma[:, i].copy()
        s_ii = max(float(u[i]), 0.0)
        self.info += 0.5 * float(np.log1p(w * s_ii / self.lam))
        c = (w / self.lam) / (1.0 + (w / self.lam) * s_ii)
        self.mu += (c * (y - self.mu[i])) * u
        self.Sigma -= c * np.outer(u, u)


@settings(max_examples=15, deadline=None)
@given(obs=observations, seed=st.integers(0, 3), beta=st.floats(0.0, 5.0))
def test_ucb_and_in_place_updates_are_bit_for_bit(obs, seed, beta):
    """``ucb(beta)`` is ``mean + beta sqrt(var)`` from ``posterior()`` exactly, for every model,
    and the rank-one form's in-place update is the plain formula's arithmetic exactly."""
    arms, kern = _problem(seed, 12, 2)
    models = _family(kern, arms, LAM) | {"rff": FeatureArmModel(RandomFourierFeatures(kern, 20, 2, seed=seed), arms, LAM)}
    plain = _PlainRankOne(kern(arms, arms), LAM)
    for a, yv, e in obs:
        plain.add(a, yv, e)
        for name, model in models.items():
            model.add(a, yv, e)
            mean, var = model.posterior()
            score, sd = model.ucb(beta)
            assert np.array_equal(sd, np.sqrt(var)), name
            assert np.array_equal(score, mean + beta * np.sqrt(var)), name
    rank_one = models["rank-one"]
    assert np.array_equal(rank_one.Sigma, plain.Sigma)
    assert np.array_equal(rank_one.mean, plain.mu)
    assert np.array_equal(rank_one.var, np.maximum(np.diag(plain.Sigma), 0.0))
    assert rank_one.information_gain == plain.info
