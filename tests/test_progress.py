"""Progress of `qbo run` (issue 26 item 4): time left, a periodic line without a terminal,
--quiet, and a ticker that stops at once (Ctrl-C)."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.cli.progress import RunProgress, check_every, eta_seconds, progress_line
from qbo.errors import BadInput


@given(st.integers(1, 10**9), st.integers(1, 10**9), st.floats(0, 1e6))
def test_time_left_scales_the_elapsed_time_by_the_work_left(done, extra, elapsed):
    total = done + extra
    eta = eta_seconds(done, total, elapsed)
    assert eta == pytest.approx(elapsed * extra / done)
    assert eta_seconds(total, total, elapsed) == 0.0
    assert eta_seconds(0, total, elapsed) is None


def test_the_line_says_share_unit_elapsed_and_time_left():
    assert progress_line(250, 1000, 30, "trials x budget", "trial003-gp-ucb") == (
        "progress:  25.0% of trials x budget (trial003-gp-ucb), 30 s elapsed, about 1 min 30 s left")
    assert progress_line(0, 1000, 2, "units").endswith("time left unknown yet")
    assert progress_line(1000, 1000, 7200, "units").endswith("2 h 00 min elapsed, writing the results")


def test_reports_count_calls_per_unit_and_units_done():
    now = [0.0]
    progress = RunProgress(2, 1000, quiet=True, clock=lambda: now[0])
    with progress as report:
        report("trial000-a", 500, 1000)
        report("trial001-a", 250, 1000)
        report("trial001-a", 251, 1000)  # below the redraw step: not counted yet
        now[0] = 15.0
        assert progress.line() == "progress:  37.5% of trials x budget (trial001-a), 15 s elapsed, about 25 s left"
    units = RunProgress(4, 1000, by_unit=True, quiet=True, clock=lambda: now[0])
    with units as report:
        report("trial002-b", 3, 4)
        assert units.line().startswith("progress:  75.0% of units (trial002-b)")


def test_without_a_terminal_a_line_comes_every_period_and_stops_at_once():
    lines: list[str] = []
    seen = threading.Event()

    def echo(line):
        lines.append(line)
        seen.set()

    with RunProgress(1, 100, every=0.05, terminal=False, echo=echo) as report:
        report("trial000-a", 100, 100)
        assert seen.wait(10)
    assert lines[0].startswith("progress: 100.0% of trials x budget (trial000-a)")
    slow = RunProgress(1, 100, every=3600, terminal=False, echo=echo)
    with slow:
        pass  # leaving (as a Ctrl-C does) never waits for the next period
    assert not slow._ticker.is_alive()


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), 3601])
def test_a_bad_period_is_refused(value):
    with pytest.raises(BadInput, match="--progress-every must be seconds in"):
        check_every(value)


def test_qbo_run_prints_progress_to_stderr_unless_quiet(tmp_path):
    loud = CliRunner().invoke(app, ["run", "--budget", "300", "--trials", "1", "--progress-every", "0.01",
                                    "--out", str(tmp_path / "loud")])
    assert loud.exit_code == 0, loud.output
    assert "progress:" in loud.stderr and "progress:" not in loud.stdout
    quiet = CliRunner().invoke(app, ["run", "--budget", "300", "--trials", "1", "--quiet", "--progress-every", "0.01",
                                     "--out", str(tmp_path / "quiet")])
    assert quiet.exit_code == 0 and "progress:" not in quiet.output


def test_on_a_terminal_a_bar_shows_the_time_left():
    progress = RunProgress(2, 1000, terminal=True)
    with progress as report:
        report("trial000-a", 1000, 1000)
        columns = [type(c).__name__ for c in progress._bar.columns]
        assert "TimeRemainingColumn" in columns
        assert progress._bar.tasks[0].completed == 1000
