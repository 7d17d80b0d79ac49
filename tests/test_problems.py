"""Benchmark problems: shapes, determinism, exact encoded means, the AutoML table, errors."""

from __future__ import annotations

import copy
import json
import pickle
from importlib import resources

import numpy as np
import pytest
from qiskit.quantum_info import Statevector

from qbo.oracles import bernoulli, default_window, gaussian
from qbo.oracles.gaussian import discretised_normal
from qbo.problems import (
    PROBLEMS, Problem, automl_svm, compute_svm_table, linear, linear_function, make_problem,
    svm_table, synthetic, synthetic_function,
)


def statevector_mean(oracle) -> float:
    """P(objective = 1) from the exact statevector, mapped to reward units."""
    a = float(Statevector(oracle.circuit).probabilities([oracle.objective])[1])
    return float(oracle.to_reward(a))


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text
    return text


# -- Problem ---------------------------------------------------------------------------------


def small_problem() -> Problem:
    return Problem.from_oracles("toy", [[0.0], [0.5], [1.0]], [bernoulli(0.2), bernoulli(0.7), bernoulli(0.5)])


def test_problem_basics():
    p = small_problem()
    assert (p.num_arms, p.dim) == (3, 1)
    assert p.best == 0.7 and p.best_arm == 1
    np.testing.assert_allclose(p.gaps, [0.5, 0.0, 0.2])
    assert p.regret(0) == pytest.approx(0.5) and p.regret(1) == 0.0
    assert p.oracle(2) is p.oracle(2) is p.oracles[2]
    assert p.shared_window == (0.0, 1.0)
    for arr in (p.arms, p.means, p.gaps):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 1.0


def test_problem_value_semantics():
    p, q = small_problem(), small_problem()
    assert p == q and hash(p) == hash(q) and len({p: 1, q: 2}) == 1
    assert copy.copy(p) is p and copy.deepcopy(p) is p
    r = pickle.loads(pickle.dumps(p))
    assert r == p and not r.arms.flags.writeable and not r.means.flags.writeable
    other = Problem.from_oracles("toy", [[0.0], [0.5], [1.0]], [bernoulli(0.2), bernoulli(0.7), bernoulli(0.6)])
    assert other != p


def test_problem_copies_user_arrays():
    arms = np.array([[0.0, 1.0], [1.0, 0.0]])
    p = Problem.from_factory("f", arms, lambda x: bernoulli(float(x.mean() * x[0])))
    arms[0, 0] = 0.5
    assert p.arms[0, 0] == 0.0
    np.testing.assert_allclose(p.means, [0.0, 0.5])


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("", [[0.0]], [bernoulli(0.1)]), "''"),
        (("x", [[0.0], [1.5]], [bernoulli(0.1)] * 2), "1.5"),
        (("x", [[0.0], [np.nan]], [bernoulli(0.1)] * 2), "rows [1]"),
        (("x", [[0.2], [0.2]], [bernoulli(0.1)] * 2), "row 0"),
        (("x", np.zeros((0, 1)), []), "(0, 1)"),
        (("x", [[0.0], [1.0]], [bernoulli(0.1)]), "got 1 oracles"),
        (("x", [[0.0]], ["bernoulli:0.1"]), "oracle 0 must be an Oracle, got str"),
        (("x", [[0.0]], bernoulli(0.1)), "got Oracle"),
    ],
)
def test_problem_rejects_bad_input(args, fragment):
    with pytest.raises(ValueError) as exc:
        Problem.from_oracles(*args)
    assert fragment in one_line(exc)


def test_problem_rejects_bad_index_and_factory():
    p = small_problem()
    for bad in (3, -1, 1.0, True):
        with pytest.raises(ValueError) as exc:
            p.oracle(bad)
        assert repr(bad) in one_line(exc)
    assert p.oracle(np.int64(1)) is p.oracles[1]
    with pytest.raises(ValueError) as exc:
        Problem.from_factory("x", [[0.0]], "bernoulli")
    assert "str" in one_line(exc)


# -- synthetic -------------------------------------------------------------------------------


def test_synthetic_function_scaled_to_unit_interval():
    x, f = synthetic_function(seed=0)
    np.testing.assert_array_equal(x, np.linspace(0, 1, 20))
    assert f.shape == (20,) and f.min() == 0.0 and f.max() == 1.0
    _, f1 = synthetic_function(seed=1)
    assert f1.min() == 0.0 and f1.max() == 1.0 and not np.allclose(f, f1)


@pytest.mark.parametrize("noise", ["bernoulli", "gaussian"])
def test_synthetic_shapes_and_determinism(noise):
    p = synthetic(noise=noise, seed=3)
    assert p.arms.shape == (20, 1) and p.means.shape == (20,)
    np.testing.assert_array_equal(p.arms[:, 0], np.linspace(0, 1, 20))
    assert p == synthetic(noise=noise, seed=3)
    np.testing.assert_array_equal(p.means, synthetic(noise=noise, seed=3).means)
    assert not np.allclose(p.means, synthetic(noise=noise, seed=4).means)
    assert np.all((p.means >= 0) & (p.means <= 1))


def test_synthetic_bernoulli_means_are_exactly_f():
    _, f = synthetic_function(seed=2)
    p = synthetic("bernoulli", seed=2)
    np.testing.assert_array_equal(p.means, f)
    assert p.shared_window == (0.0, 1.0)
    for i in (0, int(np.argmax(f)), int(np.argmin(f)), 11):
        assert p.oracle(i).num_qubits == 1
        assert statevector_mean(p.oracle(i)) == pytest.approx(p.means[i], abs=1e-12)


def test_synthetic_gaussian_shared_window_and_exact_means():
    _, f = synthetic_function(seed=0)
    p = synthetic("gaussian", std=0.4, seed=0)
    assert p.shared_window == default_window(0.4)
    assert all(p.oracle(i).num_qubits == 7 for i in range(p.num_arms))  # 6 outcome + objective
    assert np.max(np.abs(p.means - f)) < 1e-3
    for i in (0, p.best_arm, int(np.argmin(f)), 13):
        values, probs = discretised_normal(f[i], 0.4, 6, default_window(0.4))
        assert p.means[i] == pytest.approx(float(values @ probs), abs=1e-12)
        assert statevector_mean(p.oracle(i)) == pytest.approx(p.means[i], abs=1e-9)


# -- AutoML ----------------------------------------------------------------------------------


def test_automl_table_recomputes_exactly():
    shipped = json.loads(resources.files("qbo.problems").joinpath("data", "automl_svm.json").read_text())
    fresh = compute_svm_table(seed=0)
    assert fresh["correct"] == shipped["correct"], (fresh["sklearn_version"], shipped["sklearn_version"])
    np.testing.assert_allclose(fresh["accuracy"], shipped["accuracy"], rtol=0, atol=1e-12)
    assert shipped["split"]["n_validation"] == 171 and shipped["C"] == list(np.logspace(-4, 0, 5))
    assert svm_table(0) == shipped


def test_automl_problem():
    p = automl_svm()
    acc = np.asarray(svm_table(0)["accuracy"]).ravel()
    assert p.arms.shape == (25, 2)
    levels = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(p.arms, np.array([[a, b] for a in levels for b in levels]))
    assert p.shared_window == default_window(0.1)
    assert np.max(np.abs(p.means - acc)) < 1e-3
    assert int(np.argmax(acc)) == p.best_arm
    for i in (0, p.best_arm, 17):
        assert statevector_mean(p.oracle(i)) == pytest.approx(p.means[i], abs=1e-9)
    assert p == automl_svm(seed=0)


# -- linear ----------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", ["bernoulli", "gaussian"])
def test_linear(noise):
    p = linear(noise=noise, seed=1)
    arms, w, c = linear_function(seed=1)
    assert p.arms.shape == (25, 2) and len(np.unique(p.arms, axis=0)) == 25
    np.testing.assert_array_equal(p.arms, arms)
    f = arms @ w + c
    assert f.min() == pytest.approx(0.1) and f.max() == pytest.approx(0.9)
    tol = 1e-12 if noise == "bernoulli" else 1e-3
    assert np.max(np.abs(p.means - f)) < tol
    i = p.best_arm
    assert statevector_mean(p.oracle(i)) == pytest.approx(p.means[i], abs=1e-9)
    np.testing.assert_array_equal(linear(noise=noise, seed=1).means, p.means)
    assert not np.allclose(linear(noise=noise, seed=2).means, p.means)


def test_linear_random_layout_and_errors():
    p = linear(dim=3, num_arms=10, layout="random", seed=0)
    assert p.arms.shape == (10, 3)
    with pytest.raises(ValueError) as exc:
        linear(num_arms=24)
    assert "24" in one_line(exc)
    with pytest.raises(ValueError) as exc:
        linear(layout="spiral")
    assert "'spiral'" in one_line(exc)


# -- registry --------------------------------------------------------------------------------


@pytest.mark.slow
def test_registry_builds_every_problem_and_roundtrips_options():
    assert PROBLEMS == (
        "synthetic-bernoulli", "synthetic-gaussian", "automl-svm", "linear",
        "berkenkamp-gaussian", "berkenkamp-bernoulli", "michalewicz-gaussian", "michalewicz-bernoulli",
        "synthetic-bernoulli-centred", "synthetic-bernoulli-top",
    )
    for name in PROBLEMS:
        p = make_problem(name)
        assert p.name == name
        assert make_problem(name, **p.options) == p
    assert make_problem("synthetic-gaussian", seed=5, std=0.2) == synthetic("gaussian", std=0.2, seed=5)


@pytest.mark.parametrize(
    "name, options, fragment",
    [
        ("synthetic", {}, "'synthetic'"),
        ("synthetic-bernoulli", {"std": 0.1}, "'std'"),
        ("automl-svm", {"lengthscale": 0.1}, "'lengthscale'"),
        ("linear", {"std": 0.1}, "'std'"),
        ("synthetic-gaussian", {"std": -1.0}, "-1.0"),
        ("synthetic-gaussian", {"seed": -2}, "-2"),
        ("synthetic-bernoulli", {"num_arms": 1}, "1"),
        ("synthetic-bernoulli", {"lengthscale": 0}, "0"),
        ("automl-svm", {"qubits": 0}, "0"),
        ("linear", {"noise": "poisson"}, "'poisson'"),
        ("linear", {"dim": 2.5}, "2.5"),
    ],
)
def test_registry_rejects_bad_names_and_options(name, options, fragment):
    with pytest.raises(ValueError) as exc:
        make_problem(name, **options)
    text = one_line(exc)
    assert fragment in text
    if name == "synthetic":
        assert all(n in text for n in PROBLEMS)


def test_gaussian_arms_share_one_window():
    for p in (make_problem("synthetic-gaussian", std=0.3), make_problem("automl-svm"),
              make_problem("linear", noise="gaussian", std=0.2)):
        windows = {(p.oracle(i).low, p.oracle(i).high) for i in range(p.num_arms)}
        assert len(windows) == 1 and p.shared_window in windows
    assert gaussian(0.5, 0.3).low == make_problem("synthetic-gaussian", std=0.3).shared_window[0]
