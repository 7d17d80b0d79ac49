"""Bernoulli reward oracle: one qubit, P(1) = p."""

from __future__ import annotations

import math

from qiskit import QuantumCircuit

from qbo.oracle_specs import check_probability
from qbo.oracles.base import Oracle


def bernoulli(p: float) -> Oracle:
    """A = RY(2 arcsin sqrt p) on one qubit; y in {0, 1} with E[y] = p (seed Sec. 6.1)."""
    p = check_probability("p", p)
    circuit = QuantumCircuit(1, name="A")
    circuit.ry(2.0 * math.asin(math.sqrt(p)), 0)
    return Oracle(circuit, objective=0, low=0.0, high=1.0, mean=p, spec=f"bernoulli:{p!r}")
