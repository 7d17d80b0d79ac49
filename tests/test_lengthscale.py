"""Tests for qbo.algorithms.lengthscale: LB-GP-UCB (Ziomek, Adachi & Osborne 2024, Alg. 1), A-GP-UCB
(Berkenkamp et al. 2019), the MLE refit, the option parser and the benchmark problems."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qbo.algorithms import make_policy, restore_policy
from qbo.algorithms.lengthscale import candidate, default_t0, fit_hyperparameters, parse_lengthscale
from qbo.gp.cholesky import ArmStats
from qbo.problems.lengthscale_benchmarks import berkenkamp, berkenkamp_function, michalewicz
from qbo.problems.synthetic import se_gp_sample

GRID = np.linspace(0.0, 1.0, 40)[:, None]


def _reward(arm: int, rng: np.random.Generator) -> float:
    """A noisy bumpy reward on GRID (shared by the policy comparisons)."""
    x = GRID[arm, 0]
    return float(berkenkamp_function(x) + 0.05 * rng.standard_normal())


def _drive(policy, steps: int, seed: int = 0, quantum: bool = False) -> list[int]:
    rng, arms = np.random.default_rng(seed), []
    for _ in range(steps):
        q = policy.ask()
        arms.append(q.arm)
        policy.tell(q, _reward(q.arm, rng))
    return arms


@pytest.mark.parametrize("name, extra", [("gp-ucb", {"noise": 0.01}), ("q-gp-ucb", {"budget": 500})])
def test_lb_with_unit_growth_is_gp_ucb_with_theta0(name: str, extra: dict) -> None:
    """g = 1 (t0 = 1, power 0): line 14 never fires, Theta = {theta_0}: plain GP-UCB at theta_0."""
    lb = make_policy(name, GRID, lengthscale="lb:0.3", growth_t0=1.0, growth_power=0.0, **extra)
    plain = make_policy(name, GRID, lengthscale=0.3, **extra)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(30):
        qa, qb = lb.ask(), plain.ask()
        assert qa == qb
        lb.tell(qa, _reward(qa.arm, rng_a))
        plain.tell(qb, _reward(qb.arm, rng_b))
    assert lb.surrogate.active_lengthscales == [0.3]


@pytest.mark.parametrize("beta", [0.0, "practical"])
def test_lb_active_set_never_empty_and_candidates_consecutive(beta) -> None:
    """beta = 0 makes line 12's slack vanish, so elimination really happens."""
    pol = make_policy("gp-ucb", GRID, lengthscale="lb", noise=0.01, beta=beta)
    s, rng, eliminated = pol.surrogate, np.random.default_rng(1), False
    for _ in range(60):
        q = pol.ask()
        pol.tell(q, _reward(q.arm, rng))
        assert len(s.active) >= 1
        eliminated |= len(s.active) < len(s.thetas)
    d = GRID.shape[1]
    assert s.thetas == [candidate(i, 1.0, d) for i in range(len(s.thetas))]  # theta_0, q(1), q(2), ...
    assert len(s.thetas) == 6  # theta_0 and q(1..5): t0 = e^{5/d}, g(t) = t0 for t < t0^2
    assert eliminated == (beta == 0.0)


def test_a_gp_ucb_lengthscale_never_increases() -> None:
    pol = make_policy("gp-ucb", GRID, lengthscale="a-gp-ucb:0.5", noise=0.01, growth_t0=1.5)
    rng, thetas = np.random.default_rng(2), []
    for t in range(1, 41):
        thetas.append(pol.lengthscale)
        assert thetas[-1] == pytest.approx(0.5 / max(1.5, math.sqrt(t)), rel=1e-12)
        q = pol.ask()
        pol.tell(q, _reward(q.arm, rng))
    assert all(b <= a for a, b in zip(thetas, thetas[1:]))
    assert thetas[-1] < thetas[0]


def test_mle_recovers_known_lengthscale_and_is_deterministic() -> None:
    """80 points of an SE-GP draw (l = 0.15) + N(0, 0.05^2) noise, outputscale and noise known.

    Over 20 seeds the MLE of log l had sd 0.076 (bias < 0.01); |log(l_hat / 0.15)| < 0.25 is
    a 3.3-sd margin.
    """
    x = np.linspace(0.0, 1.0, 80)[:, None]
    rng = np.random.default_rng(0)
    y = se_gp_sample(x, 0.15, rng) + 0.05 * rng.standard_normal(80)
    stats = ArmStats(80)
    for i in range(80):
        stats.add(i, float(y[i]), 1.0)
    a = fit_hyperparameters("se", x, stats, 0.05**2, 1.0)
    b = fit_hyperparameters("se", x, stats, 0.05**2, 1.0)
    assert a == b
    assert abs(math.log(a[0] / 0.15)) < 0.25


@pytest.mark.parametrize("ls", ["mle", "lb", "a-gp-ucb:0.4"])
@pytest.mark.parametrize("name, extra", [("gp-ucb", {"noise": 0.01}), ("q-gp-ucb", {"budget": 500})])
def test_adaptive_policies_replay_exactly(ls: str, name: str, extra: dict) -> None:
    pol = make_policy(name, GRID, lengthscale=ls, **extra)
    _drive(pol, 12)
    again = restore_policy(pol.state_dict(), GRID)
    assert again.ask() == pol.ask()
    assert again.ask() == pol.ask()  # ask is side-effect free
    assert again.lengthscale == pol.lengthscale


def test_parse_lengthscale_forms() -> None:
    assert parse_lengthscale(0.3).mode == "fixed"
    assert parse_lengthscale("fixed:0.3").value == 0.3
    assert parse_lengthscale("0.3").value == 0.3
    assert (parse_lengthscale("lb").mode, parse_lengthscale("lb").value) == ("lb", 1.0)
    assert parse_lengthscale("a-gp-ucb:0.5").value == 0.5
    assert parse_lengthscale("mle+outputscale").fit_outputscale
    assert default_t0(5) == pytest.approx(math.e)


@pytest.mark.parametrize("kw, bad", [
    ({"lengthscale": "bogus"}, "bogus"),
    ({"lengthscale": "lb:abc"}, "lb:abc"),
    ({"lengthscale": "fixed"}, "fixed"),
    ({"lengthscale": "fixed:-1"}, "fixed:-1"),
    ({"lengthscale": "mle:0"}, "mle:0"),
    ({"lengthscale": -0.3}, "-0.3"),
    ({"lengthscale": "lb", "kernel": "linear"}, "lb"),
    ({"lengthscale": "mle", "model": "rff"}, "mle"),
    ({"lengthscale": "lb", "growth_t0": 0.5}, "0.5"),
    ({"lengthscale": "mle", "mle_every": 0}, "0"),
])
def test_bad_lengthscale_options_raise_one_line(kw: dict, bad: str) -> None:
    with pytest.raises(ValueError, match=bad) as info:
        make_policy("gp-ucb", GRID, **kw)
    assert "\n" not in str(info.value)


def test_problems() -> None:
    p = berkenkamp(num_arms=200)
    assert p.num_arms == 200 and 0.18 < p.arms[p.best_arm, 0] < 0.22
    assert p.best == pytest.approx(0.745, abs=2e-3)
    q = michalewicz(num_arms=300, seed=1, noise="bernoulli")
    assert q.dim == 5 and q.means.min() == 0.0 and q.means.max() == 1.0
    assert michalewicz(num_arms=300, seed=1, noise="bernoulli") == q
