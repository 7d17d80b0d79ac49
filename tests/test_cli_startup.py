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

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("qiskit", "qiskit_aer", "qiskit_ibm_runtime", "mitiq", "matplotlib", "dask", "scipy", "pandas", "pyarrow")

_PROBE = """
import json, sys
heavy = set(json.loads(sys.argv[2]))
sys.argv = ["qbo", *json.loads(sys.argv[1])]
code = 0
try:
    from qbo.cli.app import main
    main()
except SystemExit as exc:
    code = exc.code
loaded = sorted({m.split(".")[0] for m in sys.modules} & heavy)
print("PROBE", json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


def _probe(args: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args), json.dumps(HEAVY)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    line = [ln for ln in done.stderr.splitlines() if ln.startswith("PROBE ")][-1]
    return {**json.loads(line[6:]), "stderr": done.stderr}


@pytest.mark.parametrize("args", [["--help"], ["estimate", "--help"], ["plot", "--help"]])
def test_help_imports_no_heavy_library(args):
    out = _probe(args)
    assert out["code"] == 0 and out["loaded"] == []


@pytest.mark.parametrize("args, message", [
    (["estimate", "--oracle", "bernoulli:1.7", "--epsilon", "0.1"], "error: p must be a probability in [0, 1], got 1.7"),
    (["estimate", "--oracle", "gaussian:mean=0.4,std=-1"], "error: std must be a finite number > 0"),
    (["estimate", "--oracle", "discrete:values=0|1,probs=0.5|0.6"], "error: probs must sum to 1"),
    (["estimate", "--epsilon", "0"], "error: "),
    (["circuits", "export", "--oracle", "bernoulli:2", "-o", "never-written.qasm"], "error: p must be a probability"),
])
def test_a_bad_oracle_is_refused_before_qiskit_is_imported(args, message):
    out = _probe(args)
    assert out["code"] == 2 and out["loaded"] == [], out
    assert message in out["stderr"]
    assert not (ROOT / "never-written.qasm").exists()


def test_the_probe_sees_a_heavy_import():
    """The check can fail: a good estimate does import Qiskit."""
    out = _probe(["estimate", "--oracle", "bernoulli:0.5", "--epsilon", "0.2"])
    assert out["code"] == 0 and "qiskit" in out["loaded"]
