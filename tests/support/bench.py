"""bench/ scripts as modules for tests (they are scripts, not part of the package)."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


@lru_cache(maxsize=None)
def bench_module(name: str) -> ModuleType:
    """``bench/NAME.py``, loaded once per test session."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
