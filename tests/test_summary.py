"""summary.csv and the printed table: one trial leaves the standard error undefined."""

import math

import pandas as pd

from qbo.experiments.config import ExperimentConfig
from qbo.experiments.summary import format_table, mean_stderr, summarise, write_summary_csv


def _records(regrets):
    return [{"trial": t, "algorithm": "gp-ucb", "cum_regret": r, "cum_calls": 200, "stage": 200}
            for t, r in enumerate(regrets)]


def test_one_trial_has_no_standard_error_in_the_table_or_the_csv(tmp_path):
    rows = summarise(_records([11.8]), ExperimentConfig())
    assert math.isnan(rows[0]["final_regret_stderr"])
    table = format_table(rows)
    assert "n/a" in table and "nan" not in table
    write_summary_csv(tmp_path / "summary.csv", rows, ExperimentConfig())
    line = (tmp_path / "summary.csv").read_text().splitlines()[1]
    assert line == "gp-ucb,1,11.8,,200,200,honest"
    read = pd.read_csv(tmp_path / "summary.csv")  # as qbo.experiments.frames.load_run reads it
    assert math.isnan(read["final_regret_stderr"][0]) and read["final_regret_mean"][0] == 11.8


def test_two_trials_print_the_standard_error():
    rows = summarise(_records([1.0, 3.0]), ExperimentConfig())
    assert mean_stderr([1.0, 3.0]) == (2.0, 1.0)
    assert "2.00 ±     1.00" in format_table(rows)
