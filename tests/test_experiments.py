"""The experiment runner: deterministic, resumable, honest files; the CLI's run and plot."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import resume_experiment, run_experiment
from tests.support.crash import crash_at_append

SMALL = ExperimentConfig(budget=1500, trials=2)
FILES = ("stages.jsonl", "summary.csv", "regret.png", "config.toml")


def files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in FILES}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """SMALL run once for this module: (its folder, its records)."""
    folder = tmp_path_factory.mktemp("small") / "run"
    return folder, run_experiment(SMALL, folder)


def test_seeded_run_is_deterministic(small_run, tmp_path):
    run_experiment(SMALL, tmp_path / "b")
    assert files(small_run[0]) == files(tmp_path / "b")


def test_stage_records_are_consistent(small_run):
    records = small_run[1]
    for (trial, alg) in {(r["trial"], r["algorithm"]) for r in records}:
        rows = [r for r in records if (r["trial"], r["algorithm"]) == (trial, alg)]
        calls = regret = 0
        for r in rows:
            calls = r["cum_calls"] if "calls_sha256" in r else calls + r["oracle_calls"]  # compact: checkpoints
            assert r["cum_calls"] == calls
            assert r["cum_calls"] <= SMALL.budget
            regret_step = r["cum_regret"] - regret
            assert regret_step >= -1e-9  # regret is a sum of non-negative gaps
            regret = r["cum_regret"]
            if r["method"] in ("iae", "mc"):
                assert r["honest_calls"] >= r["oracle_calls"]  # only the final overrun is trimmed
        assert rows[-1]["cum_calls"] == SMALL.budget  # leftover='recommend' spends all of T
        if alg == "gp-ucb":
            assert all(r["method"] == "sample" and r["oracle_calls"] == 1 for r in rows)


def test_crash_and_resume_gives_identical_files(small_run, tmp_path, monkeypatch):
    crash_at_append(monkeypatch, SMALL, tmp_path / "crashed", 700)
    assert not (tmp_path / "crashed" / "stages.jsonl").exists()  # nothing half-written
    # a torn trailing line, as a kill in mid-write would leave
    journal = sorted((tmp_path / "crashed" / "units").glob("*.jsonl"))[-1]
    with open(journal, "ab") as handle:
        handle.write(b'{"stage": 99, "arm"')
    resume_experiment(tmp_path / "crashed")
    assert files(tmp_path / "crashed") == files(small_run[0])


@pytest.mark.slow
def test_sigkill_and_resume_from_the_cli(tmp_path):
    out = tmp_path / "run"
    args = ["--budget", "10000", "--trials", "2", "--out", str(out)]
    clean = CliRunner().invoke(app, ["run", *args[:4], "--out", str(tmp_path / "clean")])
    assert clean.exit_code == 0, clean.output
    proc = subprocess.Popen([sys.executable, "-m", "qbo.cli", "run", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        # the first journal on disk (its first commit, or q-gp-ucb of trial 0 finished): the
        # gp-ucb trials (stepped together) and trial 1's q-gp-ucb are still to run
        if (out / "units").exists() and any((out / "units").glob("*.jsonl")):
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # killed mid-run, not finished
    assert not (out / "stages.jsonl").exists()
    resumed = CliRunner().invoke(app, ["run", "--resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert files(out) == files(tmp_path / "clean")


def test_reference_accounting_is_labelled_as_undercounting(tmp_path):
    result = CliRunner().invoke(app, ["run", "--budget", "800", "--trials", "1", "--accounting", "reference", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "UNDERCOUNTS" in result.stdout
    assert "UNDERCOUNTS" in (tmp_path / "summary.csv").read_text()


def test_plot_redraws(small_run, tmp_path):
    run = shutil.copytree(small_run[0], tmp_path / "run")
    (run / "regret.png").unlink()
    result = CliRunner().invoke(app, ["plot", str(run)])
    assert result.exit_code == 0 and (run / "regret.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "toml, fragment",
    [
        ("budget = -5\n", "budget must be an integer >= 1 and"),
        ("budgett = 5\n", "unknown key 'budgett'"),
        ("accounting = 'creative'\n", "'creative'"),
        ("algorithms = ['q-gp-ucb', 'magic']\n", "'magic'"),
        ("problem = 'nonsense'\n", "'nonsense'"),
        ("budget = \n", "not valid TOML"),
    ],
)
def test_bad_config_exits_2_with_one_line(tmp_path, toml, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    result = CliRunner().invoke(app, ["run", str(path), "--trials", "1", "--budget", "200", "--out", str(tmp_path / "out")] if "budget" not in toml else ["run", str(path), "--trials", "1", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert "Traceback" not in result.output


def test_resume_of_a_non_run_folder_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["run", "--resume", str(tmp_path)])
    assert result.exit_code == 2 and "config.toml" in result.stderr


def test_stages_jsonl_has_the_documented_fields(small_run):
    first = json.loads((small_run[0] / "stages.jsonl").read_text().splitlines()[0])
    for key in ("trial", "algorithm", "stage", "arm", "eps", "oracle_calls", "estimate", "cum_calls", "cum_regret"):
        assert key in first


@pytest.mark.parametrize("args, fragment", [(["run", "--budget", "abc"], "--budget"), (["estimate", "--nope"], "--nope")])
def test_usage_errors_are_one_line_with_exit_2(args, fragment):
    proc = subprocess.run([sys.executable, "-m", "qbo.cli", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in proc.stderr


def test_a_failed_validation_claims_no_folder(tmp_path):
    result = CliRunner().invoke(app, ["run", "--algorithms", "nonsense", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and not (tmp_path / "r").exists()
    fixed = CliRunner().invoke(app, ["run", "--algorithms", "q-gp-ucb", "--budget", "200", "--trials", "1", "--out", str(tmp_path / "r")])
    assert fixed.exit_code == 0, fixed.output


def test_service_error_messages_are_withheld(monkeypatch):
    from qiskit_ibm_runtime.exceptions import IBMInputValueError

    import qbo.execution.targets as targets

    def refuse(*args, **kwargs):
        raise IBMInputValueError("instance crn:v1:SECRET-TOKEN-123 is not valid")

    monkeypatch.setattr(targets, "make_executor", refuse)
    monkeypatch.setattr("qbo.execution.make_executor", refuse)
    result = CliRunner().invoke(app, ["estimate", "--target", "ibm:somewhere"])
    assert result.exit_code == 2
    assert "SECRET" not in result.output and "IBMInputValueError" in result.stderr


@pytest.mark.slow
def test_qbo_run_on_a_device_model_caps_depth_and_pads_like_estimate(tmp_path):
    """issue 8: calibration-aware depth applies to ``qbo run`` as to ``qbo estimate``: on
    aer:NAME every QMC stage is the capped, bias-padded IAE, planned with its own cost model."""
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import run_experiment

    config = ExperimentConfig(algorithms=("q-gp-ucb",), budget=3000, trials=1, target="aer:fake_torino")
    records = run_experiment(config, tmp_path / "run")
    quantum = [r for r in records if r["eps"] is not None]
    assert quantum and all(r["method"] == "iae+pad" for r in quantum)
    assert records[-1]["cum_calls"] == 3000


@pytest.mark.parametrize("algorithm", ["q-ucb-halve", "q-se"])
def test_a_resumable_policy_resumes_to_identical_files(tmp_path, monkeypatch, algorithm):
    """A stage record carries the arm's resumable QMC state ("qmc"); a resumed unit re-tells
    it, so a crashed run of a resumable policy finishes exactly like an uninterrupted one."""
    from qbo.experiments.config import ExperimentConfig

    config = ExperimentConfig(algorithms=(algorithm,), budget=4000, trials=1)
    run_experiment(config, tmp_path / "clean")
    crash_at_append(monkeypatch, config, tmp_path / "crashed", 6)
    resume_experiment(tmp_path / "crashed")
    assert files(tmp_path / "crashed") == files(tmp_path / "clean")
