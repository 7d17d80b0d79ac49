"""Transpilation for device targets: a fixed layout and a cache per (oracle, k, target).

Power circuits carry barriers between A and every Q (``qbo.grover``), so optimisation
never merges Grover steps; the depth of Q^k A survives transpilation and the noise of a
device model grows with k as on hardware.
"""

from __future__ import annotations

from collections.abc import Callable

from qiskit import QuantumCircuit, transpile
from qiskit.transpiler import Target

from qbo.grover import cache_key


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
    ) -> None:
        self._target = target
        self._level = optimization_level
        self._seed = seed
        self._layout_for = layout or (lambda n: choose_layout(target, n))
        self._layouts: dict[int, list[int]] = {}
        self._cache: dict[tuple[str, int], QuantumCircuit] = {}

    def layout(self, num_qubits: int) -> list[int]:
        if num_qubits not in self._layouts:
            self._layouts[num_qubits] = self._layout_for(num_qubits)
        return self._layouts[num_qubits]

    def __call__(self, circuit: QuantumCircuit) -> QuantumCircuit:
        key = cache_key(circuit)
        if key is not None and key in self._cache:
            return self._cache[key]
        compiled = transpile(
            circuit,
            target=self._target,
            initial_layout=self.layout(circuit.num_qubits),
            optimization_level=self._level,
            seed_transpiler=self._seed,
        )
        if key is not None:
            self._cache[key] = compiled
        return compiled
