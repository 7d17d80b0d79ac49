"""IAE (and Monte Carlo) on a known device model: depth capped, every interval padded by the
noise bias the model cannot rule out, and reachability answered with numbers (issue 9, items 2, 6).

Residual bias (``residual_bias``). qbo's depth model (``qbo.noise.depth``) predicts the
contrast c_s of every (folded) Grover power at fold scale s. Read as "with weight 1 - c_s the
circuit suffers *some* error", the readout-free P(1) at scale s is c_s P_ideal + (1 - c_s) Q_s
for an unknown Q_s in [0, 1], so |P_s - P_ideal| <= (1 - c_s) max(P, 1 - P) <= 1 - c_s. This
is twice the depolarising model's (1 - c_s) / 2 (which assumes Q_s = 1/2): T1 decay pulls
towards 0, and the exact channels of ``bench/noise.py`` exceed the depolarising bound by up to
11% on the Bernoulli oracle, while they stay below the general one (at most 0.82 of it on the
four shipped snapshots, both oracles, 20 amplitudes, k <= 12: ``python bench/noise.py
--pad-check --amplitudes 20``, ``bench/results/noise_padcheck.txt``).
A linear extrapolation sum_j c_j P_{s_j} (zero-noise extrapolation, sum_j c_j = 1) is not
assumed to remove the bias: nothing ties Q_s across scales (folding does not scale T1 decay
linearly; the exact Richardson (1, 3) residual is up to 108 times the depolarising model's
|1 - c_eff| / 2 on the Bernoulli oracle), so its bias is bounded by the triangle inequality,
sum_j |c_j| (1 - c_{s_j}).
Without readout-error mitigation the observed value p01 + g P adds at most max(p01, p10).
The pad is as good as the depth model's contrast; it is checked, not assumed.

Rounds. Plain rounds (``BiasPad``) and mitigated ones (a ``qbo.mitigation.Mitigation`` given
fixed per-power ``pads``) widen each round's interval for P_ideal by their power's pad; IAE's
union bound is unchanged, so the final interval covers the ideal amplitude whenever the pads
hold, and ``reached_epsilon`` is IAE's own verdict on the padded interval.

Depth cap. A pad p on round k moves the amplitude by at most ``amplitude_bias(k, p)``
(``qbo.noise.depth``, the sup over theta). Only the powers up to the depth eps needs, and up to
the user's ``iae.k_max`` where given, are candidates. k_max is the largest candidate with
that bound <= ``fraction`` eps; if none qualifies, the power with the smallest bound among the
*usable* ones (pad <= 1/4: the padded round still excludes half of [0, 1]) is the cap, and
IAE then aims at the eps that bound leaves room for (``aim_half_width``: bound / ``fraction``,
at most 1/4 while sampling room is left, never 1/2 while the bound is below 1/2, so it always
spends calls) instead of chasing the requested one with ever larger rounds; ``reached_epsilon``
is still judged on the requested eps. A mitigation whose best bound is worse than plain rounds'
(zne's triangle bound on a deep oracle) is set aside for plain rounds, and the note says so.

Reachability (``Estimate.diagnostics``, reward units, the keys MLAE uses):
``reachable_half_width`` (the half-width reached), ``epsilon_floor`` (the smallest half-width
the pads allow at any usable power, sup over the reported interval: no budget gets below it),
``calls_for_epsilon`` (the calls spent when eps was reached; None when eps is below the floor;
else the calls spent plus a closed-form estimate at the best power: theta half-width
z / (K sqrt(N)) per plain shot, scaled by the mitigation's variance and cost per shot).
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any


from qbo import caches
from qbo.execution.base import Executor
from qbo.noise import Snapshot
from qbo.noise.depth import amplitude_bias, needed_k, predicted_pads
from qbo.oracles.base import Oracle
from qbo.qmc.base import budget_note, run_round, to_estimate, unit_epsilon
from qbo.qmc.confidence import clopper_pearson
from qbo.qmc.iae import IterativeAmplitudeEstimation, expected_rounds
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.mlae import OFFSET_SD, calibration_prior
from qbo.qmc.montecarlo import MonteCarloEstimator, hoeffding_shots, sample_k0
from qbo.qmc.mlae_fit import shallow_interval
from qbo.qmc.give_up import k0_top_up
from qbo.qmc.over_rotation import HeldRotation, held_by_iae, held_interval, mean_held_part, on_real_device
from qbo.qmc.result import Estimate, Round
from qbo.qmc.rounds import PaddableEstimator, RoundResult

USABLE_PAD = 0.25
MIN_SAMPLING = 1 / 64  # smallest sampling half-width an out-of-reach IAE aims at for a width <= 1/2
PROBE_SHOTS = 100  # the k = 0 round an estimate with a proven floor of 1/2 still runs (never 0 calls)


@caches.lru(maxsize=1 << 14)
def amplitude_bias_on(k: int, bias: float, theta_low: float = 0.0, theta_high: float = math.pi / 2,
                      grid: int = 4001) -> float:
    """``qbo.noise.depth.amplitude_bias`` restricted to theta in [theta_low, theta_high] (cached)."""
    return amplitude_bias(k, bias, grid, theta_low, theta_high)


@dataclass(frozen=True)
class BiasPad:
    """Plain rounds whose Clopper-Pearson interval for the noisy p_k is widened on both sides by
    ``p_bias[k]`` (``residual_bias`` without mitigation). A ``qbo.qmc.rounds.ProbabilityEstimator``."""

    p_bias: tuple[float, ...]
    label: str = ""

    @property
    def name(self) -> str:
        return "pad"

    @property
    def scales(self) -> tuple[int, ...]:
        return (1,)

    @property
    def covers_device_bias(self) -> bool:
        return True

    def bind(self, executor: Executor, oracle: Oracle) -> "_BoundPad":
        return _BoundPad(self, executor, oracle)

    def cost_model(self) -> tuple[Hashable, "_BoundPad"]:
        return self, _BoundPad(self, None, None)


class _BoundPad:
    scales = (1,)

    def __init__(self, config: BiasPad, executor: Executor | None, oracle: Oracle | None) -> None:
        self.config, self.executor, self.oracle = config, executor, oracle

    def _pad(self, k: int) -> float:
        pads = self.config.p_bias
        return pads[min(k, len(pads) - 1)]

    def _interval(self, k: int, ones: int, shots: int, alpha: float) -> tuple[float, float]:
        low, high = clopper_pearson(ones, shots, alpha)
        pad = self._pad(k)
        return max(0.0, low - pad), min(1.0, high + pad)

    def shots_per_scale(self, shots: int) -> list[int]:
        return [shots]

    def plug_in(self, k: int, p: float, shots: int, alpha: float) -> tuple[float, float]:
        return self._interval(k, round(shots * p), shots, alpha)

    def sample(self, k: int, shots: int) -> tuple[Round, ...]:
        return (run_round(self.executor, self.oracle, k, shots),)  # type: ignore[arg-type]

    def estimate(self, k: int, shots: int, alpha: float) -> RoundResult:
        (rnd,) = self.sample(k, shots)
        low, high = self._interval(k, rnd.ones, rnd.shots, alpha)
        return RoundResult(low, high, rnd.ones / rnd.shots, (rnd,))


@dataclass(frozen=True)
class DevicePlan:
    """What a device model allows for one oracle at one eps (unit scale)."""

    iae: IterativeAmplitudeEstimation
    k_max: int | None  # deepest candidate power with amplitude bias <= fraction eps; None: none
    cap: int  # the power IAE is capped at
    pads: tuple[float, ...] = field(repr=False)  # pad of every candidate: 0..needed_k(eps), at most iae.k_max
    variance: float = 1.0  # a round's variance per shot relative to a plain round
    cost: float = 1.0  # a round's oracle calls per shot relative to a plain round
    unmitigated: bool = False  # the mitigation's pads were worse at every power: plain rounds ran
    hopeless: bool = False  # the bias bound is >= 1/2 at every usable power: the floor is the whole range


@dataclass(frozen=True)
class CalibrationAwareIAE:
    """IAE on a device model: Grover depth capped and every round padded by its power's residual
    noise bias (module docstring), with or without a mitigation of the IAE (``iae.mitigation``,
    a ``qbo.mitigation.Mitigation`` with a linear extrapolation; the IAE's own pads are replaced)."""

    iae: IterativeAmplitudeEstimation
    snapshot: Snapshot
    fraction: float = 0.5

    @property
    def epsilon(self) -> float:
        return self.iae.epsilon

    @property
    def alpha(self) -> float:
        return self.iae.alpha

    def plan(self, oracle: Oracle) -> tuple[IterativeAmplitudeEstimation, int | None]:
        """The capped, padded IAE for ``oracle`` and the device's k_max (None: eps out of reach)."""
        device = self.device_plan(oracle)
        return device.iae, device.k_max

    def device_plan(self, oracle: Oracle) -> DevicePlan:
        return _device_plan(self, oracle)

    def planned_calls(self, oracle: Oracle) -> float:
        """Cost model of the capped, padded IAE for ``oracle`` (its pads included); with a
        proven floor of 1/2, the one k = 0 probe round (``PROBE_SHOTS`` at its cost per shot)."""
        device = self.device_plan(oracle)
        if device.hopeless:
            return float(PROBE_SHOTS * device.cost)
        return device.iae.expected_calls(unit_epsilon(oracle, device.iae.epsilon))

    def predicted_half_width(self, oracle: Oracle, calls: float) -> float:
        """The padded half-width (unit scale) the depth model predicts ``calls`` reach: the best
        usable power's bias bound plus a sampling half-width z sqrt(v (2k + 1) / N) / (4k + 2)
        (plain shots' theta width, scaled by the mitigation's variance and cost per shot),
        at most 1/2. ``qbo.qmc.auto`` compares methods by it."""
        device = self.device_plan(oracle)
        z = NormalDist().inv_cdf(1 - self.iae.alpha / 2)
        usable = [k for k, p in enumerate(device.pads[: device.cap + 1]) if p <= USABLE_PAD] or [0]
        best = 0.5
        for k in usable:
            shots = max(calls, 1.0) / ((2 * k + 1) * device.cost)
            best = min(best, amplitude_bias_on(k, device.pads[k]) + z * math.sqrt(device.variance / shots) / (4 * k + 2))
        return best

    def predicted_hold(self, oracle: Oracle, calls: float, half: float) -> float:
        """What holding the over-rotation of Q on a real device is predicted to add to the
        half-width ``half`` after ``calls`` (unit scale): ``expected_held_part`` of the capped,
        padded design (its dry run, ``iae.expected_rounds``) with IAE's lever K / (2K + 1)
        and the calibration prior its counts are read with (``_hold_over_rotation``), averaged
        over the amplitudes ``HELD_AMPLITUDES``. 0 with a proven floor (k = 0 only: nothing moves)."""
        device = self.device_plan(oracle)
        if device.hopeless:
            return 0.0
        prior = calibration_prior(self.snapshot, oracle)
        z = NormalDist().inv_cdf(1 - self.iae.alpha / 2)
        eps = unit_epsilon(oracle, device.iae.epsilon)

        def design(theta: float) -> tuple[tuple[Round, ...], float]:
            rounds = expected_rounds(replace(device.iae, max_calls=None), eps, theta)  # the design's shape
            deepest = max((r.k for r in rounds), default=0)
            return rounds, deepest / (2 * deepest + 1)

        return mean_held_part(design, half, prior, calls, z)

    def expected_calls(self, epsilon_unit: float) -> float:
        """The uncapped IAE's model (no oracle, so no device cap): use ``planned_calls``."""
        return self.iae.expected_calls(epsilon_unit)

    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        device = self.device_plan(oracle)
        est = _probe(device, oracle, executor) if device.hopeless else device.iae.estimate(oracle, executor)
        eps_unit = unit_epsilon(oracle, self.iae.epsilon)
        if device.iae.epsilon != self.iae.epsilon:  # ran to a reachable eps: the verdict is on the asked one
            reached = est.half_width <= self.iae.epsilon * (1 + 1e-9)
            est = replace(est, epsilon=self.iae.epsilon, reached_epsilon=reached)
        held = None
        if on_real_device(est.target) and not device.hopeless:  # hardware can over-rotate Q coherently
            est, held, widen = _hold_over_rotation(self, est, oracle, executor)
            # the fresh k = 0 interval stands alone: the decayed part's P(1) over MLAE's prior range too
            k0_prior = replace(calibration_prior(self.snapshot, oracle, executor), offset_sd=OFFSET_SD)
            est, topped = k0_top_up(est, oracle, executor, k0_prior, self.iae.max_calls)
        else:
            topped = ""
        diagnostics = reachability(est, oracle, device.pads, eps_unit, device.variance, device.cost)
        diagnostics.update(k_max=device.k_max, k_cap=device.cap, pad_model="general (1 - contrast), triangle over scales")
        if held is not None and not topped and not est.reached_epsilon and diagnostics["calls_for_epsilon"] is not None:
            diagnostics["calls_for_epsilon"] = _calls_past_rotation(diagnostics["calls_for_epsilon"], est, held, widen, eps_unit)
        name = self.snapshot.name
        if device.hopeless:
            depth = (f"the predicted noise bias is at least half the range at every usable Grover power: "
                     f"one k = 0 round of {PROBE_SHOTS} shots ran")
        elif device.k_max is None:
            depth = f"the predicted noise bias exceeds {self.fraction} eps at every Grover power; capped at k={device.cap}"
        elif self.iae.k_max is not None and self.iae.k_max < needed_k(eps_unit):
            depth = (f"Grover powers capped at k_max={device.cap} by the user's k_max={self.iae.k_max} "
                     f"and {name}'s calibration within it")
        elif device.cap < needed_k(eps_unit):
            depth = f"Grover powers capped at k_max={device.cap} by {name}'s calibration"
        else:
            depth = f"{name}'s calibration allows every power IAE needs (k <= {device.cap})"
        note = f"{depth}; every round's interval covers the predicted noise bias"
        if device.unmitigated:
            note = (f"{cfg_name(self)}'s bias allowance exceeds the unmitigated one at every usable power on "
                    f"{name}: plain rounds ran; {note}")
            diagnostics.update(mitigation_skipped=True)
        if not est.reached_epsilon:
            blocked = held is not None and (not math.isfinite(widen) or held.flagged)  # the pads' floor is not what limits it
            reach = "an over-rotation of Q limits it (below)" if blocked else _reach_note(diagnostics)
            note = f"eps={self.iae.epsilon} not reached on {name}: {note}; {reach}"
        if held is not None:
            scale = oracle.high - oracle.low
            finite = lambda x: x if math.isfinite(x) else None  # noqa: E731  (JSON has no inf)
            diagnostics.update(rotation_score=held.score, rotation_p_value=held.p_value, rotation_sd=finite(held.sd),
                               rotation_shift=held.shift * scale, rotation_widening=finite(widen * scale))
            note = f"{note}; {_rotation_note(held, widen, scale)}"
        if topped:  # the held interval was wide after few calls: a fresh k = 0 round's interval, which
            # no over-rotation moves (the facts above describe the counts; the widening was the discarded interval's)
            diagnostics.update({k: est.diagnostics[k] for k in ("k0_top_up_shots", "width_before_top_up")},
                               rotation_widening=0.0)
            note = f"{note}; {topped}"
        if est.diagnostics.get("budget_bound") and self.iae.max_calls is not None:
            diagnostics["budget_bound"] = True
            note = f"{note}; {budget_note(self.iae.max_calls)}"
        return replace(est, note=note, diagnostics=diagnostics)


def _hold_over_rotation(cfg: CalibrationAwareIAE, est: Estimate, oracle: Oracle,
                        executor: Executor) -> tuple[Estimate, HeldRotation, float]:
    """``est`` widened to hold the over-rotation of Q its counts cannot exclude
    (``qbo.qmc.over_rotation``, read with the device's calibration prior), the facts, and the
    widening (amplitude, the larger side; inf where only the k = 0 rounds bound it);
    ``reached_epsilon`` False when the score test flags one, as MLAE's when its model does not fit."""
    z = NormalDist().inv_cdf(1 - est.alpha / 2)
    prior = calibration_prior(cfg.snapshot, oracle, executor)
    a_low, a_high = (float(oracle.to_unit(x)) for x in (est.ci_low, est.ci_high))
    held = held_by_iae(est.rounds, prior, float(oracle.to_unit(est.value)), est.alpha)
    bounds = held_interval(a_low, a_high, held.lever, held.sd, held.score, z)
    if bounds is None:  # the counts do not resolve delta at the fit: the k = 0 rounds alone bound a
        low, high = shallow_interval([r for r in est.rounds if r.scale == 1], prior, est.alpha)
        widen = math.inf
    else:
        low, high, _ = bounds
        widen = max(0.0, a_low - low, high - a_high)
    if widen == 0.0 and not held.flagged:
        return est, held, 0.0
    lo, hi = (float(oracle.to_reward(x)) for x in (low, high))
    value = min(max(est.value, lo), hi)
    reached = 0.5 * (hi - lo) <= cfg.iae.epsilon * (1 + 1e-9) and not held.flagged
    return replace(est, value=value, ci_low=lo, ci_high=hi, reached_epsilon=reached), held, widen


def _calls_past_rotation(calls: float, est: Estimate, held: HeldRotation, widen: float, eps_unit: float) -> float | None:
    """The honest calls to reach eps with the over-rotation held: the widening's sd shrinks as
    calls^-1/2 (expected information grows with the shots), so half of eps is left to it after
    about calls_spent (widening / (eps / 2))^2; the larger of that and the pads' ``calls``.
    None when the counts do not resolve an over-rotation at all, or one is flagged."""
    if not math.isfinite(widen) or held.flagged:
        return None
    return max(calls, est.oracle_calls * (widen / (0.5 * eps_unit)) ** 2)


def _rotation_note(held: HeldRotation, widen: float, scale: float) -> str:
    tail = ("Pauli twirling (--twirl) turns coherent two-qubit errors into the decay the pads bound, but not an "
            "over-rotation of Q's single-qubit rotations, and MLAE's check rounds (--method mlae --check-shots) "
            "resolve one better")
    if not math.isfinite(widen):
        return ("on a real device an over-rotation of Q could move the estimate, and the counts do not resolve one at "
                f"it (it sits at the end of the range): the interval is the k=0 rounds' own, which none moves; {tail}")
    flagged = (f"the counts reject none at p={held.p_value:.2g}" if not held.flagged else
               f"the counts show one (score {held.score:.1f}, p={held.p_value:.2g})")
    return (f"on a real device the interval holds every coherent over-rotation of Q the counts cannot exclude "
            f"({flagged}; they resolve one to sd {held.sd:.2g} rad per Grover step), which widens it by up to "
            f"{widen * scale:.3g} a side; {tail}")


@caches.lru(maxsize=256)
def _device_plan(cfg: CalibrationAwareIAE, oracle: Oracle) -> DevicePlan:
    eps_unit = unit_epsilon(oracle, cfg.iae.epsilon)
    top = needed_k(eps_unit) if cfg.iae.k_max is None else min(needed_k(eps_unit), cfg.iae.k_max)
    ks = range(top + 1)  # the powers IAE may run: a user's k_max bounds every choice below
    mitigation = cfg.iae.mitigation
    variance, cost = 1.0, 1.0
    if mitigation is None:
        pads = predicted_pads(cfg.snapshot, oracle, ks)
    else:
        if not isinstance(mitigation, PaddableEstimator):
            raise ValueError(f"calibration-aware IAE cannot pad mitigation '{mitigation.name}'")
        pads = mitigation.predicted_pads(cfg.snapshot, oracle, ks)
        variance, cost = mitigation.shot_factors()
    bounds = [amplitude_bias_on(k, pads[k]) for k in ks]
    ok = [k for k in ks if bounds[k] <= cfg.fraction * eps_unit]
    k_max = max(ok) if ok else None
    unmitigated = False
    if k_max is None and mitigation is not None:
        plain = predicted_pads(cfg.snapshot, oracle, ks)
        plain_bounds = [amplitude_bias_on(k, plain[k]) for k in ks]
        if _best_bound(plain, plain_bounds) < _best_bound(pads, bounds):
            # the extrapolation's triangle bound is wider than no mitigation's at every usable
            # power: the best supportable interval comes from plain rounds (the note says so)
            mitigation, pads, bounds, variance, cost, unmitigated = None, plain, plain_bounds, 1.0, 1.0, True
            ok = [k for k in ks if bounds[k] <= cfg.fraction * eps_unit]
            k_max = max(ok) if ok else None
    run_eps = cfg.iae.epsilon
    if k_max is None:
        cap = _floor_power(pads, bounds)
        run_eps = max(run_eps, aim_half_width(bounds[cap], cfg.fraction) * (oracle.high - oracle.low))
    else:
        cap = k_max
    kept = pads[: cap + 1]
    estimator = BiasPad(kept, f"{cfg.snapshot.name}/{oracle.key}") if mitigation is None else mitigation.with_pads(kept)
    iae = replace(cfg.iae, epsilon=run_eps, k_max=cap, mitigation=estimator)
    hopeless = k_max is None and bounds[cap] >= 0.5  # cap: the best usable power IAE may run
    return DevicePlan(iae, k_max, cap, pads, variance, cost, unmitigated, hopeless)


def _probe(device: DevicePlan, oracle: Oracle, executor: Executor) -> Estimate:
    """One padded k = 0 round of ``PROBE_SHOTS`` (issue 24 item 3: never 0 calls): the bias
    bound is >= 1/2 at every usable power, so its interval is the whole range; its value is the
    round's own (the noisy, mitigated where a mitigation runs, probability)."""
    start = time.perf_counter()
    iae, padded = device.iae, device.iae.mitigation
    if padded is None:  # _device_plan always sets the padded estimator
        raise RuntimeError("a device plan without its padded estimator")
    result = padded.bind(executor, oracle).estimate(0, PROBE_SHOTS, iae.alpha)
    return to_estimate(
        oracle, result.p_low, result.p_high, min(max(result.value, 0.0), 1.0), epsilon=iae.epsilon, alpha=iae.alpha,
        rounds=tuple(result.rounds), wall_time=time.perf_counter() - start, method=f"iae+{padded.name}",
        target=executor.target, reached_epsilon=False,
    )


def _floor_power(pads: Sequence[float], bounds: Sequence[float]) -> int:
    """The usable power (pad <= 1/4, else k = 0) with the smallest amplitude-bias bound."""
    usable = [k for k in range(len(pads)) if pads[k] <= USABLE_PAD] or [0]
    return min(usable, key=lambda k: (bounds[k], k))


def _best_bound(pads: Sequence[float], bounds: Sequence[float]) -> float:
    return bounds[_floor_power(pads, bounds)]


def aim_half_width(bound: float, fraction: float) -> float:
    """The padded half-width a capped IAE aims at when eps is out of reach (unit scale, issue 24
    item 3): ``bound / fraction`` (sampling half-width bound (1 - fraction) / fraction, as k_max
    leaves) while that is at most 1/4; past it, 1/4 (an interval at most 1/2 wide) while the
    sampling share left, 1/4 - bound, is at least ``MIN_SAMPLING`` (a k = 0 round of at most about
    4,000 shots at alpha 0.05); past that, midway between the bound and 1/2, so that IAE still has
    sampling to do and never stops after 0 calls while the bound is below 1/2 (chasing eps
    itself would spend up to MAX_SHOTS a round for nothing)."""
    if bound >= 0.5:
        return 0.5
    aim = bound / fraction
    if aim <= 0.25:
        return aim
    return 0.25 if bound <= 0.25 - MIN_SAMPLING else bound + 0.5 * (0.5 - bound)


def reachability(
    est: Estimate, oracle: Oracle, pads: Sequence[float], eps_unit: float, variance: float = 1.0, cost: float = 1.0,
) -> dict[str, Any]:
    """Item 2's numbers for a padded estimate (module docstring), reward units."""
    scale = oracle.high - oracle.low
    a_low = min(max((est.ci_low - oracle.low) / scale, 0.0), 1.0)
    a_high = min(max((est.ci_high - oracle.low) / scale, 0.0), 1.0)
    t_low, t_high = math.asin(math.sqrt(a_low)), math.asin(math.sqrt(a_high))
    usable = [k for k, p in enumerate(pads) if p <= USABLE_PAD] or [0]
    floors = {k: amplitude_bias_on(k, pads[k], t_low, t_high, 801) for k in usable}
    best = min(floors, key=lambda k: (floors[k], k))
    floor = floors[best]
    calls: float | None
    if est.reached_epsilon:
        calls = float(est.oracle_calls)
    elif floor >= eps_unit:
        calls = None
    else:
        z = NormalDist().inv_cdf(1 - est.alpha / 2)
        shots = variance * (z / ((4 * best + 2) * (eps_unit - floor))) ** 2
        calls = float(est.oracle_calls + math.ceil(shots) * (2 * best + 1) * cost)
    floor = min(floor, 0.5) * scale  # a bias bound past the range says only: anywhere in it
    return {
        "reachable_half_width": est.half_width,
        "epsilon_floor": floor,
        "calls_for_epsilon": calls,
        "floor_power": best,
        # the bias floor alone is as wide as the interval, or rules out any interval 1/2 wide or
        # narrower: no budget gives a useful one (issue 24 item 3)
        "floor_proven": floor >= min(est.half_width, 0.25 * scale) * (1 - 1e-9),
    }


def cfg_name(cfg: CalibrationAwareIAE) -> str:
    """The mitigation's name (``none`` without one)."""
    mitigation = cfg.iae.mitigation
    return "none" if mitigation is None else mitigation.name


def _reach_note(diagnostics: dict[str, Any]) -> str:
    floor = diagnostics["epsilon_floor"]
    calls = diagnostics["calls_for_epsilon"]
    if calls is None:
        proven = "; no budget gives an interval narrower than its floor" if diagnostics.get("floor_proven") else ""
        return f"not reachable at any budget: the noise-bias floor is {floor:.3g} (half-width){proven}"
    return f"about {calls:.3g} honest calls would reach it (floor {floor:.3g})"


@dataclass(frozen=True)
class CalibrationAwareMC:
    """Monte Carlo (k = 0 shots) on a device model: the Hoeffding interval widened by the
    k = 0 pad (``residual_bias``; at k = 0 the amplitude is p itself). Its shots aim at
    sampling half-width eps - pad, but at least eps / 2 (so at most 4x the noiseless cost);
    when the pad exceeds eps / 2 it reports reached_epsilon False with the wider, honest
    interval and the samples eps would need (None above the floor)."""

    mc: MonteCarloEstimator
    snapshot: Snapshot

    @property
    def epsilon(self) -> float:
        return self.mc.epsilon

    @property
    def alpha(self) -> float:
        return self.mc.alpha

    def _pad(self, oracle: Oracle) -> float:
        return predicted_pads(self.snapshot, oracle, [0])[0]

    def _half(self, eps: float, pad: float) -> float:
        """Sampling half-width aimed at: eps - pad, at least eps / 2 (at most 4x the noiseless cost)."""
        return max(eps - pad, 0.5 * eps)

    def _shots(self, eps: float, pad: float) -> int:
        return hoeffding_shots(self._half(eps, pad), self.mc.alpha)

    def planned_calls(self, oracle: Oracle) -> float:
        return float(self._shots(unit_epsilon(oracle, self.mc.epsilon), self._pad(oracle)))

    def expected_calls(self, epsilon_unit: float) -> float:
        return self.mc.expected_calls(epsilon_unit)

    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        start = time.perf_counter()
        eps = unit_epsilon(oracle, self.mc.epsilon)
        pad = self._pad(oracle)
        shots = self._shots(eps, pad)
        rounds, p = sample_k0(executor, oracle, shots, self.mc.epsilon)
        half = self._half(eps, pad) if shots else 0.5
        low, high = max(0.0, p - half - pad), min(1.0, p + half + pad)
        reached = 0.5 * (high - low) <= eps * (1 + 1e-9)
        est = to_estimate(
            oracle, low, high, p, epsilon=self.mc.epsilon, alpha=self.mc.alpha, rounds=rounds,
            wall_time=time.perf_counter() - start, method="mc+pad", target=executor.target, reached_epsilon=reached,
        )
        scale = oracle.high - oracle.low
        calls: float | None = float(est.oracle_calls) if reached else None
        if not reached and pad < eps:
            calls = float(hoeffding_shots(eps - pad, self.mc.alpha))
        diagnostics = {"reachable_half_width": est.half_width, "epsilon_floor": pad * scale,
                       "calls_for_epsilon": calls, "floor_power": 0,
                       "floor_proven": pad * scale >= min(est.half_width, 0.25 * scale) * (1 - 1e-9)}
        note = "the interval covers the predicted noise bias at k = 0"
        if not reached:
            reach = _reach_note(diagnostics)
            note = f"eps={self.mc.epsilon} is not reached on {self.snapshot.name} by Monte Carlo: {reach}; {note}"
        return replace(est, note=note, diagnostics=diagnostics)
