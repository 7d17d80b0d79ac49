"""stages.parquet: a finished run's stage records as a typed, columnar table (issue 13, item 1).

stages.jsonl stays the record people read; a Parquet file serves sweeps too large to parse as
JSON (the default run's 23.9 MB of JSON Lines is about 2 MB here, one typed column a field),
for pandas, polars, DuckDB or pyarrow. It is written from the run's verified stages.jsonl
(``folder.verify_finished``), so it holds exactly those records: every field of the line
(docs/runs.md, "Stage records"), null where the record has null or lacks the field (a
time-varying field in a static run), ``qmc`` (a resumable QMC state) as its JSON text.

pyarrow is the optional extra ``qbo[parquet]``; nothing else in qbo needs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from qbo.experiments.config import load_config
from qbo.experiments.folder import MARKER, STAGES, finished, verify_finished, verify_run_folder
from qbo.experiments.journal import parse_lines
from qbo.errors import BadInput
from qbo.files import write_bytes_atomic

_TEXT = pa.dictionary(pa.int32(), pa.string())
# every field a stage line may hold, in its order (docs/runs.md); (name, type, always there)
COLUMNS: tuple[tuple[str, pa.DataType, bool], ...] = (
    ("trial", pa.int64(), True), ("algorithm", _TEXT, True), ("stage", pa.int64(), True), ("arm", pa.int64(), True),
    ("eps", pa.float64(), True), ("method", _TEXT, True), ("oracle_calls", pa.int64(), True),
    ("honest_calls", pa.int64(), True), ("estimate", pa.float64(), True), ("cum_calls", pa.int64(), True),
    ("cum_regret", pa.float64(), True), ("weight_eps", pa.float64(), True),
    ("regret", pa.float64(), False), ("elapsed", pa.float64(), False), ("time", pa.float64(), False),
    ("horizon", pa.float64(), False), ("qmc", pa.string(), False),
    ("seq", pa.int64(), True), ("chain", pa.string(), True),
)


def stages_table(records: list[dict[str, Any]]) -> pa.Table:
    """The records as one table, a column per field (``COLUMNS``); an optional field (the
    time-varying ones, ``qmc``) that no record has is left out."""
    arrays, names = [], []
    for name, kind, always in COLUMNS:
        if not always and not any(name in r for r in records):
            continue
        values = [r.get(name) for r in records]
        if name == "qmc":
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
    if not (folder / MARKER).is_file():
        raise BadInput(f"'{folder}' is not a qbo run folder: no {MARKER}")
    config = load_config(folder / "config.toml")
    verify_run_folder(folder, config)
    if finished(folder) is None:
        raise BadInput(f"'{folder}' is not finished: its records are still in units/; finish it with "
                       f"qbo run --resume {folder}")
    data = verify_finished(folder, config)
    records = parse_lines(data.split(b"\n")[:-1])
    sink = pa.BufferOutputStream()
    pq.write_table(stages_table(records), sink, compression="zstd")
    return write_bytes_atomic(Path(out) if out is not None else folder / STAGES.replace(".jsonl", ".parquet"),
                              sink.getvalue().to_pybytes())
