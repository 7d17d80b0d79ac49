"""Reward oracles for a vector of arm means, and the argument checks problems share.

Bernoulli rewards use ``bernoulli(f)``. Gaussian rewards use ``gaussian(f, std, qubits)``
on one window for every arm (``default_window(std)``), so the mean lives in the amplitude
(Dai et al. 2023, Sec. 3.2, Eq. (2)).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from qbo.oracles import Oracle, bernoulli, default_window, gaussian

NOISES = ("bernoulli", "gaussian")


def reward_oracles(
    means: Sequence[float], noise: str, std: float = 0.4, qubits: int = 6
) -> tuple[list[Oracle], dict[str, Any]]:
    """One oracle per mean, and the options that shaped them (std and qubits if Gaussian)."""
    noise = check_noise(noise)
    if noise == "bernoulli":
        return [bernoulli(float(v)) for v in means], {}
    std = check_positive("std", std)
    qubits = check_int("qubits", qubits, 1)
    window = default_window(std)
    return [gaussian(float(v), std, qubits, window=window) for v in means], {"std": std, "qubits": qubits}


def check_noise(noise: object) -> str:
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {', '.join(NOISES)}, got {noise!r}")
    return str(noise)


def check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive(name: str, value: object) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v
