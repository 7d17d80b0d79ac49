"""Issue 12: one error boundary, safe writes, run folders that cannot be corrupted silently."""

from __future__ import annotations

import json
import os
import shutil
import warnings

import pytest
import typer
from typer.testing import CliRunner

from qbo.cli.app import app
from qbo.cli.errors import one_line_errors
from qbo.errors import BadFile, BadInput, RunFolderConflict
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.folder import config_hash, lock_run_folder, open_run_folder
from qbo.experiments import journal as journal_module
from qbo.experiments.journal import UnitJournal
from qbo.experiments.runner import prepare, resume_experiment, run_experiment, run_unit, units
from qbo.files import check_writable, write_text_atomic

CONFIG = ExperimentConfig(budget=300, trials=1)


def one_line_exit(result, code=2):
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


# ------------------------------------------------------------------ error boundary


def _command(exc):
    @one_line_errors
    def command() -> None:
        warnings.warn("numpy says overflow", RuntimeWarning)  # third party: never shown
        raise exc

    small = typer.Typer()
    small.command()(command)
    return small


@pytest.mark.parametrize("exc, fragment", [
    (OverflowError("int too large to convert to float"), "out of range"),
    (FileExistsError(17, "File exists", "x"), "File exists: 'x'"),
    (NotADirectoryError(20, "Not a directory", "a/b"), "Not a directory"),
    (OSError(28, "No space left on device", "out"), "No space left"),
    (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
    (MemoryError(), "not enough memory"),
    (BadInput("budget must be <= 1e12"), "budget must be"),
    (KeyError("problem"), "missing key 'problem'"),
])
def test_expected_errors_are_one_line_exit_2(exc, fragment):
    line = one_line_exit(CliRunner().invoke(_command(exc), []))
    assert line.startswith("error: ") and fragment in line


def test_run_folder_conflict_exits_2():
    line = one_line_exit(CliRunner().invoke(_command(RunFolderConflict("in use by pid 7")), []))
    assert "pid 7" in line


def test_a_bug_exits_1_naming_a_log_with_the_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("QBO_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("QISKIT_IBM_TOKEN", "sekrit-token-123")
    line = one_line_exit(CliRunner().invoke(_command(TypeError("bad operand sekrit-token-123")), []), code=1)
    assert "internal error (TypeError)" in line and "sekrit" not in line
    (log,) = (tmp_path / "logs").iterdir()
    assert str(log) in line
    text = log.read_text()
    assert "Traceback" in text and "TypeError" in text and "sekrit" not in text


def test_qiskit_error_is_expected():
    from qiskit.exceptions import QiskitError

    assert "no such gate" in one_line_exit(CliRunner().invoke(_command(QiskitError("no such gate\nmore")), []))


# ------------------------------------------------------------------ safe writes


def test_atomic_writer_refuses_a_fifo_and_leaves_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match="not a regular file"):
        write_text_atomic(fifo, "x")
    assert fifo.is_fifo()
    result = CliRunner().invoke(app, ["circuits", "export", "--oracle", "bernoulli:0.3", "-o", str(fifo)])
    assert "not a regular file" in one_line_exit(result)
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.parametrize("make, fragment", [
    (lambda t: t / "folder", "is a folder"),
    (lambda t: t / "file" / "below", "runs through"),
    (lambda t: t / "file" / "deeper" / "below", "runs through"),
    (lambda t: "", "empty"),
])
def test_atomic_writer_refuses_folders_and_paths_below_files(tmp_path, make, fragment):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("keep")
    with pytest.raises(BadInput, match=fragment):
        check_writable(make(tmp_path))
    assert (tmp_path / "file").read_text() == "keep"


def test_atomic_writer_replaces_files_and_creates_missing_ones(tmp_path):
    write_text_atomic(tmp_path / "a.txt", "1")
    write_text_atomic(tmp_path / "a.txt", "2")
    write_text_atomic(tmp_path / "new" / "b.txt", "3")
    assert (tmp_path / "a.txt").read_text() == "2" and (tmp_path / "new" / "b.txt").read_text() == "3"


# ------------------------------------------------------------------ run folders


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    folder = tmp_path_factory.mktemp("finished") / "run"
    run_experiment(CONFIG, folder)
    return folder


@pytest.fixture(scope="module")
def unmerged(tmp_path_factory):
    """Every unit run, not yet merged: the journals hold the records (no checkpoints: the
    units commit at their ends only, so line numbers do not depend on timing)."""
    folder = tmp_path_factory.mktemp("unmerged") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(journal_module, "FLUSH_EVERY_S", 3600.0)
        prepare(CONFIG, folder).release()
        for unit in units(CONFIG):
            run_unit(CONFIG, unit, folder)
    return folder


@pytest.fixture
def run(finished, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(finished, folder)
    return folder


@pytest.fixture
def journals(unmerged, tmp_path):
    folder = tmp_path / "journals"
    shutil.copytree(unmerged, folder)
    return folder


def _journal(folder):
    return folder / "units" / "trial000-gp-ucb.jsonl"


def _lines(path):
    return path.read_bytes().splitlines(keepends=True)


def _refused(folder, fragment):
    result = CliRunner().invoke(app, ["run", "--resume", str(folder)])
    line = one_line_exit(result)
    assert fragment in line, line
    return line


RESULTS = ("stages.jsonl", "summary.csv", "regret.png", "run.json", "config.toml")


def _results(folder):
    return {name: (folder / name).read_bytes() for name in RESULTS}


def test_resume_of_a_finished_run_verifies_and_gives_identical_files(run, finished):
    (run / "summary.csv").unlink()
    (run / "regret.png").unlink()
    resume_experiment(run)
    assert _results(run) == _results(finished) and not (run / "units").exists()


def test_resume_of_a_merge_not_yet_done_gives_identical_files(journals, finished):
    resume_experiment(journals)
    assert _results(journals) == _results(finished) and not (journals / "units").exists()


def test_a_finished_run_without_its_stages_is_refused(run):
    (run / "stages.jsonl").unlink()
    _refused(run, "stages.jsonl' is missing: the run finished and its journals were removed")


@pytest.mark.parametrize("tamper, fragment", [
    (lambda ls: ls[:50] + [ls[50].replace(b'"estimate":', b'"estimate":0.5,"x":')] + ls[51:], "line 51 fails its hash chain"),
    (lambda ls: ls[:50] + ls[51:], "line 51 has seq"),
    (lambda ls: ls[:50] + [b"{garbage\n"] + ls[51:], "line 51 is not valid JSON"),
    (lambda ls: ls[:-1], "differs from what run.json recorded"),
    (lambda ls: ls + [ls[-1]], "has seq"),
    (lambda ls: ls[:-1] + [ls[-1][:-1]], "ends inside a line"),
])
def test_each_tampering_of_a_finished_runs_stages_is_refused(run, tamper, fragment):
    path = run / "stages.jsonl"
    path.write_bytes(b"".join(tamper(_lines(path))))
    before = _results(run)
    line = _refused(run, fragment)
    assert "stages.jsonl" in line and _results(run) == before  # nothing rewritten


def test_a_torn_last_line_is_recovered_byte_identically(journals, unmerged, finished):
    path = _journal(journals)
    lines = _lines(path)
    path.write_bytes(b"".join(lines[:100]) + lines[100][:37])  # killed inside a write
    resume_experiment(journals)
    assert _results(journals) == _results(finished)


@pytest.mark.parametrize("tamper, fragment", [
    (lambda ls: ls[:50] + [b'{"seq": garbage\n'] + ls[51:], "line 51 is not valid JSON"),
    (lambda ls: ls[:50] + ls[51:], "line 51 has seq 51, expected 50"),
    (lambda ls: ls[:50] + [ls[50]] + ls[50:], "line 52 has seq 50, expected 51"),
    (lambda ls: ls[:50] + [ls[51], ls[50]] + ls[52:], "line 51 has seq 51, expected 50"),
    (lambda ls: ls[:50] + [ls[50].replace(b'"estimate":', b'"estimate":0.5,"x":')] + ls[51:], "line 51 fails its hash chain"),
    (lambda ls: [b'{"done": true}\n'], "line 1"),
    (lambda ls: ls[:1] + [b'{"done":true,"stages":0,"seq":1,"chain":"0000000000000000"}\n'], "hash chain"),
    (lambda ls: ls[:-1] + [ls[-1]] + [ls[-1]], "after the unit's done marker"),
    (lambda ls: ls[:10] + [b"[]\n"] + ls[11:], "line 11 is not a JSON object"),
    (lambda ls: [ls[0].replace(b'"journal":2', b'"journal":1')] + ls[1:], "line 1: journal format 1, expected 2 (another qbo version wrote it)"),
])
def test_each_journal_tampering_is_refused_naming_file_and_line(journals, tamper, fragment):
    path = _journal(journals)
    path.write_bytes(b"".join(tamper(_lines(path))))
    line = _refused(journals, fragment)
    assert "trial000-gp-ucb.jsonl" in line


def test_a_journal_of_another_unit_is_refused(journals):
    shutil.copy(journals / "units" / "trial000-q-gp-ucb.jsonl", _journal(journals))
    _refused(journals, "belongs to unit 'trial000-q-gp-ucb'")


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("budget = 300", "budget = 301"),
    lambda t: t.replace("seed = 0", "seed = 1"),
    lambda t: t + "\n",
])
def test_an_edited_config_is_refused(run, edit):
    path = run / "config.toml"
    path.write_text(edit(path.read_text()))
    _refused(run, "config.toml' was changed after the run started")


def test_an_empty_config_is_refused(run):
    (run / "config.toml").write_text("")
    _refused(run, "is empty")


def test_an_edited_record_count_in_run_json_is_refused(run):
    marker = json.loads((run / "run.json").read_text())
    marker["finished"]["records"] += 1
    (run / "run.json").write_text(json.dumps(marker) + "\n")
    before = _results(run)
    line = _refused(run, f"counts {marker['finished']['records']} records")
    assert "run.json" in line and _results(run) == before


def test_a_swapped_run_json_is_refused(run, tmp_path):
    other = tmp_path / "other"
    run_experiment(ExperimentConfig(budget=200, trials=1), other)
    shutil.copy(other / "run.json", run / "run.json")
    _refused(run, "was changed after the run started")


def test_a_locked_folder_refuses_a_second_resume_naming_the_holder(run):
    with lock_run_folder(run):
        line = _refused(run, f"pid {os.getpid()}")
        assert "in use" in line
    resume_experiment(run)  # released: proceeds


def test_a_run_into_a_locked_folder_is_refused(run):
    with lock_run_folder(run):
        with pytest.raises(RunFolderConflict, match="in use"):
            run_experiment(CONFIG, run)


def test_a_different_experiment_in_the_folder_is_refused(run):
    with pytest.raises(RunFolderConflict, match="different experiment"):
        run_experiment(ExperimentConfig(budget=301, trials=1), run)


def test_a_nonempty_non_run_folder_is_never_claimed(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["run", "--budget", "100", "--trials", "1", "--out", str(tmp_path)])
    assert "not empty" in one_line_exit(result)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_a_folder_killed_before_its_claim_is_refused_cleanly(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG.to_toml())  # an old-style or half-made folder
    with pytest.raises(BadFile, match="no run.json"):
        open_run_folder(tmp_path)


def test_journal_group_commit_buffers_until_a_boundary(tmp_path):
    journal = UnitJournal(tmp_path / "u.jsonl", "0" * 64, flush_every_s=3600, fields={"trial": 0, "algorithm": "a"})
    assert journal.read().records == []
    for stage in range(1, 4):
        journal.append({"stage": stage, "cum_calls": stage})
    assert not (tmp_path / "u.jsonl").exists()  # nothing durable yet: a kill replays from the start
    journal.finish()
    lines = (tmp_path / "u.jsonl").read_bytes().splitlines()
    assert lines[1] == b'{"trial":0,"algorithm":"a","stage":1,"cum_calls":1,"seq":1,"chain":"%s"}' % lines[1][-18:-2]
    assert UnitJournal(tmp_path / "u.jsonl", "0" * 64).read().done
    assert [json.loads(line)["stage"] for line in UnitJournal(tmp_path / "u.jsonl", "0" * 64).stage_lines()] == [1, 2, 3]
    with pytest.raises(BadFile, match="another config"):
        UnitJournal(tmp_path / "u.jsonl", "1" * 64).read()


def test_finish_needs_a_read_unfinished_journal(tmp_path):
    """finish() registers the scan merge will use: on a journal never read, or one already
    done, it would register a scan of bytes the chain walk refuses."""
    path = tmp_path / "u.jsonl"
    with pytest.raises(RuntimeError, match="read"):
        UnitJournal(path, "0" * 64).finish()
    journal = UnitJournal(path, "0" * 64)
    journal.read()
    journal.finish()
    done = UnitJournal(path, "0" * 64)
    assert done.read().done
    with pytest.raises(RuntimeError, match="unfinished"):
        done.finish()


def test_a_failed_write_leaves_no_torn_line_for_the_next_write(tmp_path, monkeypatch):
    """A write that fails part-way (disk full) is cut back to the last whole commit, and its
    buffer is never sent again (issue 25: a buffer that may have landed is not re-sent):
    close() writes nothing, the stage after the commit is recomputed on resume."""
    from qbo.experiments import journal as journal_module

    path = tmp_path / "u.jsonl"
    journal = UnitJournal(path, "0" * 64, flush_every_s=3600, fields={"trial": 0, "algorithm": "a"},
                          state=lambda: {"rng": {"n": 1}})
    journal.read()
    journal.append({"stage": 1, "cum_calls": 1})
    journal.commit()
    journal.append({"stage": 2, "cum_calls": 2})
    real = journal_module.os.write

    def full(fd, data):
        real(fd, bytes(data[:10]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", full)
    with pytest.raises(OSError):
        journal.commit()
    monkeypatch.setattr(journal_module.os, "write", real)
    journal.close()  # sends nothing: the journal stops at its last commit
    replay = UnitJournal(path, "0" * 64).read()  # no torn line mid-file (BadFile before the cut)
    assert [r["stage"] for r in replay.records] == [1] and replay.state == {"rng": {"n": 1}}


def _checkpointed(path, stages, flush_every_s, state=None):
    journal = UnitJournal(path, "0" * 64, flush_every_s=flush_every_s, fields={"trial": 0, "algorithm": "a"},
                          state=state or (lambda: {"rng": {"n": 7}}))
    journal.read()
    for stage in range(1, stages + 1):
        journal.append({"stage": stage, "cum_calls": stage})
    return journal


def test_checkpoints_do_not_change_stage_lines(tmp_path):
    """A commit after every stage (a checkpoint line each) and one at the end give the same
    stage lines, so where checkpoints fall (timing) never shows in stages.jsonl."""
    _checkpointed(tmp_path / "often" / "u.jsonl", 5, 0.0).finish()
    _checkpointed(tmp_path / "once" / "u.jsonl", 5, 3600).finish()
    often = (tmp_path / "often" / "u.jsonl").read_bytes().splitlines()
    once = (tmp_path / "once" / "u.jsonl").read_bytes().splitlines()
    assert sum(line.startswith(b'{"checkpoint":') for line in often) == 5 and len(once) == 7
    assert [line for line in often if not line.startswith(b'{"checkpoint":')] == once
    assert b'"rng"' not in b"".join(once)  # the state is written at commits, not per stage


def test_resume_continues_from_the_last_checkpoint(tmp_path):
    path = tmp_path / "u.jsonl"
    seen = []
    _checkpointed(path, 3, 0.0, state=lambda: {"rng": {"n": len(seen.append(0) or seen)}}).close()
    lines = path.read_bytes().splitlines(keepends=True)
    torn = b"".join(lines[:-1])  # the last checkpoint lost in a torn write: stage 3 is not durable
    path.write_bytes(torn + lines[-1][:9])
    replay = UnitJournal(path, "0" * 64, fields={"trial": 0, "algorithm": "a"}).read()
    assert [r["stage"] for r in replay.records] == [1, 2] and replay.state == {"rng": {"n": 2}}  # the state after stage 2
    assert path.read_bytes() == b"".join(lines[:-2])  # cut back to the checkpoint after stage 2


def test_stages_without_a_checkpoint_are_not_written_on_an_error(tmp_path):
    journal = _checkpointed(tmp_path / "u.jsonl", 4, 3600)
    journal.close()  # as run_unit's finally after an error inside stage 5
    assert UnitJournal(tmp_path / "u.jsonl", "0" * 64).read().records == []


@pytest.mark.parametrize("tamper, fragment", [
    (lambda ls: ls[:2] + [ls[2].replace(b'"n":', b'"n":1')] + ls[3:], "line 3 fails its hash chain"),
    (lambda ls: ls[:1] + [ls[2], ls[1]] + ls[3:], "line 2 is a checkpoint after stage 1, expected 0"),
])
def test_a_tampered_checkpoint_is_refused(tmp_path, tamper, fragment):
    path = tmp_path / "u.jsonl"
    _checkpointed(path, 2, 0.0).close()
    path.write_bytes(b"".join(tamper(path.read_bytes().splitlines(keepends=True))))
    with pytest.raises(BadFile, match=fragment):
        UnitJournal(path, "0" * 64).read()


def test_plot_refuses_bad_stage_files(run):
    for text, fragment in [("[]\n", "not a JSON object"), ("null\n", "not a JSON object"), ('"x"\n', "not a JSON object"),
                           ("", "differs from what run.json recorded"), ('{"trial": 0}\n', "line 1")]:  # checked against run.json first
        (run / "stages.jsonl").write_text(text)
        before = (run / "regret.png").read_bytes()
        line = one_line_exit(CliRunner().invoke(app, ["plot", str(run)]))
        assert fragment in line and (run / "regret.png").read_bytes() == before


def test_config_hash_is_the_hash_of_config_toml(run):
    import hashlib

    assert config_hash(CONFIG) == hashlib.sha256((run / "config.toml").read_bytes()).hexdigest()
    assert json.loads((run / "run.json").read_text())["config_sha256"] == config_hash(CONFIG)


class _Killed(Exception):
    pass


def _kill_at(monkeypatch, target, name, partial=None):
    def killed(*args, **kwargs):
        if partial is not None:
            partial(*args)
        raise _Killed()

    monkeypatch.setattr(target, name, killed)


def _remove_one_journal(folder):
    next(iter(sorted(folder.iterdir()))).unlink()


@pytest.mark.parametrize("where", ["summary", "plot", "mark", "remove-none", "remove-some"])
def test_a_kill_between_stages_jsonl_and_removing_the_journals_resumes_identically(journals, finished, monkeypatch, where):
    """merge: stages.jsonl, summary.csv, regret.png, run.json's mark, then units/ removed; a
    kill at each step leaves a folder that a resume finishes with the same files."""
    from qbo.experiments import folder as folder_module, runner

    target, name, partial = {
        "summary": (runner, "write_summary_csv", None), "plot": (runner, "save_png", None),
        "mark": (runner, "mark_finished", None), "remove-none": (folder_module.shutil, "rmtree", None),
        "remove-some": (folder_module.shutil, "rmtree", _remove_one_journal),
    }[where]
    with monkeypatch.context() as patch:
        _kill_at(patch, target, name, partial)
        with pytest.raises(_Killed):
            resume_experiment(journals)
    assert (journals / "stages.jsonl").exists() and (journals / "units").is_dir()
    assert (json.loads((journals / "run.json").read_text()).get("finished") is not None) == where.startswith("remove")
    open_run_folder(journals)  # the CLI's read-only check accepts the folder
    resume_experiment(journals)
    assert _results(journals) == _results(finished) and not (journals / "units").exists()


def test_a_resume_walks_each_unchanged_journal_once(journals, finished, monkeypatch):
    """open_run_folder checks, run_unit reads and merge copies every journal: a journal whose
    bytes did not change between them is verified once (its scan is kept per sha256)."""
    from qbo.experiments import journal as journal_module

    journal_module.forget_scans()
    walks = []
    walk = journal_module.UnitJournal._walk
    monkeypatch.setattr(journal_module.UnitJournal, "_walk", lambda self, data: walks.append(self.unit) or walk(self, data))
    resume_experiment(journals)
    assert _results(journals) == _results(finished)
    assert sorted(walks) == sorted(set(walks)) and walks  # once per unit


def test_a_journal_changed_after_its_scan_is_walked_again(journals):
    from qbo.experiments import journal as journal_module

    path = _journal(journals)
    unit = journal_module.UnitJournal(path, config_hash(CONFIG))
    assert unit.check()
    lines = _lines(path)
    path.write_bytes(b"".join(lines[:50] + [lines[50].replace(b'"estimate":', b'"estimate":0.5,"x":')] + lines[51:]))
    with pytest.raises(BadFile, match="fails its hash chain"):
        unit.check()
