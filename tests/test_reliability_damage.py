"""Issue 25, item 4: every damage refused with one line naming the file and the line, exit 2:
a deleted unit journal of an unfinished run, malformed jobs.jsonl lines, non-finite stage records."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import run_experiment
from qbo.files import append_line
from tests.support.crash import crash_at_append

SMALL = ExperimentConfig(algorithms=("gp-ucb",), budget=200, trials=2)


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    return lines[0]


def test_a_deleted_journal_of_a_started_unit_is_refused_on_resume(tmp_path, monkeypatch):
    out = tmp_path / "run"
    crash_at_append(monkeypatch, SMALL, out, 250)  # trial 0 done, trial 1 started
    journal = out / "units" / "trial000-gp-ucb.jsonl"
    assert journal.is_file() and (out / "units" / ".started").is_file()
    journal.unlink()
    line = one_line(invoke("run", "--resume", out))
    assert f"'{journal}' is missing" in line and ".started' line " in line
    assert not journal.exists()  # nothing was recomputed
    line = one_line(invoke("run", "--budget", 200, "--trials", 2, "--algorithms", "gp-ucb", "--out", out))
    assert "is missing" in line  # nor by running the same command again


def test_an_emptied_journal_of_a_started_unit_is_refused_on_resume(tmp_path, monkeypatch):
    out = tmp_path / "run"
    crash_at_append(monkeypatch, SMALL, out, 250)  # trial 0 done, trial 1 started
    journal = out / "units" / "trial000-gp-ucb.jsonl"
    journal.write_bytes(b"")  # listed in .started only after its first lines were fsynced: empty is damage
    line = one_line(invoke("run", "--resume", out))
    assert f"'{journal}' is empty" in line and ".started' line " in line
    assert journal.stat().st_size == 0  # nothing was recomputed


def test_a_unit_that_never_wrote_its_journal_is_not_damage(tmp_path, monkeypatch):
    out = tmp_path / "run"
    config = ExperimentConfig(algorithms=("gp-ucb", "linucb"), budget=200, trials=1)
    crash_at_append(monkeypatch, config, out, 150)  # linucb's unit not started
    assert (out / "units" / "trial000-gp-ucb.jsonl").exists()
    assert not (out / "units" / "trial000-linucb.jsonl").exists()
    assert invoke("run", "--resume", out).exit_code == 0


GOOD = [
    {"event": "intent", "time": "t", "fingerprint": "f1", "job_id": None, "backend": "ibm:x", "attempt": 1},
    {"event": "submitted", "time": "t", "fingerprint": "f1", "job_id": "j1", "backend": "ibm:x", "predicted_s": 2.5},
    {"event": "done", "time": "t", "fingerprint": "f1", "job_id": "j1", "backend": "ibm:x", "counts": [{"0": 3}],
     "qpu_s": None},
]
BAD = [
    {"foo": 1},
    {"event": "teleported", "fingerprint": "f1", "job_id": "j1"},
    {"event": "submitted", "fingerprint": "f1"},
    {"event": "submitted", "fingerprint": "f1", "job_id": 7},
    {"event": "done", "fingerprint": "f1", "job_id": None},
    {"event": "submitted", "fingerprint": None, "job_id": "j2"},
    {"event": "submitted", "fingerprint": "f1", "job_id": "j2", "predicted_s": float("nan")},
    {"event": "submitted", "fingerprint": "f1", "job_id": "j2", "predicted_s": -1},
    {"event": "done", "fingerprint": "f1", "job_id": "j1", "qpu_s": "lots"},
    {"event": "done", "fingerprint": "f1", "job_id": "j1", "counts": {"0": 3}},
    {"event": "done", "fingerprint": "f1", "job_id": "j1", "counts": [{"0": -3}]},
]


@pytest.mark.parametrize("bad", BAD, ids=range(len(BAD)))
@pytest.mark.parametrize("command", ["list", "status"])
def test_a_malformed_jobs_jsonl_line_is_refused_naming_it(tmp_path, command, bad):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.toml").write_text(ExperimentConfig(algorithms=("q-gp-ucb",), target="fake:FakeManilaV2").to_toml())
    for entry in GOOD[:2] + [bad] + GOOD[2:]:
        append_line(out / "jobs.jsonl", entry)
    line = one_line(invoke("jobs", command, out))
    assert f"'{out / 'jobs.jsonl'}' line 3" in line


def test_a_well_formed_jobs_jsonl_is_listed(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.toml").write_text(ExperimentConfig(algorithms=("q-gp-ucb",), target="fake:FakeManilaV2").to_toml())
    for entry in GOOD:
        append_line(out / "jobs.jsonl", entry)
    result = invoke("jobs", "list", out)
    assert result.exit_code == 0 and "j1" in result.stdout and "done" in result.stdout


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("finished") / "run"
    run_experiment(SMALL, out)
    return out


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("command", ["plot", "export"])
def test_non_finite_regret_in_stage_records_is_refused(finished, tmp_path, command, value):
    out = tmp_path / "run"
    out.mkdir()
    for name in ("config.toml", "run.json", "stages.jsonl"):
        (out / name).write_bytes((finished / name).read_bytes())
    lines = (out / "stages.jsonl").read_text().split("\n")
    record = json.loads(lines[6])
    lines[6] = lines[6].replace(f'"cum_regret":{json.dumps(record["cum_regret"])}', f'"cum_regret":{value}')
    assert lines[6] != json.dumps(record)
    (out / "stages.jsonl").write_text("\n".join(lines))
    pytest.importorskip("pyarrow")
    line = one_line(invoke(command, out))
    assert f"'{out / 'stages.jsonl'}' line 7" in line
    assert not (out / "regret.png").exists() and not (out / "stages.parquet").exists()
