"""Where a circuit runs on a device: a connected set of working physical qubits.

Faulty qubits and gates (``qbo.noise.schema``) are not in a snapshot's Target at all, so
they can never be chosen here nor used by routing.
"""

from __future__ import annotations

from qiskit.transpiler import Target


def choose_layout(target: Target, num_qubits: int) -> list[int]:
    """The connected set of working physical qubits with the least predicted error.

    From every working qubit a set is grown greedily, each step adding the qubit whose
    readout error plus the error of the cheapest two-qubit link joining it to the set is
    least; the set whose summed readout and link errors is least wins (ties: the earlier
    start, starts ordered by readout error then index, so the best-read-out qubit's set is
    kept when no other is better). Only qubits the target can measure are candidates (a
    faulty qubit has no measurement), so a device whose best qubit has no working link still
    gets a layout. Deterministic for a given target.
    """
    readout = readout_errors(target)
    links = link_errors(target)
    if num_qubits > target.num_qubits:
        raise ValueError(f"circuit needs {num_qubits} qubits, target has {target.num_qubits}")
    usable = sorted(readout) if readout else list(range(target.num_qubits))
    if num_qubits > len(usable):
        raise ValueError(f"circuit needs {num_qubits} qubits, target has {len(usable)} working qubits")
    allowed = set(usable)
    neighbours: dict[int, list[tuple[int, float]]] = {}
    for (a, b), err in links.items():
        if a in allowed and b in allowed:
            neighbours.setdefault(a, []).append((b, err))
    best: tuple[float, list[int]] | None = None
    for start in sorted(usable, key=lambda q: (readout.get(q, 1.0), q)):
        grown = _grow(start, num_qubits, readout, neighbours)
        if grown is not None and (best is None or grown[0] < best[0]):
            best = grown
    if best is None:
        raise ValueError(f"no connected set of {num_qubits} working qubits on this target")
    return best[1]


def _grow(
    start: int, size: int, readout: dict[int, float], neighbours: dict[int, list[tuple[int, float]]]
) -> tuple[float, list[int]] | None:
    """(predicted error, layout) of the set grown greedily from ``start``; None if it cannot
    reach ``size`` qubits."""
    layout, inside = [start], {start}
    error = readout.get(start, 1.0)
    while len(layout) < size:
        frontier = {(b, err) for a in layout for b, err in neighbours.get(a, ()) if b not in inside}
        if not frontier:
            return None
        qubit, err = min(frontier, key=lambda be: (be[1] + readout.get(be[0], 1.0), be[0]))
        layout.append(qubit)
        inside.add(qubit)
        error += err + readout.get(qubit, 1.0)
    return error, layout


def readout_errors(target: Target) -> dict[int, float]:
    """Readout error of every qubit the target can measure."""
    if "measure" not in target.operation_names:
        return {}
    return {q[0]: (p.error or 0.0) for q, p in target["measure"].items() if p is not None}


def link_errors(target: Target) -> dict[tuple[int, int], float]:
    """Cheapest two-qubit gate error of every usable coupled pair, both directions.

    A gate offered one way only is usable both ways when the transpiler can flip it
    (GateDirection); it flips a CX with Hadamards, so a one-way CX on a target without H is
    not usable at all (seen on FakeCairoV2, whose links are one-way CX or ECR).
    """
    links: dict[tuple[int, int], float] = {}
    flips_cx = "h" in target.operation_names
    for name in target.operation_names:
        qargs_of = target[name] or {}
        for qargs, props in qargs_of.items():
            if qargs is None or len(qargs) != 2:
                continue
            if name == "cx" and not flips_cx and qargs[::-1] not in qargs_of:
                continue
            err = props.error if props is not None and props.error is not None else 1.0
            for edge in (qargs, qargs[::-1]):
                links[edge] = min(links.get(edge, 1.0), err)
    return links
