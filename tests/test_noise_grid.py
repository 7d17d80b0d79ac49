"""bench/noise_grid.py's seeds, selection and CSV (issue 24, item 7): a grid run in parts gives
the rows of the grid run whole, every row an independent sample."""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from qbo.files import append_text_line, cut_torn_line
from tests.support.bench import bench_script


@pytest.fixture(scope="module")
def grid():
    return bench_script("noise_grid")


def test_executor_seeds_differ_across_cells_methods_budgets_and_amplitudes(grid):
    """The old seed (seed * 100_003 + i, plus a per-method offset) was the same in every cell
    and at both budgets: one draw at one amplitude showed as a miss in every cell whose noise
    models were alike."""
    keys = list(itertools.product(("fake_brisbane", "fake_sherbrooke", "fake:FakeKingston"), grid.ORACLES,
                                  grid.METHODS, (1.0, 10.0), range(5)))
    seeds = [grid.executor_seed(0, *key) for key in keys]
    assert len(set(seeds)) == len(keys)
    assert seeds == [grid.executor_seed(0, *key) for key in keys]  # whatever else runs
    assert grid.executor_seed(1, *keys[0]) != seeds[0]


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n - 1), min_size=1))))
def test_cells_parse_back_in_order_without_repeats(grid, case):
    count, picked = case
    assert grid.parse_cells(",".join(map(str, picked)), count) == list(dict.fromkeys(picked))


def test_cell_ranges_and_bad_cells(grid):
    assert grid.parse_cells("0-2,5,1", 6) == [0, 1, 2, 5]
    for bad in ("6", "2-1", "a", "-1", ",", "0-x"):
        with pytest.raises(ValueError, match="--cells"):
            grid.parse_cells(bad, 6)


def test_bad_selection_exits_2_with_one_line_and_no_csv(grid, tmp_path, monkeypatch, capsys):
    csv = tmp_path / "grid.csv"
    for argv in (["--cells", "9"], ["--methods", "iae"], ["--oracles", "gauss"], ["--budgets", "0"],
                 ["--budgets", "1,x"], ["--jobs", "0"]):
        monkeypatch.setattr(sys, "argv", ["noise_grid.py", "--snapshots", "fake_brisbane", "--csv", str(csv), *argv])
        with pytest.raises(SystemExit) as stop:
            grid.main()
        err = capsys.readouterr().err
        assert stop.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert argv[0] in err and not csv.exists()


def test_a_csv_with_another_header_is_refused(grid, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="--csv"):
        grid.start_csv(str(other))


def test_rows_are_appended_as_done_and_skipped_when_rerun(grid, tmp_path, capsys):
    """One cell, one method, one budget, two amplitudes: the row reaches the CSV when it is done,
    and a rerun on that CSV runs no row twice."""
    csv = str(tmp_path / "grid.csv")
    assert grid.start_csv(csv) == set()
    item = ("fake_brisbane", "bernoulli", np.array([0.2, 0.7]), ["auto"], [1.0], 0.05, 0.05, 0, False, csv)
    rows = grid.cell((*item, frozenset()))
    assert [(r["method"], r["budget"], r["n"]) for r in rows] == [("auto", "x1", 2)]
    assert "fake_brisbane" in capsys.readouterr().out
    done = grid.start_csv(csv)
    assert done == {("fake_brisbane", "bernoulli", "auto", "x1")}
    back = grid.read_rows(csv)
    assert len(back) == 1 and back[0]["calls"] == rows[0]["calls"] and back[0]["coverage"] == rows[0]["coverage"]
    assert grid.cell((*item, frozenset({("auto", "x1")}))) == []
    assert len(grid.read_rows(csv)) == 1


def test_a_row_torn_by_a_killed_grid_is_cut_off_when_the_grid_starts_again(grid, tmp_path):
    """A grid killed mid-row leaves a torn last line: ``start_csv`` cuts it before it reads the
    rows done, so that row is not counted as done and runs again, and the rows after it append
    to whole lines (workers append with ``shared``, which cuts nothing)."""
    csv = str(tmp_path / "grid.csv")
    grid.start_csv(csv)
    row = {c: i for i, c in enumerate(grid.COLUMNS)} | {"snapshot": "fake_fez", "oracle": "bernoulli",
                                                        "method": "mlae", "budget": "x1"}
    grid.append_row(csv, row)
    whole = ",".join(str((row | {"budget": "x10"})[c]) for c in grid.COLUMNS)
    for torn in (whole[:30], whole):  # in the numbers, and only the newline lost
        with open(csv, "a") as fh:
            fh.write(torn)
        assert grid.start_csv(csv) == {("fake_fez", "bernoulli", "mlae", "x1")}
    grid.append_row(csv, row | {"budget": "x10"})
    assert [r["budget"] for r in grid.read_rows(csv)] == ["x1", "x10"]


def test_a_short_row_is_named(grid, tmp_path):
    csv = tmp_path / "grid.csv"
    csv.write_text(",".join(grid.COLUMNS) + "\nfake_fez,bernoulli,1\n")
    with pytest.raises(ValueError, match="line 2 of .* has 3 fields where 16 were expected"):
        grid.start_csv(str(csv))


def test_a_shared_append_needs_the_file_and_cuts_nothing(tmp_path):
    path = tmp_path / "f.csv"
    with pytest.raises(FileNotFoundError):
        append_text_line(path, "a", shared=True)
    path.write_text("a\nb")
    append_text_line(path, "c", shared=True)
    assert path.read_text() == "a\nbc\n"
    cut_torn_line(path)  # whole lines: nothing to cut
    assert path.read_text() == "a\nbc\n"
    path.write_text("a\nb")
    cut_torn_line(path)
    assert path.read_text() == "a\n"


def test_a_line_with_a_newline_is_not_appended(tmp_path):
    with pytest.raises(ValueError, match="one line"):
        append_text_line(tmp_path / "f.csv", "a\nb")
    assert not (tmp_path / "f.csv").exists()
