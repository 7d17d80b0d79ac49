"""Transpilation for device targets: a fixed layout, Grover powers composed from compiled blocks.

The implementation lives in ``qbo.noise`` (the depth model compiles the same blocks):
``qbo.noise.layout.choose_layout`` picks the layout, ``qbo.noise.blocks.TranspileCache``
transpiles A, Q, A^dagger and Q^dagger once and composes every power from them, and, with a
``store`` folder (hardware runs), pins the layout and every transpiled circuit (QPY) in the
run folder so that a resume after a recalibration runs the same circuits.
"""

from __future__ import annotations

from qbo.noise.blocks import LAYOUT_NAME, TranspileCache
from qbo.noise.layout import choose_layout

__all__ = ["LAYOUT_NAME", "TranspileCache", "choose_layout"]
