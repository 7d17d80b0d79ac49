"""Crash a run in this process at a chosen journal record (resume tests)."""

from __future__ import annotations

import pytest

from qbo.experiments.journal import UnitJournal
from qbo.experiments.runner import run_experiment


class Crash(Exception):
    pass


def crash_at_append(monkeypatch, config, folder, n: int) -> None:
    """Run ``config`` into ``folder`` and crash it as its n-th journal record is appended."""
    original = UnitJournal.append
    appended = {"n": 0}

    def flaky(self, entry):
        appended["n"] += 1
        if appended["n"] == n:
            raise Crash()
        original(self, entry)

    monkeypatch.setattr(UnitJournal, "append", flaky)
    with pytest.raises(Crash):
        run_experiment(config, folder)
    monkeypatch.setattr(UnitJournal, "append", original)
