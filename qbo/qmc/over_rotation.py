"""The coherent over-rotation of Q that an estimate's counts cannot exclude (issue 24, item 2).

Real hardware can over-rotate every Grover step coherently: Q rotates by 2 theta + delta, so
power k reads the phase (2k + 1) theta + k delta (docs/mlae.md, "Coherent error"). The
simulators (``aer:``, ``fake:``) inject no such error; an ``ibm:`` target can
(``on_real_device``). Pauli twirling turns the coherent errors of two-qubit gates into the
decay the models fit, but it cannot touch an over-rotation of Q's single-qubit rotations, so on
hardware an interval must hold every delta the counts cannot exclude. To first order (White
1982, Thm. 3.2: under the alternative the fit converges to the pseudo-true theta, shifted by
d theta* / d delta delta) theta's interval moves out on each side by

    |d theta / d delta| (|delta_hat| + z sd),

mapped through sin^2 (``held_interval``), with sd = I^-1/2 from the expected efficient
information I for delta (theta and the decay nuisances projected out,
``likelihood.rotation_information``) and |delta_hat| = sqrt(score) sd from Neyman's C(alpha)
score statistic (``likelihood.rotation_score``, ungated: the goodness of fit only tests once sd
<= 0.1 rad, a bound on delta uses the score at any sd). MLAE's lever is its own fit's
(``mlae_fit.ProfileFit.rotation_lever``). IAE's value is not a fit: each round's theta interval
moves by delta k / (2k + 1), at most K / (2K + 1) for its deepest power K, so that is its
lever (Grinko et al. 2021, Alg. 1 intersects the rounds' intervals). Its counts are read with
the decay model and calibration prior of noise-aware MLAE (``qbo.qmc.mlae.calibration_prior``):
IAE's pads bound the decay's bias, the model resolves delta. Where the counts do not resolve
delta at all (a fit at theta = 0 or pi/2, where the information vanishes) the interval is the
k = 0 rounds' own (``mlae_fit.shallow_interval``), which no over-rotation moves. The delta bound
and the estimator's own interval each hold at level 1 - alpha, so the held interval's level is
1 - 2 alpha by the union bound (docs/noise.md, "Coherent errors on hardware", which has the
numbers).

Prediction (``expected_held_part``, for ``qbo.qmc.auto``): the same widening with the expected
information of a method's design at delta = 0 (|delta_hat| at its mean sd sqrt(2 / pi)).
A held interval wider than 1/2 after few calls is not given up on cheaply: ``qbo.qmc.give_up``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from qbo.execution.targets import parse_target
from qbo.qmc.likelihood import DecayPrior, Pooled, rotation_information
from qbo.qmc.mlae_fit import ProfileFit
from qbo.qmc.result import Round

__all__ = ["HeldRotation", "expected_held_part", "held_by_iae", "held_interval", "held_thetas", "mean_held_part",
           "on_real_device"]

GOF_LEVEL = 1e-3  # the score test's level (MLAE's default ``gof_level``)
LOCALISE = 1e-2  # the fit's localisation level (MLAE's default ``localise``)
HELD_AMPLITUDES = 8  # a prediction of the held part averages over amplitudes (j + 1/2) / 8
NULL_SCORE = 2 / math.pi  # sqrt of it is E|Z|, Z ~ N(0, 1): the mean |delta_hat| / sd at delta = 0


def on_real_device(target: str) -> bool:
    """Whether ``target`` is real hardware (``Target.is_ibm``), which can over-rotate coherently;
    the ``aer:``/``fake:`` simulators inject no coherent error. A label that names no target
    (a test double's) is not hardware."""
    try:
        return parse_target(target).is_ibm
    except ValueError:
        return False


def held_interval(a_low: float, a_high: float, lever: float, sd: float, score: float,
                  z: float) -> tuple[float, float, float] | None:
    """``(a_low, a_high)`` widened to hold every over-rotation the counts cannot exclude, and the
    delta held (rad): theta's interval moves out by |lever| (|delta_hat| + z sd) on each side
    (``lever`` = d theta / d delta) and is mapped through sin^2, so the widening stays right
    near a = 0 or 1, where d a / d theta vanishes. None when something moves (``lever`` != 0)
    but the counts do not resolve delta (sd infinite, e.g. a fit at theta = 0): then only
    counts no over-rotation can move (k = 0) bound the amplitude."""
    if lever == 0.0:
        return a_low, a_high, 0.0
    if not (math.isfinite(sd) and math.isfinite(lever)):
        return None
    held = sd * (math.sqrt(max(score, 0.0)) + z)
    step = abs(lever) * held
    t_low = max(0.0, math.asin(math.sqrt(min(max(a_low, 0.0), 1.0))) - step)
    t_high = min(math.pi / 2, math.asin(math.sqrt(min(max(a_high, 0.0), 1.0))) + step)
    return math.sin(t_low) ** 2, math.sin(t_high) ** 2, held


@dataclass(frozen=True)
class HeldRotation:
    """What an estimate's counts say about an over-rotation delta."""

    sd: float  # rad per Grover step
    score: float  # ungated (``ProfileFit.rotation_statistic``)
    p_value: float  # of the gated test (``ProfileFit.rotation``)
    lever: float  # d theta / d delta of the estimate
    shift: float  # d a / d delta at the estimate (amplitude units)

    @property
    def flagged(self) -> bool:
        """The score test rejects delta = 0 at ``GOF_LEVEL``."""
        return self.p_value < GOF_LEVEL


def held_by_iae(rounds: Sequence[Round], prior: DecayPrior, amplitude: float, alpha: float) -> HeldRotation:
    """What an IAE estimate at ``amplitude`` knows of an over-rotation (module docstring): its
    unfolded rounds fitted with the decay model under ``prior``; its lever is that of its
    deepest power, K / (2K + 1). Without a Grover step (k = 0 only) nothing moves it."""
    plain = [r for r in rounds if r.scale == 1]
    deepest = max((r.k for r in rounds), default=0)
    theta = math.asin(math.sqrt(min(max(amplitude, 0.0), 1.0)))
    lever = deepest / (2 * deepest + 1)
    if deepest == 0:
        return HeldRotation(math.inf, 0.0, 1.0, 0.0, 0.0)
    fit = ProfileFit(prior, alpha, 1.0, LOCALISE, GOF_LEVEL)
    fit.rounds = plain
    fit.refit(whole=True)
    p_value = fit.rotation()[1]
    return HeldRotation(fit.rotation_reach()[0], fit.rotation_statistic(), p_value, lever,
                        math.sin(2 * theta) * lever)


def expected_held_part(theta: float, half: float, rounds: Sequence[Round], prior: DecayPrior, calls: float,
                       z: float, lever: float | None = None) -> float:
    """What ``held_interval`` is predicted to add to the half-width ``half`` of an interval
    around a = sin^2 theta when the design ``rounds`` (a dry run: its powers and shot shares)
    is scaled to ``calls`` honest calls: the expected efficient information for delta
    (``rotation_information`` at theta and the prior's A0, r) grows in proportion to the
    calls; |delta_hat| at its mean under delta = 0 (``NULL_SCORE``). ``lever``: d theta /
    d delta of the estimate (IAE's K / (2K + 1)); None: the fit's own (MLAE's). 1/2 where the
    design does not resolve delta at all (the interval would then be the k = 0 rounds')."""
    plain = [r for r in rounds if r.scale == 1]
    # ``calls`` counts folded rounds too, so the information per call divides by all the calls
    # spent: folded calls buy no information on delta here (the fit reads plain rounds only)
    spent = sum(r.oracle_calls for r in rounds)
    if not plain or spent <= 0:
        return 0.0
    data = Pooled.of(plain)
    info, dtheta = rotation_information(theta, math.log(prior.a0), math.log(prior.r), data.ks, data.shots, prior)
    lever = dtheta if lever is None else lever
    a = math.sin(theta) ** 2
    low, high = max(0.0, a - half), min(1.0, a + half)
    sd = (info * calls / spent) ** -0.5 if info > 0 else math.inf
    held = held_interval(low, high, lever, sd, NULL_SCORE, z)
    if held is None:
        return 0.5
    return max(0.0, 0.5 * ((held[1] - held[0]) - (high - low)))


def held_thetas(count: int = HELD_AMPLITUDES) -> tuple[float, ...]:
    """theta of the amplitudes (j + 1/2) / ``count``, j < ``count``: where a prediction of the
    held part is averaged (the cost models average over (j + 1/2) / 16 the same way)."""
    return tuple(math.asin(math.sqrt((j + 0.5) / count)) for j in range(count))


def mean_held_part(design: Callable[[float], tuple[Sequence[Round], float | None]], half: float,
                   prior: DecayPrior, calls: float, z: float) -> float:
    """``expected_held_part`` averaged over ``held_thetas``: ``design(theta)`` gives a method's
    dry-run rounds at sin^2 theta and its lever (None: the fit's own)."""
    parts = []
    for theta in held_thetas():
        rounds, lever = design(theta)
        parts.append(expected_held_part(theta, half, rounds, prior, calls, z, lever))
    return sum(parts) / len(parts)
