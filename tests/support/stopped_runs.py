"""A `qbo run` as a child process that a test stops (kill -9, SIGINT, SIGTERM) and then
resumes, and the files by which the resumed run is compared with one left alone
(tests/test_kill_resume.py, tests/test_reliability_interrupts.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARGS = ("run", "--budget", "1500", "--trials", "2", "--seed", "3")
COMPARED = ("config.toml", "run.json", "stages.jsonl", "summary.csv")


def start_cli(*args: str, cwd: Path) -> subprocess.Popen:
    """``python -m qbo.cli ARGS`` of this tree in ``cwd``, its output piped."""
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "qbo.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finished_files(folder: Path) -> dict[str, bytes]:
    """The compared files of a finished run, which holds each stage record once (in
    stages.jsonl: no unit journal is left)."""
    assert not (folder / "units").exists()
    return {name: (folder / name).read_bytes() for name in COMPARED}


def reference_run(cwd: Path) -> tuple[dict[str, bytes], float]:
    """The files of ``ARGS`` run undisturbed in ``cwd``, and its wall time in seconds."""
    started = time.monotonic()
    proc = start_cli(*ARGS, "--out", "R", cwd=cwd)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    return finished_files(cwd / "R"), time.monotonic() - started


def resume_or_restart(cwd: Path, expected: dict[str, bytes], moment: object) -> None:
    """After a stop: resume ``cwd/R`` if it was claimed (run.json written), else run ``ARGS``
    again (nothing was left to resume); either way the files are ``expected``."""
    run = cwd / "R"
    again = start_cli("run", "--resume", "R", cwd=cwd) if (run / "run.json").exists() else start_cli(*ARGS, "--out", "R", cwd=cwd)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, (moment, err.decode())
    assert finished_files(run) == expected, moment
