"""A device model: one calibration snapshot and what qbo derives from it, built once.

A :class:`DeviceModel` holds the snapshot and answers, from it, the questions estimators and
executors ask of a device: the qiskit Target it is transpiled for (faulty qubits and gates
left out, ``qbo.noise.schema``), the layout of a circuit width (``qbo.noise.layout``), the
faulty parts, the shared transpile cache and the depth model (``qbo.noise.depth``).

:func:`device_model` builds one per snapshot file and keeps it (keyed by the resolved path
and the file's size and modification time, so an edited file is read again);
:func:`fake_device_model` one per qiskit-ibm-runtime fake backend. Both caches are registered
with ``qbo.caches``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from qbo import caches
from qbo.noise.aer_model import snapshot_target
from qbo.noise.blocks import TranspileCache
from qbo.noise.depth import DepthRow, compiler_for, depth_table
from qbo.noise.export import export_from_fake
from qbo.noise.layout import choose_layout
from qbo.noise.readout import Confusion, snapshot_confusion
from qbo.noise.schema import GateCalibration, Snapshot
from qbo.noise.store import load_snapshot, resolve_snapshot
from qbo.oracles.base import Oracle

__all__ = ["DeviceModel", "device_model", "fake_device_model"]


@dataclass(frozen=True, eq=False)
class DeviceModel:
    """One device's calibration and its derived views (module docstring); immutable."""

    snapshot: Snapshot

    @property
    def name(self) -> str:
        return self.snapshot.name

    @cached_property
    def qiskit_target(self) -> Any:
        """The ``qiskit.transpiler.Target`` of the working qubits and gates (``snapshot_target``)."""
        return snapshot_target(self.snapshot)

    @property
    def faulty_qubits(self) -> tuple[int, ...]:
        return self.snapshot.faulty_qubits

    @property
    def faulty_gates(self) -> tuple[GateCalibration, ...]:
        return self.snapshot.faulty_gates

    def layout(self, num_qubits: int) -> list[int]:
        """The physical qubits a circuit of ``num_qubits`` runs on (``choose_layout``)."""
        return choose_layout(self.qiskit_target, num_qubits)

    def compiler(self, optimization_level: int = 1, seed: int = 0) -> TranspileCache:
        """The snapshot's shared transpile cache (``qbo.noise.depth.compiler_for``)."""
        return compiler_for(self.snapshot, optimization_level, seed)

    def confusion(self, qubit: int) -> Confusion:
        """Readout confusion of a physical qubit."""
        return snapshot_confusion(self.snapshot, qubit)

    def depth_table(self, oracle: Oracle, ks: Sequence[int] | range, *, idle: bool = True,
                    readout_mitigated: bool = False, compiler: TranspileCache | None = None) -> list[DepthRow]:
        """Predicted contrast and noise bias of every power in ``ks`` (``qbo.noise.depth``)."""
        return depth_table(self.snapshot, oracle, ks, idle, readout_mitigated, compiler=compiler)


class _Models:
    """The built device models, by key; a ``qbo.caches.Cache``."""

    def __init__(self) -> None:
        self.models: dict[tuple, DeviceModel] = {}

    def cache_clear(self) -> None:
        self.models.clear()

    def __len__(self) -> int:
        return len(self.models)


_FILES = _Models()
_FAKES = _Models()
caches.register("qbo.noise.model.device_model", _FILES)
caches.register("qbo.noise.model.fake_device_model", _FAKES)


def device_model(name_or_path: str | os.PathLike) -> DeviceModel:
    """The device model of a snapshot name or file, read once per file version; one-line
    ValueError for an unknown name or an invalid file (``qbo.noise.store.load_snapshot``)."""
    path = resolve_snapshot(name_or_path)
    try:
        stat = path.stat()
        key: tuple = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    except OSError:
        return DeviceModel(load_snapshot(path))  # load_snapshot names the unreadable file
    model = _FILES.models.get(key)
    if model is None:
        model = _FILES.models[key] = DeviceModel(load_snapshot(path))
    return model


def fake_device_model(backend: str) -> DeviceModel:
    """The device model of a qiskit-ibm-runtime fake backend (``export_from_fake``), built once."""
    model = _FAKES.models.get((backend,))
    if model is None:
        model = _FAKES.models[(backend,)] = DeviceModel(export_from_fake(backend))
    return model
