"""Classical sampling of an oracle: one shot of A (k = 0), one oracle call, one reward.

This is what a classical learner (GP-UCB, LinUCB, Monte Carlo) sees: a sample y ~ P_x.
For an oracle with an outcome register (Eq. (2) of the Q-BO seed) the shot measures the
register and reads the reward value of the outcome; otherwise it reads the objective qubit
and reports ``low`` or ``high``. Both are unbiased for the oracle's mean.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from qiskit import ClassicalRegister, QuantumCircuit

from qbo.execution.base import Executor
from qbo.grover import ORACLE_KEY, POWER_KEY, power_circuit
from qbo.oracles.base import Oracle


@lru_cache(maxsize=1024)
def sample_circuit(oracle: Oracle) -> QuantumCircuit:
    """A followed by a measurement of the outcome register (or of the objective qubit)."""
    if oracle.outcomes is None:
        return power_circuit(oracle, 0)
    register = [q for q in range(oracle.num_qubits) if q != oracle.objective]
    circuit = oracle.circuit.copy_empty_like(name="A_sample")
    circuit.compose(oracle.circuit, inplace=True)
    circuit.add_register(ClassicalRegister(len(register), "w"))
    circuit.barrier()
    circuit.measure(register, list(range(len(register))))
    circuit.metadata = {ORACLE_KEY: oracle.key + "#sample", POWER_KEY: 0}
    return circuit


def classical_samples(executor: Executor, oracle: Oracle, shots: int) -> np.ndarray:
    """``shots`` reward samples (reward units), each costing one oracle call."""
    (counts,) = executor.run([sample_circuit(oracle)], [shots])
    if oracle.outcomes is None:
        values = np.array([oracle.low, oracle.high])
        table = {b: values[int(b[-1])] for b in counts}
    else:
        table = {b: oracle.outcomes[int(b, 2)] for b in counts}
    return np.repeat([table[b] for b in counts], [counts[b] for b in counts])
