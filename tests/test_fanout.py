"""Fan-out on Dask: results independent of the workers, a separate scheduler, kill and resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.fanout import parse_scheduler, pending_units, run_fanned_out
from qbo.experiments.runner import lockstep_groups, run_experiment, units

TINY = ExperimentConfig(budget=400, trials=2)
FILES = ("stages.jsonl", "summary.csv", "config.toml", "run.json")


def files(folder: Path, names=FILES) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in names}


hosts = st.text("abcXYZ019.-_", min_size=1, max_size=20)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["tcp", "tls", "ws", "wss"]), hosts, st.integers(1, 65535))
def test_scheduler_addresses_parse(scheme, host, port):
    address = f"{scheme}://{host}:{port}"
    assert parse_scheduler(address) == address


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=30))
def test_bad_scheduler_addresses_name_the_value(text):
    try:
        parse_scheduler(text)
    except ValueError as exc:
        assert repr(text) in str(exc)


@pytest.mark.parametrize("bad", ["localhost:8786", "tcp://:8786", "tcp://host", "tcp://host:0",
                                 "tcp://host:70000", "http://host:8786", "tcp://ho st:1"])
def test_bad_scheduler_addresses_are_refused(bad):
    with pytest.raises(ValueError, match="tcp://HOST:PORT"):
        parse_scheduler(bad)


@pytest.mark.parametrize("args, fragment", [(["--workers", "0"], "got 0"),
                                            (["--scheduler", "localhost:8786"], "'localhost:8786'")])
def test_bad_fanout_options_exit_2_with_one_line_and_no_folder(tmp_path, args, fragment):
    result = CliRunner().invoke(app, ["run", "--budget", "50", "--trials", "1", "--out", str(tmp_path / "x"), *args])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_workers_one_runs_in_process_and_equals_the_plain_run(tmp_path):
    seen = []
    run_fanned_out(TINY, tmp_path / "a", on_unit=lambda key, done, total: seen.append((key, done, total)))
    run_experiment(TINY, tmp_path / "b")
    assert files(tmp_path / "a") == files(tmp_path / "b")
    in_order = [u for group in lockstep_groups(TINY) for u in group]  # classical trials step together
    assert sorted(u.key for u in in_order) == sorted(u.key for u in units(TINY))
    assert seen == [(u.key, i + 1, 4) for i, u in enumerate(in_order)]
    assert pending_units(TINY, tmp_path / "a") == []


@pytest.mark.slow
def test_two_local_workers_give_byte_identical_files(tmp_path):
    run_fanned_out(TINY, tmp_path / "one", workers=1)
    seen = []
    run_fanned_out(TINY, tmp_path / "two", workers=2, processes=False, on_unit=lambda *a: seen.append(a))
    assert files(tmp_path / "one") == files(tmp_path / "two")
    assert not (tmp_path / "two" / "units").exists()  # merged: stages.jsonl holds each record once
    assert sorted(key for key, _, _ in seen) == sorted(u.key for u in units(TINY))
    assert [done for _, done, _ in seen] == [1, 2, 3, 4]


@pytest.mark.slow
def test_a_separately_started_scheduler_runs_the_units(tmp_path):
    from distributed import LocalCluster

    run_fanned_out(TINY, tmp_path / "local")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                      dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://")
        run_fanned_out(TINY, tmp_path / "remote", scheduler=cluster.scheduler_address)
    assert files(tmp_path / "local") == files(tmp_path / "remote")


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line(tmp_path):
    result = CliRunner().invoke(app, ["run", "--budget", "50", "--trials", "1", "--out", str(tmp_path / "x"),
                                      "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "tcp://127.0.0.1:1" in lines[0], result.stderr


@pytest.mark.slow
def test_kill_9_during_a_fanned_out_run_then_resume_gives_identical_files(tmp_path):
    config = ["--budget", "3000", "--trials", "2"]
    clean = CliRunner().invoke(app, ["run", *config, "--out", str(tmp_path / "clean")])
    assert clean.exit_code == 0, clean.output
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "qbo.cli", "run", *config, "--out", str(out), "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        journals = list((out / "units").glob("*.jsonl")) if (out / "units").exists() else []
        if sum(p.stat().st_size for p in journals) > 200_000:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the client, its scheduler and both workers
    assert proc.wait() == -signal.SIGKILL
    assert not (out / "stages.jsonl").exists()
    resumed = CliRunner().invoke(app, ["run", "--resume", str(out), "--workers", "2"])
    assert resumed.exit_code == 0, resumed.output
    assert files(out, FILES + ("regret.png",)) == files(tmp_path / "clean", FILES + ("regret.png",))
    assert not (out / "units").exists()


def _square(x: int) -> int:
    return x * x


def test_fan_out_keeps_job_order_in_process():
    from qbo.experiments.fanout import fan_out

    assert fan_out(_square, [3, 1, 2]) == [9, 1, 4]


@pytest.mark.slow
def test_fan_out_keeps_job_order_on_two_workers():
    from qbo.experiments.fanout import fan_out

    assert fan_out(_square, list(range(7)), workers=2, processes=False) == [x * x for x in range(7)]


@pytest.mark.slow
def test_ctrl_c_during_a_fanned_out_run_stops_it_at_once_then_resume_gives_identical_files(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) on two local workers:
    the run stops in well under the seconds a graceful cluster shutdown takes, with one line
    and no worker's traceback, leaves no process behind, and --resume finishes it."""
    config = ["--budget", "3000", "--trials", "2"]
    clean = CliRunner().invoke(app, ["run", *config, "--out", str(tmp_path / "clean")])
    assert clean.exit_code == 0, clean.output
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "qbo.cli", "run", *config, "--out", str(out), "--workers", "2",
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:  # until the workers have journalled stages
        journals = list((out / "units").glob("*.jsonl")) if (out / "units").exists() else []
        if sum(p.stat().st_size for p in journals) > 0:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    code = proc.wait(timeout=60)
    took = time.monotonic() - sent
    stderr = proc.stderr.read()
    left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
    for pid in left:
        os.kill(int(pid), signal.SIGKILL)
    assert code == 130 and not left, (code, left)
    assert took < 2.5, took  # a graceful shutdown took 3.4-5 s on the 2-core machine
    assert stderr.strip() == f"interrupted; resume with: qbo run --resume {out}", stderr
    assert not (out / "stages.jsonl").exists()
    resumed = CliRunner().invoke(app, ["run", "--resume", str(out), "--workers", "2"])
    assert resumed.exit_code == 0, resumed.output
    assert files(out, FILES + ("regret.png",)) == files(tmp_path / "clean", FILES + ("regret.png",))


@pytest.mark.parametrize("workers", [0, -1, 65, 100000, True, 2.0, "2"])
def test_workers_outside_their_limit_are_bad_input(workers):
    from qbo.errors import BadInput
    from qbo.experiments.fanout import check_workers
    from qbo.limits import WORKERS_MAX

    assert check_workers(WORKERS_MAX) == WORKERS_MAX and check_workers(1) == 1
    with pytest.raises(BadInput, match="limit WORKERS_MAX"):
        check_workers(workers)
