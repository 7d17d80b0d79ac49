"""Issue 25, item 1: SIGINT and SIGTERM lose nothing. A signal never lands inside a journal
write (``qbo.files.uninterrupted`` holds it), the run cuts its journals back to their last
commit, releases its lock, prints one line saying how to resume and exits 130 or 143; the
resume gives byte-identical files."""

from __future__ import annotations

import os
import signal
import sys
import time
import types
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from qbo.cli.errors import interrupted_cause
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.journal import UnitJournal
from qbo.experiments.runner import run_experiment
from qbo import files as files_module
from qbo.files import Interrupted, deadline, interruptible, uninterrupted
from tests.support.stopped_runs import ARGS, exit_report, finished_files, resume_or_restart, start_cli

CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
BEFORE_CLAIM = "interrupted before the run folder was claimed; nothing to resume: run the command again"


def _handling(pid: int) -> bool:
    """Whether process ``pid`` catches SIGTERM yet (its SigCgt mask): the interpreter has
    started and qbo's CLI has installed its handlers. Before that no Python code runs, and a
    signal ends the process as it would end any program."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(caught >> (signal.SIGTERM - 1) & 1)


def _interrupt_then_resume(cwd: Path, sig: int, moment: float | None, expected: dict[str, bytes]) -> bool:
    """Interrupt a run ``moment`` s after its CLI catches signals (None: once its first
    journal is on disk), resume it, compare; True if the signal landed before the run finished."""
    proc = start_cli(*ARGS, "--out", "R", cwd=cwd)
    deadline = time.monotonic() + 60
    while not _handling(proc.pid):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.002)
    if moment is None:
        deadline = time.monotonic() + 120
        while not list((cwd / "R" / "units").glob("*.jsonl")) if (cwd / "R" / "units").is_dir() else True:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
    else:
        time.sleep(moment)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    lines = err.decode().strip().splitlines()
    run = cwd / "R"
    if proc.returncode == 0:  # it finished before the signal came
        assert lines == [] and finished_files(run) == expected
        return False
    assert proc.returncode == CODES[sig], f"{signal.Signals(sig).name} at {moment}: {exit_report(proc.returncode, err)}"
    if (run / "run.json").exists():
        assert lines == ["interrupted; resume with: qbo run --resume R"], (moment, lines)
    else:
        assert lines in (["interrupted"], [BEFORE_CLAIM]), (moment, lines)  # the CLI was still loading
    resume_or_restart(cwd, expected, moment)
    return True


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_mid_run_prints_one_line_and_resumes_byte_identically(stopped_run_reference, tmp_path, sig):
    expected, _ = stopped_run_reference
    assert _interrupt_then_resume(tmp_path, sig, None, expected)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_20_interrupts_at_random_moments_then_resume_are_byte_identical(stopped_run_reference, tmp_path, sig):
    expected, wall = stopped_run_reference
    rng = np.random.default_rng(25 + sig)
    moments = np.concatenate([rng.uniform(0.0, 1.0, 6), rng.uniform(0.0, wall, 14)])  # 6 in start-up
    landed = 0
    for i, moment in enumerate(moments):
        cwd = tmp_path / f"i{i}"
        cwd.mkdir()
        landed += _interrupt_then_resume(cwd, sig, float(moment), expected)
    assert landed >= 15  # most moments fall inside the run, not after it


def test_a_signal_during_a_journal_write_waits_for_the_write_to_end(tmp_path, monkeypatch):
    """The signal arrives inside fsync: the commit completes, then Interrupted is raised, and
    close() sends nothing twice (the journal verifies and reads back every committed stage)."""
    path = tmp_path / "u.jsonl"
    sha = "0" * 64
    journal = UnitJournal(path, sha, flush_every_s=3600.0)
    journal.read()
    for stage in range(1, 4):
        journal.append({"trial": 0, "algorithm": "a", "stage": stage, "cum_calls": stage})
    real_fsync = os.fsync

    def fsync_with_signal(fd):
        os.kill(os.getpid(), signal.SIGINT)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_with_signal)
    with interruptible(), pytest.raises(Interrupted):
        journal.commit()
        time.sleep(1.0)  # not reached: the held signal is raised as the commit ends
    monkeypatch.setattr(os, "fsync", real_fsync)
    journal.close()
    replay = UnitJournal(path, sha).read()
    assert [r["stage"] for r in replay.records] == [1, 2, 3]
    assert path.read_bytes().count(b"\n") == 5  # header, three stages, one checkpoint: nothing repeated


def test_a_failed_write_is_never_sent_again(tmp_path, monkeypatch):
    """An fsync that fails cuts the file back to its last commit; close() does not append
    the same lines a second time, so the journal still verifies."""
    path = tmp_path / "u.jsonl"
    sha = "0" * 64
    journal = UnitJournal(path, sha, flush_every_s=3600.0)
    journal.read()
    journal.append({"trial": 0, "algorithm": "a", "stage": 1, "cum_calls": 1})
    journal.commit()
    size = path.stat().st_size
    journal.append({"trial": 0, "algorithm": "a", "stage": 2, "cum_calls": 2})

    def failing_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError) as caught:
        journal.commit()
    assert caught.value.filename == str(path)  # a full disk names the file
    monkeypatch.undo()
    journal.close()
    assert path.stat().st_size == size
    assert [r["stage"] for r in UnitJournal(path, sha).read().records] == [1]


def test_signals_outside_a_write_raise_at_once_and_only_once():
    with interruptible():
        with pytest.raises(Interrupted) as caught:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1.0)
        assert caught.value.exit_code == 143
        os.kill(os.getpid(), signal.SIGINT)  # the clean-up after the first is not disturbed
        time.sleep(0.01)
    with interruptible():
        with pytest.raises(Interrupted):
            with uninterrupted:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.01)
                done = True
        assert done


class _Thing:
    pass


def _lose_in_a_callback(land, context: str = "weakref"):
    """Run ``land`` where Python cannot raise: a weakref callback or a ``__del__``."""
    thing = _Thing()
    if context == "weakref":
        ref = weakref.ref(thing, land)
    else:
        thing.__class__ = type("Dying", (_Thing,), {"__del__": land})
        ref = None
    del thing
    return ref


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@pytest.mark.parametrize("context", ["weakref", "del"])
def test_a_signal_landing_where_python_cannot_raise_is_held_not_lost(capfd, monkeypatch, context):
    """A signal whose handler runs inside a weakref callback (importlib's module-lock clean-up
    is one: the CI flake of 2026-11-26) or a ``__del__`` would be printed as "Exception
    ignored" and lost. It is held instead; here (no tick for 10 s) the end of the next write raises it."""
    monkeypatch.setattr(files_module, "TICK_S", 10.0)
    hit = []

    def land(*_: object) -> None:
        hit.append(True)
        signal.raise_signal(signal.SIGINT)  # its handler runs here, inside the callback

    with pytest.raises(Interrupted) as caught, interruptible():
        ref = _lose_in_a_callback(land, context)
        assert hit and uninterrupted.pending == signal.SIGINT and not uninterrupted.raised
        done = False
        with uninterrupted:
            done = True
    assert done and caught.value.exit_code == 130
    assert capfd.readouterr().err == ""
    assert uninterrupted.pending is None and not uninterrupted.raised  # interruptible reset it
    assert ref is None or ref() is None
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # the tick was stopped with the context


def test_a_held_signal_comes_again_within_a_tick_without_any_write(capfd):
    """No write follows (a job poll loop, a long computation): the tick delivers it."""
    start = time.monotonic()  # before the signal: its tick may deliver it at once
    with pytest.raises(Interrupted) as caught, interruptible():
        _lose_in_a_callback(lambda _: signal.raise_signal(signal.SIGTERM))
        _spin(5.0)
    assert time.monotonic() - start < 1.0 and caught.value.exit_code == 143
    assert capfd.readouterr().err == "" and signal.getsignal(signal.SIGALRM) is signal.SIG_DFL


def test_a_deadline_that_lands_in_a_callback_still_times_the_command_out(capfd):
    """--timeout's SIGALRM fires once: lost in a callback, it would let the command run on."""
    with pytest.raises(Interrupted) as caught, interruptible(), deadline(0.05):
        start = time.monotonic()
        _lose_in_a_callback(lambda _: _spin(0.3))  # the alarm fires while the callback runs
        _spin(5.0)
    assert time.monotonic() - start < 1.0
    assert caught.value.timed_out and caught.value.exit_code == 124
    assert capfd.readouterr().err == ""


def test_a_signal_held_during_a_deadline_restores_the_deadlines_timer(monkeypatch):
    """The tick borrows SIGALRM for a millisecond; the deadline's timer comes back after it."""
    with interruptible(), deadline(30.0):
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        with pytest.raises(Interrupted) as caught:
            _lose_in_a_callback(lambda _: signal.raise_signal(signal.SIGINT))
            _spin(5.0)
        assert caught.value.exit_code == 130
        assert 0.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= left
        assert signal.getsignal(signal.SIGALRM) == uninterrupted.handle


def test_a_deadline_held_past_its_block_is_dropped(monkeypatch):
    """The block's work is done: a SIGALRM held at its end neither raises later nor claims 142."""
    monkeypatch.setattr(files_module, "TICK_S", 10.0)
    with interruptible():
        with deadline(0.05):
            _lose_in_a_callback(lambda _: _spin(0.3))
            assert uninterrupted.pending == signal.SIGALRM
        assert uninterrupted.pending is None
        with uninterrupted:
            pass
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_signal_landing_in_the_previous_hook_is_held_too(capfd):
    """Our hook passes other unraisable errors on; a signal landing while that hook runs
    (pytest's is Python code) is held as well, not printed as lost by the hook machinery."""
    def previous(_: object) -> None:
        signal.raise_signal(signal.SIGINT)

    hook, sys.unraisablehook = sys.unraisablehook, previous
    try:
        with pytest.raises(Interrupted) as caught, interruptible():
            _lose_in_a_callback(lambda _: 1 / 0)
            _spin(5.0)
    finally:
        sys.unraisablehook = hook
    assert caught.value.exit_code == 130 and capfd.readouterr().err == ""


def test_a_signal_in_importlibs_own_frames_is_not_raised_there_but_a_tick_later(capfd):
    """importlib's module-lock callback takes the import lock before its ``try``: an exception
    raised between the two would leave the lock held. The handler holds the signal there."""
    frames = {}
    exec(compile("import sys\nframe = sys._getframe()", "<frozen importlib._bootstrap>", "exec"), frames)
    with pytest.raises(Interrupted) as caught, interruptible():
        uninterrupted.handle(signal.SIGINT, frames["frame"])  # returns: held, not raised
        assert uninterrupted.pending == signal.SIGINT and not uninterrupted.raised
        _spin(5.0)
    assert caught.value.exit_code == 130 and capfd.readouterr().err == ""


def test_a_signal_in_a_module_body_under_an_import_is_held_until_the_import_ends(tmp_path, monkeypatch, capfd):
    """A module body that an import runs may have been started by native code that does not
    expect an exception (qiskit's Rust extension importing numpy panicked on one): the handler
    holds the signal there, and it arrives once the import has returned."""
    (tmp_path / "qbo_probe_module.py").write_text(
        "import sys\nfrom qbo.files import uninterrupted\nimport signal\n"
        "uninterrupted.handle(signal.SIGTERM, sys._getframe())\n"
        "HELD = uninterrupted.pending == signal.SIGTERM and not uninterrupted.raised\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(files_module, "_between_instructions", lambda frame: True)  # only the import rule holds it
    imported = []
    with pytest.raises(Interrupted) as caught, interruptible():
        import qbo_probe_module  # noqa: F401 - the handler runs in its body, under importlib's frames

        imported.append(qbo_probe_module.HELD)
        _spin(5.0)
    sys.modules.pop("qbo_probe_module", None)
    assert imported == [True]  # the import ran to its end with the signal held
    assert caught.value.exit_code == 143 and capfd.readouterr().err == ""


def test_other_unraisable_exceptions_still_reach_the_previous_hook():
    seen = []
    hook = seen.append
    previous, sys.unraisablehook = sys.unraisablehook, hook
    try:
        with interruptible():
            ref = _lose_in_a_callback(lambda _: 1 / 0)
            assert sys.unraisablehook is not hook
        assert sys.unraisablehook is hook  # put back on leaving
    finally:
        sys.unraisablehook = previous
    assert ref() is None and [type(u.exc_value) for u in seen] == [ZeroDivisionError]


@pytest.mark.slow
def test_an_interrupted_run_in_process_releases_its_lock(tmp_path, monkeypatch):
    config = ExperimentConfig(budget=300, trials=1, algorithms=("gp-ucb",))
    original = UnitJournal.append
    count = {"n": 0}

    def append(self, record):
        count["n"] += 1
        if count["n"] == 50:
            os.kill(os.getpid(), signal.SIGINT)
        original(self, record)

    monkeypatch.setattr(UnitJournal, "append", append)
    with interruptible(), pytest.raises(Interrupted):
        run_experiment(config, tmp_path / "R")
    monkeypatch.setattr(UnitJournal, "append", original)
    run_experiment(config, tmp_path / "R")  # the lock was released; the resume completes


def _main(argv, monkeypatch, capsys):
    from qbo.cli.app import main

    monkeypatch.setattr(sys, "argv", ["qbo", *argv])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_cli_prints_one_line_exits_128_plus_the_signal_and_resumes_identically(tmp_path, monkeypatch, capsys, sig):
    """In process (the subprocess tests above are slow): the signal arrives at the 120th stage."""
    args = ["run", "--budget", "300", "--trials", "2", "--algorithms", "gp-ucb", "--seed", "4"]
    monkeypatch.chdir(tmp_path)
    assert _main([*args, "--out", "plain"], monkeypatch, capsys)[0] == 0
    original = UnitJournal.append
    count = {"n": 0}

    def append(self, record):
        count["n"] += 1
        if count["n"] == 120:
            os.kill(os.getpid(), sig)
        original(self, record)

    monkeypatch.setattr(UnitJournal, "append", append)
    with interruptible():  # as python -m qbo.cli installs it
        code, err = _main([*args, "--out", "R"], monkeypatch, capsys)
    monkeypatch.setattr(UnitJournal, "append", original)
    assert code == CODES[sig] and err.strip().splitlines() == ["interrupted; resume with: qbo run --resume R"]
    assert _main(["run", "--resume", "R"], monkeypatch, capsys)[0] == 0
    assert finished_files(tmp_path / "R") == finished_files(tmp_path / "plain")


def test_an_interrupted_hardware_run_names_jobs_resume(tmp_path, monkeypatch, capsys):
    from qbo.execution import runtime
    from tests.support.fake_service import fake_ibm

    conn = fake_ibm()
    monkeypatch.setattr(runtime, "connect", lambda kind: conn)
    config = tmp_path / "cfg.toml"
    config.write_text(ExperimentConfig(algorithms=("q-gp-ucb",), budget=300, trials=1).to_toml())
    monkeypatch.chdir(tmp_path)
    original = UnitJournal.append

    def append(self, record):
        if record["stage"] == 3:
            os.kill(os.getpid(), signal.SIGINT)
        original(self, record)

    monkeypatch.setattr(UnitJournal, "append", append)
    with interruptible():
        code, err = _main(["submit", str(config), "--backend", "ibm:ibm_test", "--out", "R", "--yes"], monkeypatch, capsys)
    monkeypatch.setattr(UnitJournal, "append", original)
    lines = [line for line in err.splitlines() if "oracle calls" not in line and line.strip()]
    assert code == 130 and lines == ["interrupted; resume with: qbo jobs resume R"], err
    assert _main(["jobs", "resume", "R"], monkeypatch, capsys)[0] == 0


def _frame_in_importlib() -> Any:
    """A frame whose code is importlib's own, as a signal handler sees it there."""
    scope: dict[str, Any] = {}
    exec(compile("import sys\nframe = sys._getframe()", "<frozen importlib._bootstrap>", "exec"), scope)
    return scope["frame"]


def _tick_lands_while_it_is_armed(monkeypatch) -> list[bool]:
    """The first tick's timer fires before the call that arms it returns, so its handler runs
    nested in the handler (or ``hold``) that is setting it up, as on a loaded machine, where the
    millisecond can pass before the next line."""
    real, fired = signal.setitimer, []

    def slow_setitimer(which: int, seconds: float, *interval: float) -> tuple[float, float]:
        previous = real(which, seconds, *interval)
        if seconds == files_module.TICK_S and not fired:
            fired.append(True)
            _spin(0.05)  # SIGALRM comes meanwhile; its handler runs at one of these bytecodes
        return previous

    monkeypatch.setattr(signal, "setitimer", slow_setitimer)
    return fired


def test_a_tick_landing_while_a_handler_arms_it_delivers_the_held_signal(capfd, monkeypatch):
    """A SIGTERM held in importlib's frames: its tick, nested in the handler, was taken for a
    deadline and raised Interrupted(SIGALRM), exit 142 instead of 143 (once in 300 SIGTERMs
    sent to a loaded `qbo run`). Nested, it raises nothing; the held signal comes within a tick."""
    fired = _tick_lands_while_it_is_armed(monkeypatch)
    start = time.monotonic()  # before the handler: its tick may deliver the signal at once
    with pytest.raises(Interrupted) as caught, interruptible():
        uninterrupted.handle(signal.SIGTERM, _frame_in_importlib())
        assert uninterrupted.pending == signal.SIGTERM and not uninterrupted.raised  # held, not raised in importlib
        _spin(5.0)
    assert fired and caught.value.exit_code == 143 and time.monotonic() - start < 1.0
    assert capfd.readouterr().err == "" and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_tick_landing_while_a_lost_signal_is_held_is_not_spent(capfd, monkeypatch):
    """``hold`` (a signal lost in a callback): a tick landing inside it was absorbed, and the
    held signal then waited for a write that a computation never makes."""
    fired = _tick_lands_while_it_is_armed(monkeypatch)
    start = time.monotonic()  # before the signal: its tick may deliver it at once
    with pytest.raises(Interrupted) as caught, interruptible():
        _lose_in_a_callback(lambda _: signal.raise_signal(signal.SIGINT))
        _spin(5.0)
    assert fired and caught.value.exit_code == 130 and time.monotonic() - start < 1.0
    assert capfd.readouterr().err == ""


def test_a_sigalrm_before_a_deadline_is_due_is_never_its_timeout():
    """A stray or late SIGALRM (a tick that came after its end) with nothing held does nothing:
    only a deadline that has passed times the command out."""
    with interruptible(), deadline(30.0):
        signal.raise_signal(signal.SIGALRM)
        _spin(0.01)
    with interruptible():
        signal.raise_signal(signal.SIGALRM)
        _spin(0.01)


def test_a_signal_handled_inside_an_instructions_c_code_is_held_until_a_call(monkeypatch):
    """CPython's ``from M import NAME`` formats its ImportError with ``%R``, and ``PyObject_Repr``
    runs pending signal handlers: raised there, the interrupt became "TypeError: expected a
    message argument" (an internal error, exit 1). Its handler runs here while the importing
    frame is at that instruction: the import fails as it would without a signal (ImportError,
    caught), and the held signal comes within a tick."""
    module = types.ModuleType("qbo_probe_module")

    def getattr_(name: str) -> Any:
        if name == "missing":  # the handler, as PyObject_Repr runs it inside IMPORT_FROM
            uninterrupted.handle(signal.SIGTERM, sys._getframe(1))
        raise AttributeError(name)

    module.__getattr__ = getattr_  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    steps = []
    start = time.monotonic()  # before the signal: its tick may deliver it at once
    with pytest.raises(Interrupted) as caught, interruptible():
        try:
            from qbo_probe_module import missing  # noqa: F401
        except ImportError:
            steps.append("import failed as without a signal")
        assert uninterrupted.pending == signal.SIGTERM and not uninterrupted.raised
        _spin(5.0)
    assert steps and caught.value.exit_code == 143 and time.monotonic() - start < 1.0


def test_an_error_that_took_an_interrupts_place_is_that_interrupt():
    """C code that ran the handler may drop the interrupt and raise its own error (no cause,
    no context): under ``interruptible`` that error is the interrupt, exit 128 + signal."""
    with interruptible():
        assert interrupted_cause(TypeError("expected a message argument")) is None  # nothing was raised yet
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGTERM)
            _spin(1.0)
        taken = interrupted_cause(TypeError("expected a message argument"))
        assert taken is not None and taken.exit_code == 143
    assert interrupted_cause(TypeError("a later, unrelated error")) is None  # the context's end forgets it
