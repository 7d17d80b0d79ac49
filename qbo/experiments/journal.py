"""Per-unit stage journals: JSON Lines with a hash chain, written by group commit.

Line 0 is a header naming the unit and the sha256 of the resolved config
(``qbo.experiments.folder.config_hash``); every later line is one stage record or the final
``done`` marker. Every line carries ``seq`` (its line number, from 0) and ``chain``, the
first 16 hex digits of sha256(previous chain + the line without ``chain``); the header's
previous chain is the config hash. So a line that was edited, deleted, duplicated or moved,
a journal of another unit or config, or a ``done`` marker without its stages, breaks the
chain at a line that the error names.

Group commit (issue 13, item 1): records are buffered and written with one ``write`` and one
``fsync`` when the unit finishes, when ``FLUSH_EVERY_S`` has passed since the last commit,
and when the journal is closed. A kill loses at most the records since the last commit;
each record holds the executor's random state after its stage, so a resume replays from the
last durable record and writes exactly the lines an uninterrupted run writes.

A kill can tear only the last line (no newline after it): ``read`` drops it and truncates
the file to the last whole line. Any other damage is refused with ``BadFile``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from qbo.errors import BadFile
from qbo.files import fsync_folder

FLUSH_EVERY_S = 1.0
JOURNAL_FORMAT = 1


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    seq: int = Field(ge=0, le=0)
    journal: int = Field(ge=JOURNAL_FORMAT, le=JOURNAL_FORMAT)
    unit: str = Field(max_length=300)
    config_sha256: str = Field(min_length=64, max_length=64)
    chain: str = Field(min_length=16, max_length=16)


class _Stage(BaseModel):
    """The envelope and the fields resume relies on; other record fields pass through."""

    model_config = ConfigDict(extra="allow", strict=True)
    seq: int = Field(ge=1)
    stage: int = Field(ge=1)
    chain: str = Field(min_length=16, max_length=16)
    cum_calls: int = Field(ge=0)
    rng: dict


class _Done(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    seq: int = Field(ge=1)
    done: bool
    stages: int = Field(ge=0)
    chain: str = Field(min_length=16, max_length=16)


def link(previous: str, entry: dict[str, Any]) -> str:
    """The chain value of ``entry`` (without its own ``chain``) after ``previous``."""
    return _link(previous, _text(entry))


def _text(entry: dict[str, Any]) -> str:
    """The compact JSON of ``entry`` in its key order (json.loads keeps the order, and floats
    round-trip exactly, so a line read back re-serialises to the same text)."""
    return json.dumps(entry, separators=(",", ":"))


def _link(previous: str, text: str) -> str:
    return hashlib.sha256((previous + text).encode()).hexdigest()[:16]


class UnitJournal:
    """The journal of one (trial, algorithm) unit; ``config_sha256`` ties it to its run's config."""

    def __init__(self, path: str | os.PathLike, config_sha256: str, flush_every_s: float = FLUSH_EVERY_S) -> None:
        self.path = Path(path)
        self.unit = self.path.stem
        self.config_sha256 = config_sha256
        self.flush_every_s = flush_every_s
        self._seq = 0
        self._chain = config_sha256
        self._buffer: list[bytes] = []
        self._last_commit = time.monotonic()

    def read(self) -> tuple[list[dict[str, Any]], bool]:
        """(stage records, done), verified; drops a torn last line from the file."""
        if not self.path.exists():
            self._append({"journal": JOURNAL_FORMAT, "unit": self.unit, "config_sha256": self.config_sha256})
            return [], False
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise BadFile(f"cannot read journal '{self.path}': {exc.strerror}") from None
        whole = data.rfind(b"\n") + 1
        records, done = self._verify(data[:whole].split(b"\n")[:-1])
        if whole < len(data):  # a torn last line: a kill during the write
            os.truncate(self.path, whole)
        if not records and self._seq == 0:  # the header itself was torn
            self._append({"journal": JOURNAL_FORMAT, "unit": self.unit, "config_sha256": self.config_sha256})
        return records, done

    def check(self) -> bool:
        """Verify the journal without changing it (a torn last line is allowed); returns done."""
        data = self.path.read_bytes() if self.path.exists() else b""
        whole = data.rfind(b"\n") + 1
        seq, chain = self._seq, self._chain
        try:
            return self._verify(data[:whole].split(b"\n")[:-1])[1]
        finally:
            self._seq, self._chain = seq, chain

    def append(self, record: dict[str, Any]) -> None:
        """Buffer one stage record (commits if ``flush_every_s`` has passed)."""
        self._append(record)
        if time.monotonic() - self._last_commit >= self.flush_every_s:
            self.commit()

    def finish(self) -> None:
        """Mark the unit done and commit (a unit boundary)."""
        self._append({"done": True, "stages": self._seq - 1})
        self.commit()

    def commit(self) -> None:
        """Write and fsync the buffered lines."""
        if not self._buffer:
            return
        created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, b"".join(self._buffer))
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_folder(self.path.parent)
        self._buffer.clear()
        self._last_commit = time.monotonic()

    close = commit

    def _append(self, entry: dict[str, Any]) -> None:
        text = _text({"seq": self._seq} | entry)
        chain = _link(self._chain, text)
        self._buffer.append(f'{text[:-1]},"chain":"{chain}"}}\n'.encode())  # one serialisation per record
        self._seq += 1
        self._chain = chain

    def _verify(self, lines: list[bytes]) -> tuple[list[dict[str, Any]], bool]:
        records: list[dict[str, Any]] = []
        done = False
        chain = self.config_sha256
        for n, raw in enumerate(lines):
            where = f"journal '{self.path}' line {n + 1}"
            if done:
                raise BadFile(f"{where}: a line after the unit's done marker; the journal was tampered with")
            try:
                entry = json.loads(raw)
            except ValueError:
                raise BadFile(f"{where} is not valid JSON (damaged, not a torn last line); the unit cannot be resumed") from None
            if not isinstance(entry, dict):
                raise BadFile(f"{where} is not a JSON object; the journal was tampered with")
            if entry.get("seq") != n:
                raise BadFile(f"{where} has seq {str(entry.get('seq'))[:20]}, expected {n}: a line is missing, duplicated or moved")
            try:
                if n == 0:
                    header = _Header.model_validate(entry)
                    if header.config_sha256 != self.config_sha256:
                        raise BadFile(f"{where}: the journal was written for another config (config.toml changed); "
                                      "restore it or start afresh")
                    if header.unit != self.unit:
                        raise BadFile(f"{where}: the journal belongs to unit '{header.unit[:80]}', not '{self.unit}'")
                elif "done" in entry:
                    marker = _Done.model_validate(entry)
                    if not marker.done or marker.stages != n - 1:
                        raise BadFile(f"{where}: the done marker counts {marker.stages} stages, the journal holds {n - 1}")
                    done = True
                else:
                    stage = _Stage.model_validate(entry)
                    if stage.stage != n:
                        raise BadFile(f"{where} holds stage {stage.stage}, expected {n}")
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "line"
                raise BadFile(f"{where}: {field}: {first['msg']}") from None
            body = {k: v for k, v in entry.items() if k != "chain"}
            expected = link(chain, body)
            if entry["chain"] != expected:
                raise BadFile(f"{where} fails its hash chain: the line or one before it was edited")
            chain = expected
            if n and not done:
                records.append({k: v for k, v in body.items() if k != "seq"})
        self._seq, self._chain = len(lines), chain
        return records, done
