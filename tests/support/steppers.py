"""What the compiled-loop tests share (``qbo.algorithms.compiled.Stepper``): a problem's config,
instance and exact reward table; a stepper played in chunks; and one run with numba and
without it (``NUMBA_DISABLE_JIT``: the very same functions as Python, the fallback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from qbo.execution import make_executor
from qbo.experiments.assembly import problem_for_trial
from qbo.experiments.compact import reward_table
from qbo.experiments.config import ExperimentConfig

ROOT = Path(__file__).resolve().parents[2]


def setup(algorithm: str, problem: str, problem_options: dict, seed: int, budget: int, options: dict) -> tuple:
    """(config, problem instance of trial 0, its reward table on the exact executor)."""
    config = ExperimentConfig(problem=problem, problem_options=problem_options, algorithms=(algorithm,), budget=budget,
                              trials=1, seed=seed, algorithm_options={algorithm: options})
    instance = problem_for_trial(config, 0)
    return config, instance, reward_table(instance, make_executor("exact", seed=np.random.default_rng(seed)))


def play(stepper: Any, table: Any, seed: int, budget: int, chunks: tuple[int, ...] = (1, 37)) -> tuple:
    """``budget`` rounds in runs of ``chunks``, then the rest: (arms, rewards, the generator)."""
    rng, arms, values, done = np.random.default_rng(seed), np.empty(budget, np.int64), np.empty(budget), 0
    for count in chunks:
        stepper.run(count, table, rng, arms[done:], values[done:])
        done += count
    stepper.run(budget - done, table, rng, arms[done:], values[done:])
    return arms, values, rng


def assert_same_run_without_numba(tmp_path: Path, code: str, keys: tuple[str, ...]) -> None:
    """Run ``code`` (Python that saves an .npz to ``sys.argv[1]``) compiled and interpreted;
    the arrays under ``keys`` must be equal."""
    results = {}
    for name, extra in (("jit", {}), ("python", {"NUMBA_DISABLE_JIT": "1"})):
        env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
        subprocess.run([sys.executable, "-c", code, str(tmp_path / f"{name}.npz")], check=True, env=env, timeout=300)
        results[name] = np.load(tmp_path / f"{name}.npz")
    for key in keys:
        assert np.array_equal(results["jit"][key], results["python"][key]), key
