"""Atomic file writes: write a temporary file in the same folder, fsync, then rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return write_bytes_atomic(path, text.encode())
