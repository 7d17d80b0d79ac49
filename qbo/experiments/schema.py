"""Validation at the edges (pydantic v2): experiment configs as read from TOML, stage records.

Each check turns the first violation into one line naming the file or field, the value and
what was expected, and the limit from ``qbo.limits`` where one applies (docs/limits.md).
Unit journals validate their own lines (``qbo.experiments.journal``); calibration snapshots
are validated in ``qbo.noise.schema``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError, create_model

from qbo.errors import BadFile, BadInput
from qbo.experiments.records import STAGE_FIELDS, Kind
from qbo.experiments.records import Field as RecordField
from qbo.files import json_object
from qbo.limits import BUDGET_MAX, CONFIG_MAX_BYTES, CONFIG_MAX_DEPTH, NAME_MAX_CHARS, SEED_MAX, TRIALS_MAX

Name = Annotated[StrictStr, Field(min_length=1, max_length=NAME_MAX_CHARS)]
Finite = Annotated[StrictFloat, Field(allow_inf_nan=False)]
Scalar = Union[StrictBool, StrictInt, Finite, Annotated[StrictStr, Field(max_length=1000)]]
Value = Union[Scalar, Annotated[list[Scalar], Field(max_length=10_000)]]
Options = Annotated[dict[Name, Value], Field(max_length=100)]


class ConfigModel(BaseModel):
    """The shape of an experiment TOML (choices are checked by ExperimentConfig itself)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    problem: Name = "synthetic-bernoulli"
    algorithms: Annotated[list[Name], Field(min_length=1, max_length=32)] = ["q-gp-ucb", "gp-ucb"]
    budget: Annotated[StrictInt, Field(ge=1, le=BUDGET_MAX)] = 10_000
    trials: Annotated[StrictInt, Field(ge=1, le=TRIALS_MAX)] = 10
    target: Name = "exact"
    seed: Annotated[StrictInt, Field(ge=0, le=SEED_MAX)] = 0
    estimator: Name = "iae"
    accounting: Name = "honest"
    leftover: Name = "recommend"
    mitigation: Name = "none"
    weights: Name = "requested"
    problem_options: Options = {}
    algorithm_options: Annotated[dict[Name, Options], Field(max_length=32)] = {}
    hardware: Options = {}  # [hardware]: mode and retries of fake:/ibm: runs (ExperimentConfig checks them)


RANGES = {"budget": (1, BUDGET_MAX, "BUDGET_MAX"), "trials": (1, TRIALS_MAX, "TRIALS_MAX"), "seed": (0, SEED_MAX, "SEED_MAX")}


def check_config_data(data: dict[str, Any], source: str = "config") -> None:
    """Refuse a config mapping with unknown keys, wrong types, values out of range or deep nesting."""
    depth = nesting_depth(data)
    if depth > CONFIG_MAX_DEPTH:
        raise BadInput(f"{source} is nested {depth} levels deep, more than {CONFIG_MAX_DEPTH} (limit CONFIG_MAX_DEPTH)")
    plain = dict(data)
    if isinstance(plain.get("algorithms"), tuple):
        plain["algorithms"] = list(plain["algorithms"])
    try:
        ConfigModel.model_validate(plain)
    except ValidationError as exc:
        raise BadInput(f"{source}: {_first_error(exc)}") from None


def read_config_text(path: str | os.PathLike) -> str:
    """The text of a config file: a regular file of at most CONFIG_MAX_BYTES, UTF-8."""
    path = Path(path)
    try:
        info = path.stat()
    except OSError as exc:
        raise BadFile(f"cannot read config '{path}': {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise BadFile(f"config '{path}' is not a regular file")
    if info.st_size > CONFIG_MAX_BYTES:
        raise BadFile(f"config '{path}' is {info.st_size} bytes, more than {CONFIG_MAX_BYTES} (limit CONFIG_MAX_BYTES)")
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise BadFile(f"cannot read config '{path}': {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BadFile(f"config '{path}' is not UTF-8 text") from None


def nesting_depth(value: Any, limit: int = 64) -> int:
    """Levels of dicts/lists in ``value`` (a scalar is 0); stops counting past ``limit``."""
    if limit <= 0 or not isinstance(value, (dict, list, tuple)):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((nesting_depth(c, limit - 1) for c in children), default=0)


def _annotation(f: RecordField) -> Any:
    """The pydantic type of one record field (a JSON number may be an integer)."""
    constraints = Field(ge=f.minimum, pattern=f.pattern)
    if f.kind is Kind.INT:
        base: Any = Annotated[StrictInt, constraints]
    elif f.kind is Kind.FLOAT:
        base = Union[StrictInt, Annotated[StrictFloat, Field(allow_inf_nan=not f.finite)]]
    elif f.kind is Kind.TEXT:
        base = Annotated[StrictStr, constraints]
    else:
        base = dict[StrictStr, Any]
    return Optional[base] if f.nullable else base


def record_model(name: str = "StageRecord", extra: bool = False) -> type[BaseModel]:
    """A pydantic model of one stage line, built from ``STAGE_FIELDS``: the fields every record
    has are required, the others optional; another key is refused unless ``extra`` (a
    journal's envelope, whose hash chain then names the edited line)."""
    fields = {f.name: (_annotation(f), ... if f.part.always else None) for f in STAGE_FIELDS}
    config = ConfigDict(extra="allow" if extra else "forbid", strict=True)
    return create_model(name, __config__=config, **fields)


StageRecord = record_model()  # one line of stages.jsonl (qbo.experiments.records)


def read_stage_records(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every line of a stages.jsonl, validated; one-line BadFile naming the line otherwise."""
    path = Path(path)
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise BadFile(f"cannot read '{path}': {exc.strerror}") from None
    records = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        entry = json_object(raw, f"'{path}' line {n}", not_object=", got a JSON value of another kind")
        try:
            StageRecord.model_validate(entry)
        except ValidationError as exc:
            raise BadFile(f"'{path}' line {n}: {_first_error(exc)}") from None
        records.append(entry)
    if not records:
        raise BadFile(f"'{path}' holds no stage records; nothing to plot")
    return records


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = ".".join(str(p) for p in error["loc"]) or "value"
    value = repr(error.get("input"))
    value = value if len(value) <= 60 else value[:50] + "..."
    if error["type"] == "extra_forbidden":
        return f"unknown key '{loc}', expected one of {sorted(ConfigModel.model_fields)}"
    if len(error["loc"]) == 1 and error["loc"][0] in RANGES:
        low, high, limit = RANGES[error["loc"][0]]
        return f"{loc} must be an integer >= {low} and <= {high:.3g} (limit {limit}), got {value}"
    return f"{loc}: {error['msg']}, got {value}"
