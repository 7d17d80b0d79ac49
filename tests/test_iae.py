"""Tests for qbo.qmc.iae: coverage, honest cost, O(1/eps) scaling, validation, determinism."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from qbo.noise import load_snapshot
from qbo.execution.aer import AerExecutor
from qbo.execution.exact import ExactExecutor
from qbo.grover import cache_key
from qbo.mitigation import Mitigation, make_mitigation
from qbo.oracles import bernoulli
from qbo import caches
from qbo.qmc import iae
from qbo.qmc.base import CostCache, run_round
from qbo.qmc import iae_engine
from qbo.qmc.iae_engine import MAX_SHOTS, SHOT_CAP
from qbo.qmc.iae import IterativeAmplitudeEstimation as IAE

ALPHA = 0.05
EDGES = [
    0.0, 1.0, 0.5, 0.25, 0.75,
    math.sin(math.pi / 8) ** 2, math.cos(math.pi / 8) ** 2,
    math.sin(math.pi / 10) ** 2, math.sin(math.pi / 14) ** 2,
    1e-9, 1e-6, 1e-3, 1 - 1e-3, 1 - 1e-6, 1 - 1e-9,
]


def _amplitudes(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.0, 1.0, n)


def _misses(estimator: IAE, amplitudes: np.ndarray) -> tuple[int, list]:
    misses, estimates = 0, []
    for i, a in enumerate(amplitudes):
        est = estimator.estimate(bernoulli(float(a)), ExactExecutor(seed=i))
        assert est.reached_epsilon
        assert est.ci_high - est.ci_low <= 2 * estimator.epsilon * (1 + 1e-9)
        misses += not (est.ci_low - 1e-12 <= a <= est.ci_high + 1e-12)
        estimates.append(est)
    return misses, estimates


def _allowed_misses(n: int, alpha: float = ALPHA) -> int:
    """0.999 quantile of Binomial(n, alpha): a correct estimator exceeds it w.p. < 0.001."""
    return int(binom.ppf(0.999, n, alpha))


@pytest.mark.slow
def test_coverage_eps_0_01():
    misses, _ = _misses(IAE(0.01, ALPHA), _amplitudes(200, seed=1))
    assert misses <= _allowed_misses(200)


@pytest.mark.slow
def test_coverage_eps_0_001():
    misses, _ = _misses(IAE(0.001, ALPHA), _amplitudes(100, seed=2))
    assert misses <= _allowed_misses(100)


@pytest.mark.parametrize("split", ["spend", "uniform", "geometric"])
def test_edge_amplitudes_terminate_and_reach_epsilon(split):
    estimator = IAE(0.005, ALPHA, alpha_split=split)
    misses, _ = _misses(estimator, np.array(EDGES))
    assert misses <= _allowed_misses(len(EDGES))


class _Recorder(ExactExecutor):
    """ExactExecutor that records (k, shots) of every circuit it runs."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.log: list[tuple[int, int]] = []

    def run(self, circuits, shots):
        self.log += [(cache_key(c)[1], int(n)) for c, n in zip(circuits, shots)]
        return super().run(circuits, shots)


@pytest.mark.parametrize("split", ["spend", "uniform"])
def test_oracle_calls_identity_and_rounds_as_executed(split):
    executor = _Recorder(seed=3)
    est = IAE(0.002, ALPHA, alpha_split=split).estimate(bernoulli(0.37), executor)
    assert [(r.k, r.shots) for r in est.rounds] == executor.log
    assert est.oracle_calls == sum(n * (2 * k + 1) for k, n in executor.log)
    assert max(r.k for r in est.rounds) > 0
    assert all(0 <= r.ones <= r.shots for r in est.rounds)


def test_calls_scale_as_one_over_epsilon():
    amplitudes = _amplitudes(30, seed=4)

    def mean_calls(eps: float) -> float:
        _, estimates = _misses(IAE(eps, ALPHA), amplitudes)
        return float(np.mean([e.oracle_calls for e in estimates]))

    ratio = mean_calls(0.0025) / mean_calls(0.01)
    assert ratio < 6  # Monte Carlo pays 16x for eps / 4; ideal IAE 4x (times log factors)


def test_expected_calls_tracks_the_schedule():
    estimator = IAE(0.01, ALPHA)
    _, estimates = _misses(estimator, _amplitudes(60, seed=5))
    measured = np.mean([e.oracle_calls for e in estimates])
    model = estimator.expected_calls(0.01)
    assert 0.6 * measured <= model <= 1.6 * measured
    assert estimator.expected_calls(0.001) > 4 * model
    hoeffding = math.ceil(math.log(2 / ALPHA) / (2 * 0.001**2))
    assert estimator.expected_calls(0.001) < hoeffding / 50


@pytest.mark.parametrize(
    ("mitigation", "eps"),
    [
        (Mitigation(scales=(1, 3)), 0.05),
        (Mitigation(scales=(1, 3)), 0.02),
        ("aer", 0.05),
    ],
)
@pytest.mark.slow
def test_expected_calls_follows_the_mitigated_schedule(mitigation, eps):
    """Same standard as the unmitigated test above (model within [0.6, 1.6] x the measured
    mean over seeded amplitudes). The exact executor is the cheap stand-in: folding, the
    per-scale shot split and the Hoeffding ZNE interval set the cost, not the noise; 'aer'
    runs ZNE (1, 3) on the fake_brisbane device model. Before the fix the model ran the
    unmitigated schedule (290 vs ~5000 calls at eps = 0.05)."""
    executors = [ExactExecutor(seed=i) for i in range(20)]
    if mitigation == "aer":
        snapshot = load_snapshot("fake_brisbane")
        mitigation = make_mitigation("zne", snapshot)
        executors = [AerExecutor(snapshot, seed=11)] * 20
    estimator = IAE(eps, ALPHA, mitigation=mitigation)
    calls = [
        estimator.estimate(bernoulli(float(a)), ex).oracle_calls
        for ex, a in zip(executors, _amplitudes(20, seed=6))
    ]
    measured = float(np.mean(calls))
    model = estimator.expected_calls(eps)
    assert 0.6 * measured <= model <= 1.6 * measured, (model, measured)
    assert model > 3 * IAE(eps, ALPHA).expected_calls(eps)  # folding + wider intervals


def test_expected_calls_cache_key_includes_the_mitigation():
    """The mitigation's own equality ignores its snapshot; the cost key makes the confusion
    the snapshot implies explicit, so two devices never share a cached prediction."""
    rem = [make_mitigation("rem", load_snapshot(name)) for name in ("fake_brisbane", "fake_torino")]
    assert rem[0] == rem[1]
    keys = [m.cost_model()[0] for m in rem]
    assert keys[0] != keys[1] and hash(keys[0]) != hash(keys[1])
    assert keys[0].confusion is not None and not keys[0].bias_pad
    plain = IAE(0.05, ALPHA).expected_calls(0.05)
    zne = IAE(0.05, ALPHA, mitigation=Mitigation(scales=(1, 3))).expected_calls(0.05)
    zne5 = IAE(0.05, ALPHA, mitigation=Mitigation(scales=(1, 3, 5))).expected_calls(0.05)
    assert plain < zne < zne5
    assert IAE(0.05, ALPHA).expected_calls(0.05) == plain


def _cold_expected_calls(estimator: IAE, eps: float) -> float:
    """The cost model as it was first written: every cache emptied, one plan per amplitude."""
    caches.clear()
    config = replace(estimator, mitigation=None)
    model = None if estimator.mitigation is None else estimator.mitigation.cost_model()[1]
    calls = []
    for theta in CostCache.THETAS:
        probe = None if model is None else iae._ExpectedProbe(model, theta)
        rounds, _ = config._run(eps, iae._expected_sampler(theta), probe)
        calls.append(sum(r.oracle_calls for r in rounds))
    return float(np.mean(calls))


@settings(max_examples=8, deadline=None)
@given(eps=st.floats(0.01, 0.5), warm=st.lists(st.floats(0.01, 0.5), max_size=3),
       k_max=st.sampled_from([None, 0, 2]), zne=st.booleans())
def test_cost_model_caches_change_no_value(eps, warm, k_max, zne):
    """The caches (plug-in intervals and shot searches shared across eps, the first round
    shared by the amplitudes of one plan, the grow search keyed on int(k_bound)) give the
    value a cold, unshared replay gives, bit for bit."""
    estimator = IAE(eps, 0.01, k_max=k_max, mitigation=Mitigation(scales=(1, 3)) if zne else None)
    for other in warm:  # fill the caches from schedules at other eps first
        replace(estimator, epsilon=other).expected_calls(other)
    assert estimator.expected_calls(eps) == _cold_expected_calls(estimator, eps)


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.005, 0.9), alpha=st.floats(1e-4, 0.2), final_share=st.floats(0.1, 0.9),
       k_max=st.sampled_from([None, 0, 2]))
def test_amplitudes_sharing_a_plan_run_the_schedules_of_fresh_plans(eps, alpha, final_share, k_max):
    """The cost model runs its 16 amplitudes on one plan, which remembers the first round's
    decision and budgets: every schedule, level and final state is the one a fresh plan gives."""
    estimator = IAE(eps, alpha, k_max=k_max, final_share=final_share)
    plan = iae_engine.Plan.make(estimator, eps)
    for theta in CostCache.THETAS:
        sample = iae._expected_sampler(theta)
        (shared, a), (fresh, b) = estimator._run(eps, sample, None, plan), estimator._run(eps, sample)
        assert shared == fresh and a.alphas == b.alphas
        assert vars(a) == vars(b)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(0, 6), low=st.floats(0.0, 1.5), width=st.floats(1e-4, 0.3), up=st.booleans(),
       alpha=st.floats(1e-5, 0.1), growth=st.sampled_from([1.0, 1.5, 2.0, 3.0]), k_bound=st.floats(1.0, 300.0))
def test_grow_search_reads_k_bound_only_as_its_integer_part(k, low, width, up, alpha, growth, k_bound):
    """int(min(pi / w, b)) = min(int(pi / w), int(b)) for w, b > 0: find_next_k and so the cached
    grow search (keyed on int(k_bound)) answer as with the float bound."""
    high = min(low + width, math.pi / 2)
    assert iae_engine.find_next_k(k, low, high, up, growth, k_bound) == iae_engine.find_next_k(k, low, high, up, growth, int(k_bound))
    plug_in = iae_engine.plug_in_intervals(k, low, high, up, alpha, "beta")
    grows = lambda n: iae_engine.find_next_k(k, *plug_in(n)[:2], up, growth, k_bound)[0] != k
    expected = iae_engine.least_shots(grows, SHOT_CAP) or SHOT_CAP
    assert iae_engine.grow_shots(k, low, high, up, alpha, "beta", growth, int(k_bound)) == expected


def _capped_runs(eps: float, k_max: int, n: int = 20, seed: int = 8):
    """(amplitude, rounds, state) of seeded capped runs, through the private loop so that
    every round's level alpha_i is visible (state.alphas)."""
    estimator = IAE(eps, ALPHA, k_max=k_max)
    out = []
    for i, a in enumerate(_amplitudes(n, seed)):
        executor, oracle = ExactExecutor(seed=i), bernoulli(float(a))
        rounds, state = estimator._run(eps, lambda k, shots: run_round(executor, oracle, k, shots))
        out.append((float(a), rounds, state))
    return out


@pytest.mark.parametrize(("eps", "k_max"), [(1e-4, 3), (1e-4, 0), (1e-3, 0), (1e-3, 3)])
def test_capped_rounds_never_run_at_level_zero(eps, k_max):
    """Before the fix, once K could not grow every later round got alpha_i = 0 (16 of 20
    rounds at eps = 1e-4, k_max = 3) and still spent SHOT_CAP shots."""
    for _, rounds, state in _capped_runs(eps, k_max):
        assert len(state.alphas) == len(rounds)
        assert all(x > 0 for x in state.alphas)
        assert sum(state.alphas) <= ALPHA * (1 + 1e-12)  # the union bound's budget
        assert all(r.k <= k_max for r in rounds)


@pytest.mark.parametrize(("eps", "k_max"), [(1e-4, 3), (1e-4, 0), (1e-3, 0)])
def test_capped_runs_stop_honestly_and_cover(eps, k_max):
    runs = _capped_runs(eps, k_max)
    misses = 0
    for a, _, state in runs:
        low, high = state.amplitude_interval()
        misses += not (low - 1e-12 <= a <= high + 1e-12)
    assert misses <= _allowed_misses(len(runs))
    if (eps, k_max) == (1e-4, 0):  # needs ~10^8 shots at k = 0: never reachable
        for i, a in enumerate(_amplitudes(3, seed=8)):
            est = IAE(eps, ALPHA, k_max=k_max).estimate(bernoulli(float(a)), ExactExecutor(seed=i))
            assert not est.reached_epsilon and est.half_width > eps


@pytest.mark.parametrize(("eps", "k_max"), [(1e-4, 3), (1e-4, 0), (1e-3, 0), (1e-3, 3)])
def test_capped_calls_are_bounded(eps, k_max):
    """At the cap a run makes at most one SHOT_CAP scouting round (first arrival, eps out of
    reach from the current midpoint) and finishing rounds, each <= MAX_SHOTS and at least
    double the one before at that k; a geometric sum is <= 2 x its last term, so the calls at
    the cap are <= (SHOT_CAP + 2 MAX_SHOTS)(2 k_max + 1): a small multiple of one capped
    round at MAX_SHOTS, whatever the round cap. Before the fix, repeats at the cap ran at a
    fixed SHOT_CAP with alpha_i = 0 until the round cap."""
    per_call = 2 * k_max + 1
    for _, rounds, state in _capped_runs(eps, k_max):
        at_cap = [r.shots for r in rounds if r.k == k_max]
        assert all(later >= 2 * earlier for earlier, later in zip(at_cap, at_cap[1:]))
        assert sum(at_cap) * per_call <= (SHOT_CAP + 2 * MAX_SHOTS) * per_call
        below = [r for r in rounds if r.k < k_max]
        assert all(r.shots <= MAX_SHOTS for r in below)


def test_reproducible_with_fixed_seed():
    oracle = bernoulli(0.61)
    first = IAE(0.003).estimate(oracle, ExactExecutor(seed=7))
    second = IAE(0.003).estimate(oracle, ExactExecutor(seed=7))
    assert first.rounds == second.rounds
    assert (first.value, first.ci_low, first.ci_high) == (second.value, second.ci_low, second.ci_high)


def test_round_cap_gives_honest_flagged_interval():
    est = IAE(0.001, max_rounds=2).estimate(bernoulli(0.3), ExactExecutor(seed=0))
    assert len(est.rounds) == 2
    assert not est.reached_epsilon
    assert est.ci_low <= 0.3 <= est.ci_high


def test_k_max_caps_the_power_and_still_reaches_epsilon():
    est = IAE(0.01, k_max=2).estimate(bernoulli(0.42), ExactExecutor(seed=0))
    assert max(r.k for r in est.rounds) <= 2
    assert est.reached_epsilon


def test_fixed_shots_and_chernoff_still_work():
    est = IAE(0.01, shots=64, confidence="chernoff").estimate(bernoulli(0.2), ExactExecutor(seed=1))
    assert est.reached_epsilon
    assert est.rounds[0].shots >= 64  # intermediate rounds; final rounds are sized


@pytest.mark.parametrize(
    ("kwargs", "bad"),
    [
        ({"epsilon": 0.0}, "0.0"),
        ({"epsilon": 0.01, "alpha": 1.5}, "1.5"),
        ({"epsilon": 0.01, "shots": 0}, "0"),
        ({"epsilon": 0.01, "confidence": "wilson"}, "wilson"),
        ({"epsilon": 0.01, "min_ratio": 1.0}, "1.0"),
        ({"epsilon": 0.01, "k_max": -1}, "-1"),
        ({"epsilon": 0.01, "alpha_split": "halves"}, "halves"),
        ({"epsilon": 0.01, "max_rounds": 0}, "0"),
        ({"epsilon": 0.01, "final_share": 1.0}, "1.0"),
        ({"epsilon": 0.01, "growth": 0.5}, "0.5"),
        ({"epsilon": 0.01, "final_safety": 0.9}, "0.9"),
    ],
)
def test_validation_names_the_bad_value(kwargs, bad):
    with pytest.raises(ValueError, match=bad):
        IAE(**kwargs)
