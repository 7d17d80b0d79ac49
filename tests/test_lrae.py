"""Likelihood-ratio amplitude estimation (qbo.qmc.lrae): honest calls, its interval, resumption."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from qbo.execution import ExactExecutor
from qbo.oracles import bernoulli
from qbo.qmc.lr_interval import Pool, loglik, pooled
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


def test_theta_half_width_closed_form_matches_bisection():
    """The closed form against a 200-step bisection of its defining inequality."""
    import math as _m

    from qbo.qmc.lrae import _theta_half_width

    rng = np.random.default_rng(5)
    for _ in range(500):
        theta, eps = float(rng.uniform(0, _m.pi / 2)), float(10 ** rng.uniform(-5, -0.35))

        def width(w: float) -> float:
            return 0.5 * (_m.sin(min(theta + w, _m.pi / 2)) ** 2 - _m.sin(max(theta - w, 0.0)) ** 2)

        lo, hi = 0.0, _m.pi / 2
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if width(mid) <= eps else (lo, mid)
        assert abs(_theta_half_width(theta, eps) - lo) <= 1e-9 * max(lo, 1e-6)


def test_loglik_kernel_compiled_or_not_gives_identical_values():
    """qbo.qmc.lr_kernel: numba-compiled and plain-Python runs of one function agree bit for bit,
    and both agree with the numpy grid form to rounding."""
    from qbo.qmc.lr_interval import loglik
    from qbo.qmc.lr_kernel import _loglik_point, loglik_point

    rng = np.random.default_rng(9)
    for _ in range(300):
        ks = np.arange(1, 2 * int(rng.integers(1, 15)), 2.0) * int(rng.integers(1, 40))
        ns = rng.integers(1, 30, len(ks)).astype(float)
        hs = np.floor(ns * rng.uniform(0, 1, len(ks)))
        t = float(rng.uniform(0, 1.57))
        assert loglik_point(t, ks, ns, hs) == _loglik_point(t, ks, ns, hs)
        assert abs(_loglik_point(t, ks, ns, hs) - float(loglik(np.array([t]), ks, ns, hs)[0])) <= 1e-9 * (1 + abs(_loglik_point(t, ks, ns, hs)))


def test_one_interval_evaluates_one_loglik_so_a_theta_has_one_value(monkeypatch):
    """The grid and Brent use one function (``qbo.qmc.lr_kernel``): ``loglik_points`` is
    ``loglik_point`` at every theta, bit for bit (compiled or not), and ``likelihood_interval``
    never calls the numpy form, whose values differ from the loop's by rounding (before, the
    grid used it and Brent the loop: a grid point could be inside by one and outside by the other)."""
    from qbo.qmc import lr_interval
    from qbo.qmc.lr_kernel import _loglik_points, loglik_point, loglik_points

    def numpy_form(*args):
        raise AssertionError("likelihood_interval evaluated the numpy loglik")

    monkeypatch.setattr(lr_interval, "loglik", numpy_form)
    rng = np.random.default_rng(5)
    for _ in range(60):
        a = float(rng.uniform(0.01, 0.99))
        rounds = tuple(_sampler(a, int(rng.integers(1 << 30)))(k, int(rng.integers(3, 12))) for k in (0, 1, 2, 4, 7, 12))
        iv = likelihood_interval(rounds, threshold(1e-3))
        assert iv.theta_low <= iv.theta_hat <= iv.theta_high
        ks, ns, hs = pooled(rounds)
        theta = np.linspace(0.0, math.pi / 2, 301)
        grid = loglik_points(theta, ks, ns, hs)
        assert [float(v) for v in grid] == [loglik_point(float(t), ks, ns, hs) for t in theta]
        assert [float(v) for v in _loglik_points(theta, ks, ns, hs)] == [float(v) for v in grid]


def test_resumed_policies_spend_by_eps_above_the_budget_floor():
    """q-ucb-halve and q-se start each arm as an LRState spending by eps above max(eps_min, 1/T)
    (amplitude scale: divided by the reward range) and report exhausted below that floor."""
    from qbo.algorithms.q_se import QSE, QSEConfig
    from qbo.algorithms.q_ucb_halve import QUCBHalve, QUCBHalveConfig
    from qbo.qmc.lrae import LRState

    arms = np.linspace(0, 1, 4)[:, None]
    halve = QUCBHalve(arms, QUCBHalveConfig(budget=1000, reward_range=2.0))
    assert halve.floor == 1e-3
    assert all(isinstance(s, LRState) and s.eps_floor == 5e-4 for s in halve.states)
    se = QSE(arms, QSEConfig(delta=0.1, eps_min=1e-4))
    assert se.floor == 1e-4 and se.states[0].eps_floor == 1e-4
    assert not se.exhausted
    se.round = 20  # eps_r = 0.25 2^-19 < 1e-4
    assert se.exhausted


def _gaussian_interval(theta: float):
    """``pooled_interval`` as the cost model sees it: theta +- sqrt(q / I) about the true
    theta, clipped to [0, pi/2] (I: the pooled rounds' Fisher information)."""
    from qbo.qmc.lr_interval import HALF_PI, Interval

    def interval(pool, q, plausible=((0.0, HALF_PI),)):
        h = math.sqrt(q / pool.information)
        return Interval(theta, max(0.0, theta - h), min(HALF_PI, theta + h), plausible)
    return interval


def test_cost_model_runs_the_schedules_rounds_split_last_round_included(monkeypatch):
    """``_schedule_calls`` counts the rounds ``run_schedule`` runs when the interval is the
    Gaussian one, round for round: the last round's FINAL_SHARE split included (before that,
    the model ran the last round whole), from scratch and resumed from an earlier eps."""
    from qbo.qmc import lrae

    checked = split = 0
    for alpha in (0.05, 1e-3, 1e-6):
        q, m = threshold(alpha), lrae.default_shots(alpha)
        for eps in np.geomspace(3e-4, 0.2, 9):
            for j in range(0, 16, 3):
                theta = math.asin(math.sqrt((j + 0.5) / 16))
                monkeypatch.setattr(lrae, "pooled_interval", _gaussian_interval(theta))
                ran: list[Round] = []
                sample = lambda k, n: ran.append(Round(k, n, 0)) or ran[-1]  # noqa: E731 (ones unused)
                first, _ = lrae.run_schedule((), ((0.0, math.pi / 2),), 3 * eps, alpha, sample)
                assert [(r.k, r.shots) for r in first] == list(lrae._model_rounds(theta, 3 * eps, q, m))
                ran.clear()
                again, _ = lrae.run_schedule(first, ((0.0, math.pi / 2),), eps, alpha, sample)
                model = list(lrae._model_rounds(theta, eps, q, m, Pool(first).information, Pool(first).k_last))
                assert [(r.k, r.shots) for r in again] == model, (alpha, eps, j)
                assert lrae._schedule_calls(theta, eps, q, m, Pool(first).information, Pool(first).k_last) == \
                    sum(r.oracle_calls for r in again)
                checked += 1
                split += len(again) >= 2 and again[-1].k == again[-2].k
    assert checked == 3 * 9 * 6 and split > checked // 4  # the split last round is exercised


@pytest.mark.parametrize("k_max", [None, 3, 1])
def test_the_cost_model_caps_powers_at_k_max_as_the_schedule_does(k_max):
    """A user's k_max caps the model's powers too: mean calls over the model's 16 amplitudes,
    run on the noise-free expected counts, within 15% of ``expected_calls`` (before, the model
    ignored k_max and planned 2,254 calls where k_max = 1 spends ~58,600: 26x)."""
    from qbo.qmc.lrae import _expected_sampler

    est, eps = LikelihoodRatioAE(0.002, 0.05, k_max=k_max), 0.002
    spent = []
    for j in range(16):
        rounds, _ = est.run(eps, _expected_sampler(math.asin(math.sqrt((j + 0.5) / 16))))
        assert k_max is None or max(r.k for r in rounds) <= k_max
        spent.append(sum(r.shots * (2 * r.k + 1) for r in rounds))
    assert abs(np.mean(spent) / est.expected_calls(eps) - 1) < 0.15


def _scipy_interval(rounds, q, search):
    """The reference: ``likelihood_interval`` before its compiled loop (a numpy grid, scipy's
    bounded Brent for the maximiser and brentq for the ends, the same grid and padding rules)."""
    from scipy.optimize import brentq, minimize_scalar

    from qbo.qmc.lr_interval import GRID_PER_PERIOD, LOCALISE
    from qbo.qmc.lr_kernel import loglik_point

    ks, ns, hs = pooled(rounds)
    kmax = float(ks.max())
    step = math.pi / (kmax * GRID_PER_PERIOD)
    theta = np.concatenate([np.linspace(lo, hi, max(3, int(math.ceil((hi - lo) / step)) + 1)) for lo, hi in search])
    ll = np.array([loglik_point(float(t), ks, ns, hs) for t in theta])
    i = int(np.argmax(ll))
    best = minimize_scalar(lambda t: -loglik_point(t, ks, ns, hs), method="bounded",
                           bounds=(max(0.0, theta[i] - step), min(math.pi / 2, theta[i] + step)), options={"xatol": 1e-13})
    t_hat, l_hat = (float(best.x), -float(best.fun)) if -best.fun >= ll[i] else (float(theta[i]), float(ll[i]))
    dev = 2.0 * (l_hat - ll)
    inside = np.flatnonzero(dev <= q)
    first, last = (int(inside[0]), int(inside[-1])) if len(inside) else (i, i)
    g = lambda t: 2.0 * (l_hat - loglik_point(t, ks, ns, hs)) - q  # noqa: E731

    def end(t_in, j_out):
        if j_out < 0 or j_out >= len(theta) or abs(theta[j_out] - t_in) > 2 * step or not (g(theta[j_out]) > 0 >= g(t_in)):
            return t_in
        return brentq(g, t_in, float(theta[j_out]), xtol=1e-15)

    low, high = end(min(float(theta[first]), t_hat), first - 1), end(max(float(theta[last]), t_hat), last + 1)
    keep = dev <= q + LOCALISE
    keep[i] = True
    idx = np.flatnonzero(keep)
    cuts = np.flatnonzero(np.diff(theta[idx]) > 1.5 * step)
    runs = [(theta[idx[a]] - step, theta[idx[b]] + step) for a, b in zip(np.r_[0, cuts + 1], np.r_[cuts, len(idx) - 1])]
    clipped = sorted((max(lo, a), min(hi, b)) for lo, hi in runs for a, b in search if min(hi, b) > max(lo, a))
    merged: list = []
    for lo, hi in clipped:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return t_hat, low, high, tuple(merged), l_hat


def test_compiled_interval_agrees_with_scipys_brent_on_random_rounds():
    """``qbo.qmc.lr_kernel.interval`` (own Brent minimiser and root finder, one compiled loop)
    against the scipy reference on 400 random round sets, whole range and narrowed search sets:
    the same grid decisions (plausible set bit for bit), the ends to 1e-13 (both solve
    deviation = 0 to ~1e-15), and a maximum at least as high as scipy's to 1e-9 of the
    threshold (l is flat to rounding within its 1e-8 x tolerance)."""
    from qbo.qmc.lr_kernel import loglik_point

    rng = np.random.default_rng(23)
    for c in range(400):
        a = float(rng.uniform(0.0005, 0.9995))
        rounds = tuple(_sampler(a, c)(int(k), int(rng.integers(1, 300)))
                       for k in sorted(set(rng.integers(0, 60, int(rng.integers(1, 10))).tolist())))
        q = threshold(float(10 ** rng.uniform(-8, -1)))
        search = ((0.0, math.pi / 2),)
        if c % 3 == 1:
            search = likelihood_interval(rounds[: max(1, len(rounds) // 2)], q).plausible
        iv = likelihood_interval(rounds, q, search)
        t_hat, low, high, plausible, l_hat = _scipy_interval(rounds, q, search)
        ks, ns, hs = pooled(rounds)
        assert iv.plausible == plausible, c
        assert abs(iv.theta_low - low) <= 1e-13 and abs(iv.theta_high - high) <= 1e-13, (c, iv, low, high)
        assert loglik_point(iv.theta_hat, ks, ns, hs) >= l_hat - 1e-9 * q, c
        assert iv.theta_low <= iv.theta_hat <= iv.theta_high


def test_an_empty_search_set_is_named():
    with pytest.raises(ValueError, match="search set"):
        likelihood_interval((Round(0, 10, 3),), threshold(0.05), ())
