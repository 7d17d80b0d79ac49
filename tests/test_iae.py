"""Tests for qbo.qmc.iae: coverage, honest cost, O(1/eps) scaling, validation, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from qbo.execution.exact import ExactExecutor
from qbo.grover import cache_key
from qbo.oracles import bernoulli
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


def test_coverage_eps_0_01():
    misses, _ = _misses(IAE(0.01, ALPHA), _amplitudes(200, seed=1))
    assert misses <= _allowed_misses(200)


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
