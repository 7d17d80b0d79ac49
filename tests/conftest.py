"""Suite-wide fixtures: tests never write into the user's data directory; runs that several
modules compare against are made once a session."""

import pytest

from tests.support.stopped_runs import reference_run


@pytest.fixture(autouse=True)
def _user_calibrations_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("QBO_CALIBRATIONS_DIR", str(tmp_path_factory.mktemp("user-calibrations")))
    monkeypatch.setenv("QBO_LOG_DIR", str(tmp_path_factory.mktemp("crash-logs")))


@pytest.fixture(scope="session")
def stopped_run_reference(tmp_path_factory):
    """(files, wall seconds) of ``tests.support.stopped_runs.ARGS`` run undisturbed: what a run
    killed or interrupted and then resumed must reproduce."""
    return reference_run(tmp_path_factory.mktemp("stopped-run-reference"))
