"""Tests for qbo.gp: kernels, weighted GP (Dai et al. Eq. (3)), feature form (App. A Eq. (6)),
random Fourier features (App. J) and the weighted information gain (Sec. 5.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gamma as gamma_fn
from scipy.special import kv

from qbo.gp import (
    KERNEL_NAMES,
    FeatureKernel,
    IdentityFeatures,
    Linear,
    Matern,
    RandomFourierFeatures,
    SquaredExponential,
    WeightedFeatureGP,
    WeightedGP,
    chain_rule_information_gain,
    make_kernel,
    weighted_information_gain,
    weighted_posterior_batch,
)

TOL = 1e-8
LAM = 1.3


def _data(seed: int = 0, n: int = 25, d: int = 3, m: int = 40):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    Y = np.sin(3.0 * X).sum(axis=1) + 0.1 * rng.standard_normal(n)
    eps = rng.uniform(0.1, 1.0, size=n)
    Xq = rng.uniform(-0.2, 1.2, size=(m, d))
    return X, Y, eps, Xq


def _kernel(name: str):
    return make_kernel(name, lengthscale=0.6, outputscale=1.7)


# --------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_psd_symmetric_and_diag(name):
    k = _kernel(name)
    X = np.random.default_rng(1).uniform(-1, 1, size=(40, 3))
    K = k(X, X)
    assert K.shape == (40, 40)
    np.testing.assert_array_equal(K, K.T)
    # eigvalsh backward error <= c * n * u * ||K||_2, far below 1e-10 here.
    assert np.linalg.eigvalsh(K).min() > -1e-10
    np.testing.assert_allclose(k.diag(X), np.diag(K), rtol=0, atol=1e-14)


@pytest.mark.parametrize("name", ["se", "matern12", "matern32", "matern52"])
def test_stationary_value_at_zero_distance(name):
    k = _kernel(name)
    X = np.array([[0.3, -2.0, 5.0], [1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(np.diag(k(X, X)), [1.7, 1.7])
    np.testing.assert_array_equal(k.diag(X), [1.7, 1.7])


def _at_distance(k, r):
    x = np.zeros((1, 2))
    return float(k(x, np.array([[r, 0.0]]))[0, 0])


def test_closed_form_values_at_one_lengthscale():
    l, s = 0.6, 1.7
    s3, s5 = math.sqrt(3), math.sqrt(5)
    expected = {
        "se": s * math.exp(-0.5),
        "matern12": s * math.exp(-1.0),
        "matern32": s * (1 + s3) * math.exp(-s3),
        "matern52": s * (1 + s5 + 5 / 3) * math.exp(-s5),
    }
    for name, val in expected.items():
        assert _at_distance(make_kernel(name, l, s), l) == pytest.approx(val, rel=1e-14)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_matches_general_bessel_formula(nu):
    l, s = 0.6, 1.7
    k = Matern(l, s, nu=nu)
    for r in [0.05, 0.3, 1.0, 2.5]:
        z = math.sqrt(2 * nu) * r / l
        ref = s * 2 ** (1 - nu) / gamma_fn(nu) * z**nu * kv(nu, z)
        assert _at_distance(k, r) == pytest.approx(ref, rel=1e-12)


def test_linear_kernel_value():
    k = Linear(lengthscale=2.0, outputscale=3.0)
    x1, x2 = np.array([[1.0, 2.0, -1.0]]), np.array([[0.5, -1.0, 4.0]])
    assert k(x1, x2)[0, 0] == pytest.approx(3.0 * (0.5 - 2.0 - 4.0) / 4.0, rel=1e-15)
    assert k.diag(x1)[0] == pytest.approx(3.0 * 6.0 / 4.0, rel=1e-15)


def test_make_kernel_types():
    assert isinstance(make_kernel("se"), SquaredExponential)
    assert isinstance(make_kernel("linear"), Linear)
    assert [make_kernel(f"matern{v}").nu for v in ("12", "32", "52")] == [0.5, 1.5, 2.5]


@pytest.mark.parametrize(
    "build, needle",
    [
        (lambda: SquaredExponential(lengthscale=-1.0), "-1.0"),
        (lambda: Matern(outputscale=0.0), "0.0"),
        (lambda: Linear(lengthscale=float("inf")), "inf"),
        (lambda: Matern(nu=2.0), "2.0"),
        (lambda: make_kernel("rbf"), "'rbf'"),
        (lambda: make_kernel("se", lengthscale=-3.5), "-3.5"),
        (lambda: WeightedGP(SquaredExponential(), lam=-0.5), "-0.5"),
        (lambda: WeightedGP(SquaredExponential(), 1.0).add([0.0], 1.0, 0.0), "0.0"),
        (lambda: WeightedGP(SquaredExponential(), 1.0).add([0.0], 1.0, float("inf")), "inf"),
        (lambda: WeightedGP(SquaredExponential(), 1.0).add([0.0], 1.0, -2.0), "-2.0"),
        (lambda: RandomFourierFeatures(SquaredExponential(), M=0, dim=2), "0"),
        (lambda: RandomFourierFeatures(Linear(), M=10, dim=2), "Linear"),
        (lambda: IdentityFeatures(dim=2, lengthscale=-7.0), "-7.0"),
        (lambda: WeightedFeatureGP(IdentityFeatures(2), lam=0.0), "0.0"),
    ],
)
def test_bad_arguments_raise_with_value(build, needle):
    with pytest.raises(ValueError) as info:
        build()
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_dimension_mismatch_raises():
    gp = WeightedGP(SquaredExponential(), 1.0)
    gp.add([0.0, 1.0], 1.0, 0.5)
    with pytest.raises(ValueError, match="shape"):
        gp.add([0.0, 1.0, 2.0], 1.0, 0.5)
    with pytest.raises(ValueError, match="shape"):
        gp.posterior(np.zeros((4, 3)))


# --------------------------------------------------------------------------- weighted GP
@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_incremental_equals_batch_eq3(name):
    X, Y, eps, Xq = _data()
    k = _kernel(name)
    gp = WeightedGP(k, LAM)
    for i in range(len(Y)):
        gp.add(X[i], Y[i], eps[i])
        mean, var = gp.posterior(Xq)
        ref_mean, ref_var = weighted_posterior_batch(
            k, X[: i + 1], Y[: i + 1], eps[: i + 1], LAM, Xq
        )
        np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=TOL)
        np.testing.assert_allclose(var, ref_var, rtol=0, atol=TOL)


def test_cholesky_and_alpha_match_dense():
    X, Y, eps, _ = _data(seed=2)
    k = _kernel("matern52")
    gp = WeightedGP(k, LAM)
    gp.extend(X, Y, eps)
    sw = 1.0 / eps
    A = sw[:, None] * k(X, X) * sw[None, :] + LAM * np.eye(len(Y))
    np.testing.assert_allclose(gp.cholesky, np.linalg.cholesky(A), rtol=0, atol=TOL)
    np.testing.assert_allclose(gp.alpha, np.linalg.solve(A, sw * Y), rtol=0, atol=TOL)


def test_prior_when_empty():
    k = _kernel("matern32")
    Xq = _data()[3]
    mean, var = WeightedGP(k, LAM).posterior(Xq)
    np.testing.assert_array_equal(mean, np.zeros(len(Xq)))
    np.testing.assert_array_equal(var, k.diag(Xq))


def _ordinary_gp(k, X, Y, lam, Xq):
    """Eq. (1) of Dai et al. written out independently: (K + lambda I)^{-1}."""
    Ainv = np.linalg.inv(k(X, X) + lam * np.eye(len(Y)))
    kq = k(X, Xq)
    return kq.T @ Ainv @ Y, np.diag(k(Xq, Xq) - kq.T @ Ainv @ kq)


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_eps_one_is_ordinary_gp_eq1(name):
    X, Y, _, Xq = _data(seed=4)
    k = _kernel(name)
    ones = np.ones(len(Y))
    ref_mean, ref_var = _ordinary_gp(k, X, Y, LAM, Xq)
    gp = WeightedGP(k, LAM)
    gp.extend(X, Y, ones)
    for mean, var in [gp.posterior(Xq), weighted_posterior_batch(k, X, Y, ones, LAM, Xq)]:
        np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=TOL)
        np.testing.assert_allclose(var, ref_var, rtol=0, atol=TOL)


def test_weights_change_the_posterior():
    # Guards against eps being silently ignored: eps != 1 must differ from Eq. (1).
    X, Y, eps, Xq = _data(seed=5)
    k = _kernel("se")
    mean, _ = weighted_posterior_batch(k, X, Y, eps, LAM, Xq)
    assert np.max(np.abs(mean - _ordinary_gp(k, X, Y, LAM, Xq)[0])) > 1e-3


def test_variance_nonnegative_at_precise_observations():
    X, Y, _, _ = _data(seed=6)
    gp = WeightedGP(_kernel("se"), LAM)
    gp.extend(X, Y, np.full(len(Y), 1e-4))
    _, var = gp.posterior(X)
    assert np.all(var >= 0.0)
    assert np.all(var < 1e-6)


# --------------------------------------------------------------------------- feature form
@pytest.mark.parametrize("kernel", [SquaredExponential(0.6, 1.7), Matern(0.6, 1.7, nu=1.5)])
@pytest.mark.parametrize("M", [10, 60])
def test_feature_form_equals_kernel_form(kernel, M):
    X, Y, eps, Xq = _data(seed=7)
    phi = RandomFourierFeatures(kernel, M, dim=3, seed=11)
    fk = FeatureKernel(phi)
    fgp = WeightedFeatureGP(phi, LAM)
    fgp.extend(X, Y, eps)
    ref_mean, ref_var = weighted_posterior_batch(fk, X, Y, eps, LAM, Xq)
    mean, var = fgp.posterior(Xq)
    np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=TOL)
    np.testing.assert_allclose(var, ref_var, rtol=0, atol=TOL)


def test_identity_features_equal_linear_kernel_and_weighted_ridge():
    X, Y, eps, Xq = _data(seed=8)
    phi = IdentityFeatures(dim=3, lengthscale=0.8, outputscale=2.0)
    fgp = WeightedFeatureGP(phi, LAM)
    fgp.extend(X, Y, eps)
    ref_mean, ref_var = weighted_posterior_batch(phi.kernel, X, Y, eps, LAM, Xq)
    mean, var = fgp.posterior(Xq)
    np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=TOL)
    np.testing.assert_allclose(var, ref_var, rtol=0, atol=TOL)
    # theta minimises sum_s w_s (y_s - phi_s^T theta)^2 + lam ||theta||^2 (augmented lstsq).
    sw, P = 1.0 / eps, phi(X)
    A = np.vstack([sw[:, None] * P, math.sqrt(LAM) * np.eye(3)])
    theta = np.linalg.lstsq(A, np.concatenate([sw * Y, np.zeros(3)]), rcond=None)[0]
    np.testing.assert_allclose(fgp.theta, theta, rtol=0, atol=TOL)


@pytest.mark.parametrize("kernel", [SquaredExponential(0.7, 1.5), Matern(0.7, 1.5, nu=0.5),
                                    Matern(0.7, 1.5, nu=1.5), Matern(0.7, 1.5, nu=2.5)])
def test_rff_approximates_kernel_within_hoeffding_bound(kernel):
    # phi^T phi' is the mean of M iid terms 2 s cos(w^T x + b) cos(w^T x' + b) in [-2s, 2s],
    # unbiased for k(x, x').  Hoeffding + union bound over P pairs: with probability >= 1 - delta
    # every |error| <= s * sqrt(8 log(2 P / delta) / M).
    M, delta = 20000, 1e-3
    X = np.random.default_rng(9).uniform(0.0, 2.0, size=(15, 2))
    iu = np.triu_indices(len(X))
    phi = RandomFourierFeatures(kernel, M, dim=2, seed=12)
    err = np.abs(FeatureKernel(phi)(X, X) - kernel(X, X))[iu]
    bound = kernel.outputscale * math.sqrt(8 * math.log(2 * len(iu[0]) / delta) / M)
    assert err.max() <= bound


def test_rff_deterministic_given_seed():
    k = SquaredExponential(0.5)
    X = _data()[0]
    a, b = RandomFourierFeatures(k, 30, 3, seed=1), RandomFourierFeatures(k, 30, 3, seed=1)
    np.testing.assert_array_equal(a(X), b(X))
    assert not np.allclose(a(X), RandomFourierFeatures(k, 30, 3, seed=2)(X))


# --------------------------------------------------------------------------- information gain
@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_chain_rule_equals_logdet(name):
    X, Y, eps, _ = _data(seed=10)
    k = _kernel(name)
    logdet = weighted_information_gain(k, X, eps, LAM)
    # Independent chain rule: prior-to-update variances from the dense Eq. (3).
    var_prev = [k.diag(X[:1])[0]] + [
        weighted_posterior_batch(k, X[:s], Y[:s], eps[:s], LAM, X[s : s + 1])[1][0]
        for s in range(1, len(Y))
    ]
    assert chain_rule_information_gain(np.array(var_prev), eps, LAM) == pytest.approx(
        logdet, rel=0, abs=TOL
    )
    gp = WeightedGP(k, LAM)
    gp.extend(X, Y, eps)
    assert gp.information_gain == pytest.approx(logdet, rel=0, abs=TOL)
    # Sanity: an explicit slogdet of I + K~/lam.
    sw = 1.0 / eps
    sign, ld = np.linalg.slogdet(np.eye(len(Y)) + sw[:, None] * k(X, X) * sw[None, :] / LAM)
    assert sign == 1.0 and 0.5 * ld == pytest.approx(logdet, rel=0, abs=TOL)


def test_feature_gp_information_gain_equals_logdet():
    X, Y, eps, _ = _data(seed=13)
    phi = RandomFourierFeatures(SquaredExponential(0.6), 40, dim=3, seed=5)
    fgp = WeightedFeatureGP(phi, LAM)
    fgp.extend(X, Y, eps)
    ref = weighted_information_gain(FeatureKernel(phi), X, eps, LAM)
    assert fgp.information_gain == pytest.approx(ref, rel=0, abs=TOL)


def test_paper_eps_rule_gives_half_log2_per_stage():
    # Dai et al. Algo. 1 line 3: eps_s = sigma~_{s-1}(x_s) / sqrt(lam)  =>  det V_m = 2^m det V_0
    # (App. D, Eq. (25)), i.e. gamma~_m = (m / 2) log 2.
    X, Y, _, _ = _data(seed=14, n=12)
    k = SquaredExponential(0.5)
    gp = WeightedGP(k, LAM)
    for i in range(len(Y)):
        eps_s = math.sqrt(gp.posterior(X[i : i + 1])[1][0] / LAM)
        gp.add(X[i], Y[i], eps_s)
    assert gp.information_gain == pytest.approx(len(Y) / 2 * math.log(2), rel=0, abs=TOL)
    assert weighted_information_gain(k, gp.X, gp.eps, LAM) == pytest.approx(
        len(Y) / 2 * math.log(2), rel=0, abs=TOL
    )
