"""Transpilation for device targets: a fixed layout and a cache per (oracle, k, target).

Power circuits carry barriers between A and every Q (``qbo.grover``), so optimisation
never merges Grover steps; the depth of Q^k A survives transpilation and the noise of a
device model grows with k as on hardware.

Pinning (hardware runs): with a ``store`` folder (``RUN_DIR/transpiled``) the layout of
each circuit width is written to ``layout.json`` and every transpiled power circuit to a
QPY file the first time it is needed; a resumed run loads them instead of transpiling
again, so a recalibration between two days of one run changes neither the layout nor the
circuits that run.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable
from pathlib import Path

from qiskit import QuantumCircuit, qpy, transpile
from qiskit.transpiler import Target

from qbo.files import write_bytes_atomic, write_text_atomic
from qbo.grover import cache_key

LAYOUT_NAME = "layout.json"


def choose_layout(target: Target, num_qubits: int) -> list[int]:
    """A connected set of physical qubits, grown greedily from the best-read-out qubit.

    Score of a qubit: its readout error plus the error of the cheapest two-qubit link that
    joins it to the set. Deterministic for a given target.
    """
    readout = _readout_errors(target)
    links = _link_errors(target)
    if num_qubits > target.num_qubits:
        raise ValueError(f"circuit needs {num_qubits} qubits, target has {target.num_qubits}")
    layout = [min(range(target.num_qubits), key=lambda q: (readout.get(q, 1.0), q))]
    while len(layout) < num_qubits:
        frontier = {
            (b, err) for (a, b), err in links.items() if a in layout and b not in layout
        }
        if not frontier:
            raise ValueError(f"no connected set of {num_qubits} qubits on this target")
        best = min(frontier, key=lambda be: (be[1] + readout.get(be[0], 1.0), be[0]))
        layout.append(best[0])
    return layout


def _readout_errors(target: Target) -> dict[int, float]:
    if "measure" not in target.operation_names:
        return {}
    return {q[0]: (p.error or 0.0) for q, p in target["measure"].items() if p is not None}


def _link_errors(target: Target) -> dict[tuple[int, int], float]:
    links: dict[tuple[int, int], float] = {}
    for name in target.operation_names:
        for qargs, props in (target[name] or {}).items():
            if qargs is None or len(qargs) != 2:
                continue
            err = props.error if props is not None and props.error is not None else 1.0
            for edge in (qargs, qargs[::-1]):
                links[edge] = min(links.get(edge, 1.0), err)
    return links


class TranspileCache:
    """Transpiles circuits for one target with a fixed layout; caches power circuits."""

    def __init__(
        self,
        target: Target,
        optimization_level: int = 1,
        seed: int = 0,
        layout: Callable[[int], list[int]] | None = None,
        store: str | os.PathLike | None = None,
    ) -> None:
        self._target = target
        self._level = optimization_level
        self._seed = seed
        self._layout_for = layout or (lambda n: choose_layout(target, n))
        self._layouts: dict[int, list[int]] = {}
        self._cache: dict[tuple[str, int], QuantumCircuit] = {}
        self._store = Path(store) if store is not None else None
        if self._store is not None and (self._store / LAYOUT_NAME).exists():
            try:
                pinned = json.loads((self._store / LAYOUT_NAME).read_text())
                self._layouts = {int(n): [int(q) for q in qs] for n, qs in pinned.items()}
            except (ValueError, TypeError, AttributeError):
                raise ValueError(f"'{self._store / LAYOUT_NAME}' is not a valid pinned layout") from None

    def layout(self, num_qubits: int) -> list[int]:
        if num_qubits not in self._layouts:
            self._layouts[num_qubits] = self._layout_for(num_qubits)
            if self._store is not None:
                text = json.dumps({str(n): qs for n, qs in sorted(self._layouts.items())})
                write_text_atomic(self._store / LAYOUT_NAME, text + "\n")
        return self._layouts[num_qubits]

    def _path(self, key: tuple[str, int]) -> Path | None:
        if self._store is None:
            return None
        return self._store / (hashlib.sha256(f"{key[0]}\n{key[1]}".encode()).hexdigest()[:32] + ".qpy")

    def __call__(self, circuit: QuantumCircuit) -> QuantumCircuit:
        key = cache_key(circuit)
        if key is not None and key in self._cache:
            return self._cache[key]
        path = self._path(key) if key is not None else None
        if path is not None and path.exists():
            (compiled,) = qpy.load(io.BytesIO(path.read_bytes()))
            self._cache[key] = compiled
            return compiled
        compiled = transpile(
            circuit,
            target=self._target,
            initial_layout=self.layout(circuit.num_qubits),
            optimization_level=self._level,
            seed_transpiler=self._seed,
        )
        if key is not None:
            self._cache[key] = compiled
        if path is not None:
            buffer = io.BytesIO()
            qpy.dump(compiled, buffer)
            write_bytes_atomic(path, buffer.getvalue())
        return compiled
