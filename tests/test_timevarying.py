"""Time-varying GP bandits (Imamura et al., seed 000): closed forms, equivalences, generator, options."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qbo.algorithms import QCTVConfig, QCTVGPUCB, TVConfig, make_policy
from qbo.algorithms.quadrature import lognormal_mean, quadrature_lognormal_mean
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import run_experiment
from qbo.gp.forgetting import ForgettingArmPosterior, decay, direct_forgetting_posterior
from qbo.gp.time_kernels import make_product_kernel
from qbo.problems.drifting import ar1_coefficients, biased_time, drifting_oracle, make_tv_problem


def TVPolicy(name, arms, config=None, eval_times=None):
    """A time-varying policy by name (one registry: ``make_policy``)."""
    options = {} if config is None else {k: getattr(config, k) for k in config.__dataclass_fields__}
    return make_policy(name, arms, {"eval_times": eval_times}, **options)


def run_tv_experiment(cfg, out):
    return run_experiment(ExperimentConfig(**cfg), out)

POLICIES = ("tv-gp-ucb", "ctv-fixed", "ctv", "ctv-simple")


@pytest.fixture(scope="module")
def arms() -> np.ndarray:
    g = np.linspace(0, 1, 8)
    return np.array([(u, v) for u in g for v in g])


def _run(policy, rng_seed: int, rounds: int, times: np.ndarray, f: np.ndarray) -> list[int]:
    """Drive a policy on a fixed reward with known evaluation times; return its picks."""
    rng = np.random.default_rng(rng_seed)
    picks = []
    for _ in range(rounds):
        q = policy.ask()
        picks.append(q.arm)
        policy.tell(q, float(f[q.arm] + 0.1 * rng.standard_normal()), elapsed=float(times[q.arm]))
    return picks


def test_closed_form_future_posterior_matches_direct(arms):
    rng = np.random.default_rng(0)
    pk = make_product_kernel("matern52", 0.3, 1.0, 0.05)
    post = ForgettingArmPosterior(pk.space(arms, arms), 0.05, 0.01)
    idx, taus, ys = [], [], []
    for _ in range(15):
        post.advance(float(rng.uniform(0.2, 6.0)))
        j, y = int(rng.integers(len(arms))), float(rng.normal())
        post.add(j, y)
        idx.append(j), taus.append(post.tau), ys.append(y)
    for t in (0.0, 1.3, 7.0):
        mean, var = post.future(t)
        m_d, v_d = direct_forgetting_posterior(pk, arms[idx], np.array(taus), np.array(ys), 0.01, arms,
                                    np.full(len(arms), post.tau + t))
        np.testing.assert_allclose(mean, m_d, rtol=0, atol=1e-12)
        np.testing.assert_allclose(var, v_d, rtol=0, atol=1e-12)
        # the closed form written out: sigma^2(tau+t) = k - (1-eps)^t (k - sigma^2(tau))
        np.testing.assert_allclose(var, 1.0 - 0.95**t * (1.0 - post.var), rtol=0, atol=1e-12)
        np.testing.assert_allclose(mean, 0.95 ** (t / 2) * post.mean, rtol=0, atol=1e-12)


def test_eps_zero_every_policy_picks_what_gp_ucb_picks(arms):
    f = np.sin(3 * arms[:, 0]) * np.cos(2 * arms[:, 1])
    times = biased_time(arms)
    cfg = TVConfig(eps=0.0, beta=1.5)
    # the one gp-ucb (Srinivas et al., qbo.algorithms) is the time-unaware baseline
    lib = make_policy("gp-ucb", arms, kernel="matern52", lengthscale=0.2, noise=0.01, beta=1.5)
    ref = _run(lib, 1, 25, times, f)
    for name in POLICIES:
        assert _run(TVPolicy(name, arms, cfg, eval_times=times), 1, 25, times, f) == ref, name


def test_ctv_fixed_with_unit_time_equals_tv_gp_ucb(arms):
    f = np.cos(4 * arms[:, 0] + arms[:, 1])
    ones = np.ones(len(arms))
    cfg = TVConfig(eps=0.05)
    tv = _run(TVPolicy("tv-gp-ucb", arms, cfg), 2, 30, ones, f)
    assert _run(TVPolicy("ctv-fixed", arms, cfg, eval_times=ones), 2, 30, ones, f) == tv


def test_gauss_hermite_lognormal_mean_is_exact():
    mu = np.array([-1.0, 0.0, 0.7, 2.0])
    for sd in (0.05, 0.3, 1.0):
        q = quadrature_lognormal_mean(mu, np.full(4, sd), order=32)
        np.testing.assert_allclose(q, lognormal_mean(mu, sd * sd), rtol=1e-12, atol=0)


def test_ar1_step_stationary_and_composes():
    lam = 0.01
    for dt in (0.3, 1.0, 2.7, 10.0):
        a, q = ar1_coefficients(lam, dt)
        assert a * a + q == pytest.approx(1.0, abs=1e-15)           # stationary: a^2 K + q K = K
        assert a == pytest.approx(decay(lam, dt), abs=1e-15)       # Cov(f(t), f(t+dt)) = k_time
        h, qh = ar1_coefficients(lam, dt / 2)
        assert h * h == pytest.approx(a, abs=1e-15)                # two half steps: same mean map
        assert h * h * qh + qh == pytest.approx(q, abs=1e-15)      # ... and same innovation cov
    a1, q1 = ar1_coefficients(lam, 1.0)
    assert a1 == pytest.approx(math.sqrt(1 - lam), abs=1e-15) and q1 == pytest.approx(lam, abs=1e-15)


def test_generator_matches_seed_settings():
    p = make_tv_problem(kernel="se", times="biased", grid_size=6)
    assert p.num_arms == 36 and p.lam == 0.01 and p.noise == 0.01
    assert 2.0 <= p.eval_times.min() and p.eval_times.max() <= 6.0
    u = make_tv_problem(kernel="matern52", times="uniform", grid_size=6)
    assert np.all(u.eval_times == 3.0)
    w = u.world(np.random.default_rng(0))
    y, t, r = w.evaluate(3)
    assert t == 3.0 and w.time == 3.0 and r >= 0.0


def test_drifting_oracle_encodes_current_value():
    o = drifting_oracle(0.9, "bernoulli", (-3.0, 3.0))
    assert o.mean == pytest.approx(0.9) and (o.low, o.high) == (-3.0, 3.0)
    assert drifting_oracle(7.0).mean == pytest.approx(3.0)  # clipped into the window


def test_quantum_policy_weights_and_horizon(arms):
    pol = QCTVGPUCB(arms, QCTVConfig(kernel="matern52", budget=1000, sec_per_call=0.01))
    q = pol.ask()
    assert q.epsilon == pytest.approx(1.0 / math.sqrt(pol.lam)) and q.horizon > 0
    pol.tell(q, 0.3, elapsed=2.0, calls=200)
    assert pol.posterior.tau == 2.0 and pol.posterior.var[q.arm] < 1.0
    base = QCTVGPUCB(arms, QCTVConfig(kernel="matern52", budget=1000, eps=0.0, time_aware=False))
    assert base.posterior.eps == 0.0 and base.ask().horizon == 0.0


def test_runner_writes_files(tmp_path):
    cfg = {"problem": "tv-synthetic", "algorithms": ["ctv", "tv-gp-ucb", "gp-ucb"], "budget": 12,
           "trials": 2, "problem_options": {"grid_size": 6, "times": "biased", "init": 4}}
    recs = run_tv_experiment(cfg, tmp_path)
    assert len(recs) == 2 * 3 * 12
    for name in ("config.toml", "stages.jsonl", "summary.csv", "regret.png"):
        assert (tmp_path / name).exists()


@pytest.mark.parametrize("call, match", [
    (lambda: TVConfig(eps=1.5), "eps must be a real number in \\[0, 1\\), got 1.5"),
    (lambda: TVConfig(beta="huge"), "beta must be one of .* got 'huge'"),
    (lambda: TVConfig(kernel="rbf"), "kernel must be one of .* got 'rbf'"),
    (lambda: TVPolicy("ctv-magic", np.zeros((2, 2))), "unknown policy 'ctv-magic'"),
    (lambda: TVPolicy("ctv-fixed", np.eye(2)), "needs the known evaluation times"),
    (lambda: make_tv_problem(times="skewed", grid_size=3), "times must be one of .* got 'skewed'"),
    (lambda: make_tv_problem(noise=-1.0, grid_size=3), "noise must be a finite number > 0, got -1.0"),
    (lambda: ForgettingArmPosterior(np.eye(3), 0.1, 0.01).advance(-2.0), "dt must be a finite number >= 0, got -2.0"),
    (lambda: drifting_oracle(0.0, "poisson"), "oracle kind must be one of .* got 'poisson'"),
    (lambda: QCTVConfig(estimator="qpe"), "estimator must be one of .* got 'qpe'"),
    (lambda: run_tv_experiment({"problem": "tv-synthetic", "algorithms": ["ctv-x"]}, "/tmp/unused"),
     "unknown policy 'ctv-x'"),
])
def test_bad_options_one_line_value_error(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


@pytest.mark.slow
def test_quantum_runner_honest_calls_and_drift(tmp_path):
    cfg = {"problem": "tv-synthetic", "algorithms": ["q-ctv-gp-ucb", "tv-gp-ucb"], "budget": 400,
           "trials": 1, "problem_options": {"grid_size": 3, "sec_per_call": 0.05}}
    recs = run_tv_experiment(cfg, tmp_path)
    q = [r for r in recs if r["algorithm"] == "q-ctv-gp-ucb"]
    assert q and all(r["oracle_calls"] <= r["honest_calls"] for r in q)
    assert q[-1]["cum_calls"] == 400  # leftover='recommend' charges every call up to T
    assert all(r["method"] != "exploit" for r in q[:-1])
    assert q[0]["elapsed"] == pytest.approx(0.05 * q[0]["honest_calls"])  # the clock is calls x time
    c = [r for r in recs if r["algorithm"] == "tv-gp-ucb"]
    assert len(c) == 400 and c[-1]["time"] == pytest.approx(400 * 0.05)


@pytest.mark.slow
def test_time_varying_run_applies_mitigation(tmp_path):
    """Drifting problems run the one stage loop, so mitigation reaches their QMC stages."""
    cfg = {"problem": "tv-synthetic", "algorithms": ["q-ctv-gp-ucb"], "budget": 300, "trials": 1,
           "target": "aer:fake_torino", "mitigation": "rem", "problem_options": {"grid_size": 3}}
    recs = run_tv_experiment(cfg, tmp_path)
    staged = [r for r in recs if r["method"] not in ("exploit",)]
    assert staged and all(r["method"] == "iae+rem+pad" for r in staged)  # mitigated IAE, padded on the device model
    assert all(r["oracle_calls"] <= r["honest_calls"] for r in staged)
    assert recs[-1]["cum_calls"] == 300


TV_FILES = ("stages.jsonl", "summary.csv", "regret.png", "config.toml")


def _files(folder):
    return {name: (folder / name).read_bytes() for name in TV_FILES}


@pytest.mark.parametrize("algorithms, budget", [
    pytest.param(["ctv", "gp-ucb"], 40, id="rounds"),  # classical rounds: the world replays its noise
    pytest.param(["q-ctv-gp-ucb", "tv-gp-ucb"], 600, id="stages", marks=pytest.mark.slow),  # QMC stages
])
def test_crashed_time_varying_run_resumes_to_identical_files(tmp_path, monkeypatch, algorithms, budget):
    from qbo.experiments.journal import UnitJournal
    from qbo.experiments.runner import resume_experiment

    cfg = {"problem": "tv-synthetic", "algorithms": algorithms, "budget": budget, "trials": 2,
           "problem_options": {"grid_size": 4, "times": "biased", "init": 5, "time_noise": 0.1}}
    run_tv_experiment(cfg, tmp_path / "clean")
    appended, original = {"n": 0}, UnitJournal.append

    def flaky(self, entry):
        appended["n"] += 1
        if appended["n"] == 57:
            raise RuntimeError("crash")
        original(self, entry)

    monkeypatch.setattr(UnitJournal, "append", flaky)
    with pytest.raises(RuntimeError, match="crash"):
        run_tv_experiment(cfg, tmp_path / "crashed")
    monkeypatch.setattr(UnitJournal, "append", original)
    assert not (tmp_path / "crashed" / "stages.jsonl").exists()
    resume_experiment(tmp_path / "crashed")
    assert _files(tmp_path / "crashed") == _files(tmp_path / "clean")


@pytest.mark.slow
def test_sigkilled_time_varying_run_resumes_to_identical_files(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from typer.testing import CliRunner

    from qbo.cli.app import app

    args = ["--problem", "tv-synthetic", "--algorithms", "q-ctv-gp-ucb,ctv", "--budget", "1500", "--trials", "2"]
    config = tmp_path / "tv.toml"
    config.write_text('[problem_options]\ngrid_size = 4\ntimes = "biased"\ntime_noise = 0.1\n')
    clean = CliRunner().invoke(app, ["run", str(config), *args, "--out", str(tmp_path / "clean")])
    assert clean.exit_code == 0, clean.output
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "qbo.cli", "run", str(config), *args, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:  # kill once the third unit has begun: mid-run
        journals = sorted((out / "units").glob("*.jsonl")) if (out / "units").exists() else []
        if len(journals) >= 2 and journals[-1].stat().st_size > 2000:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # killed, not finished
    assert not (out / "stages.jsonl").exists()
    resumed = CliRunner().invoke(app, ["run", "--resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert _files(out) == _files(tmp_path / "clean")
