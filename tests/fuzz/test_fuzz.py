"""The fuzz corpus in the suite: issue 12's regressions in-process (fast), the whole corpus
in-process and a sample as subprocesses (slow). Contract: exit 2, one stderr line, no
traceback, no hang, no file created, changed or deleted."""

from __future__ import annotations

import pytest

from tests.fuzz.cases import REGRESSIONS, all_cases
from tests.fuzz.run import run_cases


@pytest.mark.parametrize("case", REGRESSIONS, ids=[c.name for c in REGRESSIONS])
def test_issue12_regression(case):
    (outcome,) = run_cases([case], limit=30)
    assert not outcome.problems, (outcome.problems, outcome.stderr)


def test_corpus_is_large_and_distinct():
    cases = all_cases()
    assert len(cases) >= 500
    assert len({c.name for c in cases}) == len(cases)
    commands = {c.argv[0] for c in cases}
    assert {"run", "plot", "export", "estimate", "circuits", "calibrations", "submit", "backends", "jobs"} <= commands


@pytest.mark.slow
def test_whole_corpus_in_process():
    failed = [o for o in run_cases(all_cases(), limit=60) if o.problems]
    assert not failed, [(o.case.name, o.problems, o.stderr[:200]) for o in failed[:10]]


@pytest.mark.slow
def test_a_sample_as_subprocesses():
    cases = all_cases()[::12]
    failed = [o for o in run_cases(cases, subprocess_mode=True, jobs=2, limit=60) if o.problems]
    assert not failed, [(o.case.name, o.problems, o.stderr[:200]) for o in failed[:10]]
