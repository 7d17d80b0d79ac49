"""An Aer simulator of a whole device whose noise model covers only the qubits its circuits use.

``AerSimulator.from_backend`` builds the noise model of every gate of the device: for a
156-qubit fake backend that is seconds of construction, and qiskit-ibm-runtime's local
executor deep-copies the simulator, noise model included, for every job and runs each
circuit against the full model (docs/noise.md, ``fake:`` targets). A
:class:`LayoutSimulator` starts with no gate noise and, before each run, sets the noise
model that ``NoiseModel.from_backend`` would build restricted to the instructions acting
within the qubits the run's circuits touch (their readout included; the delay relaxation
pass is the device's, unchanged). Instructions of a circuit act only on those qubits, so
every error Aer would apply to them is the same: the counts are those of the full model
(tests/test_hardware.py compares them seed for seed).

Threads. A run hands Aer its noise model as a run option and never changes the simulator's
own options, so one simulator may serve several threads at once (Aer reads the options when
its job executes, possibly after another thread's run has begun). The restricted models are
kept per (device, qubit set) in one lock-guarded cache of the ``NOISE_MODELS`` most recently
used, so a long process running many layouts holds a bounded number.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from qiskit import QuantumCircuit
from qiskit.providers import BackendV2, Options
from qiskit.transpiler import Target
from qiskit_aer import AerSimulator
from qiskit_aer.noise import NoiseModel

__all__ = ["NOISE_MODELS", "LayoutSimulator", "NoiseModels", "active_qubits", "restricted_noise_model"]

_IDLE = ("barrier", "delay")
NOISE_MODELS = 32  # restricted noise models kept per process (all devices): a run uses one per oracle layout


def active_qubits(circuits: Iterable[QuantumCircuit]) -> frozenset[int]:
    """The qubits any instruction of ``circuits`` acts on (barriers and delays aside)."""
    return frozenset(c.find_bit(q).index for c in circuits for inst in c.data if inst.operation.name not in _IDLE
                     for q in inst.qubits)


def restricted_target(target: Target, qubits: Iterable[int]) -> Target:
    """``target`` with only the instruction properties whose qubits lie within ``qubits``
    (global instructions, without qubits, kept as they are)."""
    keep = set(qubits)
    small = Target(description=target.description, num_qubits=target.num_qubits, dt=target.dt,
                   qubit_properties=target.qubit_properties)
    for name, props in target.items():
        operation = target.operation_from_name(name)
        if props is None or None in props:
            small.add_instruction(operation, name=name)
            continue
        mine = {qargs: p for qargs, p in props.items() if keep.issuperset(qargs)}
        if mine:
            small.add_instruction(operation, mine, name=name)
    return small


class _TargetBackend(BackendV2):
    """A backend that is only a Target: what ``NoiseModel.from_backend`` reads of a BackendV2."""

    def __init__(self, target: Target) -> None:
        super().__init__(name="qbo-restricted")
        self._target = target

    @property
    def target(self) -> Target:
        return self._target

    @property
    def max_circuits(self) -> None:
        return None

    @classmethod
    def _default_options(cls) -> Options:
        return Options()

    def run(self, run_input, **options):  # noqa: ANN001 - never run: it only describes noise
        raise NotImplementedError("a restricted target describes noise; it runs nothing")


def restricted_noise_model(target: Target, qubits: Iterable[int]) -> NoiseModel:
    """``NoiseModel.from_backend`` (readout, gate depolarising + thermal relaxation, delay
    relaxation) of the instructions of ``target`` within ``qubits`` only."""
    model = NoiseModel.from_backend(_TargetBackend(restricted_target(target, qubits)))
    model.add_basis_gates(list(target.operation_names))  # from_backend's basis: the whole device's
    return model


class LayoutSimulator(AerSimulator):
    """``AerSimulator.from_backend(backend, noise_model=...)`` that hands each run, as a run
    option, the device's noise model restricted to the qubits of that run's circuits (module
    docstring); its own options never change, so threads can share it."""

    @classmethod
    def for_backend(cls, backend: BackendV2) -> "LayoutSimulator":
        """The simulator of ``backend``, its noise model not yet built (the first run builds it)."""
        return cls.from_backend(backend, noise_model=NoiseModel(basis_gates=list(backend.operation_names)))

    def run(self, run_input, **options):  # noqa: ANN001 - AerSimulator's signature
        circuits = run_input if isinstance(run_input, (list, tuple)) else [run_input]
        model = _NOISE.get(self.name, self.target, active_qubits(circuits))
        return super().run(run_input, **{**options, "noise_model": model})  # a run option: the simulator stays as it is


class NoiseModels:
    """Restricted noise models by (device name, qubit set), at most ``maxsize``: the least
    recently used is dropped first. Thread-safe: a model is built once, under the lock."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"a noise model cache holds at least 1 model, got maxsize {maxsize}")
        self.maxsize = maxsize
        self._lock = threading.Lock()
        self._models: OrderedDict[tuple[str, tuple[int, ...]], NoiseModel] = OrderedDict()

    def get(self, name: str, target: Target, qubits: frozenset[int]) -> NoiseModel:
        """The model of ``target`` (the device called ``name``) restricted to ``qubits``."""
        key = (name, tuple(sorted(qubits)))
        with self._lock:
            model = self._models.get(key)
            if model is None:
                model = self._models[key] = restricted_noise_model(target, qubits)
            self._models.move_to_end(key)
            while len(self._models) > self.maxsize:
                self._models.popitem(last=False)
            return model

    def items(self) -> list[tuple[tuple[str, tuple[int, ...]], NoiseModel]]:
        """The cached (key, model) pairs, least recently used first."""
        with self._lock:
            return list(self._models.items())


_NOISE = NoiseModels(NOISE_MODELS)
