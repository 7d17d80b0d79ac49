"""Transpilation for device targets: a fixed layout, Grover powers composed from compiled blocks.

The implementation lives in ``qbo.noise`` (the depth model compiles the same blocks):
``qbo.noise.layout.choose_layout`` picks the layout, ``qbo.noise.blocks.TranspileCache``
transpiles A, Q, A^dagger and Q^dagger once and composes every power from them.
"""

from __future__ import annotations

from qbo.noise.blocks import TranspileCache
from qbo.noise.layout import choose_layout

__all__ = ["TranspileCache", "choose_layout"]
