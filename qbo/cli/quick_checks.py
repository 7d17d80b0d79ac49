"""Quick answers (issue 26 item 8): the CLI's options checked before Qiskit and qbo's
registries are imported, so that a bad one is refused in a fraction of a second.

The names and forms come from light tables here; tests/test_cli_startup.py keeps each equal to
the real registry or parser (policies, problems, estimators, mitigations, accountings, target
forms), so a refusal here says what the full check would say. What passes here is checked again,
in full, where it is used.
"""

from __future__ import annotations

import re

from qbo.errors import BadInput
from qbo.limits import BUDGET_MAX, SEED_MAX, TRIALS_MAX, WORKERS_MAX, check_int

# Kept equal to the registries by tests/test_cli_startup.py.
POLICY_NAMES = (
    "q-gp-ucb", "gp-ucb", "q-linucb", "linucb", "q-ucb-halve", "q-se", "thompson", "kl-ucb", "gp-ts",
    "tv-gp-ucb", "ctv-fixed", "ctv", "ctv-simple", "q-ctv-gp-ucb",
)  # qbo.algorithms.registry.POLICY_NAMES
PROBLEM_NAMES = (
    "synthetic-bernoulli", "synthetic-gaussian", "automl-svm", "linear", "berkenkamp-gaussian",
    "berkenkamp-bernoulli", "michalewicz-gaussian", "michalewicz-bernoulli", "synthetic-bernoulli-centred",
    "synthetic-bernoulli-top", "tv-synthetic",
)  # qbo.problems.registry.ALL_PROBLEMS
METHODS = ("iae", "mlae", "mc", "lrae", "auto")  # qbo.qmc.METHODS
MITIGATIONS = ("none", "rem", "zne", "zne+rem")  # qbo.mitigation.NAMES
ACCOUNTINGS = ("honest", "reference")  # qbo.experiments.accounting.ACCOUNTINGS

# The forms of qbo.execution.targets.parse_target.
TARGET_KINDS = ("exact", "aer", "fake", "ibm")  # qbo.execution.base.KINDS
TARGET_FORMS = "exact, aer, aer:CALIBRATION, fake:BACKEND or ibm:BACKEND"
_BACKEND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,99}")
_MAX_PATH = 4096


def check_target(text: str) -> str:
    """The kind of a target string; a one-line ValueError, as ``parse_target``'s, otherwise."""
    kind, colon, name = text.partition(":")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if kind not in TARGET_KINDS or (kind == "exact" and colon):
        raise ValueError(f"unknown target {shown!r}, expected {TARGET_FORMS}")
    if not colon:
        if kind in ("fake", "ibm"):
            raise ValueError(f"target {shown!r} needs a backend name, expected {kind}:BACKEND")
        return kind
    if kind == "aer":
        if not name or len(name) > _MAX_PATH or any(c.isspace() or not c.isprintable() for c in name):
            raise ValueError(f"target {shown!r}: expected aer:CALIBRATION, a snapshot name or file path")
        return kind
    if not _BACKEND_NAME.fullmatch(name):
        raise ValueError(
            f"target {shown!r}: expected {kind}:BACKEND, a backend name of letters, digits, '_' or '-' "
            "(at most 100 characters)"
        )
    return kind


def check_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    """One-line BadInput unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise BadInput(f"{option} must be one of {', '.join(choices)}, got {value!r}")


def check_estimate_options(method: str, target: str, mitigation: str) -> None:
    """`qbo estimate`'s names, before any heavy import."""
    check_choice("--method", method, METHODS)
    check_target(target)
    check_choice("--mitigation", mitigation, MITIGATIONS)


def check_run_options(
    *, problem: str | None, algorithms: tuple[str, ...] | None, budget: int | None, trials: int | None,
    target: str | None, seed: int | None, estimator: str | None, accounting: str | None,
    mitigation: str | None, workers: int | None,
) -> None:
    """`qbo run`'s options that were given, before any heavy import; a config file's keys are
    checked where it is read (``qbo.experiments.config``)."""
    if problem is not None and ":" not in problem:  # module:factory, a user's problem, is checked on load
        check_choice("--problem", problem, PROBLEM_NAMES)
    if algorithms is not None:
        if not algorithms:
            raise BadInput("--algorithms must name at least one policy, e.g. q-gp-ucb,gp-ucb")
        for name in algorithms:
            check_choice("--algorithms", name, POLICY_NAMES)
    if budget is not None:
        check_int(budget, "--budget", 1, BUDGET_MAX, "BUDGET_MAX")
    if trials is not None:
        check_int(trials, "--trials", 1, TRIALS_MAX, "TRIALS_MAX")
    if seed is not None:
        check_int(seed, "--seed", 0, SEED_MAX, "SEED_MAX")
    if workers is not None and not 1 <= workers <= WORKERS_MAX:  # as qbo.experiments.fanout says it
        raise BadInput(f"workers must be an integer from 1 to {WORKERS_MAX} (limit WORKERS_MAX), got {workers!r}")
    if target is not None:
        check_target(target)
    if estimator is not None:
        check_choice("--estimator", estimator, METHODS)
    if accounting is not None:
        check_choice("--accounting", accounting, ACCOUNTINGS)
    if mitigation is not None:
        check_choice("--mitigation", mitigation, MITIGATIONS)
