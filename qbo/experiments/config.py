"""Experiment configuration: one frozen pydantic model that round-trips through TOML.

A config file looks like::

    problem = "synthetic-bernoulli"  # a registered name, or "package.module:factory" (qbo.problems.custom)
    algorithms = ["q-gp-ucb", "gp-ucb"]
    budget = 10000             # default: 10,000, or the problem's classical_budget when every policy is classical
    trials = 10
    target = "exact"
    seed = 0
    estimator = "auto"         # QMC method of quantum policies: auto | iae | mlae | mc | lrae (qbo.qmc.METHODS)
    accounting = "honest"      # or "reference" (undercounts, see qbo.experiments.accounting)
    leftover = "recommend"     # after Alg. 1 line 5 stops: charge the rest at the recommended arm, or "stop"
    mitigation = "none"        # none | rem | zne | zne+rem, inside every QMC round (device-model targets; mlae: zne, zne+rem)
    weights = "requested"      # Eq. (3) weights 1/eps^2 from the requested eps_s, or "achieved" half-widths
    problem_path = "..."       # a "module:factory" problem: the folder searched first for its
                               # module (load_config sets the config file's folder)

    [problem_options]          # passed to qbo.problems.make_problem (or to a user's factory)
    std = 0.4

    [algorithm_options.q-gp-ucb]
    lengthscale = 0.1

    [hardware]                 # fake:/ibm: targets only: mode and retries (docs/runs.md, "Hardware settings")
    mode = "batch"

``ExperimentConfig`` is the one declaration of these keys: types, ranges and limits are its
pydantic fields (``qbo.limits``), the choices come from the lists their modules own
(``qbo.qmc``, ``qbo.mitigation``, ``qbo.execution.jobs``).  When the ``[hardware]`` table is
empty, the run folder's ``execution.json`` (written by ``qbo submit``, with the caps and
instance as well) gives the mode and retries.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Optional

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictInt, StrictStr, ValidationError, field_validator

from qbo.algorithms.registry import POLICIES
from qbo.errors import BadFile, BadInput
from qbo.execution.jobs import MODES as HARDWARE_MODES
from qbo.execution.targets import parse_target
from qbo.experiments.accounting import ACCOUNTINGS
from qbo.experiments.schema import Name, Options, nesting_depth, read_config_text
from qbo.limits import BUDGET_MAX, CONFIG_MAX_DEPTH, PATH_MAX_CHARS, SEED_MAX, TRIALS_MAX
from qbo.mitigation import NAMES as MITIGATIONS
from qbo.problems.custom import SPEC_FORM, check_spec, is_custom
from qbo.problems.registry import problem_entry
from qbo.qmc import METHODS as ESTIMATORS

__all__ = ["ESTIMATORS", "DEFAULT_BUDGET", "ExperimentConfig", "check_config_data", "load_config"]

LEFTOVERS = ("recommend", "stop")
WEIGHTS = ("requested", "achieved")
HARDWARE_KEYS = ("mode", "max_attempts", "timeout_s", "base_delay", "factor", "max_delay")
DEFAULT_BUDGET = 10_000

RANGES = {"budget": (1, BUDGET_MAX, "BUDGET_MAX"), "trials": (1, TRIALS_MAX, "TRIALS_MAX"), "seed": (0, SEED_MAX, "SEED_MAX")}


class ExperimentConfig(BaseModel):
    """Everything that determines a run; a run folder's config.toml is this, resolved.

    Built from keywords (``ExperimentConfig(budget=500)``) or a TOML file (``load_config``);
    the first violation is one line (``BadInput``/``ValueError``) naming the key and what was
    expected. ``budget`` left out resolves to DEFAULT_BUDGET, or to the problem's
    ``classical_budget`` when every policy is classical (the drifting seed's rounds)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    problem: Name = "synthetic-bernoulli"
    algorithms: Annotated[tuple[Name, ...], Field(min_length=1, max_length=32)] = ("q-gp-ucb", "gp-ucb")
    budget: Optional[Annotated[StrictInt, Field(ge=1, le=BUDGET_MAX)]] = None
    trials: Annotated[StrictInt, Field(ge=1, le=TRIALS_MAX)] = 10
    target: Name = "exact"
    seed: Annotated[StrictInt, Field(ge=0, le=SEED_MAX)] = 0
    estimator: Name = "auto"
    accounting: Name = "honest"
    leftover: Name = "recommend"
    mitigation: Name = "none"
    weights: Name = "requested"
    problem_options: Options = {}
    algorithm_options: Annotated[dict[Name, Options], Field(max_length=32)] = {}
    hardware: Options = {}  # [hardware]: mode and retries of fake:/ibm: runs
    problem_path: Optional[Annotated[StrictStr, Field(min_length=1, max_length=PATH_MAX_CHARS)]] = None
    _budget_given: bool = PrivateAttr(True)

    @field_validator("algorithms", mode="before")
    @classmethod
    def _as_tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    def __init__(self, _source: str = "config", **data: Any) -> None:
        depth = nesting_depth(data)
        if depth > CONFIG_MAX_DEPTH:
            raise BadInput(f"{_source} is nested {depth} levels deep, more than {CONFIG_MAX_DEPTH} (limit CONFIG_MAX_DEPTH)")
        if isinstance(data.get("algorithms"), str):
            raise BadInput(f"{_source}: algorithms must be a list of names, e.g. [\"q-gp-ucb\", \"gp-ucb\"], got {data['algorithms']!r}")
        given = data.get("budget") is not None
        if not given:
            data = data | {"budget": DEFAULT_BUDGET}  # validated as given, resolved below
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise BadInput(f"{_source}: {_first_error(exc)}") from None
        if not given:
            object.__setattr__(self, "budget", _default_budget(self.problem, self.algorithms))
        self._budget_given = given
        try:
            self._check()
        except BadInput:
            raise
        except ValueError as exc:  # each check's one line, as bad input (exit 2), whatever raised it
            raise BadInput(str(exc)) from None

    def _check(self) -> None:
        if is_custom(self.problem):
            check_spec(self.problem)
        elif self.problem_path is not None:
            raise ValueError(f"problem_path is for a {SPEC_FORM} problem, got problem {self.problem!r}")
        parse_target(self.target)  # one-line ValueError naming the target and the forms expected
        _check_choice("estimator", self.estimator, ESTIMATORS)
        _check_choice("accounting", self.accounting, ACCOUNTINGS)
        _check_choice("leftover", self.leftover, LEFTOVERS)
        _check_choice("mitigation", self.mitigation, MITIGATIONS)
        _check_choice("weights", self.weights, WEIGHTS)
        if self.mitigation != "none" and self.estimator not in ("auto", "iae", "mlae"):
            raise ValueError(f"mitigation '{self.mitigation}' needs estimator 'auto' (then IAE), 'iae' or 'mlae', "
                             f"got '{self.estimator}'")
        if self.estimator == "mlae" and self.mitigation == "rem":
            raise ValueError("mitigation 'rem' with estimator 'mlae': MLAE's likelihood already holds the readout "
                             "confusion; use mitigation 'zne' or 'zne+rem' (folded powers as likelihood terms), or none")
        for name in self.algorithm_options:
            if name not in self.algorithms:
                raise ValueError(f"algorithm_options names '{name}', which is not in algorithms {list(self.algorithms)}")
        for key in self.hardware:
            if key not in HARDWARE_KEYS:
                raise ValueError(f"hardware has unknown key '{key}', expected one of {', '.join(HARDWARE_KEYS)}")
        if "mode" in self.hardware:
            _check_choice("hardware mode", self.hardware["mode"], HARDWARE_MODES)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExperimentConfig) and all(
            getattr(self, name) == getattr(other, name) for name in type(self).model_fields)

    def __hash__(self) -> int:
        return hash(self.to_toml())

    def fields(self) -> dict[str, Any]:
        """The keys as given (a budget left out stays out, so that overrides resolve it anew)."""
        data = {name: getattr(self, name) for name in type(self).model_fields}
        if not self._budget_given:
            del data["budget"]
        return data

    def with_overrides(self, **overrides: Any) -> "ExperimentConfig":
        """A copy with the given (non-None) fields replaced."""
        return ExperimentConfig(**(self.fields() | {k: v for k, v in overrides.items() if v is not None}))

    def with_lengthscale(self, spec: str) -> "ExperimentConfig":
        """A copy whose GP policies all use the length-scale mode ``spec`` (e.g. 'lb')."""
        from qbo.algorithms.lengthscale.spec import parse_lengthscale

        parse_lengthscale(spec)  # one-line ValueError on a bad spec
        options = {k: dict(v) for k, v in self.algorithm_options.items()}
        for name in self.algorithms:
            if name in POLICIES and POLICIES[name].lengthscale_modes:
                options.setdefault(name, {})["lengthscale"] = spec
        return ExperimentConfig(**(self.fields() | {"algorithm_options": options}))

    def to_toml(self) -> str:
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data["algorithms"] = list(self.algorithms)
        if not self.hardware:  # config.toml of a simulator run stays as it was
            del data["hardware"]
        if self.problem_path is None:
            del data["problem_path"]
        return tomli_w.dumps(data)


def _default_budget(problem: str, algorithms: tuple[str, ...]) -> int:
    """DEFAULT_BUDGET, or the problem's classical budget for a run whose policies are all
    classical (a classical drifting run counts rounds)."""
    entry = problem_entry(problem)
    classical = all(a in POLICIES and not POLICIES[a].quantum for a in algorithms)
    if entry is not None and entry.classical_budget is not None and classical:
        return entry.classical_budget
    return DEFAULT_BUDGET


def check_config_data(data: dict[str, Any], source: str = "config") -> None:
    """Refuse a config mapping with unknown keys, wrong types, values out of range or deep nesting."""
    ExperimentConfig(source, **data)


def load_config(path: str | Path) -> ExperimentConfig:
    """Read a TOML config; one-line ValueError for unreadable files or unknown keys."""
    path = Path(path)
    try:
        data = tomllib.loads(read_config_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise BadFile(f"config '{path}' is not valid TOML: {exc}") from None
    except RecursionError:
        raise BadFile(f"config '{path}' is nested too deeply (limit CONFIG_MAX_DEPTH = {CONFIG_MAX_DEPTH})") from None
    if not data:
        raise BadFile(f"config '{path}' is empty; write the keys to change (see qbo.experiments.config) or omit the file")
    if isinstance(data.get("problem"), str) and is_custom(data["problem"]) and "problem_path" not in data:
        data["problem_path"] = str(path.resolve().parent)  # the user's module beside the config
    return ExperimentConfig(f"config '{path}'", **data)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = ".".join(str(p) for p in error["loc"]) or "value"
    value = repr(error.get("input"))
    value = value if len(value) <= 60 else value[:50] + "..."
    if error["type"] == "extra_forbidden":
        return f"unknown key '{loc}', expected one of {sorted(ExperimentConfig.model_fields)}"
    if len(error["loc"]) == 1 and error["loc"][0] in RANGES:
        low, high, limit = RANGES[error["loc"][0]]
        return f"{loc} must be an integer >= {low} and <= {high:.3g} (limit {limit}), got {value}"
    return f"{loc}: {error['msg']}, got {value}"


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
