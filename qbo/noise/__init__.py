"""Device noise: calibration snapshots and what qbo derives from them.

One module per concept: ``schema`` (the Snapshot record, validation, faulty qubits and
gates), ``store`` (snapshot files), ``export`` (from qiskit backends), ``aer_model``
(qiskit Target, Aer noise model and simulator), ``readout`` (confusion of the read-out
qubit), ``layout`` (which physical qubits a circuit uses), ``blocks`` (Grover powers
composed from compiled blocks), ``depth`` (predicted contrast of each power and k_max),
``model`` (a device model: a snapshot and its derived views, built once per file),
``twirl`` (Pauli twirling of two-qubit gates).

Layer: imported by execution, qmc, mitigation and above; imports only oracles, grover, files and caches.
"""

from qbo.noise.export import export_from_fake, snapshot_from_backend
from qbo.noise.schema import SCHEMA, GateCalibration, QubitCalibration, Snapshot
from qbo.noise.store import calibrations_dir, list_snapshots, load_snapshot, save_snapshot, shipped_dir

__all__ = [
    "SCHEMA", "GateCalibration", "QubitCalibration", "Snapshot", "calibrations_dir", "export_from_fake",
    "list_snapshots", "load_snapshot", "save_snapshot", "shipped_dir", "snapshot_from_backend",
]
