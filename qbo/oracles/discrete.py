"""Discrete reward oracle, the seed's Eq. (2).

An outcome register holds ``sum_w sqrt(P(w)) |w>``; a uniformly controlled RY then rotates
the objective qubit by ``2 arcsin sqrt(a(w))`` where ``a(w)`` is y(w) mapped into [0, 1].
So P(objective = 1) = sum_w P(w) a(w) = E[a(y)]  (Dai et al. 2023, Sec. 3.2, Eq. (2)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from qiskit import QuantumCircuit
from qiskit.circuit.library import StatePreparation, UCRYGate

from qbo.oracle_specs import check_discrete
from qbo.oracles.base import Oracle

PROB_TOL = 1e-9


def discrete(
    values: Sequence[float],
    probs: Sequence[float],
    window: tuple[float, float] | None = None,
    spec: str | None = None,
) -> Oracle:
    """Oracle for a reward taking ``values[w]`` with probability ``probs[w]``.

    Args:
        values: reward values y(w) (reward units).
        probs: probabilities P(w); must sum to 1.
        window: the reward window (low, high) mapped onto [0, 1]; defaults to
            (min(0, min values), max(1, max values)). It must contain every value.
    """
    checked_values, checked_probs, (low, high) = check_discrete(values, probs, window)
    v, p = np.asarray(checked_values), np.asarray(checked_probs)
    p = p / p.sum()
    circuit = _outcome_circuit(np.clip((v - low) / (high - low), 0.0, 1.0), p)
    mean = float(np.dot(p, v))
    text = spec or "discrete:values={};probs={};window={}".format(v.tolist(), p.tolist(), (low, high))
    outcomes = tuple(float(x) for x in v) + (float(low),) * (2 ** (circuit.num_qubits - 1) - v.size)
    return Oracle(circuit, 0, float(low), float(high), mean=mean, spec=text, outcomes=outcomes)


def _outcome_circuit(unit_values: np.ndarray, probs: np.ndarray) -> QuantumCircuit:
    """Qubit 0 is the objective; qubits 1..n hold the outcome register |w>."""
    n = max(1, math.ceil(math.log2(unit_values.size)))
    size = 2**n
    amps = np.zeros(size)
    amps[: probs.size] = np.sqrt(probs)
    angles = np.zeros(size)
    angles[: unit_values.size] = 2.0 * np.arcsin(np.sqrt(unit_values))
    circuit = QuantumCircuit(n + 1, name="A")
    outcome = list(range(1, n + 1))
    circuit.append(StatePreparation(amps), outcome)
    circuit.append(UCRYGate(angles.tolist()), [0, *outcome])
    return circuit
