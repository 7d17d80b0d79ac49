"""examples/frontier.toml (issue 23): it loads and validates, runs end to end at a tiny
budget, and its quantum settings are the picks of the tuning on the training seeds that
bench/results/frontier23_centred_0.01_tuning.csv records (so the file cannot drift from the
measurement it cites)."""

from __future__ import annotations

import csv
from pathlib import Path

from qbo.experiments.config import load_config
from qbo.experiments.runner import run_experiment
from tests.test_frontier import frontier

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "frontier.toml"
TUNING = ROOT / "bench" / "results" / "frontier23_centred_0.01_tuning.csv"


def _picks() -> dict[str, dict]:
    """The picked row of every learner in the centred 0.01 cell of the tuning table."""
    rows = [r for r in csv.DictReader(TUNING.open()) if r["placement"] == "centred" and float(r["spread"]) == 0.01]
    return {r["learner"]: r for r in rows if r["picked"] == "True"}


def test_frontier_example_holds_the_training_seed_picks():
    config = load_config(EXAMPLE)
    assert config.problem == "synthetic-bernoulli-centred" and config.problem_options["spread"] == 0.01
    assert config.budget == 10**6
    picks = _picks()
    quantum = {learner.label for learner in frontier.LEARNERS if learner.quantum}
    best = min((p for label, p in picks.items() if label in quantum), key=lambda p: float(p["mean"]))
    assert best["learner"] == "q-gp-ucb resume" and config.algorithms[0] == "q-gp-ucb"
    assert int(best["horizon"]) > 0 and int(best["n"]) == 10  # training seeds 0-9
    for algorithm, label in (("q-gp-ucb", "q-gp-ucb resume"), ("q-ucb-halve", "q-ucb-halve")):
        options = tuple(dict(config.algorithm_options[algorithm]).items())
        assert frontier.options_label(options) == picks[label]["config"]


def test_frontier_example_runs_at_a_tiny_budget(tmp_path):
    config = load_config(EXAMPLE)
    small = config.with_overrides(budget=2000, trials=1)
    records = run_experiment(small, tmp_path / "run")
    finals = {r["algorithm"]: r for r in records}
    assert set(finals) == set(config.algorithms)
    assert all(r["cum_calls"] == 2000 for r in finals.values())
    assert (tmp_path / "run" / "summary.csv").exists()
