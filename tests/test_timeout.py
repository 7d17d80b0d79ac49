"""``--timeout S`` bounds the whole command (issue 25, item 5): submit, jobs resume, jobs status
and backends end within S seconds plus the interpreter's exit, print one line and exit 124
(``qbo.files.TIMED_OUT_EXIT``); a timed-out run folder resumes with ``qbo jobs resume``.

The commands run in a subprocess through ``qbo.cli.app.entry`` (the ``qbo`` command's own
interrupt handling; CliRunner does not go through it), on the IBM-like test service
(tests/support/fake_service.py) made slow in real time with ``reply_s``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.execution.jobs import JobJournal
from qbo.experiments.config import ExperimentConfig
from qbo.files import TIMED_OUT_EXIT
from tests.support.fake_service import FakeService

ROOT = Path(__file__).parent.parent
CONFIG = ExperimentConfig(algorithms=("q-gp-ucb",), budget=300, trials=1, target="ibm:ibm_test")
MARGIN_S = 3.0  # interpreter exit and the clean-up after the signal (journals closed, lock released), on a busy machine
STARTUP_S = 3.0  # the script's imports before entry(), where the deadline starts (python -m qbo.cli: at its first line)

SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from qbo.execution import runtime
    from tests.support.fake_service import fake_ibm
    conn = fake_ibm({server!r}, reply_s=float(sys.argv[1]))
    runtime.connect = lambda kind: conn
    runtime.credentials_available = lambda: True
    sys.argv = ["qbo", *sys.argv[2:]]
    from qbo.cli.app import entry
    entry()
""")


def qbo(tmp_path: Path, reply_s: float, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``qbo ARGS`` on the persisted test service in tmp_path/server; (process, seconds)."""
    script = SCRIPT.format(root=str(ROOT), server=str(tmp_path / "server"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script, str(reply_s), *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    return proc, time.monotonic() - started


def errors(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip() and "oracle calls" not in line]


@pytest.mark.parametrize("command", [["submit", "c.toml", "--backend", "ibm:ibm_test", "--yes"],
                                     ["jobs", "resume", "R"], ["jobs", "status", "R"], ["backends"]])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e308"])  # "abc": a usage error, main()'s (tests/fuzz)
def test_a_bad_timeout_is_one_line_exit_2_before_anything_runs(tmp_path, monkeypatch, command, value):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text(CONFIG.to_toml())
    result = CliRunner().invoke(app, [*command, "--timeout", value])
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "--timeout" in result.stderr, result.stderr
    assert not (tmp_path / "R").exists() and not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_submit_timed_out_in_a_slow_reply_resumes_and_finds_the_job_by_its_tag(tmp_path):
    """The service records each job, then answers 60 s late: the deadline lands between the
    journal's ``intent`` and ``submitted`` lines. ``jobs resume`` finds the job by its tag."""
    FakeService(store=tmp_path / "server")
    (tmp_path / "c.toml").write_text(CONFIG.to_toml())
    timeout = 15.0  # start-up, connection, cost plan and transpiling: 2.85 s to the first intent on a loaded machine
    proc, took = qbo(tmp_path, 60.0, "submit", "c.toml", "--backend", "ibm:ibm_test", "--out", "R", "--yes",
                     "--timeout", f"{timeout:g}")
    assert proc.returncode == TIMED_OUT_EXIT, proc.stdout + proc.stderr
    assert errors(proc) == [f"timed out after {timeout:g} s; resume with: qbo jobs resume R"], proc.stderr
    assert timeout <= took < timeout + STARTUP_S + MARGIN_S, took
    entries = JobJournal.in_run_dir(tmp_path / "R").read()
    last = entries[-1]
    assert last["event"] == "intent" and [e["event"] for e in entries].count("submitted") == 0
    service = FakeService(store=tmp_path / "server")
    assert service.jobs_tagged(last["fingerprint"]) == 1  # the service has it; the journal has no id for it
    resumed, _ = qbo(tmp_path, 0.0, "jobs", "resume", "R")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    found = [e for e in JobJournal.in_run_dir(tmp_path / "R").read() if e["fingerprint"] == last["fingerprint"]]
    assert [e["event"] for e in found][:3] == ["intent", "submitted", "done"] and found[1]["via"] == "tag"
    assert FakeService(store=tmp_path / "server").jobs_tagged(last["fingerprint"]) == 1  # not resubmitted


@pytest.mark.slow
def test_timeouts_before_a_run_folder_exists_and_in_jobs_status_name_no_resume(tmp_path):
    FakeService(store=tmp_path / "server")
    (tmp_path / "c.toml").write_text(CONFIG.to_toml())
    proc, took = qbo(tmp_path, 0.0, "submit", "c.toml", "--backend", "ibm:ibm_test", "--out", "R", "--yes",
                     "--timeout", "0.5")  # lands in start-up, the connection or the plan
    assert proc.returncode == TIMED_OUT_EXIT and errors(proc) == ["timed out after 0.5 s"], proc.stdout + proc.stderr
    assert took < 0.5 + STARTUP_S + MARGIN_S and not (tmp_path / "R" / "run.json").exists()
    done, _ = qbo(tmp_path, 0.0, "submit", "c.toml", "--backend", "ibm:ibm_test", "--out", "S", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    journal = tmp_path / "S" / "jobs.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[-1])["event"] == "done"
    journal.write_bytes(b"".join(lines[:-1]))  # as if killed before the last job's end was journalled
    proc, took = qbo(tmp_path, 60.0, "jobs", "status", "S", "--timeout", "4")  # the service answers 60 s late
    assert proc.returncode == TIMED_OUT_EXIT and errors(proc) == ["timed out after 4 s"], proc.stdout + proc.stderr
    assert 4 <= took < 4 + STARTUP_S + MARGIN_S, took


@pytest.mark.slow
def test_backends_stops_waiting_for_ibm_in_time_to_list_the_rest(tmp_path):
    """The IBM look-up hangs (60 s per reply): with --timeout 4 the command still lists every
    local target and says IBM did not answer, within the deadline, exit 0."""
    FakeService(store=tmp_path / "server")
    proc, took = qbo(tmp_path, 60.0, "backends", "--timeout", "4")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == "exact" and "# ibm: none reachable (no answer within" in proc.stdout
    assert 4 - 0.25 <= took < 4 + STARTUP_S + MARGIN_S, took  # TIMEOUT_MARGIN_S before the deadline


def test_the_deadline_waits_for_an_uninterrupted_block_then_times_out_with_124():
    from qbo.files import Interrupted, deadline, time_left, uninterrupted

    finished = []
    started = time.monotonic()
    with pytest.raises(Interrupted) as caught:
        with deadline(0.05):
            assert 0 < time_left() <= 0.05
            with uninterrupted:  # a journal write: the alarm is held until it ends
                time.sleep(0.2)
                finished.append(time.monotonic() - started)
            time.sleep(5)  # never reached to its end
    assert finished and finished[0] >= 0.2 and time.monotonic() - started < 1.0
    assert caught.value.timed_out and caught.value.exit_code == TIMED_OUT_EXIT == 124
    assert caught.value.note == "timed out after 0.05 s" and time_left() is None
    with deadline(None):  # no limit: nothing armed
        assert time_left() is None
