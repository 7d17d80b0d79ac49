"""Tests for MLAE's large-budget model (issue 24, item 1): the offset (the noise's fixed
point), the model-error tempering and the dispersion-scaled interval."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.qmc import MaximumLikelihoodAE
from qbo.qmc.likelihood import (
    DecayPrior, Pooled, effective_shots, fisher, model_sd, observed, profile, profile_nuisances, tempered, theta_sd,
)
from qbo.qmc.mlae_fit import ProfileFit, crossings
from qbo.qmc.result import Round

FREE = DecayPrior(0.97, 0.95, 0.05, 0.02, 0.01, 0.02, "test")


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 1.55), st.integers(0, 40), st.floats(-2.0, 0.0), st.floats(-0.2, 0.0),
       st.floats(0.0, 0.1), st.floats(0.0, 0.1), st.sampled_from([1.0, 3.0, 5.0]))
def test_offset_one_half_is_the_symmetric_model(theta, k, u, v, p01, p10, scale):
    """q_k = p01 + g (f + c (s - f)) at f = 1/2 is the old p01 + g (1/2 + c (s - 1/2)), and the
    offset moves q by g (1 - c) (f - 1/2)."""
    prior = DecayPrior(p01=p01, p10=p10)
    c = math.exp(u + v * (k + (scale - 1) / 2 * (2 * k + 1)))
    s = math.sin((2 * k + 1) * theta) ** 2
    old = p01 + (1 - p01 - p10) * (0.5 + c * (s - 0.5))
    ks, sc = np.array([float(k)]), np.array([scale])
    assert float(observed(theta, ks, u, v, prior, sc)[0]) == pytest.approx(old, abs=1e-12)
    moved = float(observed(theta, ks, u, v, prior, sc, 0.4)[0])
    assert moved - old == pytest.approx((1 - p01 - p10) * (1 - c) * (0.4 - 0.5), abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 0.95), st.integers(0, 10_000))
def test_a_pinned_offset_profiles_as_the_two_nuisance_model(a, seed):
    """With the offset's prior sd tiny (1e-9), the 3 x 3 Fisher scoring of the profile gives the
    2 x 2 path's (l, u, v) (offset fixed at 1/2) on random counts."""
    rng = np.random.default_rng(seed)
    ks = np.array([0.0, 1.0, 2.0, 4.0, 7.0])
    shots = np.full(5, 200.0)
    theta = math.asin(math.sqrt(a))
    q = observed(theta, ks, math.log(0.97), math.log(0.95), FREE)
    data = Pooled(ks, shots, rng.binomial(200, q).astype(float))
    grid = np.linspace(max(0.0, theta - 0.1), min(math.pi / 2, theta + 0.1), 21)
    ll2, u2, v2 = profile(grid, data, FREE)
    ll3, u3, v3, f3 = profile_nuisances(grid, data, replace(FREE, offset_sd=1e-9))
    assert np.allclose(ll3, ll2, atol=1e-6) and np.allclose(u3, u2, atol=1e-6) and np.allclose(v3, v2, atol=1e-6)
    assert np.allclose(f3, 0.5, atol=1e-8)


def test_tempering_is_the_identity_without_model_error_and_saturates_the_information():
    """model_error 0: the counts are untouched; kappa > 0: a power's information on theta
    saturates at q (1 - q) / tau^2 effective shots, tau = kappa g (1 - c_k)."""
    data = Pooled(np.array([0.0, 5.0]), np.array([1000.0, 1000.0]), np.array([300.0, 600.0]))
    assert tempered(data, FREE) is data
    prior = replace(FREE, model_error=0.02)
    tau = model_sd(data.ks, data.scales, prior)
    assert tau[0] == pytest.approx(0.02 * prior.gain * (1 - 0.97)) and tau[1] > tau[0]
    assert effective_shots(np.array([1e12]), np.array([0.3]), np.array([0.01]))[0] == pytest.approx(0.21 / 1e-4, rel=1e-6)
    ks = np.array([0.0, 6.0])
    sd = [theta_sd(fisher(0.6, math.log(0.97), math.log(0.95), ks, np.array([n, n]), prior), prior) for n in (1e4, 1e8, 1e12)]
    assert sd[0] > sd[1] and sd[1] == pytest.approx(sd[2], rel=1e-3)  # no budget buys more than the model's truth


def _fit(rounds, prior, alpha=0.05):
    fit = ProfileFit(prior, alpha, 0.5, 1e-2, 1e-3)
    fit.rounds = list(rounds)
    fit.refit(whole=True)
    return fit


def _counts(theta, ks, shots, a0, r, offset, prior):
    q = observed(theta, np.array(ks, dtype=float), math.log(a0), math.log(r), prior, None, offset)
    return [Round(k=k, shots=n, ones=int(round(n * float(p)))) for k, n, p in zip(ks, shots, q)]


def test_a_misspecified_data_set_widens_the_interval_and_says_so():
    """Expected counts of a model whose fixed point is 0.42 (amplitude damping), at 20,000 shots
    per power, fitted by the symmetric model (offset fixed at 1/2): the deviance exceeds its
    dof, the dispersion phi > 1 scales the threshold, and the interval is wider than the
    unscaled one by sqrt(phi) to first order."""
    a = 0.3
    theta = math.asin(math.sqrt(a))
    ks, shots = [0, 1, 2, 3, 5, 8], [20000] * 6
    rounds = _counts(theta, ks, shots, 0.95, 0.9, 0.42, FREE)
    fit = _fit(rounds, FREE)
    assert fit.fit.phi > 2
    unscaled = _fit(rounds, replace(FREE, r_sd=0.0, a0_sd=0.0))  # decay fixed: no dispersion scaling
    assert unscaled.fit.phi == 1.0
    width = fit.fit.high - fit.fit.low
    fine, ll = fit._fine[0], fit._fine[1]
    low, high = crossings(fine, 2 * (ll.max() - ll), fit.c_final)
    assert width > 1.2 * (high - low)


def test_the_offset_model_covers_what_the_symmetric_model_misses():
    """The same damped data (fixed point 0.42): with the offset free (prior sd 0.05 around 1/2)
    the fit recovers the offset and its interval covers a; the deviance is at its dof."""
    a = 0.3
    theta = math.asin(math.sqrt(a))
    ks, shots = [0, 1, 2, 3, 5, 8], [20000] * 6
    prior = replace(FREE, offset_sd=0.05)
    fit = _fit(_counts(theta, ks, shots, 0.95, 0.9, 0.42, prior), prior)
    assert fit.fit.f == pytest.approx(0.42, abs=0.01)
    assert math.sin(fit.fit.low) ** 2 <= a <= math.sin(fit.fit.high) ** 2
    assert fit.fit.phi < 1.5


def test_the_estimator_carries_the_offset_and_model_error_into_its_prior():
    est = MaximumLikelihoodAE(0.01)
    assert est.offset_sd > 0 and est.model_error > 0
    with pytest.raises(ValueError, match="model_error must be >= 0"):
        MaximumLikelihoodAE(0.01, model_error=-1.0)
