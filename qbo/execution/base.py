"""The executor protocol: run circuits with given shots, return counts.

Like Mitiq's executors, an executor is small: it knows how to run circuits on one target
and nothing about estimation. Every circuit must measure into classical bits; counts are
keyed by the bitstring of all classical bits (qiskit order, clbit 0 rightmost).

Every qbo executor also exposes ``rng``, the numpy Generator its randomness comes from. Its
``seed`` argument is an int or a Generator (numpy's convention): a caller that needs to
reproduce or resume a run builds the executor with its own Generator, seeded or restored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from qiskit import QuantumCircuit

Counts = dict[str, int]


@runtime_checkable
class Executor(Protocol):
    """Runs circuits on one target."""

    @property
    def target(self) -> str:
        """The target this executor runs on, e.g. ``exact`` or ``fake:FakeBrisbane``."""
        ...

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        """Run ``circuits[i]`` with ``shots[i]`` shots each; return one Counts per circuit."""
        ...


def ones(counts: Counts, clbit: int = 0) -> int:
    """Number of shots in which classical bit ``clbit`` read 1."""
    return sum(n for bits, n in counts.items() if bits[-1 - clbit] == "1")


def transpile_seed(seed: object) -> int:
    """The transpiler's seed for an executor built with ``seed``: the int itself, else 0."""
    return int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else 0


MAX_SHOTS = 2**53  # far beyond any device; keeps counts exact in float64 and int64


def check_shots(circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[int]:
    """Validate the run arguments; return shots as ints."""
    if len(circuits) != len(shots):
        raise ValueError(f"need one shot count per circuit, got {len(shots)} for {len(circuits)} circuits")
    out = [int(s) for s in shots]
    bad = [s for s in out if not 1 <= s <= MAX_SHOTS]
    if bad:
        raise ValueError(f"shots must be in [1, 2^53] per circuit, got {bad[0]:.3g}")
    return out
