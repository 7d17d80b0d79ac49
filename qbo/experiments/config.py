"""Experiment configuration: a plain frozen dataclass that round-trips through TOML.

A config file looks like::

    problem = "synthetic-bernoulli"
    algorithms = ["q-gp-ucb", "gp-ucb"]
    budget = 10000
    trials = 10
    target = "exact"
    seed = 0
    estimator = "iae"          # QMC method of quantum policies: iae | auto | mc
    accounting = "honest"      # or "reference" (undercounts, see qbo.experiments.accounting)
    leftover = "recommend"     # after Alg. 1 line 5 stops: charge the rest at the recommended arm, or "stop"
    mitigation = "none"        # none | rem | zne | zne+rem, inside every QMC round (device-model targets)
    weights = "requested"      # Eq. (3) weights 1/eps^2 from the requested eps_s, or "achieved" half-widths

    [problem_options]          # passed to qbo.problems.make_problem
    std = 0.4

    [algorithm_options.q-gp-ucb]
    lengthscale = 0.1
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import tomli_w

from qbo.execution.targets import parse_target

from qbo.experiments.accounting import ACCOUNTINGS

LEFTOVERS = ("recommend", "stop")
ESTIMATORS = ("iae", "auto", "mc")
MITIGATIONS = ("none", "rem", "zne", "zne+rem")
WEIGHTS = ("requested", "achieved")


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that determines a run; a run folder's config.toml is this, resolved."""

    problem: str = "synthetic-bernoulli"
    algorithms: tuple[str, ...] = ("q-gp-ucb", "gp-ucb")
    budget: int = 10_000
    trials: int = 10
    target: str = "exact"
    seed: int = 0
    estimator: str = "iae"
    accounting: str = "honest"
    leftover: str = "recommend"
    mitigation: str = "none"
    weights: str = "requested"
    problem_options: dict[str, Any] = field(default_factory=dict)
    algorithm_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.algorithms, str) or not all(isinstance(a, str) for a in self.algorithms):
            raise ValueError(f"algorithms must be a list of names, e.g. [\"q-gp-ucb\", \"gp-ucb\"], got {self.algorithms!r}")
        object.__setattr__(self, "algorithms", tuple(self.algorithms))
        _check_int("budget", self.budget, 1)
        _check_int("trials", self.trials, 1)
        _check_int("seed", self.seed, 0)
        parse_target(self.target)  # one-line ValueError naming the target and the forms expected
        _check_choice("estimator", self.estimator, ESTIMATORS)
        _check_choice("accounting", self.accounting, ACCOUNTINGS)
        _check_choice("leftover", self.leftover, LEFTOVERS)
        _check_choice("mitigation", self.mitigation, MITIGATIONS)
        _check_choice("weights", self.weights, WEIGHTS)
        if self.mitigation != "none" and self.estimator != "iae":
            raise ValueError(f"mitigation '{self.mitigation}' needs estimator 'iae', got '{self.estimator}'")
        if not self.algorithms:
            raise ValueError("algorithms must name at least one algorithm, got none")
        for name in self.algorithm_options:
            if name not in self.algorithms:
                raise ValueError(f"algorithm_options names '{name}', which is not in algorithms {list(self.algorithms)}")

    def with_overrides(self, **overrides: Any) -> "ExperimentConfig":
        """A copy with the given (non-None) fields replaced."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def with_lengthscale(self, spec: str) -> "ExperimentConfig":
        """A copy whose GP policies all use the length-scale mode ``spec`` (e.g. 'lb')."""
        from qbo.experiments.defaults import GP_POLICIES
        from qbo.lengthscale.spec import parse_lengthscale

        parse_lengthscale(spec)  # one-line ValueError on a bad spec
        options = {k: dict(v) for k, v in self.algorithm_options.items()}
        for name in self.algorithms:
            if name in GP_POLICIES:
                options.setdefault(name, {})["lengthscale"] = spec
        return replace(self, algorithm_options=options)

    def to_toml(self) -> str:
        data = asdict(self)
        data["algorithms"] = list(self.algorithms)
        return tomli_w.dumps(data)


def load_config(path: str | Path) -> ExperimentConfig:
    """Read a TOML config; one-line ValueError for unreadable files or unknown keys."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"cannot read config '{path}': {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config '{path}' is not valid TOML: {exc}") from None
    known = {f.name for f in fields(ExperimentConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"config '{path}' has unknown key '{unknown[0]}', expected one of {sorted(known)}")
    try:
        return ExperimentConfig(**data)
    except TypeError as exc:
        raise ValueError(f"config '{path}': {exc}") from None


def _check_int(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
