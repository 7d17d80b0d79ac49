"""A finished run as pandas DataFrames: ``load_run(DIR)`` (``qbo.load_run``).

``stages`` holds one row per stage record, one column per field of
``qbo.experiments.records.STAGE_FIELDS`` in the line's order (an optional field no record
has is left out, as in ``qbo export``): integers as int64, numbers as float64 (null as NaN),
the policy's name and the method as categories, ``qmc`` as its JSON text. ``summary`` is
summary.csv as the run wrote it. The records are verified first (``qbo.experiments.results``).

pandas is the optional extra ``qbo[data]``; nothing else in qbo needs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from qbo.errors import BadFile
from qbo.experiments.records import STAGE_FIELDS, Field, Kind
from qbo.experiments.results import finished_records
from qbo.experiments.summary import COLUMNS, REWARD_COLUMNS, regret_known

_DTYPES = {Kind.INT: "int64", Kind.FLOAT: "float64", Kind.TEXT: "object", Kind.OBJECT: "object"}


class RunFrames(NamedTuple):
    """A finished run's stage records and summary."""

    stages: pd.DataFrame
    summary: pd.DataFrame


def column_dtype(f: Field) -> str:
    """The pandas dtype of a record field."""
    return "category" if f.category else _DTYPES[f.kind]


def stages_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The records as a DataFrame, a column per field (``STAGE_FIELDS``)."""
    columns: dict[str, Any] = {}
    for f in STAGE_FIELDS:
        if not f.part.always and not any(f.name in r for r in records):
            continue
        values = [r.get(f.name) for r in records]
        if f.kind is Kind.OBJECT:
            values = [None if v is None else json.dumps(v, separators=(",", ":")) for v in values]
        columns[f.name] = pd.Series(values, dtype=column_dtype(f)) if values else pd.Series([], dtype=column_dtype(f))
    return pd.DataFrame(columns)


def load_run(run_dir: str | Path) -> RunFrames:
    """(stages, summary) of the finished run in ``run_dir``: the verified stage records and
    summary.csv as DataFrames (a problem without exact means: the best-arm columns,
    ``qbo.experiments.summary.REWARD_COLUMNS``). A folder that is not a finished qbo run is
    refused in one line."""
    folder = Path(run_dir)
    _, records = finished_records(folder)
    try:
        summary = pd.read_csv(folder / "summary.csv", dtype={"algorithm": "string", "accounting": "string"})
    except (OSError, ValueError) as exc:
        raise BadFile(f"cannot read '{folder / 'summary.csv'}': {exc}") from None
    expected = COLUMNS if regret_known(records) else REWARD_COLUMNS  # a problem without exact means: best arm found
    if tuple(summary.columns) != expected:
        raise BadFile(f"'{folder / 'summary.csv'}' has columns {list(summary.columns)[:10]}, expected {list(expected)}")
    return RunFrames(stages_frame(records), summary)
