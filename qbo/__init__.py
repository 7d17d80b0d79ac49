"""qbo: quantum-first Bayesian optimisation with honest oracle-call accounting.

``qbo.load_run(DIR)`` reads a finished run folder as pandas DataFrames
(``qbo.experiments.frames``; needs the ``data`` extra). It is imported on first use, so
``import qbo`` stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_run"]


def load_run(run_dir: Any) -> Any:
    """(stages, summary) DataFrames of a finished run: ``qbo.experiments.frames.load_run``."""
    from qbo.experiments.frames import load_run as load

    return load(run_dir)
