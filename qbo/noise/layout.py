"""Where a circuit runs on a device: a connected set of working physical qubits.

Faulty qubits and gates (``qbo.noise.schema``) are not in a snapshot's Target at all, so
they can never be chosen here nor used by routing.
"""

from __future__ import annotations

from qiskit.transpiler import Target


def choose_layout(target: Target, num_qubits: int) -> list[int]:
    """A connected set of physical qubits, grown greedily from the best-read-out qubit.

    Score of a qubit: its readout error plus the error of the cheapest two-qubit link that
    joins it to the set. Only qubits the target can measure are candidates (a faulty qubit
    has no measurement). Deterministic for a given target.
    """
    readout = readout_errors(target)
    links = link_errors(target)
    if num_qubits > target.num_qubits:
        raise ValueError(f"circuit needs {num_qubits} qubits, target has {target.num_qubits}")
    usable = sorted(readout) if readout else list(range(target.num_qubits))
    if num_qubits > len(usable):
        raise ValueError(f"circuit needs {num_qubits} qubits, target has {len(usable)} working qubits")
    layout = [min(usable, key=lambda q: (readout.get(q, 1.0), q))]
    allowed = set(usable)
    while len(layout) < num_qubits:
        frontier = {
            (b, err) for (a, b), err in links.items() if a in layout and b not in layout and b in allowed
        }
        if not frontier:
            raise ValueError(f"no connected set of {num_qubits} working qubits on this target")
        best = min(frontier, key=lambda be: (be[1] + readout.get(be[0], 1.0), be[0]))
        layout.append(best[0])
    return layout


def readout_errors(target: Target) -> dict[int, float]:
    """Readout error of every qubit the target can measure."""
    if "measure" not in target.operation_names:
        return {}
    return {q[0]: (p.error or 0.0) for q, p in target["measure"].items() if p is not None}


def link_errors(target: Target) -> dict[tuple[int, int], float]:
    """Cheapest two-qubit gate error of every coupled pair, both directions."""
    links: dict[tuple[int, int], float] = {}
    for name in target.operation_names:
        for qargs, props in (target[name] or {}).items():
            if qargs is None or len(qargs) != 2:
                continue
            err = props.error if props is not None and props.error is not None else 1.0
            for edge in (qargs, qargs[::-1]):
                links[edge] = min(links.get(edge, 1.0), err)
    return links
