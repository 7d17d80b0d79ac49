"""The coherent over-rotation of Q that an estimate's counts cannot exclude (issue 24, item 2).

Real hardware can over-rotate every Grover step coherently: Q rotates by 2 theta + delta, so
power k reads the phase (2k + 1) theta + k delta (docs/mlae.md, "Coherent error"). The
simulators (``aer:``, ``fake:``) inject no such error; an ``ibm:`` target can
(``on_real_device``). Pauli twirling turns the coherent errors of two-qubit gates into the
decay the models fit, but it cannot touch an over-rotation of Q's single-qubit rotations, so on
hardware an interval must hold every delta the counts cannot exclude:

    widening = |d a / d delta| (|delta_hat| + z sd),

to first order (White 1982, Thm. 3.2: under the alternative the fit converges to the
pseudo-true theta, shifted by d theta* / d delta delta), with sd = I^-1/2 from the expected
efficient information I for delta (theta and the decay nuisances projected out,
``likelihood.rotation_information``) and |delta_hat| = sqrt(score) sd from Neyman's C(alpha)
score statistic (``likelihood.rotation_score``). MLAE takes the shift of its own fit
(``mlae_fit.ProfileFit.rotation_reach``). IAE's value is not a fit: its final interval is its
deepest rounds' (Grinko et al. 2021, Alg. 1: each K's interval is intersected with the last),
and power K reads theta + delta K / (2K + 1), so its shift is sin(2 theta) K / (2K + 1) per
radian (``held_by_iae``). Its counts are read with the decay model and calibration prior of
noise-aware MLAE (``qbo.qmc.mlae.calibration_prior``): IAE's pads bound the decay's bias, the
model resolves delta. docs/noise.md, "Coherent errors on hardware", has the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from qbo.execution.targets import parse_target
from qbo.qmc.likelihood import DecayPrior
from qbo.qmc.mlae_fit import ProfileFit
from qbo.qmc.result import Round

__all__ = ["HeldRotation", "held_by_iae", "on_real_device", "rotation_widening"]

GOF_LEVEL = 1e-3  # the score test's level (MLAE's default ``gof_level``)
LOCALISE = 1e-2  # the fit's localisation level (MLAE's default ``localise``)


def on_real_device(target: str) -> bool:
    """Whether ``target`` is real hardware (``Target.is_ibm``), which can over-rotate coherently;
    the ``aer:``/``fake:`` simulators inject no coherent error. A label that names no target
    (a test double's) is not hardware."""
    try:
        return parse_target(target).is_ibm
    except ValueError:
        return False


def rotation_widening(sd: float, score: float, shift: float, z: float) -> float:
    """How far (amplitude) an over-rotation delta of every Grover step that the counts cannot
    exclude moves the estimate, to first order: |da/d delta| (|delta_hat| + z sd), with
    |delta_hat| = sqrt(score) sd from the score statistic (Neyman's C(alpha), delta_hat ~
    U / I, score U^2 / I) and sd = I^-1/2 (White 1982: the fit converges to the pseudo-true
    theta shifted by da/d delta delta). Infinite when the counts do not resolve delta at all."""
    if shift == 0.0:
        return 0.0
    if not (math.isfinite(sd) and math.isfinite(shift)):
        return math.inf
    return abs(shift) * sd * (math.sqrt(max(score, 0.0)) + z)


@dataclass(frozen=True)
class HeldRotation:
    """What an estimate's counts say about an over-rotation delta (amplitude units)."""

    widening: float  # each side; inf: the counts do not resolve delta
    sd: float  # rad per Grover step
    score: float
    p_value: float
    shift: float  # d a / d delta at the estimate

    @property
    def flagged(self) -> bool:
        """The score test rejects delta = 0 at ``GOF_LEVEL``."""
        return self.p_value < GOF_LEVEL


def held_by_iae(rounds: Sequence[Round], prior: DecayPrior, amplitude: float, alpha: float, z: float) -> HeldRotation:
    """The over-rotation an IAE estimate at ``amplitude`` must hold (module docstring): its
    unfolded rounds fitted with the decay model under ``prior``; the shift is that of its
    deepest power. Without a Grover step (k = 0 only) nothing moves it."""
    plain = [r for r in rounds if r.scale == 1]
    deepest = max((r.k for r in rounds), default=0)
    theta = math.asin(math.sqrt(min(max(amplitude, 0.0), 1.0)))
    shift = math.sin(2 * theta) * deepest / (2 * deepest + 1)
    if deepest == 0 or shift == 0.0:
        return HeldRotation(0.0, math.inf, 0.0, 1.0, shift)
    fit = ProfileFit(prior, alpha, 1.0, LOCALISE, GOF_LEVEL)
    fit.rounds = plain
    fit.refit(whole=True)
    score, p_value = fit.rotation()
    sd = fit.rotation_reach()[0]
    return HeldRotation(rotation_widening(sd, score, shift, z), sd, score, p_value, shift)
