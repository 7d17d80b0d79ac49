"""The executor protocol: run circuits with given shots, return counts.

Like Mitiq's executors, an executor is small: it knows how to run circuits on one target
and nothing about estimation. Every circuit must measure into classical bits; counts are
keyed by the bitstring of all classical bits (qiskit order, clbit 0 rightmost).

Optional capabilities are declared protocols, checked with ``isinstance``: :class:`Compiling`,
:class:`ClassicalSourced`, :class:`Closing` here and ``qbo.noise.blocks.TranspileCached`` (the
executor's transpile cache, shared with the depth model). What qbo knows of an executor's noise
is declared by its target (:class:`DeclaresNoise`): a :class:`Target`, or a bare Qiskit
sampler's ``qbo.execution.sampler.SamplerTarget``.

Every qbo executor also exposes ``rng``, the numpy Generator its randomness comes from. Its
``seed`` argument is an int or a Generator (numpy's convention): a caller that needs to
reproduce or resume a run builds the executor with its own Generator, seeded or restored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from qiskit import QuantumCircuit

from qbo.noise.model import DeviceModel, device_model, fake_device_model
from qbo.noise.schema import Snapshot
from qbo.oracles.base import Oracle

Counts = dict[str, int]
KINDS = ("exact", "aer", "fake", "ibm")


class Target(str):
    """A parsed target: the canonical string ``kind`` or ``kind:name`` (``kind`` one of KINDS,
    ``name`` the calibration or backend, None for ``exact`` and plain ``aer``). Build one with
    :func:`parse_target` (validates) or ``Target(kind, name)`` (a known kind and name)."""

    __slots__ = ()

    def __new__(cls, kind: str, name: str | None = None) -> "Target":
        if kind not in KINDS:
            raise ValueError(f"unknown target kind {str(kind)[:40]!r}, expected one of {', '.join(KINDS)}")
        return super().__new__(cls, kind if name is None else f"{kind}:{name}")

    def __reduce__(self) -> tuple[Any, ...]:
        return Target, (self.kind, self.name)

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    @property
    def kind(self) -> str:
        return str.__str__(self).partition(":")[0]  # a plain str, never this Target

    @property
    def name(self) -> str | None:
        _, colon, name = str.__str__(self).partition(":")
        return name if colon else None

    @property
    def is_noiseless(self) -> bool:
        """``exact`` or plain ``aer``: no device noise, an interval covers the ideal mean."""
        return self.kind == "exact" or (self.kind == "aer" and self.name is None)

    @property
    def has_device_model(self) -> bool:
        """Carries device noise (``aer:CALIBRATION``, ``fake:``, ``ibm:``): the run records and
        plans with a device model (a snapshot, or the live backend's calibration on ``ibm:``)."""
        return not self.is_noiseless

    @property
    def is_device(self) -> bool:
        """Runs through qiskit-ibm-runtime (``fake:`` local mode or ``ibm:`` hardware)."""
        return self.kind in ("fake", "ibm")

    @property
    def is_ibm(self) -> bool:
        """A real IBM QPU (``ibm:``): paid, queued, submitted only through ``qbo submit`` with a
        job journal, and subject to coherent errors no calibration snapshot models."""
        return self.kind == "ibm"

    @property
    def device_model(self) -> DeviceModel | None:
        """The calibration behind ``aer:NAME`` or ``fake:BACKEND`` (built once, cached); None
        for noiseless targets and for ``ibm:``, whose calibration is the live backend's."""
        if self.kind == "aer" and self.name:
            return device_model(self.name)
        if self.kind == "fake":
            return fake_device_model(self.name or "")
        return None

    def snapshot(self) -> Snapshot | None:
        """The snapshot of :attr:`device_model` (None without one)."""
        model = self.device_model
        return None if model is None else model.snapshot


@runtime_checkable
class Executor(Protocol):
    """Runs circuits on one target."""

    @property
    def target(self) -> str:
        """The target this executor runs on, e.g. ``exact`` or ``fake:FakeBrisbane``: a value
        that declares its noise (:class:`DeclaresNoise`: a :class:`Target` on qbo's executors)
        or a target string (``qbo.execution.targets.parse_target``); a string that names no
        target (a test double's label) is taken to carry noise unknown to qbo."""
        ...

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        """Run ``circuits[i]`` with ``shots[i]`` shots each; return one Counts per circuit."""
        ...


# --- optional capabilities: an executor declares one by implementing it ------------------


@runtime_checkable
class Compiling(Protocol):
    """Transpiles before it runs (Aer, runtime): ``compiled(circuit)`` is the circuit that
    actually runs, cached for power circuits under their ``qbo.grover.cache_key``."""

    def compiled(self, circuit: QuantumCircuit) -> QuantumCircuit: ...


@runtime_checkable
class SamplesPowers(Protocol):
    """Samples Q^k A of an oracle without being handed the circuit: ``run_power(oracle, k,
    shots)`` returns what ``run([qbo.grover.power_circuit(oracle, k)], [shots])`` would, from
    the same random stream. The exact target implements it with its Grover ladder, so a round
    at power k costs no O(k) circuit build (at T = 1e6 the build was most of a resumed
    Q-GP-UCB trial). Calls are counted by the caller from (k, shots) either way."""

    def run_power(self, oracle: Oracle, k: int, shots: int) -> Counts: ...


@runtime_checkable
class ClassicalSourced(Protocol):
    """Runs on paid hardware (or plans for it): a classical learner's samples come from
    ``classical_source``, the problem's reward model, never from the QPU."""

    @property
    def classical_source(self) -> Executor: ...


@runtime_checkable
class DeclaresNoise(Protocol):
    """An executor's target that says what qbo knows of its noise: ``is_noiseless`` (runs are
    exact: an interval covers the ideal mean) and ``has_device_model`` (a calibration qbo holds
    describes the noise, so depth caps, decay priors and bias pads can be calibration-aware).
    Neither: the noise is unknown to qbo (a bare Qiskit sampler)."""

    @property
    def is_noiseless(self) -> bool: ...

    @property
    def has_device_model(self) -> bool: ...


@runtime_checkable
class Closing(Protocol):
    """Holds a resource (a runtime Batch or Session) that ``close()`` releases."""

    def close(self) -> None: ...


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
