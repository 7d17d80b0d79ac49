"""Likelihood-ratio amplitude estimation (qbo.qmc.lrae): honest calls, its interval, resumption."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from qbo.execution import ExactExecutor
from qbo.oracles import bernoulli
from qbo.qmc.lr_interval import loglik, pooled
from qbo.qmc.lrae import (
    LikelihoodRatioAE, LRState, floor_level, likelihood_interval, refine, refinement_level, threshold,
)
from qbo.qmc.result import Round


def _sampler(a: float, seed: int):
    rng = np.random.default_rng(seed)
    theta = math.asin(math.sqrt(a))
    return lambda k, n: Round(k, n, int(rng.binomial(n, math.sin((2 * k + 1) * theta) ** 2)))


def test_estimate_counts_every_round_and_reaches_eps():
    est = LikelihoodRatioAE(0.01, 0.05).estimate(bernoulli(0.3), ExactExecutor(3))
    assert est.oracle_calls == sum(r.shots * (2 * r.k + 1) for r in est.rounds)
    assert est.rounds[0].k == 0  # the k = 0 round is charged too
    assert est.reached_epsilon and est.half_width <= 0.01 * (1 + 1e-9)
    assert est.ci_low <= est.value <= est.ci_high


def test_interval_ends_sit_on_the_threshold():
    rounds = (Round(0, 20, 6), Round(1, 20, 14), Round(3, 20, 3))
    q = threshold(0.05)
    iv = likelihood_interval(rounds, q)
    ks, ns, hs = pooled(rounds)
    dev = 2 * (loglik(np.array([iv.theta_hat]), ks, ns, hs) - loglik(np.array([iv.theta_low, iv.theta_high]), ks, ns, hs))
    assert iv.theta_low <= iv.theta_hat <= iv.theta_high
    assert np.allclose(dev, q, atol=1e-6)


@given(st.integers(1, 200))
def test_refinement_levels_sum_below_alpha(j):
    assert math.isclose(sum(refinement_level(0.1, i) for i in range(1, j + 1)), 0.1 * (1 - 1 / (j + 1)))


def test_refine_charges_only_new_rounds_and_round_trips():
    sample = _sampler(0.42, 5)
    state, first = refine(LRState(0.01), 0.02, sample)
    state2, second = refine(state, 0.005, sample)
    assert state2.rounds == first + second and second
    assert state2.refinements == 2 and state2.half_width <= 0.005 * (1 + 1e-9)
    assert refine(state2, 0.01, sample) == (state2, ())  # already within eps: nothing runs
    assert LRState.from_json(state2.to_json()) == state2


@given(st.lists(st.floats(1e-3, 0.49), min_size=1, max_size=60))
def test_floor_levels_of_any_eps_sequence_sum_below_alpha(asked):
    """Spending by eps: whatever eps a policy asks (each run to >= the floor), the levels of all
    refinements sum to at most alpha (qbo.qmc.lrae module docstring)."""
    floor, bins, total = 1e-3, (), 0.0
    for eps in asked:
        level, b = floor_level(0.1, max(eps, floor), floor, bins)
        assert level > 0 and b >= 0
        bins, total = bins + (b,), total + level
    assert total <= 0.1 * (1 + 1e-12)


def test_floor_spending_refines_to_the_floor_and_round_trips():
    sample = _sampler(0.37, 8)
    state = LRState(0.05, eps_floor=0.004)
    state, _ = refine(state, 0.032, sample)
    state, _ = refine(state, 0.001, sample)  # below the floor: run to the floor
    assert state.bins == (3, 0) and state.half_width <= 0.004 * (1 + 1e-9)
    assert refine(state, 0.002, sample) == (state, ())  # within the floor already: nothing runs
    assert LRState.from_json(state.to_json()) == state
    with pytest.raises(ValueError, match="eps_floor must be"):
        LRState(0.05, eps_floor=0.7)


def test_bad_shots_named():
    with pytest.raises(ValueError, match="shots must be an integer >= 1"):
        LikelihoodRatioAE(0.01, 0.05, shots=0)
