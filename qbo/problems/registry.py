"""Every benchmark problem by name: ``make_problem("synthetic-gaussian", seed=3)``.

Finite-arm problems (``Problem``, names in ``PROBLEMS``) and the drifting ones (``TVProblem``,
names in ``DRIFTING``); ``make_problem`` builds any of ``ALL_PROBLEMS``.
``takes_seed(name)`` says whether a problem draws with a seed (the runner gives trial t the
seed ``config.seed + t``); the drifting problem draws its realisations per run unit instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qbo.problems.automl import automl_svm
from qbo.problems.base import Problem
from qbo.problems.drifting import TVProblem, make_tv_problem
from qbo.problems.lengthscale_benchmarks import berkenkamp, michalewicz
from qbo.problems.linear import linear
from qbo.problems.squeezed import squeezed
from qbo.problems.synthetic import synthetic

_GAUSSIAN_ONLY = ("std", "qubits")

# name -> (builder, the options it accepts)
_BUILDERS: dict[str, tuple[Callable[..., Problem], tuple[str, ...]]] = {
    "synthetic-bernoulli": (
        lambda **o: synthetic(noise="bernoulli", **o), ("seed", "num_arms", "lengthscale")),
    "synthetic-gaussian": (
        lambda **o: synthetic(noise="gaussian", **o), ("std", "seed", "num_arms", "lengthscale", "qubits")),
    "automl-svm": (automl_svm, ("std", "seed", "qubits")),
    "linear": (linear, ("dim", "num_arms", "seed", "noise", "std", "qubits", "layout")),
    "berkenkamp-gaussian": (
        lambda **o: berkenkamp(noise="gaussian", **o), ("std", "num_arms", "seed", "qubits")),
    "berkenkamp-bernoulli": (lambda **o: berkenkamp(noise="bernoulli", **o), ("num_arms", "seed")),
    "michalewicz-gaussian": (
        lambda **o: michalewicz(noise="gaussian", **o), ("std", "num_arms", "dim", "seed", "qubits")),
    "michalewicz-bernoulli": (lambda **o: michalewicz(noise="bernoulli", **o), ("num_arms", "dim", "seed")),
    "synthetic-bernoulli-centred": (
        lambda **o: squeezed("centred", **o), ("spread", "seed", "num_arms", "lengthscale")),
    "synthetic-bernoulli-top": (
        lambda **o: squeezed("top", **o), ("spread", "seed", "num_arms", "lengthscale")),
    "tv-synthetic": (
        lambda **o: make_tv_problem("tv-synthetic", **o),
        ("kernel", "times", "grid_size", "lengthscale", "outputscale", "lam", "noise", "uniform_time",
         "time_noise", "init", "oracle", "window", "std", "sec_per_call", "overhead", "clock")),
}

DRIFTING: tuple[str, ...] = ("tv-synthetic",)
PROBLEMS: tuple[str, ...] = tuple(n for n in _BUILDERS if n not in DRIFTING)  # the static (finite-arm) ones
ALL_PROBLEMS: tuple[str, ...] = tuple(_BUILDERS)


def is_drifting(name: str) -> bool:
    """True for a time-varying problem (its reward drifts while a run spends time)."""
    return name in DRIFTING


def takes_seed(name: str) -> bool:
    """True when problem ``name`` is drawn with a ``seed`` option."""
    return name in _BUILDERS and "seed" in _BUILDERS[name][1]


def make_problem(name: str, **options: Any) -> Problem | TVProblem:
    """Build a registered problem; one-line ValueError for an unknown name or option."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown problem {name!r}; valid names: {', '.join(ALL_PROBLEMS)}")
    builder, allowed = _BUILDERS[name]
    for key in options:
        if key not in allowed:
            raise ValueError(f"unknown option {key!r} for problem {name!r}; valid options: {', '.join(allowed)}")
    if name == "linear" and options.get("noise", "bernoulli") == "bernoulli":
        for key in _GAUSSIAN_ONLY:
            if key in options:
                raise ValueError(f"option {key!r} applies only to noise='gaussian' for problem 'linear'")
    return builder(**options)
