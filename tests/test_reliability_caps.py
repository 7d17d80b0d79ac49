"""Issue 25, item 2: caps that hold on IBM hardware, where ``job.usage()`` is 0 until IBM has
computed it. The test service (tests/support/fake_service.py) does the same, with IBM's
``usage_estimation`` present or absent."""

from __future__ import annotations

import pytest

from qbo.execution import runtime
from qbo.execution.jobs import JobJournal, Limits, RetryPolicy, spent, write_settings
from qbo.execution.runtime import CapReached
from qbo.experiments import runner
from qbo.experiments.config import ExperimentConfig
from tests.support.fake_service import fake_ibm

CONFIG = ExperimentConfig(algorithms=("q-gp-ucb",), budget=600, trials=1, target="ibm:ibm_test")
NEVER = 1e12  # service seconds: IBM has not computed any usage during the run


def _run(tmp_path, monkeypatch, mode="job", cap=20.0, **service):
    conn = fake_ibm(**service)
    monkeypatch.setattr(runtime, "connect", lambda kind: conn)
    out = tmp_path / "run"
    write_settings(out, mode, RetryPolicy(), Limits(max_qpu_seconds=cap))
    with pytest.raises(CapReached, match=f"max-qpu-seconds {cap:g}"):
        runner.run_experiment(CONFIG, out)
    return conn, JobJournal.in_run_dir(out).read()


@pytest.mark.parametrize("estimation", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_a_20_s_cap_stops_the_run_before_the_predicted_spend_passes_20_s(tmp_path, monkeypatch, estimation):
    conn, entries = _run(tmp_path, monkeypatch, usage_delay=NEVER, estimation=estimation)
    submitted = [e for e in entries if e["event"] == "submitted"]
    charges = [max(e["predicted_s"], e.get("estimated_s") or 0.0) for e in submitted]
    assert 5 <= len(submitted) == len(conn.submitted)  # it ran, then stopped
    assert sum(charges) <= 20.0 < sum(charges) + charges[-1]  # stopped before the next job would pass 20 s
    assert all("estimated_s" in e for e in submitted) == estimation
    assert all(e.get("qpu_s") is None for e in entries if e["event"] == "done")  # a 0 is not a usage
    assert spent(entries)[1] == pytest.approx(sum(charges))


@pytest.mark.slow
def test_usage_that_arrives_replaces_the_charge_and_is_journalled_with_it(tmp_path, monkeypatch):
    conn, entries = _run(tmp_path, monkeypatch, usage_delay=8.0)
    state = conn.fake._load()
    late = [e for e in entries if e["event"] == "usage"]
    assert late  # asked for when the charges neared the cap
    for line in late:
        assert line["qpu_s"] == state["jobs"][line["job_id"]]["usage"] and line["charged_s"] > 0
    billed = {e["job_id"] for e in entries if e.get("qpu_s") is not None}
    charged = {e["job_id"]: max(e["predicted_s"], e.get("estimated_s") or 0.0)
               for e in entries if e["event"] == "submitted"}
    expected = sum(state["jobs"][j]["usage"] if j in billed else c for j, c in charged.items())
    assert spent(entries)[1] == pytest.approx(expected) and expected <= 20.0


@pytest.mark.slow
def test_a_session_is_bounded_by_what_the_cap_leaves_and_its_wall_time_counts(tmp_path, monkeypatch):
    conn, entries = _run(tmp_path, monkeypatch, mode="session", usage_delay=NEVER)
    opened = [e for e in entries if e["event"] == "session" and e["reason"] == "opened"]
    assert opened and all(e["max_time"] <= 20 for e in opened)
    assert all(mode.max_time <= 20 for mode in conn._primitives.opened)


def test_a_session_counts_its_wall_time_up_to_its_max_time():
    lines = [{"event": "session", "mode": "session", "reason": "opened", "max_time": 15,
              "time": "2026-01-01T00:00:00+00:00"}]
    assert spent(lines, now=1767225600.0 + 9.0) == (0, 9.0)  # open: the time since it opened
    assert spent(lines, now=1767225600.0 + 99.0) == (0, 15.0)  # up to its max_time
    closed = lines + [{"event": "session", "mode": "session", "reason": "closed", "wall_s": 4.5}]
    assert spent(closed, now=1767225600.0 + 99.0) == (0, 4.5)


def _folder(tmp_path, target, entries):
    from qbo.files import append_line

    out = tmp_path / "run"
    out.mkdir(parents=True)
    (out / "config.toml").write_text(ExperimentConfig(algorithms=("q-gp-ucb",), target=target).to_toml())
    for entry in entries:
        append_line(out / "jobs.jsonl", entry)
    return out


DONE_UNBILLED = [
    {"event": "submitted", "fingerprint": "f1", "job_id": "j1", "predicted_s": 2.5, "estimated_s": 3.0},
    {"event": "done", "fingerprint": "f1", "job_id": "j1", "qpu_s": None},
    {"event": "submitted", "fingerprint": "f2", "job_id": "j2", "predicted_s": 2.0},
    {"event": "done", "fingerprint": "f2", "job_id": "j2", "qpu_s": 4.0},
]


def test_the_spent_line_never_calls_a_finished_job_pending(tmp_path):
    from qbo.cli.hardware_commands import spent_line

    local = spent_line(_folder(tmp_path / "a", "fake:FakeManilaV2", DONE_UNBILLED))
    assert "pending" not in local and "local mode: nothing is billed" in local and "7.0 QPU s" in local
    ibm = spent_line(_folder(tmp_path / "b", "ibm:ibm_test", DONE_UNBILLED))
    assert "pending" not in ibm and "4.0 billed by IBM, 3.0 predicted for 1 jobs IBM has not billed yet" in ibm
