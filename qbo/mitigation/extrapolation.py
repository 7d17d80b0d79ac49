"""Zero-noise extrapolation with Mitiq's factories and its exact linear coefficients.

Richardson (Temme, Bravyi, Gambetta 2017) and linear least squares extrapolate the noisy
values y_j at scales s_j to s = 0 by a fixed linear map: y_0 = sum_j c_j y_j. Because
``RichardsonFactory.extrapolate`` / ``LinearFactory.extrapolate`` are linear in y, c_j is
obtained exactly by extrapolating the unit vector e_j. sum_j c_j = 1 (constants are
reproduced), so an affine correction (readout) commutes with the extrapolation.

``ExpFactory`` (y = a + b exp(-c s), asymptote a = 1/2, the fully mixed value of a
single-qubit probability) is not linear; its interval is the range over the corners of
the per-scale confidence box (see ``qbo.mitigation.estimator``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FACTORIES = ("richardson", "linear", "exp")
MIXED = 0.5


def check_factory(name: str, scales: Sequence[int]) -> None:
    if name not in FACTORIES:
        raise ValueError(f"extrapolation must be one of {', '.join(FACTORIES)}, got '{name}'")
    if len(set(scales)) != len(scales) or len(scales) < 2:
        raise ValueError(f"zero-noise extrapolation needs >= 2 distinct scales, got {tuple(scales)}")


def coefficients(name: str, scales: Sequence[int]) -> np.ndarray:
    """c with extrapolate(scales, y) = c . y, for the linear factories ('richardson', 'linear')."""
    from mitiq.zne.inference import LinearFactory, RichardsonFactory

    factory = {"richardson": RichardsonFactory, "linear": LinearFactory}.get(name)
    if factory is None:
        raise ValueError(f"extrapolation '{name}' is not linear in the data; use 'richardson' or 'linear'")
    eye = np.eye(len(scales))
    return np.array([float(factory.extrapolate(list(scales), list(row))) for row in eye])


def extrapolate(name: str, scales: Sequence[int], values: Sequence[float]) -> float:
    """Mitiq's zero-noise value for ``values`` observed at ``scales``."""
    from mitiq.zne.inference import ExpFactory

    if name == "exp":
        # keep y - 1/2 away from 0 on one side so that the log-linear fit is defined
        return float(ExpFactory.extrapolate(list(scales), list(values), asymptote=MIXED, avoid_log=False))
    return float(np.dot(coefficients(name, scales), values))
