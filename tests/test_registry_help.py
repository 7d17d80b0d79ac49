"""`qbo run --help` is generated from the registries: it names every policy and problem."""

import re

from typer.testing import CliRunner

from qbo.algorithms import POLICIES
from qbo.cli.app import app
from qbo.experiments.config import ESTIMATORS, MITIGATIONS
from qbo.problems import ALL_PROBLEMS


def test_run_help_names_every_registered_policy_and_problem():
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "4000", "NO_COLOR": "1"})
    assert result.exit_code == 0
    text = re.sub(r"-\n\s+", "-", result.stdout)  # plain (click) help wraps a long name at its hyphen
    words = set(text.replace("(", " ").replace(",", " ").replace(";", " ").split())
    assert len(POLICIES) == 14
    missing = [name for name in list(POLICIES) + list(ALL_PROBLEMS) if name not in words]
    assert not missing, missing
    assert all(f" {name} " in f" {text} " or name in words for name in ESTIMATORS + MITIGATIONS)


def test_registry_entries_carry_their_metadata():
    from qbo.algorithms.registry import policy_entry
    from qbo.problems.registry import problem_entry

    assert policy_entry("q-gp-ucb").kind() == "quantum" and policy_entry("gp-ucb").kind() == "classical"
    assert "lengthscale" in policy_entry("gp-ucb").options
    assert policy_entry("ctv").clocked and not policy_entry("gp-ucb").clocked
    assert problem_entry("tv-synthetic").drifting and problem_entry("tv-synthetic").classical_budget == 130
    assert problem_entry("synthetic-gaussian").gaussian and not problem_entry("synthetic-bernoulli").gaussian


def test_run_and_run_experiment_agree_on_the_default_budget_of_a_classical_drifting_run():
    from qbo.experiments.config import DEFAULT_BUDGET, ExperimentConfig

    classical = ExperimentConfig(problem="tv-synthetic", algorithms=("ctv",))
    assert classical.budget == 130
    assert ExperimentConfig().with_overrides(problem="tv-synthetic", algorithms=("ctv",)).budget == 130
    assert ExperimentConfig(problem="tv-synthetic", algorithms=("ctv", "q-ctv-gp-ucb")).budget == DEFAULT_BUDGET
    assert ExperimentConfig(problem="tv-synthetic", algorithms=("ctv",), budget=50).budget == 50
