"""PNG figures of curves with bands, drawn in this process or by a helper process that
imported matplotlib while the run was computing.

matplotlib's import and first draw (font loading) cost about 0.7 s on the 2-core machine,
most of a default run's merge (issue 13). ``Painter.start()`` launches
``python -m qbo.experiments.figure``, which imports matplotlib and draws a throw-away figure
on another core, then waits for one request on its stdin. ``Painter.submit`` sends the curves
(orjson: floats round-trip exactly) and the function it returns reads the PNG back; the helper runs the same
``render_png`` as this process does, so the bytes are the same either way. If the helper did
not start, died or answered badly, the figure is drawn here. The helper exits when its stdin
closes, so a killed run leaves no process behind; an unused one is killed.

This module imports nothing from qbo (only numpy, orjson and, when drawing, matplotlib), so the
helper starts in a fraction of the time the run took to import.
"""

from __future__ import annotations

import io
import os
import select
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

Curves = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
_LENGTH = struct.Struct(">Q")
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_PARENT = "QBO_PAINTER_PARENT"  # the pid the helper serves; it exits when that process is gone


FORMATS = ("png", "svg", "pdf")
_LINES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "x", "P", "*")


@dataclass(frozen=True)
class Style:
    """How a figure is drawn: ``format`` one of FORMATS, ``dpi`` (raster resolution; also
    sizes an SVG or PDF's fonts and markers as drawn), ``logx`` a logarithmic x-axis, ``marked``
    a line style and marker per curve besides its colour, so the legend reads in grayscale.
    The default is a run's own regret.png."""

    format: str = "png"
    dpi: int = 120
    logx: bool = False
    marked: bool = False


def figure_format(fmt: str | None, out: str | Path | None) -> str:
    """The format of a figure written to ``out``: ``fmt``, else ``out``'s suffix, else png;
    one-line ValueError for another format or a suffix that contradicts ``fmt``."""
    suffix = Path(out).suffix.lower().lstrip(".") if out is not None else ""
    chosen = (fmt or suffix or "png").lower()
    if chosen not in FORMATS:
        what = f"--format {fmt!r}" if fmt else f"--out suffix '.{suffix}'"
        raise ValueError(f"{what}: expected one of {', '.join(FORMATS)}")
    if fmt and suffix and suffix != chosen:
        raise ValueError(f"--out '{out}' ends in '.{suffix}' but --format is {chosen}; make them agree")
    return chosen


def curve_look(i: int) -> tuple[str, str]:
    """(line style, marker) of the i-th curve in a marked style: the first
    len(_LINES) * len(_MARKERS) curves all differ in grayscale."""
    return _LINES[i % len(_LINES)], _MARKERS[(i + i // len(_MARKERS)) % len(_MARKERS)]


def render_png(curves: Curves, xlabel: str, ylabel: str, title: str) -> bytes:
    """``render`` in the default style: a run's regret.png."""
    return render(curves, xlabel, ylabel, title, Style())


def render(curves: Curves, xlabel: str, ylabel: str, title: str, style: Style) -> bytes:
    """Mean +- stderr bands, one per curve; the y-axis is logarithmic when the final means
    span a decade or more. Deterministic bytes (no software or date metadata, fixed SVG ids)."""
    if style.format not in FORMATS:
        raise ValueError(f"figure format must be one of {', '.join(FORMATS)}, got {style.format!r}")
    from matplotlib import rc_context  # drawing is the only path that needs matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=style.dpi)
    top = 0.88 if "\n" in title else 0.92
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.12, top=top)  # fixed margins: tight_layout costs a draw
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, (name, (x, mean, se)) in enumerate(curves.items()):
        if style.marked:  # spaced markers (axes fraction), staggered so that no two curves share a spot
            linestyle, marker = curve_look(i)
            line, = ax.plot(x, mean, label=name, linestyle=linestyle, marker=marker,
                            markevery=(0.013 * (i % 7), 0.09), markersize=5, markerfacecolor="white")
            ax.fill_between(x, mean - se, mean + se, alpha=0.18, color=line.get_color(), linewidth=0)
        else:
            ax.plot(x, mean, label=name)
            ax.fill_between(x, mean - se, mean + se, alpha=0.25)
    finals = [float(mean[-1]) for _, mean, _ in curves.values() if len(mean) and mean[-1] > 0]
    if len(finals) > 1 and max(finals) >= 10 * min(finals):  # curves span a decade or more
        ax.set_yscale("log")
    if style.logx:
        ax.set_xscale("log", nonpositive="mask")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if "\n" in title:
        ax.set_title(title, fontsize="medium")
    else:
        ax.set_title(title)
    if curves:
        ax.legend(title="mean; band: ± one standard error", title_fontsize="small")
    ax.grid(alpha=0.3)
    buffer = io.BytesIO()
    metadata = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}[style.format]
    with rc_context({"svg.hashsalt": "qbo", "svg.fonttype": "none"}):
        fig.savefig(buffer, format=style.format, metadata=metadata)
    return buffer.getvalue()


def _request(curves: Curves, xlabel: str, ylabel: str, title: str) -> bytes:
    """A length-prefixed JSON head (labels, curve names and lengths), then every curve's x,
    mean and stderr as little-endian float64 (exact, NaN included)."""
    arrays = {name: [np.ascontiguousarray(a, dtype="<f8") for a in triple] for name, triple in curves.items()}
    head = orjson.dumps({"labels": [xlabel, ylabel, title], "curves": [[name, len(x)] for name, (x, _, _) in arrays.items()]})
    body = b"".join(a.tobytes() for triple in arrays.values() for a in triple)
    return _LENGTH.pack(len(head)) + head + _LENGTH.pack(len(body)) + body


def _decode(head: bytes, body: bytes) -> tuple[Curves, str, str, str]:
    meta = orjson.loads(head)
    values = np.frombuffer(body, dtype="<f8")
    curves: Curves = {}
    at = 0
    for name, n in meta["curves"]:
        x, mean, se = (values[at + j * n: at + (j + 1) * n] for j in range(3))
        curves[name] = (x, mean, se)
        at += 3 * n
    xlabel, ylabel, title = meta["labels"]
    return curves, xlabel, ylabel, title


class Painter:
    """Draws figures, through a warm helper process once ``start`` has launched one."""

    def __init__(self) -> None:
        self._helper: subprocess.Popen | None = None
        self._drawing: subprocess.Popen | None = None  # a helper drawing a submitted figure

    def start(self) -> "Painter":
        """Launch the helper (idempotent); a failure to launch only means drawing here."""
        if self._helper is None:
            try:
                root = str(Path(__file__).resolve().parents[2])  # this qbo, installed or not
                path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
                self._helper = subprocess.Popen(  # -P: nothing from the working directory shadows qbo or matplotlib
                    [sys.executable, "-P", "-m", "qbo.experiments.figure"], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    env=dict(os.environ, PYTHONPATH=path, **{_PARENT: str(os.getpid())}),
                )
            except OSError:
                self._helper = None
        return self

    def paint(self, curves: Curves, xlabel: str, ylabel: str, title: str) -> bytes:
        """The PNG of ``render_png(curves, ...)``, from the helper when it answers."""
        return self.submit(curves, xlabel, ylabel, title)()

    def submit(self, curves: Curves, xlabel: str, ylabel: str, title: str) -> Callable[[], bytes]:
        """Start drawing ``render_png(curves, ...)``; the returned function gives its PNG. The
        helper draws while this process goes on (a run's merge writes stages.jsonl meanwhile);
        without one the figure is drawn here, when asked for. Nothing here waits: a request
        larger than the pipe takes is finished by the returned function, under its timeout."""
        helper, self._helper = self._helper, None  # one request per helper
        rest = b""
        if helper is not None:
            self._drawing = helper
            rest = _request(curves, xlabel, ylabel, title)
            try:  # what the pipe takes now, without waiting; the rest goes with the answer's timeout
                os.set_blocking(helper.stdin.fileno(), False)
                rest = rest[os.write(helper.stdin.fileno(), rest):]
            except BlockingIOError:
                pass
            except (OSError, ValueError):
                pass  # it died: the answer check below draws here

        def png() -> bytes:
            if helper is not None:
                self._drawing = None
                answer = b""
                try:
                    answer, _ = helper.communicate(rest or None, timeout=60)
                except (OSError, ValueError, subprocess.TimeoutExpired):
                    pass
                finally:
                    if helper.poll() is None:  # it did not answer (or we were interrupted): stop it
                        helper.kill()
                        helper.communicate()
                if helper.returncode == 0 and answer.startswith(_PNG_MAGIC):
                    return answer
            return render_png(curves, xlabel, ylabel, title)

        return png

    def close(self) -> None:
        """Stop an unused helper, or one whose figure was never asked for."""
        for helper in (self._helper, self._drawing):
            if helper is not None:
                helper.kill()
                helper.communicate()  # reaps it and closes its pipes
        self._helper = self._drawing = None

    def __enter__(self) -> "Painter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _serve() -> int:
    """The helper: warm matplotlib up, then answer one request from stdin with PNG bytes.
    It exits when its stdin closes or its parent dies (a process forked from the parent, a
    Dask worker, may hold the pipe open after a kill -9)."""
    parent = int(os.environ.get(_PARENT, os.getppid()))  # from the parent: it may be gone before we start
    x = np.arange(1.0, 4.0)  # two curves a decade apart: the log axis and legend load their fonts too
    render_png({"a": (x, x, 0 * x), "b": (x, 100 * x, 0 * x)}, "x", "y", "warm-up")
    stdin = sys.stdin.buffer
    while not select.select([stdin], [], [], 1.0)[0]:
        if os.getppid() != parent:
            return 0
    parts = []
    for _ in range(2):  # the head, then the arrays
        size = stdin.read(_LENGTH.size)
        if len(size) < _LENGTH.size:  # the run ended without a figure (or died)
            return 0
        parts.append(stdin.read(_LENGTH.unpack(size)[0]))
    sys.stdout.buffer.write(render_png(*_decode(*parts)))
    sys.stdout.buffer.flush()
    # the answer is out and nothing else is held: skip the interpreter's teardown of matplotlib,
    # which the parent would wait for (Popen.communicate reaps the helper): paint() took
    # 0.34-0.38 s with it and 0.13-0.19 s without, on the 2-core machine (/tmp/paint.py)
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(_serve())
