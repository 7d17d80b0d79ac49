"""The README is a tested promise (issue 26 item 9): every shell command in its indented
command blocks runs here, in the slow suite, with a small budget, or is named below with the
reason it cannot run offline. A README command missing from ``HOW`` fails the test, so a new
example cannot go untested. (The README's Python blocks are run elsewhere.)

Budgets are made small by appending options (the last occurrence of an option wins); a
command's run folder placeholder ``runs/20261123-120000`` is replaced by a folder made by the
first ``qbo run`` here.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RUN_FOLDER = "runs/20261123-120000"
SMALL_RUN = ["--budget", "200", "--trials", "1", "--quiet"]

# command as written in the README (comment stripped) -> extra arguments, or a reason to skip
NEEDS_NETWORK = "installs packages from the network (pip)"
HOW: dict[str, list[str] | str] = {
    "pip install -e . && qbo run": NEEDS_NETWORK,
    'pip install -e ".[test]" && python -m pytest -q': NEEDS_NETWORK,
    "qbo run": SMALL_RUN,
    "qbo run examples/centred.toml": SMALL_RUN,
    "qbo run --problem synthetic-gaussian --algorithms q-gp-ucb,gp-ucb,thompson,kl-ucb --trials 5": SMALL_RUN,
    "qbo run examples/custom/experiment.toml": SMALL_RUN,
    f"qbo run --resume {RUN_FOLDER}": ["--quiet"],
    "qbo run --workers 4": SMALL_RUN,
    "qbo run --scheduler tcp://HOST:8786": "needs a running Dask scheduler at HOST (docs/scale-out.md)",
    f"qbo plot {RUN_FOLDER}": [],
    f"qbo plot {RUN_FOLDER} --logx --format svg --out regret.svg": [],
    f"qbo export {RUN_FOLDER}": [],
    "qbo run --target aer:fake_torino --mitigation zne+rem --budget 3000": SMALL_RUN,
    "qbo run --problem berkenkamp-gaussian --algorithms gp-ucb,q-gp-ucb --lengthscale lb": SMALL_RUN,
    "qbo run --problem tv-synthetic --algorithms ctv,tv-gp-ucb,gp-ucb": ["--budget", "40", "--trials", "1", "--quiet"],
    "qbo estimate --oracle gaussian:mean=0.4,std=0.2 --epsilon 0.01 --method auto --json": [],
    "qbo estimate --oracle bernoulli:0.3 --target aer:fake_torino --epsilon 0.05": [],
    "qbo estimate --oracle bernoulli:0.3 --target aer:fake_torino --epsilon 0.01 --method mlae": ["--epsilon", "0.05"],
    "qbo estimate --oracle bernoulli:0.3 --target aer:fake_torino --mitigation zne+rem --twirl": ["--epsilon", "0.1"],
    "qbo circuits export --oracle bernoulli:0.3 --power 2 -o circuits/bernoulli_k2.qasm": [],
    "qbo calibrations list": [],
    "qbo calibrations show fake_brisbane": [],
    "qbo calibrations export --from-fake FakeKingston": [],
    "qbo calibrations depth fake_brisbane --oracle bernoulli:0.3": [],
}


def readme_commands() -> list[str]:
    """Every command line of the README's indented (4-space) blocks, comments stripped."""
    out = []
    in_fence = False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("    ") or line.startswith("     "):
            continue
        text = re.sub(r"\s+#.*$", "", line.strip())
        if text.split()[0] in ("qbo", "pip", "python"):
            out.append(text)
    return out


def test_every_readme_command_is_covered_here():
    commands = readme_commands()
    assert len(commands) >= 20, commands  # the parser found the blocks
    missing = [c for c in commands if c not in HOW]
    assert not missing, f"README commands with no test (add them to HOW): {missing}"
    stale = [c for c in HOW if c not in commands]
    assert not stale, f"HOW names commands the README no longer has: {stale}"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A working directory with a finished run at RUN_FOLDER, and its environment."""
    work = tmp_path_factory.mktemp("readme")
    (work / "examples").symlink_to(ROOT / "examples")  # README commands run from the repository root
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QBO_CALIBRATIONS_DIR": str(work / "calibrations")}
    done = _qbo(["run", *SMALL_RUN, "--out", RUN_FOLDER], work, env)
    assert done.returncode == 0, done.stderr
    return work, env


def _qbo(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qbo.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("command", list(HOW))
def test_readme_command_runs(command, workdir, tmp_path):
    how = HOW[command]
    if isinstance(how, str):
        pytest.skip(how)
    work, env = workdir
    words = shlex.split(command)[1:]
    extra = list(how)
    if words[0] == "run" and "--resume" not in words:
        extra += ["--out", str(tmp_path / "run")]
    done = _qbo(words + extra, work, env)
    assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
    assert "error:" not in done.stderr

