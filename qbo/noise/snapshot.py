"""Former home of the calibration snapshot (before it was split by concept); re-exports.

New code imports from ``qbo.noise`` (or the concept's module): ``qbo.noise.schema``
(the record and its validation), ``qbo.noise.aer_model`` (Target, Aer noise model and
simulator), ``qbo.noise.export`` (from qiskit backends), ``qbo.noise.store`` (files).
"""

from qbo.noise.export import export_from_fake, snapshot_from_backend
from qbo.noise.schema import SCHEMA, GateCalibration, QubitCalibration, Snapshot
from qbo.noise.store import ENV_DIR, calibrations_dir, list_snapshots, load_snapshot, save_snapshot, shipped_dir

__all__ = [
    "SCHEMA", "ENV_DIR", "QubitCalibration", "GateCalibration", "Snapshot", "export_from_fake",
    "snapshot_from_backend", "load_snapshot", "save_snapshot", "list_snapshots", "calibrations_dir",
    "shipped_dir",
]
