"""One stage record (issue 20, item 4; issue 26, item 5): every reader and writer derives
from ``qbo.experiments.records.STAGE_FIELDS``, and the published copies match it."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError

import qbo
from qbo.errors import BadFile, BadInput
from qbo.experiments import export, records, trial
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.records import REQUIRED, STAGE_FIELDS, STAGE_KEYS, TIMED_KEYS, docs_table, schema_text
from qbo.experiments.runner import run_experiment
from qbo.experiments.schema import StageRecord, read_stage_records

ROOT = Path(__file__).resolve().parents[1]
NAMES = [f.name for f in STAGE_FIELDS]
VALIDATOR = jsonschema.Draft202012Validator(records.stage_record_schema())


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("records") / "run"
    run_experiment(ExperimentConfig(algorithms=("q-gp-ucb", "gp-ucb", "thompson"), budget=300, trials=2), folder)
    return folder


def test_docs_table_is_generated_from_the_record_type():
    text = (ROOT / "docs" / "runs.md").read_text()
    table = re.search(r"<!-- stage-fields:start -->\n(.*?)<!-- stage-fields:end -->", text, re.S)
    assert table is not None and table.group(1) == docs_table()


def test_published_json_schema_is_generated_from_the_record_type():
    assert (ROOT / "docs" / "stage-record.schema.json").read_text() == schema_text()
    jsonschema.Draft202012Validator.check_schema(records.stage_record_schema())


def test_typed_dict_and_writer_keys_follow_the_table():
    assert list(typing.get_type_hints(records.StageRecord)) == NAMES
    at = trial.Progress()
    assert tuple(trial._record(at, 3, None, "sample", 1, 1, 0.5, 0.1, None)) == STAGE_KEYS
    assert STAGE_KEYS + TIMED_KEYS == tuple(n for n in NAMES if n in STAGE_KEYS + TIMED_KEYS)
    assert [name for name, _, _ in export.COLUMNS] == NAMES
    assert list(StageRecord.model_fields) == NAMES


def test_what_a_resume_retells_is_named_by_the_table(run):
    """``records.told`` (runner._replay's reading of a record) names table fields; the ones a
    record may lack read as None."""
    assert set(records.Told._fields) <= set(NAMES)
    for line in (run / "stages.jsonl").read_text().splitlines()[:50]:
        record = json.loads(line)
        got = records.told(record)
        assert got._asdict() == {name: record.get(name) for name in records.Told._fields}
    with pytest.raises(KeyError, match="honest_calls"):
        records.told({name: 0 for name in records.Told._fields if name != "honest_calls"})


def test_a_runs_lines_hold_the_tables_keys_in_order_and_validate(run):
    lines = (run / "stages.jsonl").read_text().splitlines()
    methods = set()
    for line in lines:
        record = json.loads(line)
        assert list(record) == [n for n in NAMES if n in record]
        assert set(REQUIRED) <= set(record)
        VALIDATOR.validate(record)
        methods.add(record["method"])
    assert {"sample", "lrae"} <= methods  # the default estimator 'auto' runs LRAE on the exact target
    assert len(read_stage_records(run / "stages.jsonl")) == len(lines)


GOOD = {"trial": 0, "algorithm": "gp-ucb", "stage": 1, "arm": 2, "eps": None, "method": "sample",
        "oracle_calls": 1, "honest_calls": 1, "estimate": 1.0, "cum_calls": 1, "cum_regret": 0.25,
        "weight_eps": None, "seq": 1, "chain": "0123456789abcdef"}
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2), st.text(max_size=3),
                   st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NAMES + ["extra"]), st.one_of(VALUES, st.just(KeyError)))
def test_json_schema_and_reader_give_the_same_verdict(name, value):
    record = dict(GOOD)
    if value is KeyError:
        record.pop(name, None)
    else:
        record[name] = value
    schema_ok = VALIDATOR.is_valid(record)
    if isinstance(value, float) and value.is_integer() and name in records.FIELDS_BY_NAME \
            and records.FIELDS_BY_NAME[name].kind is records.Kind.INT:
        schema_ok = False  # JSON Schema counts 1.0 an integer; Python parses it as a float, which the reader refuses
    try:
        StageRecord.model_validate(record)
        reader_ok = True
    except ValidationError:
        reader_ok = False
    assert schema_ok == reader_ok, record


def test_load_run_returns_the_records_and_summary(run):
    stages, summary = qbo.load_run(run)
    lines = [json.loads(x) for x in (run / "stages.jsonl").read_text().splitlines()]
    assert len(stages) == len(lines)
    assert list(stages.columns) == [n for n in NAMES if any(n in r for r in lines)]
    assert stages["cum_regret"].tolist() == [r["cum_regret"] for r in lines]
    assert stages["arm"].dtype == "int64" and stages["method"].dtype == "category"
    assert stages["eps"].isna().sum() == sum(r["eps"] is None for r in lines)
    assert list(summary["algorithm"]) == ["q-gp-ucb", "gp-ucb", "thompson"]
    final = stages.groupby(["algorithm", "trial"], observed=True)["cum_regret"].last()
    assert summary.set_index("algorithm")["final_regret_mean"]["gp-ucb"] == pytest.approx(
        final["gp-ucb"].mean(), rel=1e-5)
    assert isinstance(stages, pd.DataFrame)


def test_load_run_refuses_what_is_not_a_finished_run(run, tmp_path):
    with pytest.raises(BadInput, match="not a qbo run folder"):
        qbo.load_run(tmp_path)
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("config.toml", "run.json", "stages.jsonl", "summary.csv"):
        (copy / name).write_bytes((run / name).read_bytes())
    data = (copy / "stages.jsonl").read_bytes()
    (copy / "stages.jsonl").write_bytes(data.replace(b'"cum_regret":', b'"cum_regret":1', 1))
    with pytest.raises(BadFile):
        qbo.load_run(copy)


def test_the_docs_example_runs(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "runs.md").read_text()
    block = re.search(r"### Reading a run as data.*?```python\n(.*?)```", text, re.S)
    assert block is not None
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    exec(compile(block.group(1), "docs/runs.md", "exec"), {})
