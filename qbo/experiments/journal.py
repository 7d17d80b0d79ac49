"""Per-unit stage journals: append-only JSON Lines that survive a kill at any instant.

Each stage appends one line with a single ``write`` on an ``O_APPEND`` descriptor. A kill can
at worst leave a torn last line; ``read`` drops it, so the journal always holds whole
stages. Each line also carries the executor's random state after the stage, so a resumed
unit continues with exactly the random numbers an uninterrupted run would have drawn.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DONE = {"done": True}


class UnitJournal:
    """The journal of one (trial, algorithm) unit."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def read(self) -> tuple[list[dict[str, Any]], bool]:
        """(stage lines, done); a torn trailing line is dropped and truncated away."""
        if not self.path.exists():
            return [], False
        raw = self.path.read_bytes()
        lines, done, good = [], False, 0
        for chunk in raw.split(b"\n")[:-1]:  # the part after the last newline is torn
            entry = json.loads(chunk)
            good += len(chunk) + 1
            if entry == DONE:
                done = True
            else:
                lines.append(entry)
        if good != len(raw):
            with open(self.path, "r+b") as handle:
                handle.truncate(good)
        return lines, done

    def append(self, entry: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def finish(self) -> None:
        self.append(DONE)
