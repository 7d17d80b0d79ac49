"""The readout channel of the objective qubit, and its inversion with ``mitiq.rem`` (Maciejewski et al. 2020).

A noise concept (the noise-aware likelihoods and the depth model use the forward channel); readout-error
mitigation (``qbo.mitigation``) uses the inverse.

A measurement of the objective qubit reads the wrong bit with p01 = P(read 1 | prepared 0)
(calibration field ``prob_meas1_prep0``) and p10 = P(read 0 | prepared 1)
(``prob_meas0_prep1``). With the confusion matrix M = [[1 - p01, p10], [p01, 1 - p10]] the
observed P(1) is q = p01 + g p, g = 1 - p01 - p10 > 0. ``mitiq.rem.generate_inverse_
confusion_matrix(1, p01, p10)`` gives M^-1; its second row maps (1 - q, q) back to p, an
increasing affine map of q. So a Clopper-Pearson interval [q_l, q_h] for q at level alpha
maps exactly to an interval for p at the same level (the matrix is taken as known; for an
estimated matrix its own uncertainty would have to be added).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qbo import caches
from qbo.noise.schema import Snapshot


@dataclass(frozen=True)
class Confusion:
    """Readout flips of one qubit: p01 = P(1 | 0), p10 = P(0 | 1)."""

    p01: float
    p10: float

    def __post_init__(self) -> None:
        for name in ("p01", "p10"):
            value = getattr(self, name)
            if not 0 <= value < 0.5:
                raise ValueError(f"readout {name} must be in [0, 0.5), got {value}")

    @property
    def gain(self) -> float:
        """g = 1 - p01 - p10: the slope of observed P(1) in true P(1)."""
        return 1.0 - self.p01 - self.p10

    def inverse_matrix(self) -> np.ndarray:
        """M^-1 from ``mitiq.rem.generate_inverse_confusion_matrix`` (cached per (p01, p10))."""
        return _inverse(self.p01, self.p10).copy()

    def correct(self, q: float | np.ndarray) -> float | np.ndarray:
        """Mitigated P(1) for observed P(1) ``q`` (unclipped: may leave [0, 1])."""
        inv = _inverse(self.p01, self.p10)
        q = np.asarray(q, dtype=float)
        return inv[1, 0] * (1.0 - q) + inv[1, 1] * q

    def observe(self, p: float | np.ndarray) -> float | np.ndarray:
        """Observed P(1) for true P(1) ``p``: p01 + g p."""
        return self.p01 + self.gain * np.asarray(p, dtype=float)


@caches.lru(maxsize=256)
def _inverse(p01: float, p10: float) -> np.ndarray:
    from mitiq.rem import generate_inverse_confusion_matrix

    inv = np.asarray(generate_inverse_confusion_matrix(1, p0=p01, p1=p10), dtype=float)
    inv.setflags(write=False)
    return inv


def snapshot_confusion(snapshot: Snapshot, physical_qubit: int) -> Confusion:
    """The confusion of one physical qubit of a snapshot (symmetric readout_error if the
    asymmetric fields are missing, as ``qbo.noise.aer_model.noise_model`` does)."""
    if not 0 <= physical_qubit < snapshot.num_qubits:
        raise ValueError(f"physical qubit must be in [0, {snapshot.num_qubits - 1}], got {physical_qubit}")
    q = snapshot.qubits[physical_qubit]
    if q.faulty:
        raise ValueError(f"calibration {snapshot.name!r}: qubit {physical_qubit} is faulty and has no usable readout")
    p01 = q.prob_meas1_prep0 if q.prob_meas1_prep0 is not None else q.readout_error
    p10 = q.prob_meas0_prep1 if q.prob_meas0_prep1 is not None else q.readout_error
    return Confusion(float(p01), float(p10))


def best_confusion(snapshot: Snapshot) -> Confusion:
    """The confusion of the snapshot's best-read-out working qubit (lowest readout_error, then index)."""
    working = [q for q in range(snapshot.num_qubits) if not snapshot.qubits[q].faulty]
    best = min(working, key=lambda q: (snapshot.qubits[q].readout_error, q))
    return snapshot_confusion(snapshot, best)


def measured_qubit(compiled) -> int:
    """The qubit a one-bit power circuit measures (the physical qubit, once transpiled)."""
    measures = [i for i in compiled.data if i.operation.name == "measure"]
    if len(measures) != 1:
        raise ValueError(f"expected one measurement in '{compiled.name}', got {len(measures)}")
    return compiled.find_bit(measures[0].qubits[0]).index
