"""The stage record: one table of fields from which every reader and writer derives.

A stage of Alg. 1 (Dai et al. 2023) is written once, as one line of its unit's journal and
then of ``stages.jsonl``. ``STAGE_FIELDS`` is that line's field table, in its key order; the
writer (``qbo.experiments.trial``), the journal's envelope check (``qbo.experiments.journal``),
the reader's schema (``qbo.experiments.schema``), the Parquet columns
(``qbo.experiments.export``), the DataFrame dtypes (``qbo.experiments.frames``), the published
JSON Schema (``stage_record_schema``, checked in as ``docs/stage-record.schema.json``) and
the field list of docs/runs.md (``docs_table``) are all built from it; tests check the
checked-in copies against it.

``Part`` says who writes a field: the unit (``trial``, ``algorithm``: the journal's prefix),
the stage loop (always), a compact unit's checkpoint (``qbo.experiments.compact``), a timed
clock (drifting problems), a resumable QMC stage, or the journal's hash chain (``seq``, ``chain``).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any, NamedTuple, NotRequired, TypedDict


class Part(enum.Enum):
    """Who writes a field, and so whether every record has it."""

    UNIT = "unit"  # the journal's prefix for the unit
    STAGE = "stage"  # the stage loop, every record
    TIMED = "timed"  # a timed clock (drifting problem) only
    QMC = "qmc"  # a resumable QMC stage only
    COMPACT = "compact"  # a compact unit's checkpoint record only (qbo.experiments.compact)
    CHAIN = "chain"  # the journal's hash chain, every record

    @property
    def always(self) -> bool:
        return self in (Part.UNIT, Part.STAGE, Part.CHAIN)


class Kind(enum.Enum):
    """A field's value type (JSON type, Parquet type and pandas dtype follow from it)."""

    INT = "integer"
    FLOAT = "number"
    TEXT = "string"
    OBJECT = "object"


@dataclass(frozen=True)
class Field:
    """One field of a stage record: name, kind, writer, whether it may be null, lower bound,
    whether it must be finite, whether its few values are stored once each (a category), and
    what it means."""

    name: str
    kind: Kind
    part: Part
    doc: str
    nullable: bool = False
    minimum: int | None = None
    finite: bool = False
    category: bool = False
    pattern: str | None = None


STAGE_FIELDS: tuple[Field, ...] = (
    Field("trial", Kind.INT, Part.UNIT, "the trial (0-based)", minimum=0),
    Field("algorithm", Kind.TEXT, Part.UNIT, "the policy's registered name", category=True),
    Field("stage", Kind.INT, Part.STAGE,
          "the stage's number in its unit (1, 2, ...); in a compact unit, the call's", minimum=1),
    Field("arm", Kind.INT, Part.STAGE, "the arm queried (an index into the problem's arms)", minimum=0),
    Field("eps", Kind.FLOAT, Part.STAGE, "the accuracy eps_s the policy asked for; null for a classical sample",
          nullable=True),
    Field("method", Kind.TEXT, Part.STAGE,
          "how the stage was measured: iae, iae+rem, ..., mc, mlae, sample, init or exploit", category=True),
    Field("oracle_calls", Kind.INT, Part.STAGE, "oracle calls charged to the stage (by the run's accounting)",
          minimum=0),
    Field("honest_calls", Kind.INT, Part.STAGE, "oracle calls the stage made (2k + 1 a shot)", minimum=0),
    Field("estimate", Kind.FLOAT, Part.STAGE, "the observed value (a QMC estimate or a sample); null for exploit",
          nullable=True),
    Field("cum_calls", Kind.INT, Part.STAGE, "oracle calls charged in the unit so far", minimum=0),
    Field("cum_regret", Kind.FLOAT, Part.STAGE,
          "cumulative regret of the unit so far; null where the problem's exact means are unknown",
          nullable=True, finite=True),
    Field("weight_eps", Kind.FLOAT, Part.STAGE,
          "the eps of the observation's weight 1/eps^2; null for a classical sample", nullable=True),
    Field("calls_sha256", Kind.TEXT, Part.COMPACT,
          "first 16 hex digits of the sha256 of the unit's call file through this call", pattern="^[0-9a-f]{16}$"),
    Field("qmc", Kind.OBJECT, Part.QMC, "the arm's resumable QMC state after the stage (qbo.qmc.resumable)"),
    Field("regret", Kind.FLOAT, Part.TIMED, "regret per call of this stage"),
    Field("elapsed", Kind.FLOAT, Part.TIMED, "seconds the stage took on the problem's clock", nullable=True),
    Field("time", Kind.FLOAT, Part.TIMED, "the problem's clock after the stage"),
    Field("horizon", Kind.FLOAT, Part.TIMED, "the evaluation time the acquisition assumed", nullable=True),
    Field("seq", Kind.INT, Part.CHAIN,
          "the line's number in its unit's hash chain (equal to stage, except in a compact unit)", minimum=1),
    Field("chain", Kind.TEXT, Part.CHAIN, "the line's link in its unit's hash chain (16 hex digits)",
          pattern="^[0-9a-f]{16}$"),
)

FIELDS_BY_NAME = {f.name: f for f in STAGE_FIELDS}
STAGE_KEYS = tuple(f.name for f in STAGE_FIELDS if f.part is Part.STAGE)  # what the stage loop writes, in order
TIMED_KEYS = tuple(f.name for f in STAGE_FIELDS if f.part is Part.TIMED)
UNIT_KEYS = tuple(f.name for f in STAGE_FIELDS if f.part is Part.UNIT)
REQUIRED = tuple(f.name for f in STAGE_FIELDS if f.part.always)


EXPLOIT = "exploit"  # the method of a stage that plays the recommendation without measuring


class Told(NamedTuple):
    """What a resume re-tells a policy from a stage record (``told``): each attribute is the
    ``STAGE_FIELDS`` field of its name (checked when this module loads)."""

    method: str
    arm: int
    eps: float | None
    estimate: float | None
    weight_eps: float | None
    elapsed: float | None
    honest_calls: int
    qmc: dict[str, Any] | None
    stage: int
    cum_calls: int
    cum_regret: float | None


_unknown = set(Told._fields) - set(FIELDS_BY_NAME)
if _unknown:  # pragma: no cover - a renamed field fails at import, not at a resume
    raise ImportError(f"Told names fields not in STAGE_FIELDS: {sorted(_unknown)}")
_TOLD_ALWAYS = tuple(FIELDS_BY_NAME[name].part.always for name in Told._fields)


def told(record: dict[str, Any]) -> Told:
    """The fields of ``record`` a resume needs; one a record may lack (its ``Part`` is not
    ``always``) is None there."""
    return Told(*(record[name] if always else record.get(name) for name, always in zip(Told._fields, _TOLD_ALWAYS)))


class StageRecord(TypedDict):
    """A stage record as Python holds it (``STAGE_FIELDS`` is its field table)."""

    trial: int
    algorithm: str
    stage: int
    arm: int
    eps: float | None
    method: str
    oracle_calls: int
    honest_calls: int
    estimate: float | None
    cum_calls: int
    cum_regret: float
    weight_eps: float | None
    calls_sha256: NotRequired[str]
    qmc: NotRequired[dict[str, Any]]
    regret: NotRequired[float]
    elapsed: NotRequired[float | None]
    time: NotRequired[float]
    horizon: NotRequired[float | None]
    seq: int
    chain: str


SCHEMA_ID = "https://qbo.invalid/schemas/stage-record.schema.json"


def field_schema(f: Field) -> dict[str, Any]:
    """The JSON Schema of one field."""
    schema: dict[str, Any] = {"type": [f.kind.value, "null"] if f.nullable else f.kind.value}
    if f.minimum is not None:
        schema["minimum"] = f.minimum
    if f.pattern is not None:
        schema["pattern"] = f.pattern
    schema["description"] = f.doc + ("" if f.part.always else f" (only in {f.part.value} records)")
    return schema


def stage_record_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one line of ``stages.jsonl`` (and a journal's stage line)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "qbo stage record",
        "description": "One line of a qbo run folder's stages.jsonl: one stage of one (trial, algorithm) unit "
                       "(docs/runs.md, 'Stage records'). Generated from qbo.experiments.records.STAGE_FIELDS.",
        "type": "object",
        "properties": {f.name: field_schema(f) for f in STAGE_FIELDS},
        "required": list(REQUIRED),
        "additionalProperties": False,
    }


def schema_text() -> str:
    """``stage_record_schema`` as the checked-in file holds it."""
    return json.dumps(stage_record_schema(), indent=2) + "\n"


def docs_table() -> str:
    """The field table of docs/runs.md ("Stage records"), as Markdown."""
    rows = ["| field | type | in | meaning |", "|---|---|---|---|"]
    for f in STAGE_FIELDS:
        kind = f.kind.value + (" or null" if f.nullable else "")
        where = "every record" if f.part.always else f"{f.part.value} records"
        rows.append(f"| `{f.name}` | {kind} | {where} | {f.doc} |")
    return "\n".join(rows) + "\n"
