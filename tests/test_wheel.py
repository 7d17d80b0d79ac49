"""qbo from a wheel, in a fresh virtual environment, run from an empty directory (issue 8).

The wheel is built from this checkout without network (``--no-build-isolation``); the fresh
venv reaches the already installed dependencies through a .pth line, so nothing is downloaded.
What is checked: snapshots are package data (found outside the repository) and nothing is
looked up beside the source tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"), str(REPO)],
        check=True, capture_output=True,
    )
    (wheel,) = (tmp / "dist").glob("qbo-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip())
    (site / "_qbo_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True,
    )
    return venv


def _run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "QBO_"))}
    env["QBO_CALIBRATIONS_DIR"] = str(cwd / "user-calibrations")
    return subprocess.run([str(venv / "bin" / "qbo"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_installed_wheel_is_not_the_checkout(fresh_venv, tmp_path):
    out = subprocess.run(
        [str(fresh_venv / "bin" / "python"), "-c", "import qbo, qbo.noise as s; print(qbo.__file__); print(s.shipped_dir())"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert all(str(fresh_venv) in line and str(REPO) not in line for line in out), out


def test_calibrations_list_from_the_wheel(fresh_venv, tmp_path):
    result = _run(fresh_venv, tmp_path, "calibrations", "list")
    assert result.returncode == 0, result.stderr
    names = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    assert {"fake_brisbane", "fake_fez", "fake_sherbrooke", "fake_torino"} <= names
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written beside the user


def test_readme_estimate_from_the_wheel(fresh_venv, tmp_path):
    result = _run(fresh_venv, tmp_path, "estimate", "--oracle", "bernoulli:0.3", "--target", "aer:fake_torino",
                  "--epsilon", "0.05", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["target"] == "aer:fake_torino" and out["oracle_calls"] > 0
    assert out["ci_low"] <= out["value"] <= out["ci_high"]
