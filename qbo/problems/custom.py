"""A user's own problem: ``problem = "package.module:factory"`` in an experiment config.

The factory is called once per trial as ``factory(seed=SEED, **problem_options)`` and
returns either a ``Problem`` or a pair ``(arms, oracles)``: an m x d array of arm features
in [0, 1]^d and one ``qbo.oracles.Oracle`` per arm (``bernoulli``, ``from_circuit`` or your
own ``Oracle(circuit, objective, low, high, mean=None)``). Exact means are optional: where
one is unknown the run reports rewards and the best arm found instead of regret.

The module is looked up first in ``path`` (the config file's folder: a ``my_problem.py``
beside ``experiment.toml``), then on ``sys.path``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qbo.oracles.base import Oracle
from qbo.problems.base import Problem

__all__ = ["SPEC_FORM", "custom_problem", "is_custom", "load_factory"]

SPEC_FORM = "package.module:factory"
_SPEC = re.compile(r"(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<attr>[A-Za-z_]\w*)")
_LOCK = threading.Lock()


def is_custom(name: str) -> bool:
    """True for a ``module:factory`` problem spec (registered names hold no colon)."""
    return ":" in name


def check_spec(spec: str) -> tuple[str, str]:
    """(module, factory) of ``spec``; one-line ValueError otherwise."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ValueError(f"problem {spec[:80]!r}: expected a registered name or {SPEC_FORM}")
    return match["module"], match["attr"]


def load_factory(spec: str, path: str | None = None) -> Callable[..., Any]:
    """The factory ``spec`` names, its module imported from ``path`` when it is there."""
    module_name, attr = check_spec(spec)
    with _LOCK:
        module = sys.modules.get(module_name)
        file = Path(path, *module_name.split(".")).with_suffix(".py").resolve() if path else None
        beside = file is not None and file.is_file()
        if beside and (module is None or vars(module).get("__file__") != str(file)):
            module = None  # the module beside this config, not one of the same name loaded before
        if module is None:
            if beside:
                loader = importlib.util.spec_from_file_location(module_name, str(file))
                module = importlib.util.module_from_spec(loader)
                sys.modules[module_name] = module
                try:
                    loader.loader.exec_module(module)
                except BaseException:
                    del sys.modules[module_name]
                    raise
            else:
                try:
                    module = importlib.import_module(module_name)
                except ImportError:
                    where = f" (looked in '{path}' and on sys.path)" if path else ""
                    raise ValueError(f"problem {spec!r}: cannot import module '{module_name}'{where}") from None
    factory = vars(module).get(attr)
    if not callable(factory):
        raise ValueError(f"problem {spec!r}: module '{module_name}' has no callable '{attr}'")
    return factory


def custom_problem(spec: str, seed: int, path: str | None = None, **options: Any) -> Problem:
    """The problem ``spec``'s factory builds for ``seed``."""
    made = load_factory(spec, path)(seed=seed, **options)
    if isinstance(made, Problem):
        return made
    if not (isinstance(made, tuple) and len(made) == 2):
        raise ValueError(f"problem {spec!r}: the factory must return a Problem or (arms, oracles), "
                         f"got {type(made).__name__}")
    arms, oracles = made
    oracles = list(oracles)
    if not all(isinstance(o, Oracle) for o in oracles):
        raise ValueError(f"problem {spec!r}: every oracle must be a qbo.oracles.Oracle")
    return Problem.from_oracles(spec, arms, oracles, options | {"seed": seed})
