"""A user's own problem through `qbo run` (issue 26, item 3): examples/custom."""

from __future__ import annotations

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

import qbo

from qbo.cli.app import app
from qbo.errors import BadFile
from qbo.experiments.config import ExperimentConfig, load_config
from qbo.experiments.runner import resume_experiment, run_experiment
from qbo.experiments.summary import REWARD_COLUMNS
from qbo.oracles import bernoulli
from tests.support.crash import crash_at_append

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "custom"
FILES = ("stages.jsonl", "summary.csv", "regret.png")


def _example(tmp_path: Path) -> Path:
    """examples/custom copied to a folder of its own (the module is found beside the config)."""
    folder = tmp_path / "custom"
    shutil.copytree(EXAMPLE, folder)
    return folder / "experiment.toml"


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in FILES}


def test_the_example_runs_from_the_cli_reports_rewards_and_plots(tmp_path):
    config = _example(tmp_path)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(config), "--budget", "600", "--trials", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "exact means unknown" in result.stdout and "best arm found" in result.stdout
    header = (out / "summary.csv").read_text().splitlines()[0]
    assert tuple(header.split(",")) == REWARD_COLUMNS
    records = [json.loads(line) for line in (out / "stages.jsonl").read_text().splitlines()]
    assert records and all(r["cum_regret"] is None for r in records)  # no regret is made up
    assert load_config(out / "config.toml").problem_path == str(config.parent.resolve())
    (out / "regret.png").unlink()
    plotted = CliRunner().invoke(app, ["plot", str(out)])
    assert plotted.exit_code == 0, plotted.output
    assert (out / "regret.png").read_bytes()[:4] == b"\x89PNG"
    exported = CliRunner().invoke(app, ["export", str(out)])
    assert exported.exit_code == 0, exported.output
    import pyarrow.parquet as pq

    table = pq.read_table(out / "stages.parquet")
    assert table.num_rows == len(records) and table.column("cum_regret").null_count == len(records)
    stages, summary = qbo.load_run(out)  # the best-arm summary, not a regret one
    assert tuple(summary.columns) == REWARD_COLUMNS and list(summary["algorithm"]) == ["q-gp-ucb", "gp-ucb"]
    assert len(stages) == len(records) and stages["cum_regret"].isna().all()
    (out / "summary.csv").write_text((out / "summary.csv").read_text().replace("best_arm,", "final_regret_mean,", 1))
    with pytest.raises(BadFile, match="expected"):
        qbo.load_run(out)


def test_a_crashed_custom_run_resumes_to_identical_files(tmp_path, monkeypatch):
    config = load_config(_example(tmp_path)).with_overrides(budget=400, trials=2)
    run_experiment(config, tmp_path / "clean")
    crash_at_append(monkeypatch, config, tmp_path / "crashed", 40)
    resume_experiment(tmp_path / "crashed")
    assert _files(tmp_path / "crashed") == _files(tmp_path / "clean")


def test_known_means_give_regret(tmp_path):
    module = tmp_path / "known_problem.py"
    module.write_text("import numpy as np\nfrom qbo.oracles import bernoulli\n\n"
                      "def make(seed):\n    p = [0.2, 0.5, 0.8]\n"
                      "    return np.array([[0.0], [0.5], [1.0]]), [bernoulli(q) for q in p]\n")
    config = ExperimentConfig(problem="known_problem:make", problem_path=str(tmp_path), algorithms=("gp-ucb",),
                              budget=200, trials=1)
    records = run_experiment(config, tmp_path / "run")
    assert records[-1]["cum_regret"] is not None and records[-1]["cum_regret"] >= 0
    assert bernoulli(0.8).mean == 0.8


@pytest.mark.parametrize("spec, fragment", [
    ("my problem:make", "expected a registered name or package.module:factory"),
    ("no_such_module_qbo:make", "cannot import module 'no_such_module_qbo'"),
    ("my_problem:nothing", "has no callable 'nothing'"),
])
def test_bad_custom_problems_are_one_line(tmp_path, spec, fragment):
    path = _example(tmp_path)
    text = path.read_text().replace('problem = "my_problem:make"', f'problem = "{spec}"')
    path.write_text(text)
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_sigkill_and_resume_of_the_example_give_identical_files(tmp_path):
    config = _example(tmp_path)
    args = ["--budget", "20000", "--trials", "3"]
    clean = CliRunner().invoke(app, ["run", str(config), *args, "--out", str(tmp_path / "clean")])
    assert clean.exit_code == 0, clean.output
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(EXAMPLE.parent.parent))
    proc = subprocess.Popen([sys.executable, "-m", "qbo.cli", "run", str(config), *args, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 120
    while time.time() < deadline and not ((out / "units").exists() and any((out / "units").glob("*.jsonl"))):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # killed mid-run, not finished
    assert not (out / "stages.jsonl").exists()
    resumed = CliRunner().invoke(app, ["run", "--resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert _files(out) == _files(tmp_path / "clean")


def test_optimize_runs_one_unit_in_memory_and_reports_no_regret_for_a_black_box():
    import importlib.util

    from qbo.experiments.optimize import optimize

    spec = importlib.util.spec_from_file_location("example_problem_for_optimize", EXAMPLE / "my_problem.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    arms, oracles = module.make(seed=0, arms=8)
    result = optimize(arms, oracles, algorithm="gp-ucb", budget=300, options={"lengthscale": 0.1})
    assert result.regret is None and result.oracle_calls == 300 and len(result.records) == 300
    assert 0 <= result.best_arm < 8 and result.best_features.shape == (1,) and 0.0 <= result.best_reward <= 1.0
    known = optimize(arms, [bernoulli(0.1 * (i + 1)) for i in range(8)], algorithm="gp-ucb", budget=300)
    assert known.regret is not None and known.regret >= 0
