"""qbo export: stages.parquet holds exactly the records of a finished run's stages.jsonl."""

from __future__ import annotations

import json
import math

import pyarrow.parquet as pq
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.export import COLUMNS, stages_table
from qbo.experiments.runner import run_experiment


def test_export_writes_every_record_with_its_values(tmp_path):
    run = tmp_path / "run"
    run_experiment(ExperimentConfig(budget=400, trials=2), run)
    result = CliRunner().invoke(app, ["export", str(run)])
    assert result.exit_code == 0, result.output
    table = pq.read_table(run / "stages.parquet")
    records = [json.loads(line) for line in (run / "stages.jsonl").read_text().splitlines()]
    expected = [{name: r.get(name) for name, _, _ in COLUMNS if name in table.column_names} for r in records]
    assert table.to_pylist() == expected and len(expected) == table.num_rows > 2
    assert table.schema.field("oracle_calls").type == "int64" and "regret" not in table.column_names


def test_optional_fields_and_non_finite_values_survive():
    records = [
        {"trial": 0, "algorithm": "q-ctv", "stage": 1, "arm": 2, "eps": 0.1, "method": "iae", "oracle_calls": 7,
         "honest_calls": 7, "estimate": float("nan"), "cum_calls": 7, "cum_regret": 0.5, "weight_eps": 0.1,
         "regret": 0.25, "elapsed": 1.5, "time": 1.5, "horizon": None, "qmc": {"k": [0, 1], "ones": [3, 4]},
         "seq": 1, "chain": "0123456789abcdef"},
        {"trial": 0, "algorithm": "q-ctv", "stage": 2, "arm": 0, "eps": None, "method": "exploit", "oracle_calls": 3,
         "honest_calls": 3, "estimate": None, "cum_calls": 10, "cum_regret": 0.75, "weight_eps": None,
         "regret": 0.1, "elapsed": None, "time": 2.0, "horizon": None, "seq": 2, "chain": "fedcba9876543210"},
    ]
    rows = stages_table(records).to_pylist()
    assert math.isnan(rows[0].pop("estimate")) and math.isnan(records[0]["estimate"])
    assert json.loads(rows[0].pop("qmc")) == records[0]["qmc"] and rows[1].pop("qmc") is None
    assert rows == [{k: v for k, v in r.items() if k not in ("estimate", "qmc")} | ({} if i == 0 else {"estimate": None})
                    for i, r in enumerate(records)]
