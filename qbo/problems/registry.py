"""Benchmark problems by name: ``make_problem("synthetic-gaussian", seed=3)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qbo.problems.automl import automl_svm
from qbo.problems.base import Problem
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
        lambda **o: _lengthscale_problem("berkenkamp", "gaussian", o), ("std", "num_arms", "seed", "qubits")),
    "berkenkamp-bernoulli": (
        lambda **o: _lengthscale_problem("berkenkamp", "bernoulli", o), ("num_arms", "seed")),
    "michalewicz-gaussian": (
        lambda **o: _lengthscale_problem("michalewicz", "gaussian", o), ("std", "num_arms", "dim", "seed", "qubits")),
    "michalewicz-bernoulli": (
        lambda **o: _lengthscale_problem("michalewicz", "bernoulli", o), ("num_arms", "dim", "seed")),
    "synthetic-bernoulli-centred": (
        lambda **o: squeezed("centred", **o), ("spread", "seed", "num_arms", "lengthscale")),
    "synthetic-bernoulli-top": (
        lambda **o: squeezed("top", **o), ("spread", "seed", "num_arms", "lengthscale")),
}

PROBLEMS: tuple[str, ...] = tuple(_BUILDERS)


def _lengthscale_problem(kind: str, noise: str, options: dict[str, Any]) -> Problem:
    """The length-scale benchmarks of Ziomek et al. (imported here: they build on Problem)."""
    from qbo.lengthscale import problems

    return getattr(problems, kind)(noise=noise, **options)


def make_problem(name: str, **options: Any) -> Problem:
    """Build a registered problem; one-line ValueError for an unknown name or option."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown problem {name!r}; valid names: {', '.join(PROBLEMS)}")
    builder, allowed = _BUILDERS[name]
    for key in options:
        if key not in allowed:
            raise ValueError(f"unknown option {key!r} for problem {name!r}; valid options: {', '.join(allowed)}")
    if name == "linear" and options.get("noise", "bernoulli") == "bernoulli":
        for key in _GAUSSIAN_ONLY:
            if key in options:
                raise ValueError(f"option {key!r} applies only to noise='gaussian' for problem 'linear'")
    return builder(**options)
