"""The oracle value object: a state preparation A with a marked objective qubit.

Q-BO seed (Dai et al. 2023), Sec. 3.2, Eq. (2): the quantum oracle O_x prepares
``sum_w sqrt(P(w)) |w> (sqrt(1 - y(w)) |0> + sqrt(y(w)) |1>)`` so that the probability of
measuring the objective qubit in |1> is E[y_x] once y is mapped into [0, 1].
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from qiskit import QuantumCircuit, qasm3


@dataclass(frozen=True, eq=False)
class Oracle:
    """Immutable, hashable state preparation A with P(objective = 1) = a in [0, 1].

    Rewards are reported in reward units ``y = low + (high - low) * a``.

    Attributes:
        circuit: the state preparation A (no measurements, no classical bits).
        objective: index of the objective qubit in ``circuit``.
        low, high: the affine map between [0, 1] and reward units.
        mean: the exact mean reward this circuit encodes (reward units), or None if unknown.
        spec: a canonical description; two oracles with equal spec are equal.
        outcomes: for oracles with an outcome register on qubits 1..n (Eq. (2)), the reward
            value of each register state (index = integer value of the register); a classical
            sample measures the register and reads one value. None: a classical sample reads
            the objective qubit and maps it to ``low`` or ``high``.
    """

    circuit: QuantumCircuit
    objective: int
    low: float = 0.0
    high: float = 1.0
    mean: float | None = None
    spec: str = ""
    outcomes: tuple[float, ...] | None = None
    _key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = self.circuit.num_qubits
        if not 0 <= self.objective < n:
            raise ValueError(f"objective qubit must be in [0, {n - 1}], got {self.objective}")
        if self.circuit.num_clbits:
            raise ValueError(f"state preparation must have no classical bits, got {self.circuit.num_clbits}")
        if not self.high > self.low:
            raise ValueError(f"reward window must have high > low, got ({self.low}, {self.high})")
        key = self.spec or "qasm3:" + hashlib.sha256(qasm3.dumps(self.circuit).encode()).hexdigest()[:16]
        object.__setattr__(self, "_key", f"{key}@obj{self.objective}")

    @property
    def key(self) -> str:
        """Cache key: the spec (or a hash of the circuit) plus the objective qubit."""
        return self._key

    @property
    def num_qubits(self) -> int:
        return self.circuit.num_qubits

    @property
    def amplitude(self) -> float | None:
        """The exact P(objective = 1), if the mean is known."""
        return None if self.mean is None else float(self.to_unit(self.mean))

    def to_unit(self, y: float | np.ndarray) -> float | np.ndarray:
        """Map reward units to the amplitude scale [0, 1]."""
        return (np.asarray(y, dtype=float) - self.low) / (self.high - self.low)

    def to_reward(self, a: float | np.ndarray) -> float | np.ndarray:
        """Map the amplitude scale [0, 1] to reward units."""
        return self.low + (self.high - self.low) * np.asarray(a, dtype=float)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Oracle) and other._key == self._key

    def __repr__(self) -> str:
        return f"Oracle({self._key}, qubits={self.num_qubits}, window=({self.low}, {self.high}))"
