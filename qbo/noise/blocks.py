"""Compile Grover powers from compiled blocks: a constant number of transpiles per oracle.

Q^k A (``qbo.grover.power_circuit``) and its folded form C (C^dagger C)^n, C = Q^k A
(``qbo.mitigation.folding``), are words in four blocks: A, Q, A^dagger and Q^dagger. Each
block is transpiled once per (oracle, target, layout, optimisation level, seed), starting
from the fixed layout L (``qbo.noise.layout.choose_layout``). Routing may leave the
block's qubits permuted; a short swap network found by token swapping on the coupling
graph (Miltzow et al. 2016, qiskit's ``ApproximateTokenSwapper``) is appended so every
compiled block starts and ends on L. Then any word is the plain concatenation of its
compiled blocks (barriers between them, as between the oracle calls of the virtual
circuit), and the objective is read out on L[objective]. A power circuit costs no
transpile at all once its blocks exist; other circuits are transpiled whole.

The barrier-separated blocks are what the whole-circuit transpile would also have to
respect (``qbo.grover``: the transpiler never merges two oracle calls); the difference is
that routing no longer carries a permutation from one Grover step into the next. The undo
swaps add a few two-qubit gates per step where routing was needed (none for 1- and most
2-qubit oracles); ``tests/test_depth.py`` compares the predicted contrasts with the
whole-circuit transpile.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from qiskit import ClassicalRegister, QuantumCircuit, QuantumRegister, qpy, transpile
from qiskit.transpiler import Target

from qbo.files import write_bytes_atomic, write_text_atomic
from qbo.grover import BLOCKS_KEY, ORACLE_KEY, POWER_KEY, cache_key
from qbo.noise.layout import choose_layout
from qbo.noise.readout import measured_qubit

SCALE_KEY = "qbo_scale"  # fold scale of a folded power circuit (qbo.mitigation.folding)
BLOCK_NAMES = ("A", "Q", "Adg", "Qdg")
LAYOUT_NAME = "layout.json"  # the pinned layout in a ``store`` folder


def power_word(k: int, scale: int = 1) -> list[str]:
    """The blocks of C (C^dagger C)^n, C = Q^k A, n = (scale - 1) / 2, in time order."""
    body = ["A"] + ["Q"] * k
    inverse = ["Qdg"] * k + ["Adg"]
    word = list(body)
    for _ in range((scale - 1) // 2):
        word += inverse + body
    return word


def block_counts(k: int, scale: int = 1) -> dict[str, int]:
    """How often each block occurs in ``power_word(k, scale)`` (closed form)."""
    n = (scale - 1) // 2
    return {"A": 1 + n, "Q": k * (1 + n), "Adg": n, "Qdg": k * n}


@dataclass
class CompiledBlocks:
    """The compiled blocks of one oracle on one target, all starting and ending on ``layout``."""

    layout: tuple[int, ...]
    objective: int  # physical qubit read out
    blocks: dict  # name -> compiled QuantumCircuit (all of one width), filled lazily

    @property
    def width(self) -> int:
        return next(iter(self.blocks.values())).num_qubits

    def compose(self, word: list[str], name: str = "QkA", metadata: dict | None = None) -> QuantumCircuit:
        """Concatenate compiled blocks (barrier between) and measure the objective into bit 0."""
        circuit = QuantumCircuit(QuantumRegister(self.width, "q"), ClassicalRegister(1, "c"), name=name)
        for i, block in enumerate(word):
            if i:
                circuit.barrier()
            circuit.compose(self.blocks[block], qubits=range(self.width), inplace=True)
        circuit.barrier()
        circuit.measure(self.objective, 0)
        circuit.metadata = dict(metadata or {})
        return circuit


class TranspileCache:
    """Transpiles circuits for one target with a fixed layout.

    Power circuits (and folded ones) are composed from compiled blocks (module docstring);
    any other circuit is transpiled whole and cached by its ``qbo.grover.cache_key`` if it
    has one. ``transpile_calls`` counts calls of qiskit's ``transpile``.

    Pinning (hardware runs): with a ``store`` folder (``RUN_DIR/transpiled``) the layout of
    each circuit width is written to ``layout.json`` and every keyed transpiled circuit to a
    QPY file the first time it is needed; a resumed run loads them instead of transpiling
    again, so a recalibration between two days of one run changes neither the layout nor the
    circuits that run.
    """

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
        self._cache: dict[tuple, QuantumCircuit] = {}
        self._blocks: dict[str, CompiledBlocks] = {}
        self.transpile_calls = 0
        self.derived: dict[tuple, object] = {}  # what others compute from the blocks (their noise), per key
        self._store = Path(store) if store is not None else None
        if self._store is not None and (self._store / LAYOUT_NAME).exists():
            try:
                pinned = json.loads((self._store / LAYOUT_NAME).read_text())
                self._layouts = {int(n): [int(q) for q in qs] for n, qs in pinned.items()}
            except (ValueError, TypeError, AttributeError):
                raise ValueError(f"'{self._store / LAYOUT_NAME}' is not a valid pinned layout") from None

    @property
    def target(self) -> Target:
        return self._target

    def layout(self, num_qubits: int) -> list[int]:
        if num_qubits not in self._layouts:
            self._layouts[num_qubits] = self._layout_for(num_qubits)
            if self._store is not None:
                text = json.dumps({str(n): qs for n, qs in sorted(self._layouts.items())})
                write_text_atomic(self._store / LAYOUT_NAME, text + "\n")
        return self._layouts[num_qubits]

    def _pinned(self, key: tuple[str, int], scale: int) -> Path | None:
        if self._store is None:
            return None
        name = hashlib.sha256(f"{key[0]}\n{key[1]}\n{scale}".encode()).hexdigest()[:32]
        return self._store / f"{name}.qpy"

    def _transpile(self, circuit: QuantumCircuit, layout: list[int], **options) -> QuantumCircuit:
        self.transpile_calls += 1
        return transpile(
            circuit, target=self._target, initial_layout=layout, optimization_level=self._level,
            seed_transpiler=self._seed, **options,
        )

    def __call__(self, circuit: QuantumCircuit) -> QuantumCircuit:
        key = cache_key(circuit)
        meta = circuit.metadata or {}
        scale = int(meta.get(SCALE_KEY, 1))
        if key is not None and (key, scale) in self._cache:
            return self._cache[(key, scale)]
        path = self._pinned(key, scale) if key is not None else None
        if path is not None and path.exists():
            (compiled,) = qpy.load(io.BytesIO(path.read_bytes()))
        elif key is not None and BLOCKS_KEY in meta and _well_formed(circuit, key[1], scale):
            compiled = self._from_blocks(circuit, key, scale)
        else:
            compiled = self._transpile(circuit, self.layout(circuit.num_qubits))
        if path is not None and not path.exists():
            buffer = io.BytesIO()
            qpy.dump(compiled, buffer)
            write_bytes_atomic(path, buffer.getvalue())
        if key is not None:
            self._cache[(key, scale)] = compiled
        return compiled

    def blocks_of(self, circuit: QuantumCircuit) -> CompiledBlocks:
        """The compiled blocks of the oracle behind a power circuit (compiling what is missing)."""
        meta = circuit.metadata or {}
        oracle_key = str(meta[ORACLE_KEY]).split("|fold")[0]
        k = int(meta[POWER_KEY])
        n_a, n_q = (int(v) for v in meta[BLOCKS_KEY])
        layout = self.layout(circuit.num_qubits)
        objective = measured_qubit(circuit)
        found = self._blocks.get(oracle_key)
        if found is None:
            found = CompiledBlocks(tuple(layout), layout[objective], {})
            self._blocks[oracle_key] = found
        data = circuit.data
        virtual = {"A": data[:n_a]}
        if k >= 1:
            virtual["Q"] = data[n_a + 1:n_a + 1 + n_q]
        for name, ops in virtual.items():
            if name in found.blocks:
                continue
            block = QuantumCircuit(circuit.qubits, name=name)
            for instruction in ops:
                block.append(instruction)
            found.blocks[name] = self._closed(block, layout)
            found.blocks[name + "dg"] = self._closed(block.inverse(), layout)
        return found

    def _from_blocks(self, circuit: QuantumCircuit, key: tuple[str, int], scale: int) -> QuantumCircuit:
        blocks = self.blocks_of(circuit)
        word = power_word(key[1], scale)
        return blocks.compose(word, name=circuit.name, metadata=circuit.metadata)

    def _closed(self, block: QuantumCircuit, layout: list[int]) -> QuantumCircuit:
        """Transpile ``block`` from ``layout`` and append the swaps that bring it back there."""
        compiled = self._transpile(block, layout)
        final = compiled.layout.final_index_layout() if compiled.layout is not None else list(layout)
        moves = {int(f): int(l) for f, l in zip(final, layout) if f != l}
        if not moves:
            return compiled
        from qiskit.transpiler.passes.routing.algorithms import ApproximateTokenSwapper

        graph = self._target.build_coupling_map().graph.to_undirected(multigraph=False)
        swaps = ApproximateTokenSwapper(graph, seed=self._seed).map(moves)
        physical = sorted({q for swap in swaps for q in swap})
        network = QuantumCircuit(len(physical))
        for a, b in swaps:
            network.swap(physical.index(a), physical.index(b))
        routed = self._transpile(network, physical, routing_method="none")
        if routed.layout is not None and routed.layout.final_layout is not None:
            raise RuntimeError("the undo swap network was re-routed; the coupling graph disagrees with the target")
        out = compiled.copy_empty_like()
        out.compose(compiled, inplace=True)
        out.barrier()
        out.compose(routed, qubits=range(compiled.num_qubits), inplace=True)
        return out


@runtime_checkable
class TranspileCached(Protocol):
    """An executor that compiles through a :class:`TranspileCache` (Aer): the depth model and
    the bias pads read its compiled blocks instead of transpiling them again."""

    @property
    def transpile_cache(self) -> TranspileCache: ...


def _well_formed(circuit: QuantumCircuit, k: int, scale: int) -> bool:
    """The circuit has exactly the shape ``power_circuit`` / ``folded_power_circuit`` give it
    (else it is transpiled whole): A, then k times (barrier, Q), folds, barrier, measure."""
    n_a, n_q = (int(v) for v in circuit.metadata[BLOCKS_KEY])
    body = n_a + k * (1 + n_q)
    n = (scale - 1) // 2
    data = circuit.data
    if len(data) != body + n * (2 * body + 2) + 2 or data[-1].operation.name != "measure":
        return False
    return all(data[n_a + j * (1 + n_q)].operation.name == "barrier" for j in range(k))
