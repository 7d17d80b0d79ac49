"""Any Qiskit ``BaseSamplerV2`` as a qbo executor, counted from what it returns.

A user's sampler (``qiskit.primitives.StatevectorSampler``, ``qiskit_aer.primitives.SamplerV2``,
``qiskit_ibm_runtime.SamplerV2`` or the runtime's executor-based
``qiskit_ibm_runtime.executor_sampler.Sampler``) runs each circuit as one pub
``(circuit, None, shots)``. The shots of a round are the shots asked for, and the wrapper checks
that every pub came back with exactly that many (``BitArray.num_shots``): it never reads a shot
count from metadata (the pitfall of qiskit-algorithms' IAE on newer samplers, see
/work/shared/STYLE.md).

What a bare sampler cannot give: a device model. Only qbo's own targets (``aer:CALIBRATION``,
``fake:BACKEND``, ``ibm:BACKEND``, ``qbo.execution.targets``) know the calibration behind the
device, so only they give calibration-aware depth caps, decay priors and bias pads. A sampler's
noise is unknown to qbo unless it is a ``StatevectorSampler`` (exact) or declared with
``noiseless=True``; on any other sampler an estimate's interval covers sampling error only and
says so (``qbo.qmc.base.without_device_model``). The executor declares this through its target,
a :class:`SamplerTarget` (``qbo.execution.base.DeclaresNoise``), never through its label.

Aer's ``SamplerV2`` stays "unknown to qbo" even with empty options: ``SamplerV2.from_backend``
gives it a noisy simulator without touching its public options, and a noise model may also come
in ``run_options``; so its options cannot show that it is noiseless. Declare it
(``SamplerExecutor(SamplerV2(), noiseless=True)``) when you know.

``SamplerExecutor.diagnostics`` is what an estimate made through one records about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from qiskit import QuantumCircuit
from qiskit.primitives import BaseSamplerV2, StatevectorSampler
from qiskit.transpiler import generate_preset_pass_manager

from qbo.errors import BadInput, Unavailable
from qbo.execution.base import Counts, Executor, check_shots
from qbo.grover import cache_key

SAMPLER_PREFIX = "sampler:"  # the label of a bare sampler's target (SamplerTarget)
DECLARED_NOISELESS = "sampler:noiseless"
DEPTH_CAPS = (
    "none: a bare sampler carries no device model, so depths are not capped by a calibration; "
    "qbo's aer:CALIBRATION, fake:BACKEND and ibm:BACKEND targets give calibration-aware caps"
)
EXECUTOR_FORMS = "a qbo executor (make_executor(target)) or a Qiskit BaseSamplerV2"


class SamplerTarget(str):
    """A bare sampler's target: its label (``sampler:PACKAGE.CLASS[@BACKEND]``, the string that
    estimates and records carry) and what qbo knows of its noise (``DeclaresNoise``): noiseless
    when exact or declared so, never a device model."""

    def __new__(cls, label: str, noiseless: bool = False) -> "SamplerTarget":
        out = super().__new__(cls, label)
        out._noiseless = bool(noiseless)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return SamplerTarget, (str.__str__(self), self._noiseless)

    def __repr__(self) -> str:
        return f"SamplerTarget({str.__str__(self)!r}, noiseless={self._noiseless})"

    @property
    def is_noiseless(self) -> bool:
        """Exact (``StatevectorSampler``) or declared noiseless by the user."""
        return self._noiseless

    @property
    def has_device_model(self) -> bool:
        """Always False: only qbo's own targets know the calibration behind a device."""
        return False


@runtime_checkable
class BackendBound(Protocol):
    """A sampler that runs on one backend and needs circuits in its instruction set (ISA):
    the runtime's ``SamplerV2`` and executor-based ``Sampler`` (``backend()``)."""

    def backend(self) -> Any: ...


class SamplerExecutor:
    """A ``BaseSamplerV2`` on qbo's executor interface (``qbo.execution.base.Executor``).

    ``noiseless``: None infers it (``StatevectorSampler`` is exact; every other sampler's noise
    is unknown); True declares the sampler noiseless (e.g. a default Aer ``SamplerV2``), False
    declares it noisy. ``seed_transpiler`` seeds the transpilation for a backend-bound sampler.
    """

    def __init__(self, sampler: BaseSamplerV2, *, noiseless: bool | None = None, seed_transpiler: int = 0) -> None:
        if not isinstance(sampler, BaseSamplerV2):
            raise BadInput(f"expected a Qiskit BaseSamplerV2, got {type(sampler).__name__}")
        self.sampler = sampler
        self.name = f"{type(sampler).__module__.partition('.')[0]}.{type(sampler).__name__}"
        exact = isinstance(sampler, StatevectorSampler)
        self.noiseless = exact if noiseless is None else bool(noiseless)
        self._backend = sampler.backend() if isinstance(sampler, BackendBound) else None
        on = "" if self._backend is None else f"@{self._backend.name}"
        if noiseless is None or (exact and self.noiseless):
            label = f"{SAMPLER_PREFIX}{self.name}{on}"
        else:
            label = DECLARED_NOISELESS if self.noiseless else f"{SAMPLER_PREFIX}{self.name}{on}+declared-noise"
        self._target = SamplerTarget(label, self.noiseless)
        self._declared = noiseless is not None and not (exact and self.noiseless)
        self._seed_transpiler = int(seed_transpiler)
        self._pass_manager: Any = None
        self._isa: dict[tuple[str, int], QuantumCircuit] = {}
        self.shots_requested = 0
        self.shots_returned = 0

    @property
    def target(self) -> SamplerTarget:
        """``sampler:PACKAGE.CLASS[@BACKEND]`` (``sampler:noiseless`` when declared noiseless),
        declaring what qbo knows of its noise."""
        return self._target

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        """One pub per circuit with its own shots; counts of all classical bits per pub."""
        shots = check_shots(circuits, shots)
        pubs = [(self._isa_circuit(c), None, n) for c, n in zip(circuits, shots)]
        self.shots_requested += sum(shots)
        result = self.sampler.run(pubs).result()
        if len(result) != len(pubs):
            raise Unavailable(f"sampler {self.name} returned {len(result)} results for {len(pubs)} circuits")
        out = []
        for asked, pub_result in zip(shots, result):
            bits = pub_result.join_data()
            if bits.num_shots != asked:
                raise Unavailable(f"sampler {self.name} returned {bits.num_shots} shots where {asked} were asked for")
            self.shots_returned += bits.num_shots
            out.append({str(k): int(v) for k, v in bits.get_counts().items()})
        return out

    def shots_seen(self) -> tuple[int, int]:
        """(shots requested, shots returned) so far."""
        return self.shots_requested, self.shots_returned

    def diagnostics(self, since: tuple[int, int] = (0, 0)) -> dict[str, Any]:
        """Plain-JSON facts an estimate made through this sampler records; shots counted
        from ``since`` (an earlier ``shots_seen()``)."""
        return {
            "sampler": self.name,
            "sampler_noise": ("declared none" if self._declared else "none (exact)") if self.noiseless
            else "unknown to qbo",
            "sampler_shots": {"requested": self.shots_requested - since[0], "returned": self.shots_returned - since[1]},
            "depth_caps": DEPTH_CAPS,
        }

    def _isa_circuit(self, circuit: QuantumCircuit) -> QuantumCircuit:
        if self._backend is None:
            return circuit
        key = cache_key(circuit)
        if key is not None and key in self._isa:
            return self._isa[key]
        if self._pass_manager is None:
            self._pass_manager = generate_preset_pass_manager(
                optimization_level=1, backend=self._backend, seed_transpiler=self._seed_transpiler,
            )
        isa = self._pass_manager.run(circuit)
        if key is not None:
            self._isa[key] = isa
        return isa


def as_executor(executor: object) -> Executor:
    """``executor`` itself if it is a qbo executor, a :class:`SamplerExecutor` around a Qiskit
    ``BaseSamplerV2``; a one-line ``BadInput`` naming what is accepted otherwise."""
    if isinstance(executor, BaseSamplerV2):
        return SamplerExecutor(executor)
    if isinstance(executor, Executor):
        return executor
    raise BadInput(f"executor must be {EXECUTOR_FORMS}, got {type(executor).__name__}")
