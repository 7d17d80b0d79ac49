"""Global unitary folding of Grover power circuits (Giurgica-Tiron et al. 2020, Sec. II.A).

Zero-noise extrapolation scales the noise of C = Q^k A by running
C (C^dagger C)^n at an odd scale s = 2n + 1: the same unitary, s times the gates. This is
exactly ``mitiq.zne.scaling.fold_global`` at an odd integer scale factor; the test suite
checks that the operator and the number of oracle calls agree with Mitiq's output.

Why qbo builds the folded circuit itself (with Mitiq's definition) instead of calling
``fold_global`` on a qiskit circuit: Mitiq converts through Cirq and drops every barrier
(and the circuit metadata). ``qbo.grover`` needs barriers between oracle calls; without
them the transpiler (optimisation level >= 1) merges C^dagger C back into nothing and the
"folded" circuit carries no extra noise at all. Here C^dagger is ``C.inverse()`` with its
barriers kept, and a barrier separates every fold.

Only odd integer scales: then every shot calls the oracle exactly s (2k + 1) times
(A^dagger inside C^dagger counts as a call, as it does inside Q). Fractional scales
(Mitiq's partial folding of the last ceil((s - 1) L / 2) gates) would fold part of an
oracle call, which is neither a whole call nor free, and breaks the query accounting.
"""

from __future__ import annotations


from qiskit import ClassicalRegister, QuantumCircuit

from qbo import caches
from qbo.grover import BLOCKS_KEY, ORACLE_KEY, POWER_KEY, power_circuit
from qbo.noise.blocks import SCALE_KEY
from qbo.oracles.base import Oracle


def check_scale(scale: int) -> int:
    """One-line ValueError unless ``scale`` is an odd integer >= 1."""
    if not (isinstance(scale, int) and scale >= 1 and scale % 2 == 1):
        raise ValueError(f"fold scale must be an odd integer >= 1, got {scale!r}")
    return scale


def unitary_part(oracle: Oracle, k: int) -> QuantumCircuit:
    """Q^k A without its final measurement (barriers kept)."""
    return power_circuit(oracle, k).remove_final_measurements(inplace=False)


@caches.lru(maxsize=1024)
def _folded(oracle: Oracle, k: int, scale: int, cache_metadata: bool) -> QuantumCircuit:
    body = unitary_part(oracle, k)
    body.remove_final_measurements()  # drops the emptied 1-bit register as well
    inverse = body.inverse()
    circuit = body.copy_empty_like(name=f"QkA_k{k}_fold{scale}")
    circuit.compose(body, inplace=True)
    for _ in range((scale - 1) // 2):
        circuit.barrier()
        circuit.compose(inverse, inplace=True)
        circuit.barrier()
        circuit.compose(body, inplace=True)
    circuit.add_register(ClassicalRegister(1, "c"))
    circuit.barrier()
    circuit.measure(oracle.objective, 0)
    if cache_metadata:
        blocks = power_circuit(oracle, k).metadata[BLOCKS_KEY]
        circuit.metadata = {ORACLE_KEY: f"{oracle.key}|fold{scale}", POWER_KEY: k, BLOCKS_KEY: blocks, SCALE_KEY: scale}
    return circuit


def folded_power_circuit(oracle: Oracle, k: int, scale: int, cache_metadata: bool = True) -> QuantumCircuit:
    """(Q^k A) ((Q^k A)^dagger (Q^k A))^((scale - 1) / 2), then measure the objective.

    Scale 1 returns ``power_circuit(oracle, k)`` itself. ``cache_metadata`` gives the folded
    circuit a transpile-cache key of its own (``ORACLE_KEY`` = oracle key + ``|foldS``);
    leave it False for executors that interpret that key as a plain Grover power (the exact
    executor's ladder). The result is cached and shared: treat it as read-only.
    """
    check_scale(scale)
    if k < 0:
        raise ValueError(f"Grover power k must be >= 0, got {k}")
    if scale == 1:
        return power_circuit(oracle, k)
    return _folded(oracle, k, scale, bool(cache_metadata))
