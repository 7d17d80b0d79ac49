"""bench/ scripts as modules for tests (they are scripts, not part of the package)."""

from __future__ import annotations

import importlib.util
import sys
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


def bench_script(name: str) -> ModuleType:
    """``bench/NAME.py`` for a script that imports its siblings (``noise``, ``noise_grid``) as
    top-level modules, as it does when run from bench/: bench/ is on ``sys.path`` while it loads."""
    sys.path.insert(0, str(BENCH))
    try:
        return bench_module(name)
    finally:
        sys.path.remove(str(BENCH))
