"""Every Python code block in README.md and docs/*.md runs here (issue 20, item 7).

A block runs in a fresh namespace, in an empty working folder. A block that needs what
the suite cannot have offline (a Slurm cluster, IBM credentials) is preceded by the line
``<!-- docs-test: compile only, REASON -->``: it is compiled, not run, and the reason is
checked to be stated. Expensive blocks are marked ``<!-- docs-test: slow -->``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"(?:<!-- docs-test: (?P<mark>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)


def _blocks() -> list:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for match in FENCE.finditer(text):
            line = text[: match.start("code")].count("\n") + 1
            mark = match.group("mark") or ""
            marks = [pytest.mark.slow] if mark == "slow" else []
            found.append(pytest.param(path.name, line, match.group("code"), mark, id=f"{path.name}:{line}", marks=marks))
    return found


BLOCKS = _blocks()


def test_the_docs_hold_python_blocks():
    assert {b.values[0] for b in BLOCKS} >= {"README.md", "runs.md"}


@pytest.mark.parametrize("name, line, code, mark", BLOCKS)
def test_python_block_runs(name, line, code, mark, tmp_path, monkeypatch):
    compiled = compile(code, f"{name}:{line}", "exec")
    if mark.startswith("compile only"):
        assert len(mark) > len("compile only, "), f"{name}:{line} says why it is not run"
        return
    assert mark in ("", "slow"), f"{name}:{line}: unknown docs-test mark {mark!r}"
    monkeypatch.chdir(tmp_path)
    exec(compiled, {"__name__": "__docs__"})
