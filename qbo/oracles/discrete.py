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

from qbo.oracles.base import Oracle

PROB_TOL = 1e-9


def _validate(values: np.ndarray, probs: np.ndarray) -> None:
    if values.ndim != 1 or values.size == 0 or values.shape != probs.shape:
        raise ValueError(f"values and probs must be non-empty and equally long, got {values.size} and {probs.size}")
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(probs))):
        raise ValueError("values and probs must be finite numbers")
    if np.any(probs < 0):
        raise ValueError(f"probs must be >= 0, got {probs.tolist()}")
    if abs(probs.sum() - 1.0) > 1e-6:
        raise ValueError(f"probs must sum to 1, got sum {probs.sum():.6g}")


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
    v = np.asarray(values, dtype=float)
    p = np.asarray(probs, dtype=float)
    _validate(v, p)
    low, high = window if window is not None else (min(0.0, v.min()), max(1.0, v.max()))
    if v.min() < low - 1e-12 or v.max() > high + 1e-12:
        raise ValueError(f"window ({low}, {high}) must contain every value, got range [{v.min()}, {v.max()}]")
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
