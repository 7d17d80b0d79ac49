"""Measured figures belong in docs/ and bench/results/, not in qbo's docstrings or comments.

A timing, a coverage rate or a benchmark log in a docstring goes stale the day the code
changes, and nothing re-runs it (issue 20). The rule: a docstring says what and why and
cites the paper; a figure goes to the docs/ page it supports or to bench/results/, with the
command that printed it. The word "measured" is the usual sign of one, so its count in
qbo/'s docstrings and comments may only fall. Lower CEILING when you move figures out.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

QBO = Path(__file__).resolve().parents[1] / "qbo"
WORD = re.compile(r"measured", re.IGNORECASE)
# After issue 20's docs pass and main at 7adb620: every remaining one is in qbo/qmc, qbo/algorithms,
# qbo/noise/depth.py, qbo/execution/{jobs,plan,cost}.py or qbo/experiments/trial.py.
CEILING = 38


def prose(source: str) -> list[str]:
    """The docstrings (module, class, function) and comments of one Python source."""
    texts = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                texts.append(doc)
    texts += [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT]
    return texts


def measured_counts() -> dict[str, int]:
    counts = {}
    for path in sorted(QBO.rglob("*.py")):
        n = sum(len(WORD.findall(text)) for text in prose(path.read_text(encoding="utf-8")))
        if n:
            counts[str(path.relative_to(QBO.parent))] = n
    return counts


def test_prose_finds_docstrings_and_comments_only() -> None:
    source = '"""Measured 3 s."""\nx = "measured"  # measured\ndef f():\n    """not MEASURED twice: measured"""\n'
    assert sum(len(WORD.findall(t)) for t in prose(source)) == 4


def test_measured_figures_stay_out_of_qbo_docstrings() -> None:
    counts = measured_counts()
    total = sum(counts.values())
    assert total <= CEILING, (
        f'"measured" occurs {total} times in qbo/ docstrings and comments, more than {CEILING}: move the figure to '
        f"docs/ or bench/results/ with its command ({counts})"
    )
