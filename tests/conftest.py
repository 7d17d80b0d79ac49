"""Suite-wide fixtures: tests never write into the user's data directory."""

import pytest


@pytest.fixture(autouse=True)
def _user_calibrations_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("QBO_CALIBRATIONS_DIR", str(tmp_path_factory.mktemp("user-calibrations")))
    monkeypatch.setenv("QBO_LOG_DIR", str(tmp_path_factory.mktemp("crash-logs")))
