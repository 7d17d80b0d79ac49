"""Validation at the edges (pydantic v2): config files as read, stage records (the experiment
config's own fields are declared once, in ``qbo.experiments.config.ExperimentConfig``).

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

from qbo.errors import BadFile
from qbo.experiments.records import STAGE_FIELDS, Kind
from qbo.experiments.records import Field as RecordField
from qbo.files import json_object
from qbo.limits import CONFIG_MAX_BYTES, NAME_MAX_CHARS, TRIALS_MAX

Name = Annotated[StrictStr, Field(min_length=1, max_length=NAME_MAX_CHARS)]
Finite = Annotated[StrictFloat, Field(allow_inf_nan=False)]
Scalar = Union[StrictBool, StrictInt, Finite, Annotated[StrictStr, Field(max_length=1000)]]
Value = Union[Scalar, Annotated[list[Scalar], Field(max_length=10_000)]]
Options = Annotated[dict[Name, Value], Field(max_length=100)]


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
    return f"{loc}: {error['msg']}, got {value}"
