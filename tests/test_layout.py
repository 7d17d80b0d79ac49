"""The house rules of qbo's layout, checked on the source (issue 8).

Imports run one way: cli -> experiments -> algorithms -> (gp, qmc, mitigation, problems) ->
(noise, oracles, execution, grover) -> (compiling, files, errors). Every import counts, function-local and
``TYPE_CHECKING`` ones included, so a circle cannot hide behind a late import.
"""

from __future__ import annotations

import ast
from pathlib import Path


import qbo

ROOT = Path(qbo.__file__).resolve().parent

# rank of each top-level part of qbo; an import may only point to an equal or lower rank, and
# the graph of parts must have no cycle (so equal ranks import one way too).
RANK = {
    "cli": 6, "experiments": 5, "algorithms": 4,
    "gp": 3, "qmc": 3, "mitigation": 3, "problems": 3,
    "noise": 2, "oracles": 2, "oracle_specs": 2, "execution": 2, "grover": 2, "sampling": 2,
    "compiling": 1, "brent": 1, "files": 1, "errors": 1, "limits": 1, "caches": 1, "__init__": 0,
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[tuple[str, tuple[str, ...]]]:
    """Every qbo import anywhere in the file, as (module, names imported from it)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    out: set[tuple[str, tuple[str, ...]]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update((a.name, ()) for a in node.names if a.name.split(".")[0] == "qbo")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.split(".")[0] == "qbo":
                out.add((name, tuple(a.name for a in node.names)))
    return out


def _graph() -> dict[str, set[str]]:
    """Module -> the qbo modules it imports. ``from P import m`` of a submodule m names P.m
    only; any other name imported from P names P itself (its __init__ runs)."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for base, names in _imports(path):
            subs = {f"{base}.{n}" for n in names if f"{base}.{n}" in modules}
            targets |= subs
            if len(subs) < len(names) or not names:
                while base not in modules and "." in base:
                    base = base.rpartition(".")[0]
                targets.add(base)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes, or None (iterative DFS)."""
    state: dict[str, int] = {}
    for root in sorted(graph):
        if state.get(root):
            continue
        stack = [(root, iter(sorted(graph[root])))]
        path = [root]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            for child in children:
                if state.get(child) == 1:
                    return path[path.index(child):] + [child]
                if not state.get(child):
                    state[child] = 1
                    path.append(child)
                    stack.append((child, iter(sorted(graph.get(child, ())))))
                    break
            else:
                state[node] = 2
                stack.pop()
                path.pop()
    return None


def test_every_part_has_a_rank():
    parts = {_part(m) for m in _graph()}
    assert parts <= set(RANK), f"parts without a layer rank: {sorted(parts - set(RANK))}"


def test_no_module_level_import_circle():
    assert _cycle(_graph()) is None, " -> ".join(_cycle(_graph()) or [])


def test_no_package_level_import_circle_and_imports_point_down():
    graph = _graph()
    parts: dict[str, set[str]] = {}
    upward = []
    for module, targets in graph.items():
        src = _part(module)
        for target in targets:
            dst = _part(target)
            if dst == src or src == "__init__":
                continue
            parts.setdefault(src, set()).add(dst)
            if RANK.get(dst, 99) > RANK.get(src, -1):
                upward.append(f"{module} -> {target}")
    assert not upward, "imports pointing up a layer: " + "; ".join(sorted(upward))
    cycle = _cycle({p: parts.get(p, set()) for p in set(parts) | {d for s in parts.values() for d in s}})
    assert cycle is None, "package circle: " + " -> ".join(cycle or [])


def test_the_checker_finds_a_planted_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# --- private names stay inside their package (issue 20) -------------------------------------

REPO = ROOT.parent
# Files that still reach into another package's private names, each owned by a change in
# flight (issue 20): bench/speed.py (runner._settings/_staged/_policy, iae._expected_calls:
# the composition root and the IAE engine make them public), bench/mlae_coherent.py
# (mlae._Run._check_power: the MLAE split). Shrink this set as they land; never grow it.
PRIVATE_IMPORT_ALLOWED: set[str] = set()


def _owner(module: str) -> str:
    """The package that owns a dotted module name: qbo's part (``qbo.qmc.iae`` -> ``qmc``), else
    the top-level name (``bench``)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "qbo" and len(parts) > 1 else parts[0]


def _is_module(dotted: str) -> bool:
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(path: Path, rel: str | None = None) -> list[str]:
    """Every private name (``_x``) that ``path`` (at ``rel`` in the repository, default its own
    place) takes from another package, by ``from M import _x`` or by ``m._x`` on a module bound
    by an import: ``line: module._x``."""
    rel = rel or path.relative_to(REPO).as_posix()
    source = _owner(".".join(Path(rel).with_suffix("").parts))
    tree = ast.parse(path.read_text(), filename=str(path))
    modules: dict[str, str] = {}  # local name -> dotted module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("qbo", "bench"):
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] not in ("qbo", "bench"):
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if _is_module(dotted):
                    modules[alias.asname or alias.name] = dotted
                elif _private(alias.name) and _owner(node.module) != source:
                    found.append(f"{node.lineno}: {node.module}.{alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if not (isinstance(value, ast.Name) and value.id in modules):
                continue
            dotted = modules[value.id]
            for attr in reversed(chain[1:]):  # node.value must name a module, through submodules
                if not _is_module(f"{dotted}.{attr}"):
                    break
                dotted = f"{dotted}.{attr}"
            else:
                if _owner(dotted) != source:
                    found.append(f"{node.lineno}: {dotted}.{node.attr}")
    return sorted(set(found), key=lambda s: int(s.split(":")[0]))


def _checked_files() -> list[Path]:
    return sorted(ROOT.rglob("*.py")) + sorted((REPO / "bench").rglob("*.py"))


def test_no_private_name_is_imported_across_packages():
    offenders = {}
    for path in _checked_files():
        rel = path.relative_to(REPO).as_posix()
        found = private_imports(path)
        if found and rel not in PRIVATE_IMPORT_ALLOWED:
            offenders[rel] = found
    assert not offenders, f"private names taken across packages: {offenders}"


def test_the_private_import_allow_list_is_exact():
    """An allowed file that no longer needs it leaves the list (so the list only shrinks)."""
    clean = [rel for rel in sorted(PRIVATE_IMPORT_ALLOWED) if not private_imports(REPO / rel)]
    assert not clean, f"no longer needed in PRIVATE_IMPORT_ALLOWED: {clean}"


def test_the_private_import_checker_finds_planted_ones(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from qbo.qmc.iae import _Plan\nfrom qbo.qmc import iae\nimport qbo.experiments.runner as runner\n"
        "from qbo.cli.errors import _inside_cli\nimport qbo\n"
        "x = iae._COSTS._values\ny = runner._settings\nz = iae.public\nw = qbo.qmc.iae._expected_calls\n"
    )
    assert private_imports(planted, "qbo/cli/planted.py") == [
        "1: qbo.qmc.iae._Plan", "6: qbo.qmc.iae._COSTS", "7: qbo.experiments.runner._settings",
        "9: qbo.qmc.iae._expected_calls",
    ]
    assert private_imports(planted, "qbo/qmc/planted.py") == ["4: qbo.cli.errors._inside_cli", "7: qbo.experiments.runner._settings"]


# Modules whose process-wide caches are not yet in ``qbo.caches``, each owned by a change in
# flight (issue 20); empty since the IAE split. Never grow it.
UNREGISTERED_CACHES_ALLOWED: set[str] = set()


def _bare_lru_caches(path: Path) -> list[int]:
    """Lines where ``path`` builds a functools cache directly instead of ``qbo.caches.lru``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return sorted(
        node.lineno for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id in ("lru_cache", "cache"))
        or (isinstance(node, ast.Attribute) and node.attr in ("lru_cache", "cache")
            and isinstance(node.value, ast.Name) and node.value.id == "functools")
    )


def test_every_functools_cache_is_registered_with_qbo_caches():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel != "qbo/caches.py" and rel not in UNREGISTERED_CACHES_ALLOWED and _bare_lru_caches(path):
            found[rel] = _bare_lru_caches(path)
    assert not found, f"caches outside qbo.caches (use qbo.caches.lru): {found}"
    assert all(_bare_lru_caches(REPO / rel) for rel in UNREGISTERED_CACHES_ALLOWED), "shrink the allow-list"


def test_mitigation_takes_from_qmc_only_the_round_seam():
    """Mitigation implements qmc's round protocols (``qbo.qmc.rounds``, with ``result`` and
    ``confidence``); it never calls an estimator module back (issue 20: ``qmc.capped``)."""
    seam = {"qbo.qmc.rounds", "qbo.qmc.result", "qbo.qmc.confidence"}
    graph = _graph()
    reached = {t for m, ts in graph.items() if _part(m) == "mitigation" for t in ts if _part(t) == "qmc"}
    assert reached <= seam, f"mitigation imports {sorted(reached - seam)} from qmc"
