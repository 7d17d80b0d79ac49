"""Per-unit stage journals: append-only JSON Lines that survive a kill at any instant.

Each stage appends one line (``qbo.files.append_line``). A kill can at worst leave a torn
last line, which ``read`` skips, so the journal always yields whole stages. Each line also
carries the executor's random state after the stage, so a resumed unit continues with
exactly the random numbers an uninterrupted run would have drawn.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from qbo.files import append_line, read_lines

DONE = {"done": True}


class UnitJournal:
    """The journal of one (trial, algorithm) unit."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def read(self) -> tuple[list[dict[str, Any]], bool]:
        """(stage lines, done)."""
        lines = read_lines(self.path)
        done = DONE in lines
        return [line for line in lines if line != DONE], done

    def append(self, entry: dict[str, Any]) -> None:
        append_line(self.path, entry)

    def finish(self) -> None:
        self.append(DONE)
