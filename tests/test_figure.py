"""regret.png drawn by the warm helper process is the PNG drawn in process; the journal's fast
record encoder writes the values the standard library would."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.experiments import figure, runner
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.figure import Painter, _decode, _request, render_png
from qbo.experiments.journal import encode_record

LABELS = ("oracle calls", "cumulative regret", "two curves a decade apart")


def _curves() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    x = np.linspace(0.0, 100.0, 50)
    return {"q-gp-ucb": (x, 30 * np.sqrt(x + 1), np.full(50, 2.0)),
            "gp-ucb": (x, np.log1p(x), np.where(x > 0, 0.1, np.nan))}  # a NaN travels as NaN


def test_the_helper_draws_the_png_drawn_in_process(monkeypatch, tmp_path):
    expected = render_png(_curves(), *LABELS)
    (tmp_path / "qbo").mkdir()  # a package of that name in the working directory must not shadow qbo
    (tmp_path / "qbo" / "__init__.py").write_text("raise SystemExit(3)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(figure, "render_png", lambda *a: pytest.fail("the helper did not answer"))
    painter = Painter().start()
    try:
        png = painter.paint(_curves(), *LABELS)
    finally:
        painter.close()
    assert png.startswith(b"\x89PNG") and png == expected


def test_a_dead_helper_means_drawing_in_process():
    painter = Painter().start()
    painter._helper.kill()
    painter._helper.wait()
    assert painter.paint(_curves(), *LABELS) == render_png(_curves(), *LABELS)


def test_an_unused_helper_is_stopped():
    painter = Painter().start()
    helper = painter._helper
    painter.close()
    assert helper.poll() is not None and painter._helper is None


def test_a_submitted_figure_is_drawn_while_the_caller_goes_on_and_a_forgotten_one_is_stopped(monkeypatch):
    expected = render_png(_curves(), *LABELS)
    monkeypatch.setattr(figure, "render_png", lambda *a: pytest.fail("the helper did not answer"))
    painter = Painter().start()
    png = painter.submit(_curves(), *LABELS)  # returns at once: the helper draws
    assert painter._helper is None and painter._drawing is not None
    assert png() == expected and painter._drawing is None
    forgotten = Painter()
    forgotten._helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],  # never answers
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    forgotten.submit(_curves(), *LABELS)
    drawing = forgotten._drawing
    forgotten.close()  # never asked for: the helper is stopped and reaped
    assert drawing.poll() is not None and forgotten._drawing is None


def test_the_request_carries_every_float_exactly():
    head_and_body = _request(_curves(), *LABELS)
    n = int.from_bytes(head_and_body[:8], "big")
    head, rest = head_and_body[8:8 + n], head_and_body[8 + n:]
    body = rest[8:8 + int.from_bytes(rest[:8], "big")]
    curves, *labels = _decode(head, body)
    assert tuple(labels) == LABELS and list(curves) == list(_curves())
    for name, arrays in _curves().items():
        for got, sent in zip(curves[name], arrays):
            assert np.array_equal(got, sent, equal_nan=True)


def test_only_big_runs_with_a_spare_core_start_a_helper(monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "matplotlib", raising=False)
    monkeypatch.setattr(runner, "_cores", lambda: 2)
    small, busy = runner.painter_for(ExperimentConfig(trials=1, budget=100)), runner.painter_for(ExperimentConfig(), busy=2)
    default = runner.painter_for(ExperimentConfig())
    try:
        assert small._helper is None and busy._helper is None and default._helper is not None
    finally:
        default.close()


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(max_size=8) | st.sampled_from(["null", "sample", "iae"]),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["stage", "eps", "estimate", "method", "cum_regret", "qmc"]),
                       scalars | st.dictionaries(st.text(max_size=3), scalars, max_size=3), max_size=6))
def test_encoded_records_parse_to_what_the_standard_library_writes(record):
    line = encode_record(record)
    standard = json.dumps(record, separators=(",", ":"))
    assert _same(json.loads(line), json.loads(standard))
    if any(isinstance(v, float) and not math.isfinite(v) for v in record.values()):
        assert line == standard.encode()  # NaN and infinities keep the standard library's spelling


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def test_stage_lines_spell_floats_as_orjson_3_does():
    """Stage bytes must not change under a resume or on another worker: the spelling is pinned."""
    record = {"a": 1e-05, "b": 1e16, "c": 2.5e-07, "d": 0.1, "e": 2727.2400000000002, "f": 5e-324, "g": None, "h": 3}
    assert encode_record(record) == (b'{"a":0.00001,"b":1e+16,"c":2.5e-7,"d":0.1,"e":2727.2400000000002,'
                                     b'"f":5e-324,"g":null,"h":3}')
