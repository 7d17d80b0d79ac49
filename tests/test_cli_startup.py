"""Quick answers (issue 26 item 8): `qbo --help` and a refused bad oracle import no heavy
library. Checked on ``sys.modules`` in a fresh interpreter, never by timing; the times are
in docs/limits.md with the command that measured them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("qiskit", "qiskit_aer", "qiskit_ibm_runtime", "mitiq", "matplotlib", "dask", "scipy", "pandas", "pyarrow")

HELP = [["--help"], ["estimate", "--help"], ["plot", "--help"]]


def test_help_imports_no_heavy_library():
    for args, out in zip(HELP, _many(HELP), strict=True):
        assert out["code"] == 0 and out["loaded"] == [], (args, out)


def test_the_probe_sees_a_heavy_import():
    """The check can fail: a good estimate does import Qiskit."""
    [out] = _many([["estimate", "--oracle", "bernoulli:0.5", "--epsilon", "0.2"]])
    assert out["code"] == 0 and "qiskit" in out["loaded"]


BAD_OPTIONS = [
    (["estimate", "--oracle", "bernoulli:1.7", "--epsilon", "0.1"], "error: p must be a probability in [0, 1], got 1.7"),
    (["estimate", "--oracle", "gaussian:mean=0.4,std=-1"], "error: std must be a finite number > 0"),
    (["estimate", "--oracle", "discrete:values=0|1,probs=0.5|0.6"], "error: probs must sum to 1"),
    (["estimate", "--epsilon", "0"], "error: "),
    (["circuits", "export", "--oracle", "bernoulli:2", "-o", "never-written.qasm"], "error: p must be a probability"),
    (["estimate", "--target", "nope"], "error: unknown target 'nope', expected exact, aer"),
    (["estimate", "--target", "fake:"], "expected fake:BACKEND"),
    (["estimate", "--method", "nope"], "error: --method must be one of iae, mlae, mc, lrae, auto, got 'nope'"),
    (["estimate", "--mitigation", "nope"], "error: --mitigation must be one of none, rem"),
    (["run", "--trials", "0"], "error: --trials must be an integer in [1, "),
    (["run", "--budget", "0"], "error: --budget must be an integer in [1, "),
    (["run", "--seed", "-1"], "error: --seed must be an integer in [0, "),
    (["run", "--algorithms", "q-gp-ucb,nope"], "error: --algorithms must be one of q-gp-ucb, gp-ucb"),
    (["run", "--algorithms", ","], "error: --algorithms must name at least one policy"),
    (["run", "--problem", "nope"], "error: --problem must be one of synthetic-bernoulli"),
    (["run", "--target", "aer:"], "error: target 'aer:': expected aer:CALIBRATION"),
    (["run", "--estimator", "nope"], "error: --estimator must be one of iae, mlae, mc, lrae, auto"),
    (["run", "--accounting", "nope"], "error: --accounting must be one of honest, reference"),
    (["run", "--mitigation", "nope"], "error: --mitigation must be one of none, rem"),
    (["run", "--workers", "0"], "error: workers must be an integer from 1 to 64 (limit WORKERS_MAX), got 0"),
    (["run", "--workers", "65"], "error: workers must be an integer from 1 to 64 (limit WORKERS_MAX), got 65"),
]

_MANY = """
import contextlib, io, json, sys
cases, heavy = json.loads(sys.argv[1]), set(json.loads(sys.argv[2]))
from qbo.cli.app import main
out = []
for args in cases:
    sys.argv = ["qbo", *args]
    err = io.StringIO()
    code = 0
    with contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as exc:
            code = exc.code
    out.append({"code": code, "stderr": err.getvalue(), "loaded": sorted({m.split(".")[0] for m in sys.modules} & heavy)})
print("PROBE", json.dumps(out))
"""


def _many(cases: list[list[str]]) -> list[dict]:
    """Run ``qbo CASE`` for every case in turn in one fresh interpreter (one start, not one a
    case): per case its exit code, stderr and the heavy libraries loaded so far."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _MANY, json.dumps(cases), json.dumps(HEAVY)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("PROBE ")]
    assert line, done.stderr
    return json.loads(line[-1][6:])


def test_bad_options_and_oracles_are_refused_before_qiskit_is_imported(tmp_path):
    """One interpreter refuses every case in turn: after each, still no heavy library is loaded
    (sys.modules only grows, so this is the check of a fresh interpreter a case, and more)."""
    cases = [[*args, "--out", str(tmp_path / "never")] if args[0] == "run" else args for args, _ in BAD_OPTIONS]
    for (args, message), out in zip(BAD_OPTIONS, _many(cases), strict=True):
        assert out["code"] == 2 and out["loaded"] == [], (args, out)
        assert message in out["stderr"] and len(out["stderr"].strip().splitlines()) == 1, (args, out)
    assert not (tmp_path / "never").exists() and not (ROOT / "never-written.qasm").exists()


def test_the_light_name_tables_equal_the_registries():
    from qbo.algorithms.registry import POLICY_NAMES
    from qbo.cli import quick_checks as quick
    from qbo.execution.base import KINDS
    from qbo.execution.targets import TARGET_FORMS
    from qbo.experiments.accounting import ACCOUNTINGS
    from qbo.experiments.config import ESTIMATORS, MITIGATIONS
    from qbo.problems.registry import ALL_PROBLEMS

    assert quick.POLICY_NAMES == POLICY_NAMES
    assert quick.PROBLEM_NAMES == tuple(ALL_PROBLEMS)
    assert quick.METHODS == tuple(ESTIMATORS)
    assert quick.MITIGATIONS == tuple(MITIGATIONS)
    assert quick.ACCOUNTINGS == tuple(ACCOUNTINGS)
    assert quick.TARGET_KINDS == KINDS and quick.TARGET_FORMS == TARGET_FORMS


def _outcome(check, text):
    try:
        return ("ok", check(text))
    except ValueError as exc:
        return ("refused", str(exc))


_TARGETS = st.one_of(
    st.text(max_size=12),
    st.builds(lambda k, sep, name: k + sep + name, st.sampled_from(["exact", "aer", "fake", "ibm", "Aer", ""]),
              st.sampled_from(["", ":"]), st.text(alphabet=st.characters(codec="utf-8"), max_size=110)),
    st.sampled_from(["aer", "aer:fake_torino", "fake:FakeManilaV2", "ibm:ibm_torino", "fake:1x", "ibm:a" * 30,
                     "aer:a b", "aer:" + "x" * 5000, "exact:x", "fake:", "ibm"]),
)


@settings(max_examples=300, deadline=None)
@given(_TARGETS)
def test_the_quick_target_check_refuses_what_parse_target_refuses_with_its_words(text):
    from qbo.cli.quick_checks import check_target
    from qbo.execution.targets import parse_target

    quick, full = _outcome(check_target, text), _outcome(parse_target, text)
    assert quick[0] == full[0], (text, quick, full)
    assert quick == full if quick[0] == "refused" else quick[1] == full[1].kind
