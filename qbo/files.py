"""Crash-safe files: atomic replacement and append-only JSON Lines.

- ``write_bytes_atomic``: write a temporary file in the same folder, fsync it, rename it
  over the target and fsync the folder; readers see the old file or the new one, never half.
  It replaces only a regular file, or creates a missing one in an existing folder (or in
  folders it may create): never a device node, FIFO, socket, folder or symlink to one, and
  never a path below a file (``check_writable``).
- ``append_line``: one JSON object per line, written with a single ``write`` on an
  ``O_APPEND`` descriptor (optionally fsync'd). A kill can at worst leave a torn last line;
  the next append cuts it off first, and ``read_lines`` skips it. Any other line that is
  not a JSON object is damage: ``read_lines`` refuses it (``BadFile``, naming the line).
  ``append_text_line`` is the same append for any one line (bench/noise_grid.py's CSV rows,
  appended by several workers at once: ``shared``, the file's torn line cut once by
  ``cut_torn_line`` before they start).
- ``uninterrupted`` and ``interruptible`` (issue 25): under ``interruptible`` (the CLI's
  entry point), SIGINT and SIGTERM raise ``Interrupted`` in the main thread, but never inside
  a ``with uninterrupted:`` block: a signal there is held until the block ends, so a write and
  the bookkeeping of what it wrote happen together or not at all. Only the first signal
  raises; later ones are absorbed, so the clean-up it starts (journals cut back to their last
  commit, the run folder's lock released) runs to its end.
  A signal that lands where Python cannot raise (a weakref callback such as importlib's
  module-lock clean-up, a ``__del__``, a ctypes callback) would be printed as "Exception
  ignored" and lost; ``sys.unraisablehook`` catches that ``Interrupted`` instead and holds its
  signal, which comes again a millisecond later (a SIGALRM tick; a deadline's timer is put
  back after it) or at the end of an ``uninterrupted`` block, whichever is first. A signal
  that lands in importlib's own frames is held the same way without being raised there (its
  module-lock callback takes the global import lock before its ``try``). A handler can run
  nested in another (a tick landing while the handler arms it, on a loaded machine): the
  nested run raises nothing and arms the tick again, and a SIGALRM is a deadline's end only
  once the deadline is due, so a tick never exits 142 and is never spent unseen.
- ``deadline`` (issue 25): a whole-command time limit. SIGALRM goes through the same handler,
  so it too waits for the end of an ``uninterrupted`` block; it raises ``Interrupted`` with
  exit code ``TIMED_OUT_EXIT`` (124, as coreutils ``timeout``) and the note "timed out after S s".
"""

from __future__ import annotations

import contextlib
import dis
import functools
import json
import os
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qbo.errors import BadFile, BadInput


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (under ``interruptible``); ``exit_code`` is 128 + the signal,
    ``note`` the one line to print. Not a KeyboardInterrupt, which command-line frameworks
    turn into a bare exit code."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.timed_out = signum == signal.SIGALRM and _alarm.seconds is not None
        self.exit_code = TIMED_OUT_EXIT if self.timed_out else 128 + signum
        self.note = f"timed out after {_alarm.seconds:g} s" if self.timed_out else "interrupted"


class _Deferral:
    """``with uninterrupted:``: SIGINT and SIGTERM wait for the end of the block (nestable)."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: int | None = None  # a signal held until the outermost block ends
        self.raised = False  # Interrupted was raised once; later signals are absorbed
        self.busy = False  # ``handle`` or ``hold`` runs: a handler nested in it only notes its signal
        self.delivered: int | None = None  # the signal whose Interrupted was raised (``replaced``)

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if self.depth == 0 and self.pending is not None and not self.raised:
            self.raised, self.delivered = True, self.pending
            raise Interrupted(self.pending)

    def handle(self, signum: int, frame: object) -> None:
        """The handler of SIGINT, SIGTERM and SIGALRM. Python runs a handler at any bytecode,
        also inside another handler: a held signal's tick can land inside the ``tick`` that
        sets it up (a loaded machine lets its millisecond pass). A nested run raises nothing
        (it would raise where the outer run decided not to, in importlib's frames) and, its
        tick perhaps spent, sets the tick again."""
        if self.busy:
            if signum != signal.SIGALRM or _alarm.due():
                self.pending = signum if self.pending is None else self.pending
            if self.pending is not None and not self.raised:
                _alarm.tick()
            return
        self.busy = True
        try:
            self._handle(signum, frame)
        finally:
            self.busy = False

    def _handle(self, signum: int, frame: object) -> None:
        if signum == signal.SIGALRM and (_alarm.ticking or not _alarm.due()):
            # the tick of a held signal (``hold``), or a late one: SIGALRM is a deadline's
            # only once the deadline is due (never Interrupted(SIGALRM), exit 142, for a tick)
            _alarm.untick()
            if self.pending is None:
                return
            signum = self.pending
        if self.raised:
            return
        if self.depth:
            self.pending = signum
            return
        if _importing(frame) or not _between_instructions(frame):
            # during an import: importlib's lock, and extension modules whose native code runs
            # Python (qiskit's Rust imports numpy) and panics on an exception it did not expect;
            # inside an instruction's C code: the raise may be replaced or mishandled
            self.pending = signum
            _alarm.tick()
            return
        self.raised, self.delivered = True, signum
        raise Interrupted(signum)

    def replaced(self) -> Interrupted | None:
        """The interrupt raised under the ``interruptible`` in force, for an error that took its
        place: C code that ran the handler (``PyObject_Repr`` checks for signals) may drop the
        exception and raise one of its own; None if no interrupt was raised."""
        return None if self.delivered is None else Interrupted(self.delivered)

    def hold(self, signum: int) -> None:
        """``Interrupted(signum)`` was raised where Python cannot raise it and was lost: hold
        the signal as a block would, and deliver it again after ``TICK_S`` (``_Alarm.tick``)."""
        self.busy = True  # a tick landing before this returns is set again, not spent
        try:
            self.pending, self.delivered = signum, None
            self.raised = False
            _alarm.tick()
        finally:
            self.busy = False


def _importing(frame: Any) -> bool:
    """An import is under way: importlib's code is on the stack, in the handler's own frame
    (between its lock's acquire and its try, raising would leave the lock held) or below a
    module body that an import runs. Native code may run that body and not expect an
    exception: a SIGTERM landing in numpy's import started by qiskit's Rust extension made it
    panic ("unwrap_failed") with a Rust backtrace on stderr. The signal is held until the
    import ends (imports run at start-up, before any run folder is claimed)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib."):
            return True
        frame = frame.f_back
    return False


# where CPython's eval loop runs pending signal handlers (a call, a loop's back edge, a
# function's start); a C function such a call runs checks for signals there too, and says so
_CHECKS_SIGNALS = frozenset(dis.opmap[name] for name in ("RESUME", "JUMP_BACKWARD", "PRECALL", "CALL", "CALL_FUNCTION_EX", "CALL_KW")
                            if name in dis.opmap)


def _between_instructions(frame: Any) -> bool:
    """The handler runs where raising is a plain raise: at an instruction where the eval loop
    checks for signals, not inside another instruction's C code that checks them on its own
    (``PyObject_Repr``, ``PyObject_Str``): there CPython or an extension may drop the exception
    for one of its own. ``from _thread import _ThreadHandle`` (dill, imported by qiskit) formats
    its ImportError with ``%R``; a SIGTERM handled inside it turned into "TypeError: expected a
    message argument" (exit 1, an internal error, once in 300 SIGTERMs to a loaded `qbo run`)."""
    if frame is None:  # no Python frame: nothing to replace the raise
        return True
    code, at = frame.f_code.co_code, frame.f_lasti
    return not 0 <= at < len(code) or code[at] in _CHECKS_SIGNALS


uninterrupted = _Deferral()
INTERRUPTS = (signal.SIGINT, signal.SIGTERM)
TICK_S = 1e-3  # a held signal comes again this long after it was lost


def _held_if_lost(unraisable: Any, fallback: Any = sys.__unraisablehook__) -> None:
    """``sys.unraisablehook`` under ``interruptible`` and ``deadline``: an ``Interrupted`` that
    the handler raised where Python cannot raise it (a weakref callback, ``__del__``, a ctypes
    callback) is not printed but held and delivered again (``_Deferral.hold``); so is one raised
    in this hook or the hook it passes everything else to."""
    try:
        exc = unraisable.exc_value
        if isinstance(exc, Interrupted) and uninterrupted.raised:
            uninterrupted.hold(exc.signum)
            return
        fallback(unraisable)
    except Interrupted as exc:
        if uninterrupted.raised:
            uninterrupted.hold(exc.signum)


@contextlib.contextmanager
def _holding_lost_signals() -> Iterator[None]:
    """Install ``_held_if_lost`` (over whatever hook is in force) for the block; nestable.
    The hook in force afterwards is the previous one, unless someone replaced ours meanwhile."""
    previous = sys.unraisablehook
    if isinstance(previous, functools.partial) and previous.func is _held_if_lost:
        yield
        return
    ours = sys.unraisablehook = functools.partial(_held_if_lost, fallback=previous)
    try:
        yield
    finally:
        if sys.unraisablehook is ours:
            sys.unraisablehook = previous


@contextlib.contextmanager
def interruptible(final: bool = False) -> Iterator[None]:
    """SIGINT and SIGTERM raise ``Interrupted`` (outside ``uninterrupted`` blocks) while the
    context is open; the previous handlers come back after it. In the main thread only.

    ``final``: the context is the whole life of the process (the ``qbo`` command): on leaving
    it the signals are ignored instead, so one landing while the interpreter shuts down cannot
    kill a process whose work is complete or already cut back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _holding_lost_signals():  # the hook is in force whenever the handlers are
        # SIGALRM first: the tick of a held signal comes through it (``_Alarm.tick`` never swaps it)
        previous = {signum: signal.signal(signum, uninterrupted.handle) for signum in (signal.SIGALRM, *INTERRUPTS)}
        if final:
            _alarm.origin = time.monotonic()  # a ``deadline`` counts from here: the command's start, its imports included
        try:
            yield
        finally:
            _alarm.untick()
            for signum, handler in reversed(previous.items()):  # SIGALRM last: a tick still due finds its handler
                signal.signal(signum, signal.SIG_IGN if final and signum in INTERRUPTS else handler)
            uninterrupted.pending, uninterrupted.raised, uninterrupted.delivered = None, False, None
            if final:
                _alarm.origin = None


TIMED_OUT_EXIT = 124  # the command ran past its --timeout (as coreutils ``timeout`` exits)


class _Alarm:
    """The one ``deadline`` in force: its length and when it ends (``time.monotonic``); and the
    tick that delivers a held signal again (``_Deferral.hold``) through SIGALRM, whose handler
    (``uninterrupted.handle``, installed by ``interruptible`` and ``deadline``) it never swaps:
    swapping it opened windows where a tick landed on the default action or on a handler that
    took it for the deadline (exit 142 under load). The timer is shared: a tick's end arms the
    deadline's again."""

    def __init__(self) -> None:
        self.seconds: float | None = None
        self.ends: float | None = None
        self.origin: float | None = None  # when the ``qbo`` command started (``interruptible(final=True)``)
        self.ticking = False

    def left(self) -> float | None:
        """Seconds until the deadline (never negative), or None without one."""
        return None if self.ends is None else max(0.0, self.ends - time.monotonic())

    def due(self) -> bool:
        """A deadline is in force and has passed (a SIGALRM now is its end, not a tick)."""
        return self.ends is not None and time.monotonic() >= self.ends

    def tick(self) -> None:
        """SIGALRM through ``uninterrupted.handle`` in ``TICK_S`` (main thread). Without that
        handler (no ``interruptible`` or ``deadline`` in force) there is no tick: the held
        signal waits for the end of the next ``uninterrupted`` block."""
        if signal.getsignal(signal.SIGALRM) != uninterrupted.handle:
            return
        self.ticking = True  # before the timer: a tick landing at once is known as one
        signal.setitimer(signal.ITIMER_REAL, TICK_S)

    def untick(self) -> None:
        """End the tick: the deadline's timer, if one is in force, is armed again (at once if due)."""
        if not self.ticking:
            return
        self.ticking = False
        ends = self.ends
        signal.setitimer(signal.ITIMER_REAL, 0 if ends is None else max(ends - time.monotonic(), 1e-6))


_alarm = _Alarm()


def time_left() -> float | None:
    """Seconds left before the ``deadline`` in force ends the command, or None without one."""
    return _alarm.left()


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """The block must end within ``seconds`` (None: no limit) of the ``qbo`` command's start
    (``interruptible(final=True)``; without it, of entering the block): then SIGALRM raises
    ``Interrupted`` (``timed_out``, exit code ``TIMED_OUT_EXIT``), outside ``uninterrupted``
    blocks only, so what was written stays complete and resumable. In the main thread only
    (elsewhere there is no limit); not nestable. A SIGALRM still held when the block ends is
    dropped: the block's work is done."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    with _holding_lost_signals():
        previous = signal.signal(signal.SIGALRM, uninterrupted.handle)
        now = time.monotonic()
        _alarm.seconds, _alarm.ends = seconds, (now if _alarm.origin is None else _alarm.origin) + seconds
        if not _alarm.ticking:  # a tick's end arms it (``_Alarm.untick``)
            signal.setitimer(signal.ITIMER_REAL, max(_alarm.ends - now, 1e-6))  # 0 would disarm it
        try:
            yield
        finally:
            try:
                _alarm.seconds = _alarm.ends = None  # first: a SIGALRM from here on is no deadline's
                _alarm.untick()
                signal.setitimer(signal.ITIMER_REAL, 0)
            finally:
                signal.signal(signal.SIGALRM, previous)
                if uninterrupted.pending == signal.SIGALRM:
                    uninterrupted.pending = None
                if signal.getsignal(signal.SIGINT) != uninterrupted.handle:  # not inside ``interruptible``, which resets it
                    uninterrupted.pending, uninterrupted.raised = None, False
                elif uninterrupted.pending is not None and not uninterrupted.raised and not uninterrupted.depth:
                    _alarm.tick()  # a held SIGINT or SIGTERM whose tick the deadline's end stopped


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically (permissions as for a new file)."""
    with uninterrupted:
        return _write_bytes_atomic(path, data)


def _write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    path = check_writable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            write_all(fd, data, path)
            os.fsync(fd)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
        finally:
            os.close(fd)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)
    return path


def check_writable(path: str | os.PathLike) -> Path:
    """``path`` if an atomic write may replace or create it; one-line ``BadInput`` otherwise.

    Allowed: an existing regular file (or a symlink to one, which is replaced by the file),
    or a missing name whose nearest existing ancestor is a folder. Refused: the empty path,
    folders, device nodes, FIFOs, sockets, and any path that runs through a file.
    """
    text = os.fspath(path)
    if not text or not str(text).strip():
        raise BadInput("output path is empty; expected a file name")
    path = Path(text)
    if path.name in ("", ".", "..") or str(text).endswith(os.sep):
        raise BadInput(f"output path '{text}' names a folder; expected a file name")
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:
        raise BadInput(f"output path '{text}' runs through a file, not a folder") from None
    except OSError as exc:
        raise BadInput(f"cannot use output path '{text}': {exc.strerror}") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise BadInput(f"output path '{text}' is a folder; expected a file name")
        if not stat.S_ISREG(mode):
            raise BadInput(f"output path '{text}' is not a regular file (a device, FIFO or socket); refusing to replace it")
        return path
    ancestor = path.parent
    while not ancestor.exists():
        if ancestor.is_symlink():  # a dangling link: creating folders through it is a surprise
            raise BadInput(f"output path '{text}' runs through a broken symlink '{ancestor}'")
        if ancestor == ancestor.parent:
            break
        ancestor = ancestor.parent
    if ancestor.exists() and not ancestor.is_dir():
        raise BadInput(f"output path '{text}' runs through '{ancestor}', which is a file, not a folder")
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return write_bytes_atomic(path, text.encode())


def append_line(path: str | os.PathLike, entry: dict[str, Any], fsync: bool = False) -> None:
    """Append ``entry`` as one JSON line; with ``fsync``, it is on disk when this returns."""
    append_text_line(path, json.dumps(entry, separators=(",", ":")), fsync)


def append_text_line(path: str | os.PathLike, line: str, fsync: bool = False, *, shared: bool = False) -> None:
    """Append ``line`` (no newline in it) and a newline in one ``write`` (appenders never
    interleave), uninterrupted by Ctrl-C; with ``fsync``, it is on disk when this returns.
    ``append_line`` writes JSON lines with it, bench/noise_grid.py CSV rows.

    A file with one writer (a journal under its lock) is created if missing, and a torn last
    line that a killed writer left is cut off first. With ``shared`` (several processes append
    at once) the file must exist and nothing is cut: a cut is a read then a truncate, and two
    appenders interleaving them could erase each other's lines, so the file's owner cuts a
    torn line once (``cut_torn_line``) before the appenders start."""
    if "\n" in line or "\r" in line:
        raise ValueError(f"line must be one line, got {line[:80]!r}")
    path = Path(path)
    if not shared:
        path.parent.mkdir(parents=True, exist_ok=True)
    created = not shared and not path.exists()
    data = (line + "\n").encode()
    with uninterrupted:
        fd = os.open(path, (os.O_WRONLY | os.O_APPEND) if shared else (os.O_RDWR | os.O_APPEND | os.O_CREAT), 0o644)
        try:
            if not shared:
                _cut_torn(fd)
            write_all(fd, data, path)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if fsync and created:
            fsync_folder(path.parent)


def cut_torn_line(path: str | os.PathLike) -> None:
    """Cut off a last line with no newline (what a writer killed mid-``write`` leaves); a
    missing or empty file is left alone."""
    with uninterrupted:
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return
        try:
            _cut_torn(fd)
        finally:
            os.close(fd)


def _cut_torn(fd: int) -> None:
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.ftruncate(fd, _whole_lines(fd, size))


def write_all(fd: int, data: bytes, path: str | os.PathLike) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write part of a large buffer); an
    OSError names ``path`` (a full disk says which file it could not write)."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None


def json_object(raw: bytes | str, where: str, invalid: str = "", not_object: str = "") -> dict[str, Any]:
    """One JSON Lines line as a dict, or ``BadFile``: "WHERE is not valid JSON INVALID" or
    "WHERE is not a JSON object NOT_OBJECT" (the suffixes say what follows for the file)."""
    try:
        entry = json.loads(raw)
    except ValueError:
        raise BadFile(f"{where} is not valid JSON{invalid}") from None
    if not isinstance(entry, dict):
        raise BadFile(f"{where} is not a JSON object{not_object}")
    return entry


def read_lines(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every JSON-object line of ``path``, in order. A torn last line (no newline after it) is
    skipped; any other line that is not a JSON object raises ``BadFile`` naming the line."""
    return [entry for _, entry in numbered_lines(path)]


def numbered_lines(path: str | os.PathLike) -> list[tuple[int, dict[str, Any]]]:
    """``read_lines`` with each object's line number (1-based), for messages that name it."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadFile(f"cannot read '{path}': {exc.strerror}") from None
    out = []
    for n, chunk in enumerate(data[: data.rfind(b"\n") + 1].split(b"\n")[:-1], 1):
        if not chunk.strip():
            continue
        out.append((n, json_object(chunk, f"'{path}' line {n}", " (damaged, not a torn last line)")))
    return out


def _whole_lines(fd: int, size: int) -> int:
    """The length of the part of the file up to and including its last newline."""
    block = 65536
    end = size
    while end > 0:
        start = max(0, end - block)
        chunk = os.pread(fd, end - start, start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def fsync_folder(folder: Path) -> None:
    """Persist a rename or a new file's directory entry (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
