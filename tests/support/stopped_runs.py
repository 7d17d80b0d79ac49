"""A `qbo run` as a child process that a test stops (kill -9, SIGINT, SIGTERM) and then
resumes, and the files by which the resumed run is compared with one left alone
(tests/test_kill_resume.py, tests/test_reliability_interrupts.py); and the kill -9 loop of
the compact-unit tests (``kill_9_then_resume``: tests/test_compact.py,
tests/test_compact_surrogates.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Protocol

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
ARGS = ("run", "--budget", "1500", "--trials", "2", "--seed", "3")
COMPARED = ("config.toml", "run.json", "stages.jsonl", "summary.csv")


CHILD_ENV = {"PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}  # a child that crashes prints its stacks


def start_cli(*args: str, cwd: Path) -> subprocess.Popen:
    """``python -m qbo.cli ARGS`` of this tree in ``cwd``, its output piped."""
    return subprocess.Popen([sys.executable, "-m", "qbo.cli", *args], cwd=cwd, env=os.environ | CHILD_ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def exit_report(returncode: int, err: bytes) -> str:
    """How a child ended, for an assertion message: its exit code (a signal that killed it by
    name) and its whole stderr (with ``CHILD_ENV``, a crash's stacks from faulthandler)."""
    how = f"killed by {signal.Signals(-returncode).name}" if returncode < 0 else f"exit {returncode}"
    return f"{how}; stderr:\n{err.decode(errors='replace')}"


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
    assert proc.returncode == 0, exit_report(proc.returncode, err)
    return finished_files(cwd / "R"), time.monotonic() - started


def resume_or_restart(cwd: Path, expected: dict[str, bytes], moment: object) -> None:
    """After a stop: resume ``cwd/R`` if it was claimed (run.json written), else run ``ARGS``
    again (nothing was left to resume); either way the files are ``expected``."""
    run = cwd / "R"
    again = start_cli("run", "--resume", "R", cwd=cwd) if (run / "run.json").exists() else start_cli(*ARGS, "--out", "R", cwd=cwd)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, f"resume after a stop at {moment}: {exit_report(again.returncode, err)}"
    assert finished_files(run) == expected, moment


class Tomlable(Protocol):
    """A run's config as ``kill_9_then_resume`` writes it (``qbo.experiments.config.ExperimentConfig``)."""

    def to_toml(self) -> str: ...


_RUN_OR_RESUME = ("import sys, pathlib; from qbo.experiments.config import load_config; from qbo.experiments.runner import "
                  "run_experiment, resume_experiment; p = pathlib.Path(sys.argv[1]); "
                  "(resume_experiment(p) if (p / 'run.json').exists() else run_experiment(load_config(sys.argv[2]), p))")


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info.st_size, info.st_mtime_ns


def kill_9_then_resume(config: Tomlable, base: Path, *, most: int, pause: tuple[float, float],
                       touched: str | None = None, seed: int = 21) -> tuple[Path, Path, int]:
    """Run ``config`` undisturbed in a child interpreter into ``base/clean``; then into
    ``base/killed``, started or resumed again after each kill -9, at most ``most`` kills, each
    a uniform ``pause`` after the child started or, with ``touched`` (a path in the run
    folder), after it first changed that file; then resumed to its end. Returns (clean,
    killed, kills made); a child that ends before its kill ends the loop.

    ``pause`` is in units of the wall time W of an undisturbed warm run (a second clean run,
    into ``base/warm``, after the first has filled numba's cache), so the kills land at the same
    points of the run on a loaded machine and on an idle one (absolute pauses killed nothing on
    an idle CI machine, and a cold first run's compile would inflate W)."""
    env = os.environ | CHILD_ENV
    toml = base / "config.toml"
    toml.write_text(config.to_toml())
    clean, killed = base / "clean", base / "killed"
    subprocess.run([sys.executable, "-c", _RUN_OR_RESUME, str(clean), str(toml)], check=True, env=env, timeout=600)
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", _RUN_OR_RESUME, str(base / "warm"), str(toml)], check=True, env=env,
                   timeout=600)
    wall = time.monotonic() - start
    shutil.rmtree(base / "warm")
    rng, kills = np.random.default_rng(seed), 0
    while kills < most:
        before = None if touched is None else _stamp(killed / touched)
        proc = subprocess.Popen([sys.executable, "-c", _RUN_OR_RESUME, str(killed), str(toml)], env=env)
        deadline = time.monotonic() + 120
        while touched is not None and _stamp(killed / touched) == before and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.02)  # until this process has opened (cut or grown) the file
        time.sleep(float(rng.uniform(*pause)) * wall)
        if proc.poll() is not None:
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
    subprocess.run([sys.executable, "-c", _RUN_OR_RESUME, str(killed), str(toml)], check=True, env=env, timeout=600)
    return clean, killed, kills
