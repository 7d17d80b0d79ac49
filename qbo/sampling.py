"""Classical sampling of an oracle: one shot of A (k = 0), one oracle call, one reward.

This is what a classical learner (GP-UCB, LinUCB, Monte Carlo) sees: a sample y ~ P_x.
For an oracle with an outcome register (Eq. (2) of the Q-BO seed) the shot measures the
register and reads the reward value of the outcome; otherwise it reads the objective qubit
and reports ``low`` or ``high``. Both are unbiased for the oracle's mean.

Speed. A classical policy asks one sample per stage, and the next arm depends on it, so
stages cannot share one draw. On the exact target the sample is instead drawn without
building counts: the oracle's outcome distribution is computed once (cached), and one
shot is ``multinomial_one``, which consumes the executor's generator exactly as
``ExactExecutor.run`` (``Generator.multinomial(1, p)``) would. Samples and the generator's
state after every sample are therefore identical to the general path, which every other
executor (and any subclass of ``ExactExecutor``) still takes.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from qbo.execution.base import Executor
from qbo.grover import ORACLE_KEY, POWER_KEY, power_circuit
from qbo.oracles.base import Oracle

if TYPE_CHECKING:
    from qiskit import QuantumCircuit


@lru_cache(maxsize=1024)
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
        pvals, values = _exact_table(oracle)
        if shots == 1:
            return np.array([values[multinomial_one(executor.rng, pvals)]])
        draws = executor.rng.multinomial(shots, pvals)
        return np.repeat(np.array(values), draws)
    (counts,) = executor.run([sample_circuit(oracle)], [shots])
    if oracle.outcomes is None:
        low_high = np.array([oracle.low, oracle.high])
        table = {b: low_high[int(b[-1])] for b in counts}
    else:
        table = {b: oracle.outcomes[int(b, 2)] for b in counts}
    return np.repeat([table[b] for b in counts], [counts[b] for b in counts])


def multinomial_one(rng: np.random.Generator, pvals: tuple[float, ...]) -> int:
    """The index ``argmax(rng.multinomial(1, pvals))``, drawing exactly the same uniforms.

    numpy's multinomial runs one binomial per category until the shot is placed, with
    conditional probability p_j / (1 - p_0 - ... - p_{j-1}); a binomial of one trial uses
    inversion on one uniform (on q = 1 - p when p > 1/2, none when p = 0). This is that
    algorithm for n = 1, step for step (tests compare it with numpy draw by draw).
    """
    remaining = 1.0
    last = len(pvals) - 1
    for j in range(last):
        p = pvals[j] / remaining
        if p != 0.0 and (_inversion_one(rng, p) if p <= 0.5 else 1 - _inversion_one(rng, 1.0 - p)):
            return j
        remaining -= pvals[j]
    return last


def _inversion_one(rng: np.random.Generator, p: float) -> int:
    """numpy's binomial inversion for n = 1: 1 with probability p (redraws on round-off)."""
    q = 1.0 - p
    qn = math.exp(math.log(q))
    while True:
        u = rng.random()
        if not u > qn:
            return 0
        if not u - qn > (p * qn) / q:
            return 1


def _exact(executor: Executor) -> bool:
    from qbo.execution.exact import ExactExecutor

    return type(executor) is ExactExecutor


@lru_cache(maxsize=4096)
def _exact_table(oracle: Oracle) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(normalised outcome probabilities as ``ExactExecutor`` samples them, reward of each
    outcome index) for one classical shot of ``oracle``."""
    from qbo.execution.exact import ExactExecutor

    probs = ExactExecutor().probabilities(sample_circuit(oracle))
    pvals = np.clip(probs, 0.0, None) / probs.sum()
    if oracle.outcomes is None:
        values = tuple(float(oracle.high if i & 1 else oracle.low) for i in range(len(pvals)))
    else:
        values = tuple(float(oracle.outcomes[i]) for i in range(len(pvals)))
    return tuple(float(p) for p in pvals), values
