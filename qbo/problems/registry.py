"""Every benchmark problem by name: ``make_problem("synthetic-gaussian", seed=3)``.

Finite-arm problems (``Problem``, names in ``PROBLEMS``) and the drifting ones (``TVProblem``,
names in ``DRIFTING``); ``make_problem`` builds any of ``ALL_PROBLEMS``.
Each name's ``ProblemEntry`` (``problem_entry``) holds its metadata: options, summary,
noise kind, the GP settings its authors tuned (Q-BO seed App. J) and the default budget of a
classical run.  ``takes_seed(name)`` says whether a problem draws with a seed (the runner gives trial t the
seed ``config.seed + t``); the drifting problem draws its realisations per run unit instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from qbo.problems.automl import automl_svm
from qbo.problems.base import Problem
from qbo.problems.custom import custom_problem, is_custom
from qbo.problems.drifting import TVProblem, make_tv_problem
from qbo.problems.lengthscale_benchmarks import berkenkamp, michalewicz
from qbo.problems.linear import linear
from qbo.problems.squeezed import squeezed
from qbo.problems.synthetic import synthetic

_GAUSSIAN_ONLY = ("std", "qubits")


@dataclass(frozen=True)
class ProblemEntry:
    """A registered problem: its builder, the options it accepts, a one-line summary, whether
    it drifts, its reward noise (Gaussian or Bernoulli, and the std when the options give
    none), the GP settings its authors tuned per policy, and the default budget of a run with
    classical policies only (None: ``qbo.experiments.config.DEFAULT_BUDGET``)."""

    build: Callable[..., Problem | TVProblem]
    options: tuple[str, ...]
    summary: str
    drifting: bool = False
    gaussian: bool = False
    std: float = 0.1
    gp_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    classical_budget: int | None = None

    @property
    def takes_seed(self) -> bool:
        return "seed" in self.options


# synthetic-*: SE length scale 0.1, the scale the reward was drawn with (App. J does not state
# the model's); GP-UCB's multiplier sqrt(2), the best of {1 + ln t, sqrt(2), 1} the authors found;
# tv-gp-ucb (static: eps = 0, GP-UCB with Bogunovic et al.'s beta) the same model.
_SYNTHETIC_GP = {"q-gp-ucb": {"lengthscale": 0.1}, "gp-ucb": {"lengthscale": 0.1, "beta": math.sqrt(2.0)},
                 "gp-ts": {"lengthscale": 0.1}, "tv-gp-ucb": {"lengthscale": 0.1}}
# automl-svm: the authors' grid search (l = 0.2 for Q-GP-UCB, 1.0 for GP-UCB, output scale 0.5 =
# App. J's sigma_0^2, GP-UCB multiplier 1)
_AUTOML_GP = {"q-gp-ucb": {"lengthscale": 0.2, "outputscale": 0.5},
              "gp-ucb": {"lengthscale": 1.0, "outputscale": 0.5, "beta": 1.0},
              "gp-ts": {"lengthscale": 1.0, "outputscale": 0.5},
              "tv-gp-ucb": {"lengthscale": 1.0, "outputscale": 0.5}}
# tv-synthetic (seed 000 Sec. 5): gp-ucb is the time-unaware baseline (Matern-5/2, l = 0.2,
# Bogunovic et al.'s beta); the time-unaware q-gp-ucb the SE kernel with l = 0.2, eps_min = 1e-3
_DRIFTING_GP = {"gp-ucb": {"kernel": "matern52", "lengthscale": 0.2, "outputscale": 1.0, "beta": "bogunovic"},
                "q-gp-ucb": {"kernel": "se", "lengthscale": 0.2, "eps_min": 1e-3}}
DEFAULT_ROUNDS = 130  # the seed's horizon (30 random + 100 rounds) of a classical drifting run

_ENTRIES: dict[str, ProblemEntry] = {
    "synthetic-bernoulli": ProblemEntry(
        lambda **o: synthetic(noise="bernoulli", **o), ("seed", "num_arms", "lengthscale"),
        "GP sample on a grid, Bernoulli rewards (Dai et al. 2023, Sec. 6)", std=0.4, gp_defaults=_SYNTHETIC_GP),
    "synthetic-gaussian": ProblemEntry(
        lambda **o: synthetic(noise="gaussian", **o), ("std", "seed", "num_arms", "lengthscale", "qubits"),
        "GP sample on a grid, Gaussian rewards", gaussian=True, std=0.4, gp_defaults=_SYNTHETIC_GP),
    "automl-svm": ProblemEntry(automl_svm, ("std", "seed", "qubits"), "SVM hyperparameter tuning (Dai et al. App. J)",
                               gaussian=True, gp_defaults=_AUTOML_GP),
    "linear": ProblemEntry(linear, ("dim", "num_arms", "seed", "noise", "std", "qubits", "layout"),
                           "linear reward on random arms (Q-LinUCB)"),
    "berkenkamp-gaussian": ProblemEntry(
        lambda **o: berkenkamp(noise="gaussian", **o), ("std", "num_arms", "seed", "qubits"),
        "Berkenkamp et al.'s 1-d function, Gaussian rewards", gaussian=True),
    "berkenkamp-bernoulli": ProblemEntry(lambda **o: berkenkamp(noise="bernoulli", **o), ("num_arms", "seed"),
                                         "Berkenkamp et al.'s 1-d function, Bernoulli rewards"),
    "michalewicz-gaussian": ProblemEntry(
        lambda **o: michalewicz(noise="gaussian", **o), ("std", "num_arms", "dim", "seed", "qubits"),
        "Michalewicz function, Gaussian rewards", gaussian=True),
    "michalewicz-bernoulli": ProblemEntry(lambda **o: michalewicz(noise="bernoulli", **o), ("num_arms", "dim", "seed"),
                                          "Michalewicz function, Bernoulli rewards"),
    "synthetic-bernoulli-centred": ProblemEntry(
        lambda **o: squeezed("centred", **o), ("spread", "seed", "num_arms", "lengthscale"),
        "synthetic-bernoulli squeezed around 1/2", std=0.4, gp_defaults=_SYNTHETIC_GP),
    "synthetic-bernoulli-top": ProblemEntry(
        lambda **o: squeezed("top", **o), ("spread", "seed", "num_arms", "lengthscale"),
        "synthetic-bernoulli squeezed near 1", std=0.4, gp_defaults=_SYNTHETIC_GP),
    "tv-synthetic": ProblemEntry(
        lambda **o: make_tv_problem("tv-synthetic", **o),
        ("kernel", "times", "grid_size", "lengthscale", "outputscale", "lam", "noise", "uniform_time",
         "time_noise", "init", "oracle", "window", "std", "sec_per_call", "overhead", "clock"),
        "drifting GP reward, non-constant evaluation time (Imamura et al., seed 000)", drifting=True,
        gp_defaults=_DRIFTING_GP, classical_budget=DEFAULT_ROUNDS),
}

DRIFTING: tuple[str, ...] = tuple(n for n, e in _ENTRIES.items() if e.drifting)
PROBLEMS: tuple[str, ...] = tuple(n for n in _ENTRIES if n not in DRIFTING)  # the static (finite-arm) ones
ALL_PROBLEMS: tuple[str, ...] = tuple(_ENTRIES)


def problem_entry(name: str) -> ProblemEntry | None:
    """The entry of a registered problem, None for any other name."""
    return _ENTRIES.get(name)


def is_drifting(name: str) -> bool:
    """True for a time-varying problem (its reward drifts while a run spends time)."""
    return name in DRIFTING


def takes_seed(name: str) -> bool:
    """True when problem ``name`` is drawn with a ``seed`` option (a user's factory always is)."""
    return is_custom(name) or (name in _ENTRIES and _ENTRIES[name].takes_seed)


def make_problem(name: str, path: str | None = None, **options: Any) -> Problem | TVProblem:
    """Build a registered problem, or a user's ``module:factory`` (``qbo.problems.custom``,
    its module looked up in ``path`` first); one-line ValueError for an unknown name or option."""
    if is_custom(name):
        return custom_problem(name, path=path, **options)
    if name not in _ENTRIES:
        raise ValueError(f"unknown problem {name!r}; valid names: {', '.join(ALL_PROBLEMS)}")
    builder, allowed = _ENTRIES[name].build, _ENTRIES[name].options
    for key in options:
        if key not in allowed:
            raise ValueError(f"unknown option {key!r} for problem {name!r}; valid options: {', '.join(allowed)}")
    if name == "linear" and options.get("noise", "bernoulli") == "bernoulli":
        for key in _GAUSSIAN_ONLY:
            if key in options:
                raise ValueError(f"option {key!r} applies only to noise='gaussian' for problem 'linear'")
    return builder(**options)
