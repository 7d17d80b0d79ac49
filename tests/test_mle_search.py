"""The MLE refit's search (qbo.algorithms.lengthscale.mle_search, issue 21): Brent's method
finds a known minimum to its tolerance, the multi-start search finds the optimum of a dense
grid refined, and for any statistics its result is a point evaluated at least as good as every
grid point, inside the bounds, of the NLL that ``mle.negative_log_likelihood`` computes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from qbo.algorithms.lengthscale.mle import (BOUNDS, GRID, KERNEL_CODES, LENGTHSCALE_BOUNDS, N_STARTS,
                                            OUTPUTSCALE_BOUNDS, SCALE_GRID, XTOL, fit_hyperparameters,
                                            negative_log_likelihood)
from qbo.algorithms.lengthscale.mle_search import FIT_EVALS, FIT_NLL, fit
from qbo.brent import BEST_F, BEST_X, PROPOSED, STATE_SIZE, brent_next, brent_start, brent_told
from qbo.gp.cholesky import ArmStats
from qbo.problems.synthetic import se_gp_sample


def _brent(f, a: float, b: float, x: float, tol: float) -> tuple[float, float, int]:
    state, evals = np.empty(STATE_SIZE), 0
    brent_start(state, a, b, x, f(x), tol)
    while brent_next(state):
        u = state[PROPOSED]
        assert a <= u <= b  # never outside the bracket
        brent_told(state, f(u))
        evals += 1
    return state[BEST_X], state[BEST_F], evals


@pytest.mark.parametrize("f, a, b, x, best", [
    (lambda v: math.exp(v) - 2.0 * v, 0.0, 1.5, 1.0, math.log(2.0)),  # smooth, not a parabola
    (lambda v: abs(v - 0.3) ** 1.5, -1.0, 1.0, -1.0, 0.3),  # started at the bracket's end
    (lambda v: -math.cos(3.0 * v), -1.0, 0.4, 0.4, 0.0),
])
def test_brent_finds_a_known_minimum_to_its_tolerance(f, a, b, x, best):
    found, value, evals = _brent(f, a, b, x, 1e-8)
    assert abs(found - best) <= 3e-8
    assert value == f(found) and evals < 60


def test_brent_at_a_monotone_bracket_ends_within_tolerance_of_its_low_end():
    found, _, _ = _brent(lambda v: v, 0.0, 1.0, 0.5, 1e-6)
    assert 0.0 <= found <= 3e-6


def _stats(weights: np.ndarray, sums: np.ndarray) -> ArmStats:
    stats = ArmStats(weights.shape[0])
    stats.W, stats.b, stats.n = weights.astype(float), sums.astype(float), int(weights.sum())
    return stats


def test_the_search_finds_the_refined_optimum_of_a_dense_grid():
    """80 points of an SE-GP draw (length scale 0.15): the NLL on 4,001 log-spaced length scales,
    the best refined by scipy's bounded Brent in its neighbours' bracket to 1e-10; the search's
    length scale is that one to its tolerance (XTOL in log theta), its NLL no worse."""
    x = np.linspace(0.0, 1.0, 80)[:, None]
    rng = np.random.default_rng(0)
    y = se_gp_sample(x, 0.15, rng) + 0.05 * rng.standard_normal(80)
    stats, lam = _stats(np.ones(80), y), 0.05 ** 2

    def f(v: float) -> float:
        return negative_log_likelihood("se", math.exp(v), 1.0, x, stats, lam)

    dense = np.linspace(math.log(LENGTHSCALE_BOUNDS[0]), math.log(LENGTHSCALE_BOUNDS[1]), 4001)
    i = int(np.argmin([f(v) for v in dense]))
    best = minimize_scalar(f, bounds=(dense[i - 1], dense[i + 1]), method="bounded", options={"xatol": 1e-10}).x
    theta, scale = fit_hyperparameters("se", x, stats, lam, 1.0)
    assert scale == 1.0
    assert abs(math.log(theta) - best) <= 2 * XTOL
    assert f(math.log(theta)) <= f(best) + 1e-9


def _fit(points, stats, kernel, lam, scale, fit_scale):
    out = np.empty(4)
    fit(points, stats.W, stats.b, KERNEL_CODES[kernel], lam, scale, fit_scale, N_STARTS, GRID, SCALE_GRID, XTOL, BOUNDS,
        out)
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data(), m=st.integers(2, 10), d=st.integers(1, 2), kernel=st.sampled_from(sorted(KERNEL_CODES)),
       lam=st.floats(0.01, 1.0), scale=st.floats(0.1, 3.0), fit_scale=st.booleans())
def test_the_result_is_no_worse_than_any_grid_point_and_inside_the_bounds(data, m, d, kernel, lam, scale, fit_scale):
    points = np.array(data.draw(st.lists(st.lists(st.floats(0.0, 1.0), min_size=d, max_size=d), min_size=m,
                                         max_size=m, unique_by=lambda p: tuple(p))))
    counts = np.array(data.draw(st.lists(st.integers(0, 40), min_size=m, max_size=m)))
    if np.count_nonzero(counts) < 2:
        counts[:2] = 1
    ones = np.array([data.draw(st.integers(0, int(c))) for c in counts])
    stats = _stats(counts, ones)
    out = _fit(points, stats, kernel, lam, scale, fit_scale)
    theta, fitted, value = out[0], out[1], out[FIT_NLL]
    again = _fit(points, stats, kernel, lam, scale, fit_scale)
    assert np.array_equal(out, again)  # a pure function of the statistics
    lo, hi = LENGTHSCALE_BOUNDS
    assert lo <= theta <= hi  # exactly: clamped where exp of a grid end rounds outside
    if fit_scale:
        assert OUTPUTSCALE_BOUNDS[0] <= fitted <= OUTPUTSCALE_BOUNDS[1]
    else:
        assert fitted == scale
    nll = lambda t, s: negative_log_likelihood(kernel, t, s, points, stats, lam)  # noqa: E731
    slack = 1e-9 * (1.0 + abs(value))
    assert value == pytest.approx(nll(theta, fitted), rel=1e-9, abs=1e-9)  # the scalar NLL is mle's
    scales = np.exp(SCALE_GRID) if fit_scale else [scale]
    assert all(value <= nll(math.exp(v), s) + slack for v in GRID for s in scales)
    assert out[FIT_EVALS] >= len(GRID) * len(scales)


def test_a_fit_at_the_upper_bound_returns_the_bound_exactly():
    """Equal means on every arm: the NLL falls with theta to the upper bound, whose grid point
    exp(log 10) rounds to 10.000000000000002; the fit returns 10 (and the scale within its bounds)."""
    points = np.linspace(0.0, 1.0, 6)[:, None]
    stats = _stats(np.full(6, 20), np.full(6, 10))
    assert math.exp(GRID[-1]) > LENGTHSCALE_BOUNDS[1]  # what the clamp is for
    for fit_scale in (False, True):
        out = _fit(points, stats, "se", 0.25, 1.0, fit_scale)
        assert out[0] == LENGTHSCALE_BOUNDS[1]
        assert OUTPUTSCALE_BOUNDS[0] <= out[1] <= OUTPUTSCALE_BOUNDS[1]


@pytest.mark.parametrize("seed", range(12))
def test_the_two_variable_fit_is_no_worse_than_its_start_grid_on_larger_statistics(seed):
    """mle+outputscale is a local search (docs/runs.md; bench/mle_fit.py section 4 counts how
    often a dense grid finds a lower NLL), but never worse than any point of its own start grid
    GRID x SCALE_GRID: statistics of up to 24 arms and 2,000 draws, the sizes where a dense
    grid beat it."""
    rng = np.random.default_rng(seed)
    m, d = int(rng.integers(3, 25)), int(rng.integers(1, 3))
    points, p = rng.random((m, d)), rng.uniform(0.2, 0.8, m)
    arms = rng.integers(0, m, int(rng.integers(50, 2001)))
    counts = np.bincount(arms, minlength=m)
    ones = np.array([rng.binomial(int(c), q) for c, q in zip(counts, p)])
    kernel, lam = sorted(KERNEL_CODES)[seed % 4], [0.01, 0.25, 1.0][seed % 3]
    stats = _stats(counts, ones)
    out = _fit(points, stats, kernel, lam, 1.0, True)
    nll = lambda t, s: negative_log_likelihood(kernel, t, s, points, stats, lam)  # noqa: E731
    start = min(nll(math.exp(v), math.exp(w)) for v in GRID for w in SCALE_GRID)
    assert out[FIT_NLL] <= start + 1e-9 * (1.0 + abs(start))
