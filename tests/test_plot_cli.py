"""`qbo plot` for publication (issue 26 item 6): formats, dpi, log x, titles, grayscale legends."""

from __future__ import annotations

import struct

import pytest
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.figure import FORMATS, curve_look
from qbo.experiments.runner import run_experiment


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("plot") / "run"
    run_experiment(ExperimentConfig(budget=400, trials=2), out)
    return out


def _plot(*args):
    return CliRunner().invoke(app, ["plot", *map(str, args)])


def test_svg_with_log_x_names_problem_target_estimator_and_mitigation(run_dir, tmp_path):
    out = tmp_path / "fig.svg"
    result = _plot(run_dir, "--logx", "--format", "svg", "--out", out)
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("<?xml") and "<svg" in text
    for fragment in ("synthetic-bernoulli", "target exact", "estimator auto", "mitigation none", "q-gp-ucb", "gp-ucb"):
        assert fragment in text
    again = tmp_path / "again.svg"
    assert _plot(run_dir, "--logx", "--out", again).exit_code == 0  # format from the suffix
    assert again.read_bytes() == out.read_bytes()  # deterministic: no date, fixed ids


def test_png_dpi_sets_the_pixel_size_and_pdf_is_written(run_dir, tmp_path):
    for dpi in (60, 200):
        out = tmp_path / f"fig{dpi}.png"
        assert _plot(run_dir, "--dpi", dpi, "--out", out).exit_code == 0
        width, height = struct.unpack(">II", out.read_bytes()[16:24])  # the IHDR chunk
        assert (width, height) == (round(6.4 * dpi), round(4.2 * dpi))
    pdf = tmp_path / "fig.pdf"
    assert _plot(run_dir, "--format", "pdf", "--out", pdf).exit_code == 0
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_plot_without_options_redraws_regret_png(run_dir):
    (run_dir / "regret.png").unlink()
    assert _plot(run_dir).exit_code == 0
    assert (run_dir / "regret.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args, message", [
    (["--format", "jpg"], "--format 'jpg': expected one of png, svg, pdf"),
    (["--out", "{tmp}/fig.tiff"], "--out suffix '.tiff': expected one of png, svg, pdf"),
    (["--format", "svg", "--out", "{tmp}/fig.png"], "ends in '.png' but --format is svg"),
    (["--dpi", "5"], "dpi must be an integer in [10, 1200]"),
    (["--dpi", "100000"], "(limit DPI_MAX)"),
])
def test_bad_options_are_refused_before_any_file_is_written(run_dir, tmp_path, args, message):
    result = _plot(run_dir, *(a.format(tmp=tmp_path) for a in args))
    assert result.exit_code == 2 and message in result.output
    assert list(tmp_path.iterdir()) == []


def test_every_curve_differs_in_grayscale():
    looks = [curve_look(i) for i in range(32)]
    assert len(set(looks)) == 32
    assert FORMATS == ("png", "svg", "pdf")
