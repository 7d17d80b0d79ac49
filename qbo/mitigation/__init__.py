"""Error mitigation inside the QMC step: readout-error mitigation and zero-noise
extrapolation with Mitiq, with intervals whose coverage is stated (``estimator``)."""

from qbo.mitigation.estimator import NAMES, BoundMitigation, Mitigation, make_mitigation
from qbo.mitigation.folding import folded_power_circuit
from qbo.noise.readout import Confusion, snapshot_confusion

__all__ = [
    "NAMES", "BoundMitigation", "Confusion", "Mitigation", "folded_power_circuit", "make_mitigation",
    "snapshot_confusion",
]
