"""LB-GP-UCB in O(arms) memory (qbo.algorithms.lengthscale.surrogates.BalancedSurrogate,
issue 21): a candidate introduced late is fit on the per-arm statistics, one observation an
arm, and is the model told every observation one by one, to rounding (Ziomek et al. 2024
Alg. 1 lines 14-16; the Gaussian likelihood is sufficient in the per-arm weights and sums)."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.algorithms import make_policy

GRID = np.linspace(0.0, 1.0, 30)[:, None]


@pytest.mark.parametrize("name, extra", [("gp-ucb", {"noise": 0.01}),
                                         ("gp-ucb", {"noise": 0.01, "model": "exact-cholesky"}),
                                         ("q-gp-ucb", {"budget": 500})])
def test_a_late_candidate_is_the_model_of_every_observation(name, extra):
    policy = make_policy(name, GRID, lengthscale="lb", growth_t0=1.5, **extra)
    surrogate, rng = policy.surrogate, np.random.default_rng(4)
    told = []  # (arm, y, eps) of every stage, kept here by the test only
    for _ in range(150):
        query = policy.ask()
        y = float(np.sin(6.0 * GRID[query.arm, 0]) + 0.1 * rng.standard_normal())
        before = len(surrogate.thetas)
        policy.tell(query, y)
        told.append((query.arm, y, 1.0 if query.epsilon is None else max(query.epsilon, policy.config.eps_min)))
        if len(surrogate.thetas) > before:  # a candidate introduced at this stage: compare it with a replay
            theta = surrogate.thetas[-1]
            replayed = surrogate.factory(theta)
            for arm, value, eps in told:
                replayed.add(arm, value, eps)
            for ours, theirs in zip(surrogate.models[-1].posterior(), replayed.posterior()):
                np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)
            assert surrogate.models[-1].information_gain == pytest.approx(replayed.information_gain, rel=1e-9)
    assert len(surrogate.thetas) >= 3  # candidates were introduced after data had come in
    assert surrogate.stats.n == 150 and np.count_nonzero(surrogate.stats.W) <= GRID.shape[0]


def _footprint(surrogate) -> int:
    """Bytes of the numpy arrays the surrogate holds, directly or one object (or list) down."""
    def below(item) -> list:
        try:
            return list(vars(item).values())
        except TypeError:  # no __dict__: a number, an array
            return []

    total, seen = 0, set()
    for value in vars(surrogate).values():
        for item in (value if isinstance(value, list) else [value]):
            for leaf in [item, *below(item)]:
                if isinstance(leaf, np.ndarray) and id(leaf) not in seen:
                    seen.add(id(leaf))
                    total += leaf.nbytes
    return total


def test_the_surrogates_memory_does_not_grow_with_the_stage_count():
    """g(t) = max(e^5, t^1/2) introduces no candidate between stages 200 and 2000 on a 1-d
    grid, so the state (statistics and active models) must not grow there (a packed list of
    observations would grow by 20 bytes a stage)."""
    policy = make_policy("gp-ucb", GRID, lengthscale="lb", noise=0.01)
    rng, sizes = np.random.default_rng(0), {}
    for t in range(1, 2001):
        query = policy.ask()
        policy.tell(query, float(rng.standard_normal()))
        if t in (200, 2000):
            sizes[t] = _footprint(policy.surrogate)
    assert len(policy.surrogate.thetas) == 6  # theta_0 and the 5 candidates of g(1) = e^5 (Sec. 5)
    assert 0 < sizes[2000] <= sizes[200]
