"""Per-unit stage journals: JSON Lines with a hash chain, written by group commit.

A journal ``units/KEY.jsonl`` holds four kinds of line, each ending in ``"chain":"C"}``::

    {"journal":2,"unit":KEY,"config_sha256":H,"seq":0,"chain":C}      the header
    {"trial":T,"algorithm":A,<stage record>,"seq":N,"chain":C}       stage N (N = 1, 2, ...)
    {"checkpoint":N,"rng":{...},"chain":C}                          resumable state after stage N
    {"done":true,"stages":N,"seq":N+1,"chain":C}                     the unit finished

A stage line is already the line ``stages.jsonl`` holds (``runner.merge`` copies its bytes).
``C`` is the first 16 hex digits of sha256(previous chain + the line's bytes before
``,"chain":``); the header's previous chain is the config hash (``folder.config_hash``). The
header, stage and done lines form one chain, numbered by ``seq``. A checkpoint links to the
chain of the stage before it but does not advance it, so where checkpoints fall (which depends
on timing) never changes a stage line. A line that was edited, deleted, duplicated or moved,
a journal of another unit or config, or a done marker without its stages breaks a link at a
line that the error names. An edited checkpoint breaks its own link; a *deleted* checkpoint is
not detected: the resume then starts from an earlier one, cuts the stage lines after it and
recomputes them, which gives the same records (tests/test_reliability_properties.py).

Group commit (issue 13, item 1): lines are buffered and written with one ``write`` and one
``fsync`` when the unit finishes (header, stages, done) and when ``FLUSH_EVERY_S`` has passed
since the last commit (stages, then a checkpoint holding ``state()``, the unit's random state
after the last stage). The generator state is therefore written once a commit, not once a
stage. A resume continues from the last checkpoint (or done marker): stage lines after it can
only come from a torn write, and are cut off and recomputed deterministically.

A journal, once created, is listed in ``units/.started``, so a deleted journal of an
unfinished run is refused on resume (``folder.check_units``) rather than silently recomputed.

Verification hashes each line's bytes; a line is parsed only when its link fails, to say what
is wrong with it. Any damage but a torn tail is refused with a one-line ``BadFile``. A scan
is kept per sha256 of the journal's bytes, and a journal that finishes in this process
registers the scan of what it wrote, so a merge right after the run hashes each file once
instead of walking its chain (the default run's merge: 0.74 to 0.80 s before, 0.61 to 0.66 s after,
timed in process on the shared 2-core machine).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from qbo.errors import BadFile
from qbo.experiments.schema import record_model
from qbo.files import append_line, fsync_folder, json_object, uninterrupted, write_all

FLUSH_EVERY_S = 1.0
STARTED = ".started"  # units/.started: one line per unit whose journal was created (folder.check_units)
JOURNAL_FORMAT = 2
_TAIL = len(',"chain":"') + 16 + len('"}')  # what follows a line's chained bytes
_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode  # json.dumps builds one per call


def encode_record(record: dict[str, Any]) -> bytes:
    """``record`` as compact JSON bytes: orjson (about 10x the standard library, which made
    this 0.45 s of the default run's 10^5 stages), or the standard library where orjson would
    refuse or change a value: integers past 64 bits, and NaN or infinities, which orjson
    writes as null (seen as more nulls than the record has None values; a nested None or a
    string holding "null" takes the same slow path). Both parse to the same values; the
    spelling may differ (``0.00001`` vs ``1e-05``, UTF-8 vs ``\\u`` escapes), so the bytes of a
    line depend on orjson's float spelling, which ``pyproject.toml`` pins to 3.x and
    ``tests/test_figure.py`` checks."""
    try:
        data = orjson.dumps(record)
    except orjson.JSONEncodeError:
        return _ENCODE(record).encode()
    if data.count(b"null") != list(record.values()).count(None):
        return _ENCODE(record).encode()
    return data


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    journal: int = Field(ge=JOURNAL_FORMAT, le=JOURNAL_FORMAT)
    unit: str = Field(max_length=300)
    config_sha256: str = Field(min_length=64, max_length=64)
    seq: int = Field(ge=0, le=0)
    chain: str = Field(min_length=16, max_length=16)


# a stage line: the record's field table (qbo.experiments.records); an added key is left to the chain
_Stage = record_model("StageLine", extra=True)


class _Checkpoint(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    checkpoint: int = Field(ge=0)
    chain: str = Field(min_length=16, max_length=16)


class _Done(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    done: bool
    stages: int = Field(ge=0)
    seq: int = Field(ge=1)
    chain: str = Field(min_length=16, max_length=16)


def link(previous: bytes, body: bytes) -> bytes:
    """The chain value (16 hex digits, ASCII) of a line whose bytes before ``,"chain":`` are
    ``body``, after the chain value ``previous``."""
    return hashlib.sha256(previous + body).digest()[:8].hex().encode()  # = hexdigest()[:16], without the other 48 digits


def header_body(unit: str, config_sha256: str) -> bytes:
    """The chained bytes of unit ``unit``'s header (a stage line's chain starts from its link)."""
    return _ENCODE({"journal": JOURNAL_FORMAT, "unit": unit, "config_sha256": config_sha256, "seq": 0})[:-1].encode()


def unit_root(unit: str, config_sha256: str) -> bytes:
    """The chain value of unit ``unit``'s header: the link its first stage line continues."""
    return link(config_sha256.encode(), header_body(unit, config_sha256))


def _split(line: bytes) -> tuple[bytes, bytes] | None:
    """(chained bytes, chain) of a line without its newline, or None if it does not end in a chain."""
    if len(line) < _TAIL + 2 or line[-_TAIL:-18] != b',"chain":"' or line[-2:] != b'"}':
        return None
    return line[:-_TAIL], line[-18:-2]


@dataclass
class Replay:
    """What a resume continues from: the durable stage records, whether the unit is done, and
    the state of the last checkpoint (None before the first one)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    state: dict[str, Any] | None = None


@dataclass(frozen=True)
class _Scan:
    stages: tuple[bytes, ...]  # every verified stage line, without its newline
    done: bool
    durable: int  # bytes up to the end of the last checkpoint or done marker (or the header)
    durable_stages: int  # stage lines before that point
    chain: bytes  # the chain value at that point
    checkpoint: bytes | None  # the last checkpoint line


_SCANS: dict[tuple[str, str, bytes], tuple[_Scan, int]] = {}  # UnitJournal._scan's memory (scan, bytes), oldest first
SCAN_MEMORY = 1 << 28  # keep the scans of at most 256 MB of journals
_HELD = 0  # bytes of journals behind the kept scans


def forget_scans() -> None:
    """Drop every kept scan (the next check of each journal walks its chain)."""
    global _HELD
    _SCANS.clear()
    _HELD = 0


def _remember(key: tuple[str, str, bytes], scan: _Scan, size: int) -> None:
    global _HELD
    if key in _SCANS:
        _HELD -= _SCANS.pop(key)[1]
    _SCANS[key] = (scan, size)
    _HELD += size
    while _HELD > SCAN_MEMORY and len(_SCANS) > 1:
        _HELD -= _SCANS.pop(next(iter(_SCANS)))[1]


class UnitJournal:
    """The journal of one (trial, algorithm) unit; ``config_sha256`` ties it to its run's config.

    ``fields`` open every stage line (the unit's ``trial`` and ``algorithm``); ``state`` returns
    the unit's resumable state after the last appended stage, for checkpoints; it is called
    only from ``append``, between stages."""

    def __init__(self, path: str | os.PathLike, config_sha256: str, flush_every_s: float | None = None,
                 fields: dict[str, Any] | None = None, state: Callable[[], dict[str, Any]] | None = None,
                 remember: bool = True) -> None:
        self.path = Path(path)
        self.unit = self.path.stem
        self.config_sha256 = config_sha256
        self.flush_every_s = FLUSH_EVERY_S if flush_every_s is None else flush_every_s
        self._prefix = (_ENCODE(fields)[:-1] + "," if fields else "{").encode()
        self.state = state or dict  # the checkpoint's content; a compact unit sets its own
        self._seq = 0
        self._chain = config_sha256.encode()
        self._buffer: list[bytes] = []
        self._unsaved = 0  # stage lines in the buffer after its last checkpoint
        self._last_commit = time.monotonic()
        # what this journal's file holds, as ``_walk`` would scan it: kept while writing, so
        # that a merge in this process finds the scan of a unit it wrote (one sha256, no walk)
        self._written = hashlib.sha256()
        self._size = 0
        self._stages: list[bytes] = []
        self._checkpoint: bytes | None = None
        self._remember = remember  # register the finished scan (off where no merge follows: Dask workers)
        self._opened = self._done = False  # read() (or a fresh start) came first; the unit is done
        self._broken = False  # a write failed: the file stops at its last commit and takes no more

    # ------------------------------------------------------------------ reading

    def read(self) -> Replay:
        """The verified durable records, done flag and last checkpoint state; cuts off a torn
        tail (a partial line, or stage lines after the last checkpoint) so appends continue
        the chain."""
        self._opened = True
        if not self.path.exists():
            self._start()
            return Replay()
        data = self._bytes()
        scan = self._scan(data)
        if scan.durable < len(data):  # a torn write: what it held is recomputed deterministically
            with uninterrupted:
                os.truncate(self.path, scan.durable)
        self._seq, self._chain = scan.durable_stages + (2 if scan.done else 1), scan.chain
        if scan.durable == 0:  # the header itself was torn
            self._start()
        self._written, self._size = hashlib.sha256(data[:scan.durable]), scan.durable
        self._stages, self._checkpoint = list(scan.stages[:scan.durable_stages]), scan.checkpoint
        if scan.done:
            self._done = True
            return Replay(done=True)
        records = [json.loads(line) for line in scan.stages[:scan.durable_stages]]
        state = json.loads(scan.checkpoint) if scan.checkpoint is not None else None
        if state is not None:
            del state["checkpoint"], state["chain"]
        return Replay(records, False, state)

    def check(self) -> bool:
        """Verify the journal without changing it (a torn tail is allowed); returns done."""
        return self.path.exists() and self._scan(self._bytes()).done

    def stage_lines(self) -> list[bytes] | None:
        """The verified stage lines of a finished unit, as bytes without newlines (for merge);
        None if the unit is not done."""
        scan = self._scan(self._bytes()) if self.path.exists() else None
        return list(scan.stages) if scan is not None and scan.done else None

    def _bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise BadFile(f"cannot read journal '{self.path}': {exc.strerror}") from None

    def _scan(self, data: bytes) -> _Scan:
        """The verified scan of ``data``, kept per (unit, config, sha256 of the bytes): a resume
        checks every journal before it takes the lock, reads it, then merges it, and a finished
        unit's bytes do not change in between (one whole-file sha256 instead of a chain walk)."""
        key = (self.unit, self.config_sha256, hashlib.sha256(data).digest())
        kept = _SCANS.get(key)
        if kept is not None:
            return kept[0]
        scan = self._walk(data)
        _remember(key, scan, len(data))
        return scan

    def _walk(self, data: bytes) -> _Scan:
        lines = data[:data.rfind(b"\n") + 1].split(b"\n")
        lines.pop()  # after the last newline: empty, or a torn line (a kill during the write)
        chain = self.config_sha256.encode()
        stages: list[bytes] = []
        durable, durable_stages, durable_chain, checkpoint = 0, 0, chain, None
        done = False
        offset = seq = 0
        sha = hashlib.sha256
        header = header_body(self.unit, self.config_sha256)
        for n, line in enumerate(lines):
            offset += len(line) + 1
            if done or line[-_TAIL:-18] != b',"chain":"' or line[-2:] != b'"}':
                self._refuse(n, line, seq, len(stages), done)
            expected = sha(chain + line[:-_TAIL]).hexdigest()[:16].encode()
            if expected != line[-18:-2] or (seq == 0 and line[:-_TAIL] != header):  # the header: this unit's?
                self._refuse(n, line, seq, len(stages), done)
            if seq and line.startswith(b'{"checkpoint":'):  # links to the chain, does not advance it
                durable, durable_stages, durable_chain, checkpoint = offset, len(stages), chain, line
                continue
            chain = expected
            if seq == 0:
                durable, durable_chain = offset, chain
            elif line.startswith(b'{"done":'):
                done = True
                durable, durable_stages, durable_chain = offset, len(stages), chain
            else:
                stages.append(line)
            seq += 1
        return _Scan(tuple(stages), done, durable, durable_stages, durable_chain, checkpoint)

    def _refuse(self, n: int, raw: bytes, seq: int, stages: int, done: bool) -> None:
        """Say what is wrong with line ``n`` (0-based), whose link failed; always raises."""
        where = f"journal '{self.path}' line {n + 1}"
        if done:
            raise BadFile(f"{where}: a line after the unit's done marker; the journal was tampered with")
        entry = _entry(raw, where, "the unit cannot be resumed")
        try:
            if "checkpoint" in entry:
                point = _Checkpoint.model_validate(entry)
                if point.checkpoint != stages:
                    raise BadFile(f"{where} is a checkpoint after stage {point.checkpoint}, expected {stages}: a line is missing or moved")
            elif entry.get("seq") != seq:
                raise BadFile(f"{where} has seq {_show(entry.get('seq'))}, expected {seq}: a line is missing, duplicated or moved")
            elif seq == 0:
                if entry.get("journal") != JOURNAL_FORMAT:
                    raise BadFile(f"{where}: journal format {_show(entry.get('journal'))}, expected {JOURNAL_FORMAT} (another qbo "
                                  "version wrote it); finish the run with that version or start afresh")
                header = _Header.model_validate(entry)
                if header.config_sha256 != self.config_sha256:
                    raise BadFile(f"{where}: the journal was written for another config (config.toml changed); "
                                  "restore it or start afresh")
                if header.unit != self.unit:
                    raise BadFile(f"{where}: the journal belongs to unit '{header.unit[:80]}', not '{self.unit}'")
            elif "done" in entry:
                marker = _Done.model_validate(entry)
                if not marker.done or marker.stages != stages:
                    raise BadFile(f"{where}: the done marker counts {marker.stages} stages, the journal holds {stages}")
            else:
                stage = _Stage.model_validate(entry)
                if stage.stage != seq:
                    raise BadFile(f"{where} holds stage {stage.stage}, expected {seq}")
        except ValidationError as exc:
            raise BadFile(f"{where}: {_first(exc)}") from None
        raise BadFile(f"{where} fails its hash chain: the line or one before it was edited")

    # ------------------------------------------------------------------ writing

    def append(self, record: dict[str, Any]) -> None:
        """Buffer one stage record (commits, with a checkpoint, if ``flush_every_s`` has passed)."""
        line = b"%s%s,\"seq\":%d" % (self._prefix, encode_record(record)[1:-1], self._seq)
        with uninterrupted:  # the line and its count go in together
            self._line(line)
            self._unsaved += 1
        if time.monotonic() - self._last_commit >= self.flush_every_s:
            self.commit()

    def finish(self) -> None:
        """Mark the unit done and commit (a unit boundary); after ``read`` of an unfinished unit."""
        if not self._opened or self._done:
            raise RuntimeError(f"journal '{self.path}': finish() needs read() first and an unfinished unit")
        with uninterrupted:
            self._finish()

    def _finish(self) -> None:
        self._done = True
        self._line(f'{{"done":true,"stages":{self._seq - 1},"seq":{self._seq}'.encode(), stage=False)
        self._unsaved = 0  # the done marker makes every stage durable
        self._commit()
        if self._remember:
            scan = _Scan(tuple(self._stages), True, self._size, len(self._stages), self._chain, self._checkpoint)
            _remember((self.unit, self.config_sha256, self._written.digest()), scan, self._size)

    def commit(self) -> None:
        """Write and fsync the buffered lines, ending with a checkpoint if stages are pending.

        Call between stages only (``state`` must describe the state after the last append).
        A signal waits for the commit to end (``qbo.files.uninterrupted``)."""
        with uninterrupted:
            self._commit()

    def _commit(self) -> None:
        if self._unsaved:
            body = _ENCODE({"checkpoint": self._seq - 1} | self.state())[:-1].encode()
            self._checkpoint = body + b',"chain":"' + link(self._chain, body) + b'"}'
            self._buffer.append(self._checkpoint + b"\n")
            self._unsaved = 0
        self._write()

    def close(self) -> None:
        """Write what is durable-ready and drop stage lines no checkpoint covers: after an
        error inside a stage, the random state no longer matches them (a resume recomputes them)."""
        with uninterrupted:
            self._close()

    def _close(self) -> None:
        if self._unsaved:
            del self._buffer[len(self._buffer) - self._unsaved:]  # the journal takes no appends after close
            del self._stages[len(self._stages) - self._unsaved:]
            self._unsaved = 0
        self._write()

    def _start(self) -> None:
        self._seq, self._chain = 0, self.config_sha256.encode()
        self._written, self._size, self._stages, self._checkpoint = hashlib.sha256(), 0, [], None
        self._line(header_body(self.unit, self.config_sha256), stage=False)

    def _line(self, data: bytes, stage: bool = True) -> None:
        self._chain = link(self._chain, data)
        line = data + b',"chain":"' + self._chain + b'"}'
        if stage:
            self._stages.append(line)
        self._buffer.append(line + b"\n")
        self._seq += 1

    def _write(self) -> None:
        """Append the buffer and fsync. The buffer is taken first, so it is sent at most once:
        if the write or fsync fails, the file is cut back to its last commit (the lines are
        lost, and recomputed on resume), never written twice."""
        if not self._buffer or self._broken:  # after a failed write the chain in memory is ahead of the file
            self._buffer.clear()
            return
        joined = b"".join(self._buffer)
        self._buffer.clear()
        created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            write_all(fd, joined, self.path)
            os.fsync(fd)
        except BaseException as exc:  # a partial write must not stay
            try:
                os.ftruncate(fd, self._size)
            except OSError:
                pass
            self._broken = True
            if isinstance(exc, OSError):
                raise OSError(exc.errno, exc.strerror, str(self.path)) from None
            raise
        finally:
            os.close(fd)
        self._written.update(joined)
        self._size += len(joined)
        if created:  # listed after it exists: a kill in between leaves a journal unlisted, never a listed one missing
            fsync_folder(self.path.parent)
            append_line(self.path.parent / STARTED, {"unit": self.unit}, fsync=True)
        self._last_commit = time.monotonic()

def _entry(raw: bytes, where: str, consequence: str) -> dict[str, Any]:
    return json_object(raw, where, f" (damaged, not a torn last line); {consequence}", "; the file was tampered with")


def _show(value: Any) -> str:
    return json.dumps(value)[:20]


def _first(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc']) or 'line'}: {first['msg']}"


def verify_stages(path: Path, units: list[str], config_sha256: str) -> None:
    """Name the first line of a merged stages.jsonl that breaks its unit's hash chain (its
    units, in order, each chained from its header); always raises ``BadFile``. Called when
    the file's sha256 differs from the one recorded when the run completed."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadFile(f"cannot read '{path}': {exc.strerror}") from None
    lines = data.split(b"\n")
    tail = lines.pop()
    u, chain, seq = 0, unit_root(units[0], config_sha256), 0
    for n, line in enumerate(lines):
        where = f"'{path}' line {n + 1}"
        parts = _split(line)
        if parts is not None:
            if link(chain, parts[0]) == parts[1]:
                chain, seq = parts[1], seq + 1
                continue
            if u + 1 < len(units):  # the first stage of the next unit?
                root = unit_root(units[u + 1], config_sha256)
                if link(root, parts[0]) == parts[1]:
                    u, chain, seq = u + 1, parts[1], 1
                    continue
        entry = _entry(line, where, "the finished run's records are damaged")
        if entry.get("seq") not in (seq + 1, 1):
            raise BadFile(f"{where} has seq {_show(entry.get('seq'))}, expected {seq + 1}: a line is missing, duplicated or moved")
        raise BadFile(f"{where} fails its hash chain: the line or one before it was edited")
    if tail:
        raise BadFile(f"'{path}' ends inside a line; the finished run's records are damaged")
    raise BadFile(f"'{path}' differs from what run.json recorded when the run finished (stages were removed or "
                  f"added at the end of a unit); the finished run's records are damaged")


def parse_lines(lines: list[bytes]) -> list[dict[str, Any]]:
    """Parse stage lines in one call: orjson (about 4x the standard library on the default
    run's 10^5 lines), or json where orjson refuses (NaN, Infinity, integers past 64 bits,
    which the standard library may have written); both give the same values."""
    if not lines:
        return []
    joined = b"[" + b",".join(lines) + b"]"
    try:
        return orjson.loads(joined)
    except orjson.JSONDecodeError:
        return json.loads(joined)
