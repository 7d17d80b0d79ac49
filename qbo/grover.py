"""Grover powers Q^k A of an oracle (Brassard et al. 2002; Grinko et al. 2021, Sec. 2).

Q = A S_0 A^dagger S_chi, where S_chi flips the phase of states whose objective qubit is
|1> and S_0 reflects about |0...0>. After k applications, P(objective = 1) =
sin^2((2k + 1) theta) with a = sin^2(theta).

A shot of ``power_circuit(oracle, k)`` calls the oracle 2k + 1 times: A once, then A and
A^dagger inside each Q. Barriers separate A, every Q and the reflections and oracle calls
inside Q, so the transpiler can never merge or cancel two oracle calls: each call of A or
A^dagger is compiled on its own, as a black-box oracle would be, and on a noisy target the
error grows with k as it does on hardware.
"""

from __future__ import annotations


from qiskit import ClassicalRegister, QuantumCircuit
from qiskit.circuit.library import grover_operator

from qbo import caches
from qbo.oracles.base import Oracle

ORACLE_KEY = "qbo_oracle"
POWER_KEY = "qbo_k"
BLOCKS_KEY = "qbo_blocks"  # [instructions of A, instructions of Q]: lets a compiler cut Q^k A into blocks


def oracle_calls(k: int, shots: int, scale: int = 1) -> int:
    """Honest oracle calls of ``shots`` shots of Q^k A folded at odd ``scale``: shots * scale * (2k + 1).

    A once, then A and A^dagger inside each of the k Grover steps; every fold of Q^k A
    (``qbo.mitigation.folding``: (Q^k A) ((Q^k A)^dagger (Q^k A))^((scale - 1) / 2)) repeats
    all 2k + 1 calls. The one formula qbo counts calls with (``qbo.qmc.result.Round``).
    """
    return shots * scale * (2 * k + 1)


@caches.lru(maxsize=256)
def grover(oracle: Oracle) -> QuantumCircuit:
    """The Grover operator Q of ``oracle`` built with ``qiskit.circuit.library.grover_operator``."""
    phase = QuantumCircuit(oracle.num_qubits, name="S_chi")
    phase.z(oracle.objective)
    return grover_operator(phase, state_preparation=oracle.circuit, insert_barriers=True, name="Q")


CACHED_INSTRUCTIONS = 1_000_000  # power circuits kept, in instructions (~100 MB; a 1-qubit Q is 10)


@caches.lru_by_weight(CACHED_INSTRUCTIONS, lambda circuit: len(circuit.data))
def power_circuit(oracle: Oracle, k: int) -> QuantumCircuit:
    """Q^k A followed by a measurement of the objective qubit into a 1-bit register.

    The result is cached and shared: treat it as read-only. The cache is bounded by the
    instructions it holds, not by a count: a circuit grows with k, and a run to 1e7 calls asks
    for thousands of powers in the thousands. Its metadata names the oracle and k, which
    executors use as their transpilation cache key.
    """
    if k < 0:
        raise ValueError(f"Grover power k must be >= 0, got {k}")
    step = _grover_step(oracle)
    circuit = oracle.circuit.copy_empty_like(name=f"QkA_k{k}")
    circuit.compose(oracle.circuit, inplace=True)
    for _ in range(k):
        circuit.compose(step, inplace=True, copy=False)  # shares step's operations: read-only
    circuit.add_register(ClassicalRegister(1, "c"))
    circuit.barrier()
    circuit.measure(oracle.objective, 0)
    circuit.metadata = {ORACLE_KEY: oracle.key, POWER_KEY: k, BLOCKS_KEY: [len(oracle.circuit.data), len(step.data) - 1]}
    return circuit


@caches.lru(maxsize=256)
def _grover_step(oracle: Oracle) -> QuantumCircuit:
    """A barrier, then Q: what each Grover step appends to Q^k A."""
    step = oracle.circuit.copy_empty_like(name="barrier_Q")
    step.global_phase = 0  # each step adds Q's phase only, as composing Q alone did
    step.barrier()
    step.compose(grover(oracle), inplace=True)
    return step


def cache_key(circuit: QuantumCircuit) -> tuple[str, int] | None:
    """(oracle key, k) of a power circuit, or None for any other circuit."""
    meta = circuit.metadata or {}
    if ORACLE_KEY in meta and POWER_KEY in meta:
        return str(meta[ORACLE_KEY]), int(meta[POWER_KEY])
    return None
