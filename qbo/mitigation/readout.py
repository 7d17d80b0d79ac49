"""Readout-error mitigation of one measured qubit with ``mitiq.rem`` (Maciejewski et al. 2020).

A measurement of the objective qubit reads the wrong bit with p01 = P(read 1 | prepared 0)
(calibration field ``prob_meas1_prep0``) and p10 = P(read 0 | prepared 1)
(``prob_meas0_prep1``). With the confusion matrix M = [[1 - p01, p10], [p01, 1 - p10]] the
observed P(1) is q = p01 + g p, g = 1 - p01 - p10 > 0. ``mitiq.rem.generate_inverse_
confusion_matrix(1, p01, p10)`` gives M^-1 (``Confusion.inverse_matrix``); its second row
maps (1 - q, q) back to p, an increasing affine map of q. So a Clopper-Pearson interval
[q_l, q_h] for q at level alpha maps exactly to an interval for p at the same level (the
matrix is taken as known; for a measured matrix its own uncertainty would have to be added).

The confusion itself is a property of the device (``qbo.noise.readout``); it is re-exported
here for the mitigation code and its callers.
"""

from qbo.noise.readout import Confusion, measured_qubit, snapshot_confusion

__all__ = ["Confusion", "measured_qubit", "snapshot_confusion"]
