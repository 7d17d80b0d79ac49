"""Every UCB multiplier schedule of the library, as pure functions of the round.

``beta`` always denotes the **multiplier of sigma** in ``mu + beta sigma``.

* ``practical``: ``1 + ln t`` (Dai et al. 2023, App. J).
* ``theory``: ``B + sqrt(2 (gamma~_{s-1} + 1 + ln(2/delta)))`` (Dai et al. Sec. 4.2 / Thm 3).
* ``theorem1``: ``sqrt(beta_t / scale)`` with Srinivas et al.'s (ICML 2010) Thm 1
  ``beta_t = 2 ln(m t^2 pi^2 / (6 delta))`` (their Eq. (6) multiplies sigma by beta_t^{1/2}).
* ``bogunovic``: ``sqrt(max(0.8 ln(0.4 t), 0))``, the choice of Bogunovic et al.'s experiments
  that the time-varying seed (Imamura et al., seed 000, Sec. 5) reuses.

A policy's ``beta`` option is one of the schedule names it accepts, or a constant >= 0.
"""

from __future__ import annotations

import math
from typing import Any

from qbo.algorithms.base import check_float

__all__ = ["SCHEDULES", "bogunovic", "check_beta", "practical", "theorem1", "theory"]

SCHEDULES: tuple[str, ...] = ("practical", "theory", "theorem1", "bogunovic")


def practical(t: int) -> float:
    """``1 + ln t`` (Dai et al. App. J); t is 1-based."""
    return 1.0 + math.log(t)


def theory(information_gain: float, B: float, delta: float) -> float:
    """``B + sqrt(2 (gamma~ + 1 + ln(2/delta)))`` (Dai et al. Sec. 4.2, Thm 3)."""
    return B + math.sqrt(2.0 * (information_gain + 1.0 + math.log(2.0 / delta)))


def theorem1(t: int, num_arms: int, delta: float, scale: float = 1.0) -> float:
    """``sqrt(beta_t / scale)``, ``beta_t = 2 ln(m t^2 pi^2 / (6 delta))`` (Srinivas et al. Thm 1)."""
    beta_t = 2.0 * math.log(num_arms * t * t * math.pi**2 / (6.0 * delta))
    return math.sqrt(max(beta_t, 0.0) / scale)


def bogunovic(t: int) -> float:
    """``sqrt(max(0.8 ln(0.4 t), 0))`` (Bogunovic et al. 2016 experiments; seed 000 Sec. 5)."""
    return math.sqrt(max(0.8 * math.log(0.4 * t), 0.0))


def check_beta(beta: Any, schedules: tuple[str, ...]) -> str | float:
    """A schedule name from ``schedules`` or a constant multiplier >= 0, else a one-line ValueError."""
    if isinstance(beta, str):
        if beta not in schedules:
            raise ValueError(f"beta must be one of {schedules} or a float >= 0, got {beta!r}")
        return beta
    return check_float("beta", beta, low=0.0, low_open=False)
