"""Classical sampling of an oracle: one shot of A (k = 0), one oracle call, one reward.

This is what a classical learner (GP-UCB, LinUCB, Monte Carlo) sees: a sample y ~ P_x. With
an outcome register (Eq. (2) of the Q-BO seed) the shot reads the outcome's reward value;
otherwise the objective qubit gives ``low`` or ``high``. Both are unbiased for the mean.

On the exact target a sample skips the circuit run: the oracle's outcome distribution is
computed once (cached) and the executor's generator makes the very call
``ExactExecutor.run`` would make, ``multinomial(shots, p)``, so samples and generator state
are those of the general path that every other executor takes. ``classical_sampler`` binds
this to one (executor, oracle) pair for a stage loop; for a two-outcome oracle it draws
``binomial(1, p_0)``, which is numpy's ``multinomial(1, (p_0, p_1))`` draw for draw
(tests/test_sampling.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from qbo import caches
from qbo.execution.base import MAX_SHOTS, Executor
from qbo.grover import ORACLE_KEY, POWER_KEY, power_circuit
from qbo.oracles.base import Oracle

if TYPE_CHECKING:
    from qiskit import QuantumCircuit


@caches.lru(maxsize=1024)
def sample_circuit(oracle: Oracle) -> "QuantumCircuit":
    """A followed by a measurement of the outcome register (or of the objective qubit)."""
    if oracle.outcomes is None:
        return power_circuit(oracle, 0)
    from qiskit import ClassicalRegister

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
    if _exact(executor):
        if not 1 <= shots <= MAX_SHOTS:
            raise ValueError(f"shots must be in [1, 2^53] per circuit, got {shots:.3g}")
        pvals, values = _exact_table(oracle)
        return np.repeat(values, executor.rng.multinomial(shots, pvals))
    (counts,) = executor.run([sample_circuit(oracle)], [shots])
    if oracle.outcomes is None:
        low_high = np.array([oracle.low, oracle.high])
        table = {b: low_high[int(b[-1])] for b in counts}
    else:
        table = {b: oracle.outcomes[int(b, 2)] for b in counts}
    return np.repeat([table[b] for b in counts], [counts[b] for b in counts])


def classical_sampler(executor: Executor, oracle: Oracle) -> Callable[[], float]:
    """A draw of one reward sample of ``oracle`` on ``executor``: the same value and the same
    generator state after it as ``float(classical_samples(executor, oracle, 1)[0])``."""
    if not _exact(executor):
        return lambda: float(classical_samples(executor, oracle, 1)[0])
    pvals, values = _exact_table(oracle)
    if pvals.shape[0] != 2:
        return lambda: float(values[executor.rng.multinomial(1, pvals).argmax()])
    p_first, first, second = float(pvals[0]), float(values[0]), float(values[1])
    return lambda: first if executor.rng.binomial(1, p_first) else second


def two_outcome_table(executor: Executor, oracle: Oracle) -> tuple[float, float, float] | None:
    """(P(first outcome), first, second) of one classical sample of ``oracle`` where
    ``classical_sampler`` draws it as ``first if rng.binomial(1, p) else second`` (qbo's exact
    executor and an oracle of two outcomes); None elsewhere."""
    if not _exact(executor):
        return None
    pvals, values = _exact_table(oracle)
    if pvals.shape[0] != 2:
        return None
    return float(pvals[0]), float(values[0]), float(values[1])


def _exact(executor: Executor) -> bool:
    from qbo.execution.exact import ExactExecutor

    return type(executor) is ExactExecutor


@caches.lru(maxsize=4096)
def _exact_table(oracle: Oracle) -> tuple[np.ndarray, np.ndarray]:
    """(normalised outcome probabilities as ``ExactExecutor`` samples them, reward of each
    outcome index) for one classical shot of ``oracle``."""
    from qbo.execution.exact import ExactExecutor

    probs = ExactExecutor().probabilities(sample_circuit(oracle))
    pvals = np.clip(probs, 0.0, None) / probs.sum()
    if oracle.outcomes is None:
        values = tuple(float(oracle.high if i & 1 else oracle.low) for i in range(len(pvals)))
    else:
        values = tuple(float(oracle.outcomes[i]) for i in range(len(pvals)))
    pvals.flags.writeable = False
    values = np.array(values)
    values.flags.writeable = False
    return pvals, values
