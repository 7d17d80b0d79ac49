"""``optimize``: one Q-BO (or classical) run on your own arms and oracles, in memory.

In the spirit of Ax's ``optimize`` and BoTorch's loop tutorials: hand over the arms (features
in [0, 1]^d) and one ``qbo.oracles.Oracle`` per arm, get back the best arm found, the rewards
observed and every stage record. The unit is assembled as ``qbo run`` assembles one
(``qbo.experiments.assembly``): the same policy defaults, clock, executor and stage loop
(Dai et al. 2023, Alg. 1 for ``q-gp-ucb``), honestly counted. For journals, resume, trials,
summaries and plots, name the factory in a config instead (``problem = "module:factory"``,
docs/runs.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from qbo.experiments.assembly import Unit, stage_settings, unit_executor, unit_parts
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.summary import best_arm_found
from qbo.experiments.trial import run_stages
from qbo.oracles.base import Oracle
from qbo.problems.base import Problem

__all__ = ["OptimizeResult", "optimize"]


@dataclass(frozen=True)
class OptimizeResult:
    """What one run found: the best arm (the policy's final recommendation, else the arm with
    the highest mean estimate), its features, the mean reward observed at it, the oracle calls
    charged, the exact regret where the means are known (else None) and every stage record."""

    best_arm: int
    best_features: np.ndarray
    best_reward: float | None
    oracle_calls: int
    regret: float | None
    records: list[dict[str, Any]]


def optimize(
    arms: Any, oracles: Sequence[Oracle] | None = None, *, algorithm: str = "q-gp-ucb", budget: int = 10_000,
    seed: int = 0, target: str = "exact", estimator: str = "iae", options: dict[str, Any] | None = None,
    name: str = "user-problem",
) -> OptimizeResult:
    """Run ``algorithm`` for ``budget`` oracle calls on ``arms`` (m x d) with ``oracles`` (one
    per arm), or on a ``Problem`` passed as ``arms``; ``options`` are the policy's options
    (``qbo run --help`` lists the policies); one-line ValueError on bad input."""
    problem = arms if isinstance(arms, Problem) else Problem.from_oracles(name, arms, list(oracles or []))
    config = ExperimentConfig(problem=problem.name, algorithms=(algorithm,), budget=budget, trials=1, seed=seed,
                              target=target, estimator=estimator,
                              algorithm_options={algorithm: dict(options)} if options else {})
    unit = Unit(0, algorithm)
    parts = unit_parts(config, unit, problem)
    rng = np.random.default_rng(unit.seed(config.seed))
    executor = unit_executor(config, rng)
    records = list(run_stages(parts.problem, parts.policy, executor, stage_settings(config), clock=parts.clock))
    best, reward = best_arm_found(records)
    last = records[-1]
    return OptimizeResult(best, np.array(problem.arms[best]), reward, last["cum_calls"], last["cum_regret"], records)


