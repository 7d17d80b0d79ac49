"""Per-problem defaults for the policies, following the Q-BO seed's App. J where it says.

- synthetic-*: SE length scale 0.1, the scale the reward was drawn with (App. J does not
  state the model's length scale for this problem). GP-UCB's sigma multiplier is sqrt(2),
  the best of {1 + ln t, sqrt(2), 1} found by the authors on this problem.
- automl-svm: length scale 0.2 for Q-GP-UCB and 1.0 for GP-UCB (the authors' grid search),
  output scale 0.5 (App. J's sigma_0^2), GP-UCB multiplier 1 (their best).
- Classical GP-UCB's (and GP-TS's) noise variance lambda is the variance bound of the problem
  actually run (``qbo.problems.noise``): max a(1 - a) over the arms' mean range for Bernoulli
  rewards (1/4 only when that range contains 1/2), std^2 for Gaussian ones. Thompson
  sampling uses the Beta model for Bernoulli rewards and the known-variance Gaussian model
  (std^2) for Gaussian ones; KL-UCB and Thompson read rewards in the problem's window. Q-GP-UCB gets the budget T (for lambda = 1 + 2/T and
  m_bar) and the Lemma 1 noise case ('variance' for Gaussian rewards).
User options in the config override all of these.
"""

from __future__ import annotations

import math
from typing import Any

from qbo.problems.base import Problem
from qbo.problems.noise import noise_variance_bound

GP_POLICIES = ("q-gp-ucb", "gp-ucb")


def policy_options(algorithm: str, problem: Problem, budget: int, user: dict[str, Any]) -> dict[str, Any]:
    """The options ``make_policy`` receives for ``algorithm`` on ``problem``."""
    opts: dict[str, Any] = {}
    gaussian = problem.name.endswith("gaussian") or problem.name == "automl-svm" or problem.options.get("noise") == "gaussian"
    std = float(problem.options.get("std", 0.4 if problem.name.startswith("synthetic") else 0.1))
    if algorithm in GP_POLICIES:
        opts.update(_gp_defaults(algorithm, problem.name))
    if algorithm == "gp-ts":
        opts.update({k: v for k, v in _gp_defaults("gp-ucb", problem.name).items() if k != "beta"})
    if algorithm in ("gp-ucb", "gp-ts"):  # the variance bound of the problem actually run
        opts["noise"] = std**2 if gaussian else noise_variance_bound(problem)
    if algorithm == "thompson" and gaussian:
        opts.update({"prior": "gaussian", "noise": std**2})
    window = problem.shared_window or (0.0, 1.0)
    if algorithm in ("thompson", "kl-ucb"):
        opts.update({"low": window[0], "high": window[1]})
    if algorithm in ("q-gp-ucb", "q-linucb", "q-ucb-halve", "q-se"):
        opts["budget"] = budget
    if algorithm in ("q-ucb-halve", "q-se"):
        opts["reward_range"] = window[1] - window[0]
    if algorithm == "q-gp-ucb" and gaussian:
        opts["noise_case"] = "variance"
    return opts | dict(user)


def _gp_defaults(algorithm: str, problem_name: str) -> dict[str, Any]:
    if problem_name.startswith("synthetic"):
        return {"lengthscale": 0.1} | ({"beta": math.sqrt(2.0)} if algorithm == "gp-ucb" else {})
    if problem_name == "automl-svm":
        if algorithm == "gp-ucb":
            return {"lengthscale": 1.0, "outputscale": 0.5, "beta": 1.0}
        return {"lengthscale": 0.2, "outputscale": 0.5}
    return {}
