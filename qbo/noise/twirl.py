"""Pauli twirling of two-qubit gates: coherent gate errors become stochastic Pauli noise.

Conjugating every two-qubit Clifford gate G by a random Pauli pair P and its image
G P G^dagger leaves the ideal circuit unchanged, and averaged over the pairs turns any gate
error channel into a Pauli channel (Wallman and Emerson 2016, Sec. II). A coherent
over-rotation, which makes the Grover contrast oscillate in k rather than decay, becomes a
depolarising-like decay: the model ``qbo.noise.depth`` and the noise-aware likelihoods
assume (``bench/noise.py``, coherent-error study).

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

__all__ = ["DEFAULT_RANDOMIZATIONS", "TwirlingConnection", "TwirlingSampler", "has_two_qubit_gate", "split_shots",
           "twirled_instances"]


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
    """A runtime connection whose Samplers twirl two-qubit gates (``options.twirling``),
    request by request (``TwirlingSampler``).

    Wraps any connection of ``qbo.execution.runtime``; everything but ``sampler`` is passed
    through unchanged.
    """

    def __init__(self, inner: Any, randomizations: int = DEFAULT_RANDOMIZATIONS) -> None:
        self._inner = inner
        self._randomizations = int(randomizations)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def sampler(self, mode: Any) -> Any:
        return TwirlingSampler(self._inner.sampler(mode), self._randomizations)


class TwirlingSampler:
    """A runtime Sampler that sets its twirling options for each request (``run``).

    * Gate twirling is on only when every circuit of the request holds a two-qubit gate. On a
      circuit without one it changes nothing on a device, and qiskit-ibm-runtime's local
      executor returns only the first randomization's shots of such a circuit, the others
      reading 0 (docs/noise.md, ``--twirl``).
    * ``num_randomizations`` is the largest divisor of the request's shots up to
      ``randomizations``, with ``shots_per_randomization`` = shots / it. Under "auto" the
      Sampler rounds shots up (1000 asked, 1024 returned), and counts must hold exactly the
      shots qbo charges.

    Everything else (``options``, tags) is the wrapped Sampler's."""

    def __init__(self, inner: Any, randomizations: int = DEFAULT_RANDOMIZATIONS) -> None:
        self._inner = inner
        self._randomizations = max(1, int(randomizations))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def run(self, pubs: list[tuple[QuantumCircuit, Any, int]], *args: Any, **kwargs: Any) -> Any:
        shots = {int(pub[2]) for pub in pubs}
        twirling = self._inner.options.twirling
        twirling.enable_gates = len(shots) == 1 and all(has_two_qubit_gate(pub[0]) for pub in pubs)
        if twirling.enable_gates:
            n = shots.pop()
            count = max(r for r in range(1, min(n, self._randomizations) + 1) if n % r == 0)
            twirling.num_randomizations, twirling.shots_per_randomization = count, n // count
        return self._inner.run(pubs, *args, **kwargs)


def has_two_qubit_gate(circuit: QuantumCircuit) -> bool:
    """Whether ``circuit`` holds a gate on two qubits (what gate twirling twirls)."""
    return any(len(inst.qubits) == 2 and not getattr(inst.operation, "_directive", False) for inst in circuit.data)
