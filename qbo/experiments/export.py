"""stages.parquet: a finished run's stage records as a typed, columnar table (issue 13, item 1).

stages.jsonl stays the record people read; a Parquet file serves sweeps too large to parse as
JSON (the default run's 4.0 MB of JSON Lines is 0.39 MB here, one typed column a field),
for pandas, polars, DuckDB or pyarrow. It is written from the run's verified stages.jsonl
(``folder.verify_finished``), so it holds exactly those records: every field of the line
(``qbo.experiments.records.STAGE_FIELDS``, docs/runs.md "Stage records"), null where the
record has null or lacks the field (a time-varying field in a static run), ``qmc`` (a
resumable QMC state) as its JSON text.

pyarrow is the optional extra ``qbo[parquet]``; nothing else in qbo needs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from qbo.experiments.folder import STAGES
from qbo.experiments.records import FIELDS_BY_NAME, STAGE_FIELDS, Field, Kind
from qbo.experiments.results import finished_records
from qbo.files import write_bytes_atomic

_TEXT = pa.dictionary(pa.int32(), pa.string())
_TYPES = {Kind.INT: pa.int64(), Kind.FLOAT: pa.float64(), Kind.TEXT: pa.string(), Kind.OBJECT: pa.string()}


def column_type(f: Field) -> pa.DataType:
    """The Parquet type of a record field: a category as a dictionary, an object as its JSON text."""
    return _TEXT if f.category else _TYPES[f.kind]


# every field a stage line may hold, in its order (qbo.experiments.records); (name, type, always there)
COLUMNS: tuple[tuple[str, pa.DataType, bool], ...] = tuple((f.name, column_type(f), f.part.always) for f in STAGE_FIELDS)


def stages_table(records: list[dict[str, Any]]) -> pa.Table:
    """The records as one table, a column per field (``COLUMNS``); an optional field (the
    time-varying ones, ``qmc``) that no record has is left out."""
    arrays, names = [], []
    for name, kind, always in COLUMNS:
        if not always and not any(name in r for r in records):
            continue
        values = [r.get(name) for r in records]
        if FIELDS_BY_NAME[name].kind is Kind.OBJECT:
            values = [None if v is None else json.dumps(v, separators=(",", ":")) for v in values]
        names.append(name)
        if pa.types.is_dictionary(kind):  # a few distinct names: stored once each
            arrays.append(pa.array(values, type=kind.value_type).dictionary_encode())
        else:
            arrays.append(pa.array(values, type=kind))
    return pa.Table.from_arrays(arrays, names=names)


def export_parquet(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write ``run_dir``'s stages as Parquet (default ``RUN_DIR/stages.parquet``), atomically;
    only a finished run, whose stages.jsonl matches run.json, is exported."""
    folder = Path(run_dir)
    _, records = finished_records(folder)
    sink = pa.BufferOutputStream()
    pq.write_table(stages_table(records), sink, compression="zstd")
    return write_bytes_atomic(Path(out) if out is not None else folder / STAGES.replace(".jsonl", ".parquet"),
                              sink.getvalue().to_pybytes())
