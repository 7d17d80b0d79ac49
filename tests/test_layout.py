"""The house rules of qbo's layout, checked on the source (issue 8).

Imports run one way: cli -> experiments -> algorithms -> (gp, qmc, mitigation, problems) ->
(noise, oracles, execution, grover) -> (files, errors). Every import counts, function-local and
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
    "files": 1, "errors": 1, "limits": 1, "__init__": 0,
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
