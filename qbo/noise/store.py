"""Where snapshots live: the user's calibrations directory and the shipped package data.

``load_snapshot`` finds a snapshot by name (user snapshots shadow shipped ones) or path
and validates it; ``save_snapshot`` writes one atomically, never an invalid file.
"""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path

import platformdirs

from qbo.files import write_text_atomic
from qbo.noise.schema import Snapshot

__all__ = [
    "ENV_DIR", "calibrations_dir", "shipped_dir", "list_snapshots", "load_snapshot", "resolve_snapshot", "save_snapshot",
]

ENV_DIR = "QBO_CALIBRATIONS_DIR"


def calibrations_dir() -> Path:
    """Where pulled and exported snapshots are written: ``$QBO_CALIBRATIONS_DIR`` if set, else
    the user's data directory (platformdirs, e.g. ``~/.local/share/qbo/calibrations``). Never
    the installed package."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env).expanduser()
    return platformdirs.user_data_path("qbo") / "calibrations"


def shipped_dir() -> Path:
    """The snapshots shipped with qbo (package data ``qbo.noise.calibrations``, whose source is
    the repository's top-level ``calibrations/``), read through importlib.resources."""
    return Path(str(resources.files("qbo.noise.calibrations")))


def _search_path() -> tuple[Path, ...]:
    """User snapshots first (a pulled snapshot may shadow a shipped one of the same name)."""
    return (calibrations_dir(), shipped_dir())


def list_snapshots() -> list[str]:
    """Names (file stems) of the ``*.json`` snapshots, user and shipped, sorted."""
    names: set[str] = set()
    for d in _search_path():
        if d.is_dir():
            names.update(p.stem for p in d.glob("*.json") if not p.name.startswith("."))
    return sorted(names)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def resolve_snapshot(name_or_path: str | os.PathLike) -> Path:
    """The file a snapshot name or path stands for (one-line ValueError for an unknown name)."""
    s = os.fspath(name_or_path)
    p = Path(s).expanduser()
    looks_like_path = s.endswith(".json") or os.sep in s or (os.altsep and os.altsep in s)
    if looks_like_path or p.is_file():
        return p
    for d in _search_path():
        for cand in (s, _snake(s)):
            f = d / f"{cand}.json"
            if f.is_file():
                return f
    avail = list_snapshots()
    raise ValueError(
        f"unknown calibration snapshot {s[:80]!r}: no such snapshot in {calibrations_dir()} or the "
        f"shipped set (available: {', '.join(avail) if avail else 'none'})"
    )


def load_snapshot(name_or_path: str | os.PathLike) -> Snapshot:
    """Load and validate a snapshot by name (``calibrations/<name>.json``;
    ``FakeBrisbane`` resolves to ``fake_brisbane``) or by file path."""
    path = resolve_snapshot(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"calibration {str(path)!r}: cannot read file ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"calibration {str(path)!r}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    return Snapshot.from_json(data, label=path.name)


def _dumps(d: dict) -> str:
    """Readable JSON: one top-level key per line, one list item per line."""
    lines = ["{"]
    items = list(d.items())
    for k, (key, val) in enumerate(items):
        tail = "," if k < len(items) - 1 else ""
        if isinstance(val, list) and val and isinstance(val[0], (dict, list)):
            lines.append(f" {json.dumps(key)}: [")
            for j, item in enumerate(val):
                lines.append("  " + json.dumps(item, separators=(", ", ": ")) + ("," if j < len(val) - 1 else ""))
            lines.append(" ]" + tail)
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(val)}{tail}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_snapshot(snapshot: Snapshot, path: str | os.PathLike) -> Path:
    """Atomically write ``snapshot`` as JSON to ``path`` (``qbo.files.write_text_atomic``).
    Returns the path written."""
    path = Path(path).expanduser()
    data = snapshot.to_json()
    Snapshot.from_json(data, label=path.name)  # never write an invalid file
    write_text_atomic(path, _dumps(data))
    return path
