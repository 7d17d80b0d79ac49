"""Pauli twirling of two-qubit gates: coherent gate errors become stochastic Pauli noise.

Conjugating every two-qubit Clifford gate G by a random Pauli pair P and its image
G P G^dagger leaves the ideal circuit unchanged, and averaged over the pairs turns any gate
error channel into a Pauli channel (Wallman and Emerson 2016, Sec. II). A coherent
over-rotation, which makes the Grover contrast oscillate in k rather than decay, becomes a
depolarising-like decay: the model ``qbo.noise.depth`` and the noise-aware likelihoods
assume (``bench/noise.py``, coherent-error study, measures it).

Aer targets: ``twirled_instances`` draws random twirls of an already compiled circuit with
``qiskit.circuit.pauli_twirl_2q_gates`` (the Paulis are synthesised for the Target, so the
circuit stays executable); the executor spreads a call's shots over them. The Grover power
and its oracle calls are unchanged, so honest counting is unaffected. Hardware targets: the
runtime Sampler twirls itself (``options.twirling``, ``TwirlingConnection``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from qiskit import QuantumCircuit

DEFAULT_RANDOMIZATIONS = 16

__all__ = ["DEFAULT_RANDOMIZATIONS", "TwirlingConnection", "split_shots", "twirled_instances"]


def split_shots(shots: int, randomizations: int) -> list[int]:
    """``shots`` over min(shots, randomizations) twirls, as equal as possible (sums to shots)."""
    parts = max(1, min(int(shots), int(randomizations)))
    base, extra = divmod(int(shots), parts)
    return [base + (i < extra) for i in range(parts)]


def twirled_instances(compiled: QuantumCircuit, count: int, rng: np.random.Generator, target=None) -> list[QuantumCircuit]:
    """``count`` independent random Pauli twirls of the two-qubit gates of ``compiled``."""
    from qiskit.circuit import pauli_twirl_2q_gates

    seed = int(rng.integers(2**63))
    out = pauli_twirl_2q_gates(compiled, seed=seed, num_twirls=count, target=target)
    circuits = out if isinstance(out, list) else [out]
    for c in circuits:
        c.metadata = dict(compiled.metadata or {})
    return circuits


class TwirlingConnection:
    """A runtime connection whose Samplers twirl two-qubit gates (``options.twirling``).

    Wraps any connection of ``qbo.execution.runtime``; everything but ``sampler`` is passed
    through unchanged.
    """

    def __init__(self, inner: Any, randomizations: int | str = "auto") -> None:
        self._inner = inner
        self._randomizations = randomizations

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def sampler(self, mode: Any) -> Any:
        sampler = self._inner.sampler(mode)
        twirling = sampler.options.twirling
        twirling.enable_gates = True
        twirling.num_randomizations = self._randomizations
        return sampler
