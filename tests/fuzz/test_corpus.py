"""Issue 25: every case of tests/fuzz/corpus.jsonl (``python -m tests.fuzz.make_corpus``) is
refused with one ``error:`` line on stderr, exit 2, no traceback, and no file written or
changed. The whole corpus is slow; the fast subset runs every 50th case."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from qbo.cli.app import main
from qbo.experiments import compact as compact_module
from qbo.experiments import journal as journal_module
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import run_experiment
from qbo.files import append_line
from tests.support.crash import crash_at_append

CORPUS = [json.loads(line) for line in (Path(__file__).parent / "corpus.jsonl").read_text().splitlines()]
SMALL = ExperimentConfig(algorithms=("gp-ucb",), budget=50, trials=2)
JOBS = [
    {"event": "intent", "time": "t", "fingerprint": "f1", "job_id": None, "backend": "fake:FakeManilaV2", "attempt": 1},
    {"event": "submitted", "time": "t", "fingerprint": "f1", "job_id": "j1", "backend": "fake:FakeManilaV2",
     "mode": "job", "shots": 10, "circuits": 1, "attempt": 1, "predicted_s": 2.5},
    {"event": "done", "time": "t", "fingerprint": "f1", "job_id": "j1", "backend": "fake:FakeManilaV2",
     "counts": [{"0": 10}], "qpu_s": None},
]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    base = tmp_path_factory.mktemp("prepared")
    run_experiment(SMALL, base / "finished")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(journal_module, "FLUSH_EVERY_S", 0.0)  # a checkpoint after every stage
        mp.setattr(compact_module, "MAX_CHUNK", 1)  # compact units (gp-ucb) commit after every call, as the cases expect
        crash_at_append(mp, SMALL, base / "unfinished", 60)
    hardware = base / "hardware"
    hardware.mkdir()
    (hardware / "config.toml").write_text(ExperimentConfig(algorithms=("q-gp-ucb",), budget=50, trials=1,
                                                           target="fake:FakeManilaV2").to_toml())
    for entry in JOBS:
        append_line(hardware / "jobs.jsonl", entry)
    return base


def _damage(path: Path, damage: dict) -> None:
    op = damage["op"]
    if op == "delete_file":
        path.unlink()
        return
    if op == "make_folder":
        path.unlink()
        path.mkdir()
        return
    data = path.read_bytes()
    lines = data.split(b"\n")
    n = damage.get("line", 1) - 1
    if op == "replace_line":
        lines[n] = damage["text"].encode()
    elif op == "sub":
        assert damage["old"].encode() in lines[n], (damage, lines[n][:200])
        lines[n] = lines[n].replace(damage["old"].encode(), damage["new"].encode(), 1)
    elif op == "delete_line":
        del lines[n]
    elif op == "duplicate_line":
        lines.insert(n, lines[n])
    elif op == "swap_lines":
        lines[n], lines[n + 1] = lines[n + 1], lines[n]
    elif op == "replace_all":
        lines = [damage["text"].encode()]
    elif op == "truncate":
        lines = [data[:damage["bytes"]]]
    elif op == "append":
        lines = [data + damage["text"].encode()]
    elif op == "append_json":
        lines = [data + json.dumps(damage["entry"]).encode() + b"\n"]
    elif op == "flip_byte":
        at = damage["offset"] % len(data)
        lines = [data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]]
    else:
        raise AssertionError(f"unknown damage {op}")
    path.write_bytes(b"\n".join(lines))
    assert path.read_bytes() != data, damage


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*")) if p.name != ".lock"}


def _check(case: dict, prepared: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in case["files"].items():
        (tmp_path / name).write_text(text)
    if case["setup"]:
        shutil.copytree(prepared / case["setup"], tmp_path / "R")
    if case["damage"]:
        _damage(tmp_path / "R" / case["damage"]["path"], case["damage"])
    before = _tree(tmp_path)
    code, out, err = _main(case["argv"], monkeypatch)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (case, (out + err)[-500:])
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out + err, (case, lines)
    assert _tree(tmp_path) == before, case  # nothing written, nothing changed, no partial file


def _main(argv: list[str], monkeypatch) -> tuple[int, str, str]:
    """``qbo ARGV`` as the installed command runs it (``qbo.cli.app.main``: usage errors too)."""
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "argv", ["qbo", *argv])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_the_whole_corpus_is_refused(prepared, tmp_path, monkeypatch):
    assert len(CORPUS) >= 600
    for case in CORPUS:
        folder = tmp_path / f"c{case['id']}"
        folder.mkdir()
        _check(case, prepared, folder, monkeypatch)


@pytest.mark.parametrize("case", CORPUS[::50], ids=lambda c: str(c["id"]))
def test_a_sample_of_the_corpus_is_refused(prepared, tmp_path, monkeypatch, case):
    _check(case, prepared, tmp_path, monkeypatch)
