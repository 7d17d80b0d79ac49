"""Tests for qbo.gp.ArmPosterior (Dai et al. Eq. (3) on finite arms) and the ask/tell policies
in qbo.algorithms (Q-GP-UCB Alg. 1, GP-UCB, Q-LinUCB App. H, LinUCB/OFUL)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from qbo.algorithms import (
    POLICY_NAMES,
    Policy,
    Query,
    default_m_bar,
    make_policy,
    restore_policy,
)
from qbo.gp import (
    ArmPosterior,
    FeatureKernel,
    RandomFourierFeatures,
    make_kernel,
    weighted_information_gain,
    weighted_posterior_batch,
)

TOL = 1e-8
GRID = np.linspace(0.0, 1.0, 20)[:, None]


def _obs(seed: int = 0, m: int = 12, n: int = 40):
    """Random arms (m x 2) and n observations with many repeated arms."""
    rng = np.random.default_rng(seed)
    arms = rng.uniform(0.0, 1.0, size=(m, 2))
    idx = rng.integers(0, m // 2, size=n)  # only half the arms, so repeats are frequent
    y = rng.standard_normal(n)
    eps = rng.uniform(0.05, 1.0, size=n)
    return arms, idx, y, eps


# ---------------------------------------------------------------- ArmPosterior
@pytest.mark.parametrize("lam", [0.3, 1.0 + 2.0 / 500])
def test_arm_posterior_matches_batch_eq3_with_repeats(lam: float) -> None:
    arms, idx, y, eps = _obs()
    kern = make_kernel("se", 0.3)
    post = ArmPosterior.from_kernel(kern, arms, lam)
    post.extend(idx, y, eps)
    mean, var = weighted_posterior_batch(kern, arms[idx], y, eps, lam, arms)
    np.testing.assert_allclose(post.mean, mean, atol=TOL, rtol=0)
    np.testing.assert_allclose(post.var, var, atol=TOL, rtol=0)
    np.testing.assert_allclose(post.std, np.sqrt(var), atol=1e-6, rtol=0)
    gamma = weighted_information_gain(kern, arms[idx], eps, lam)
    assert abs(post.information_gain - gamma) < TOL
    assert post.n == len(idx)
    np.testing.assert_allclose(post.weights, np.bincount(idx, 1 / eps**2, minlength=12))


def test_arm_posterior_eps_one_is_ordinary_gp_eq1() -> None:
    arms, idx, y, _ = _obs(seed=1)
    lam = 0.05
    K = make_kernel("matern52", 0.4)(arms, arms)
    post = ArmPosterior(K, lam)
    for i, v in zip(idx, y):
        post.add(int(i), float(v), 1.0)
    Kn = K[np.ix_(idx, idx)] + lam * np.eye(len(idx))  # Srinivas Eq. (1)-(2), noise lam
    kq = K[idx, :]
    np.testing.assert_allclose(post.mean, kq.T @ np.linalg.solve(Kn, y), atol=TOL, rtol=0)
    var = np.diag(K) - np.einsum("ij,ij->j", kq, np.linalg.solve(Kn, kq))
    np.testing.assert_allclose(post.var, var, atol=TOL, rtol=0)
    _, logdet = np.linalg.slogdet(np.eye(len(idx)) + K[np.ix_(idx, idx)] / lam)
    assert abs(post.information_gain - 0.5 * logdet) < TOL


def test_arm_posterior_rejects_bad_input() -> None:
    post = ArmPosterior(np.eye(3), 1.0)
    with pytest.raises(ValueError, match="7"):
        post.add(7, 0.0, 1.0)
    with pytest.raises(ValueError, match="-0.5"):
        post.add(0, 0.0, -0.5)
    with pytest.raises(ValueError, match="symmetric"):
        ArmPosterior(np.array([[1.0, 0.5], [0.0, 1.0]]), 1.0)
    with pytest.raises(ValueError, match="-2"):
        ArmPosterior(np.eye(2), -2.0)


# ---------------------------------------------------------------- Q-GP-UCB
def _run(policy, f: np.ndarray, stages: int, noise=None) -> list[Query]:
    asks = []
    for _ in range(stages):
        q = policy.ask()
        asks.append(q)
        y = float(f[q.arm]) + (0.0 if noise is None else float(noise()))
        policy.tell(q, y)
    return asks


@pytest.mark.parametrize(
    "kw",
    [
        dict(budget=1000, lengthscale=0.1),
        dict(budget=1000, lengthscale=0.1, beta="theory", B=2.0),
        dict(budget=1000, lengthscale=0.1, model="rff", num_features=100, seed=3),
    ],
)
def test_qgpucb_doubling_identity(kw: dict) -> None:
    """App. D Eq. (25)-(26): with eps_s = sigma~_{s-1}(x_s)/sqrt(lam), gamma~_s = s log(2)/2."""
    f = np.sin(7.0 * GRID[:, 0])
    pol = make_policy("q-gp-ucb", GRID, **kw)
    for s in range(1, 31):
        q = pol.ask()
        assert not pol.exhausted
        pol.tell(q, float(f[q.arm]))
        assert abs(pol.information_gain - s * math.log(2.0) / 2.0) < TOL


def test_qlinucb_doubling_identity() -> None:
    arms = np.random.default_rng(2).uniform(-1, 1, size=(15, 3))
    pol = make_policy("q-linucb", arms, budget=500)
    for s in range(1, 21):
        pol.tell(pol.ask(), 0.1 * s)
        assert abs(pol.information_gain - s * math.log(2.0) / 2.0) < TOL


def test_qgpucb_rff_equals_arm_posterior_on_feature_gram() -> None:
    """Eq. (6) (feature form) == Eq. (3) for the finite-rank RFF kernel."""
    kern = make_kernel("se", 0.1)
    rff = RandomFourierFeatures(kern, 100, 1, seed=3)
    pol = make_policy("q-gp-ucb", GRID, budget=200, model="rff", lengthscale=0.1, seed=3)
    ref = ArmPosterior(FeatureKernel(rff)(GRID, GRID), pol.lam)
    f = np.cos(5.0 * GRID[:, 0])
    for _ in range(10):
        q = pol.ask()
        pol.tell(q, float(f[q.arm]))
        ref.add(q.arm, float(f[q.arm]), q.epsilon)
    mean, var = pol.posterior()
    np.testing.assert_allclose(mean, ref.mean, atol=1e-7, rtol=0)
    np.testing.assert_allclose(var, ref.var, atol=1e-7, rtol=0)


def test_qgpucb_defaults_and_query_fields() -> None:
    T = 1000
    pol = make_policy("q-gp-ucb", GRID, budget=T)
    assert pol.lam == pytest.approx(1.0 + 2.0 / T)
    assert pol.m_bar == default_m_bar(T, 20, 1.0, pol.lam)
    assert pol.m_bar == math.ceil(20 * math.log2(1 + T**2 / (20 * pol.lam)))
    q = pol.ask()
    assert q.alpha == pytest.approx(0.1 / (2 * pol.m_bar))
    assert q.epsilon == pytest.approx(1.0 / math.sqrt(pol.lam))  # sigma~_0 = 1
    assert q.arm == 0  # flat prior: tie broken by the lowest index
    assert pol.beta(1) == 1.0 and pol.beta(3) == pytest.approx(1 + math.log(3))
    assert make_policy("q-gp-ucb", GRID, m_bar=7).alpha == pytest.approx(0.1 / 14)
    assert make_policy("q-gp-ucb", GRID, m_bar=7).lam == 1.0
    assert default_m_bar(10, 1000, 1.0, 1.0) == 10  # capped by T


def test_qgpucb_concentrates_on_best_arm() -> None:
    arms = np.linspace(0.0, 1.0, 5)[:, None]
    f = np.array([0.2, 0.5, 0.9, 0.6, 0.1])
    pol = make_policy("q-gp-ucb", arms, budget=10_000, lengthscale=0.2)
    asks = _run(pol, f, 120)
    assert [q.arm for q in asks[-40:]].count(2) >= 36
    assert [q.arm for q in asks[:5]] == [0, 2, 3, 4, 1]  # explores every arm first
    assert pol.recommend() == 2
    eps = [q.epsilon for q in asks]
    assert eps[-1] < 1e-3 * eps[0]  # stages get ever more precise


def test_qgpucb_exhausted_when_sigma_zero() -> None:
    pol = make_policy("q-gp-ucb", np.zeros((3, 1)), kernel="linear", m_bar=5)
    assert pol.exhausted  # sigma~ = 0 everywhere: N_eps = infinity, Alg. 1 line 5 stops
    assert pol.ask().epsilon == pol.config.eps_min
    pol2 = make_policy("q-gp-ucb", GRID, m_bar=5, eps_min=0.5)
    assert not pol2.exhausted
    _run(pol2, np.zeros(20), 25)
    assert pol2.exhausted


# ---------------------------------------------------------------- GP-UCB
def test_gpucb_finds_best_arm_with_noise() -> None:
    x = GRID[:, 0]
    f = np.exp(-((x - 0.3) ** 2) / (2 * 0.1**2))  # gap 0.05 to the runner-up
    best = int(np.argmax(f))
    rng = np.random.default_rng(0)
    pol = make_policy("gp-ucb", GRID, noise=0.01, lengthscale=0.1, beta=math.sqrt(2))
    asks = _run(pol, f, 300, noise=lambda: 0.1 * rng.standard_normal())
    assert all(q.epsilon is None and q.alpha is None for q in asks)
    last = [q.arm for q in asks[-100:]]
    assert last.count(best) >= 90
    assert pol.recommend() == best


def test_gpucb_theorem1_beta() -> None:
    pol = make_policy("gp-ucb", GRID, delta=0.1, beta_scale=5.0)
    t = 7
    beta_t = 2 * math.log(20 * t**2 * math.pi**2 / (6 * 0.1))
    assert pol.beta(t) == pytest.approx(math.sqrt(beta_t / 5.0))
    assert make_policy("gp-ucb", GRID, beta=1.5).beta(t) == 1.5
    with pytest.raises(ValueError, match="classical"):
        pol.tell(Query(0, 0.1, 0.01), 1.0)


# ---------------------------------------------------------------- linear bandits
def test_qlinucb_theta_is_weighted_ridge() -> None:
    rng = np.random.default_rng(4)
    arms = rng.uniform(-1, 1, size=(10, 3))
    lam = 1.7
    pol = make_policy("q-linucb", arms, lam=lam, budget=100)
    X, Y, W = [], [], []
    for _ in range(25):
        q = pol.ask()
        eps = float(rng.uniform(0.1, 1.0))  # the achieved eps need not be the target
        y = float(rng.standard_normal())
        pol.tell(q, y, epsilon=eps)
        X.append(np.append(arms[q.arm], 1.0)), Y.append(y), W.append(eps**-2)
    sw = np.sqrt(np.array(W))
    A = np.vstack([sw[:, None] * np.array(X), math.sqrt(lam) * np.eye(4)])
    rhs = np.concatenate([sw * np.array(Y), np.zeros(4)])
    theta = np.linalg.lstsq(A, rhs, rcond=None)[0]
    np.testing.assert_allclose(pol.theta, theta, atol=TOL, rtol=0)


def test_qlinucb_radius_eq64_and_eps() -> None:
    arms = np.eye(3)
    pol = make_policy("q-linucb", arms, lam=2.0, delta=0.05, S=0.5, intercept=False, m_bar=9)
    assert pol.radius() == pytest.approx(math.sqrt(6 * math.log(1 / 0.05)) + math.sqrt(2) * 0.5)
    q = pol.ask()
    assert q.epsilon == pytest.approx(1 / math.sqrt(2.0))  # ||x||_{V_0^{-1}}, V_0 = lam I
    pol.tell(q, 1.0)
    sw = 1 / q.epsilon**2
    r = math.sqrt(6 * math.log((1 + sw / 2.0) / 0.05)) + math.sqrt(2) * 0.5
    assert pol.radius() == pytest.approx(r)


@pytest.mark.parametrize("name", ["linucb", "q-linucb"])
def test_linear_policies_find_best_affine_arm(name: str) -> None:
    rng = np.random.default_rng(5)
    arms = rng.uniform(0, 1, size=(8, 2))
    f = 0.2 + 0.3 * arms[:, 0] + 0.4 * arms[:, 1]  # affine: needs the intercept feature
    pol = make_policy(name, arms, budget=1000) if name == "q-linucb" else make_policy(name, arms)
    asks = _run(pol, f, 200 if name == "linucb" else 40,
                noise=(lambda: 0.1 * rng.standard_normal()) if name == "linucb" else None)
    assert pol.recommend() == int(np.argmax(f))
    assert asks[-1].arm == int(np.argmax(f))


# ---------------------------------------------------------------- determinism, replay, config
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "q-ctv-gp-ucb" else n
                                  for n in POLICY_NAMES])  # the space x time kernel's replay takes ~1.4 s
def test_determinism_and_replay(name: str) -> None:
    kw = {"budget": 300} if name.startswith("q-") else {}
    if name == "q-gp-ucb":
        kw.update(model="rff", num_features=50, seed=11)
    f = np.sin(9.0 * GRID[:, 0])
    inputs = {"eval_times": 1.0 + GRID[:, 0]}  # ctv-fixed's known evaluation times
    clock = {"elapsed": 1.5, "calls": 7}  # time-varying policies need them; others ignore them
    a, b = make_policy(name, GRID, inputs, **kw), make_policy(name, GRID, inputs, **kw)
    assert isinstance(a, Policy) and a.name == name
    for k in range(12):
        qa, qb = a.ask(), b.ask()
        assert qa == qb and a.ask() == qa  # ask is idempotent
        a.tell(qa, float(f[qa.arm]) + 0.01 * k, **clock)
        b.tell(qb, float(f[qb.arm]) + 0.01 * k, **clock)
    state = json.loads(json.dumps(a.state_dict()))
    c = restore_policy(state, GRID, inputs)
    for _ in range(5):
        qa, qc = a.ask(), c.ask()
        assert qa == qc
        a.tell(qa, 0.3, **clock)
        c.tell(qc, 0.3, **clock)
    with pytest.raises(ValueError, match="shape"):
        restore_policy(state, np.zeros((3, 1)), inputs)


@pytest.mark.parametrize(
    "name, kw, bad",
    [
        ("q-gp-ucb", {"delta": 1.5, "budget": 10}, "1.5"),
        ("q-gp-ucb", {"beta": "bogus", "budget": 10}, "bogus"),
        ("q-gp-ucb", {"lengthscale": -0.3, "budget": 10}, "-0.3"),
        ("q-gp-ucb", {"model": "nn", "budget": 10}, "nn"),
        ("q-gp-ucb", {"budget": 0}, "0"),
        ("q-gp-ucb", {}, "budget"),
        ("q-gp-ucb", {"frobnicate": 1, "budget": 10}, "frobnicate"),
        ("gp-ucb", {"noise": -1.0}, "-1.0"),
        ("gp-ucb", {"beta": "theory"}, "theory"),
        ("q-linucb", {"radius": "eq99", "m_bar": 3}, "eq99"),
        ("linucb", {"L": 0.01}, "0.01"),
        ("linucb", {"R": float("nan")}, "nan"),
        ("no-such-policy", {}, "no-such-policy"),
    ],
)
def test_bad_config_raises(name: str, kw: dict, bad: str) -> None:
    with pytest.raises(ValueError, match=bad):
        make_policy(name, GRID, **kw)
