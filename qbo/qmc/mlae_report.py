"""The report of noise-aware MLAE: the Estimate, its diagnostics and its notes.

Reachability, in reward units: ``reachable_half_width`` (reached with the calls spent),
``calls_for_epsilon`` (honest calls the greedy design predicts under the expected
information at the fit; None when not reachable) and ``epsilon_floor`` (0 when eps is
reachable under a fitting model; else the half-width that ``MAX_CALLS`` more calls would
leave, or the reached one when the model does not fit). The over-rotation diagnostics
give the sd with which the data resolve a coherent error delta of every Grover step, the
delta the score test flags with probability ``ROTATION_POWER``, and the first-order shift
of the estimate per radian (White 1982's pseudo-true parameter). On a real device the
interval holds every over-rotation the counts cannot exclude (``qbo.qmc.over_rotation``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from qbo.oracles.base import Oracle
from qbo.qmc.base import to_estimate
from qbo.qmc.mlae_design import Schedule
from qbo.qmc.mlae_fit import shallow_interval, shallow_value
from qbo.qmc.over_rotation import held_interval
from qbo.qmc.result import Estimate


def report(run: Schedule, oracle: Oracle, target: str, wall_time: float, real_device: bool) -> Estimate:
    """The Estimate of a finished ``run``: its interval, widened when the model does not fit
    (``ProfileFit.widened``), the reachability diagnostics and the notes; ``real_device``: the
    target can carry a coherent error that no simulator injects (the over-rotation note)."""
    f = run.fit
    dev, dof, p = run.gof()
    rot, p_rot = run.rotation()
    deviance_fits, rotation_fits = p >= run.gof_level, p_rot >= run.gof_level
    fits = deviance_fits and rotation_fits
    a_low, a_high = math.sin(f.low) ** 2, math.sin(f.high) ** 2
    method_note = "profile likelihood, chi2_1 at 1 - alpha" + (
        (", nuisances A0, r, f maximised out" if run.prior.offset_sd > 0 else ", nuisances A0, r maximised out")
        if run.prior.free else ", decay fixed at none"
    ) + (f"; hull of {run.modes} modes" if run.modes > 1 else "")
    value = math.sin(f.theta) ** 2
    if f.phi > 1.0:
        method_note += f"; threshold scaled by the dispersion phi = {f.phi:.3g}"
    if not fits:
        a_low, a_high = run.widened(dev, dof)
        if not rotation_fits:  # the deep powers' phase is off: only the k = 0 counts are unbiased
            value = shallow_value(run.rounds, run.prior)
        value = min(max(value, a_low), a_high)
        method_note += "; widened (model does not fit: dispersion-scaled, hull with the k=0 interval)"
    sd, detectable, shift = run.rotation_reach()
    widen, held_rad, k0_only = 0.0, 0.0, False
    if fits and real_device:  # a real device can over-rotate: hold every delta the counts cannot exclude
        held = held_interval(a_low, a_high, run.rotation_lever(), sd, run.rotation_statistic(), run.z)
        if held is None:  # the counts do not resolve delta here: only k = 0 counts bound a
            a_low, a_high = shallow_interval(run.rounds, run.prior, run.alpha)
            widen, k0_only = math.inf, True
            method_note += "; the k=0 rounds' interval (the counts do not resolve an over-rotation of Q at the fit)"
        else:
            widen = max(0.0, a_low - held[0], held[1] - a_high)
            a_low, a_high, held_rad = held
            if widen > 0.0:
                method_note += "; widened by the over-rotation of Q the counts cannot exclude"
        value = min(max(value, a_low), a_high)
    reached = fits and 0.5 * (a_high - a_low) <= run.eps * (1 + 1e-9)
    scale = oracle.high - oracle.low
    diagnostics = reach_diagnostics(run, dev, dof, p, fits, method_note, scale, a_high - a_low)
    finite = lambda x: x if math.isfinite(x) else None  # noqa: E731  (JSON has no inf)
    diagnostics.update(rotation_score=rot, rotation_p_value=p_rot, rotation_sd=finite(sd),
                       rotation_detectable=finite(detectable), rotation_shift=finite(shift * scale),
                       rotation_widening=finite(widen * scale))
    diagnostics["budget_bound"] = run.stopped == "budget" and not reached  # the caller's cap stopped it
    if widen > 0.0 and not reached and diagnostics["calls_for_epsilon"] is not None:
        # the held part, not the fit, is what is left: its sd shrinks as calls^-1/2 (as IAE's,
        # ``qbo.qmc.capped._calls_past_rotation``); none where the counts do not resolve delta
        diagnostics["calls_for_epsilon"] = (None if k0_only else
                                            max(diagnostics["calls_for_epsilon"], run.calls * (widen / (0.5 * run.eps)) ** 2))
    note = ""
    if not fits:
        why = []
        if not deviance_fits:
            why.append(f"deviance {dev:.1f} on {dof} dof, p={p:.2g}")
        if not rotation_fits:
            why.append(f"coherent over-rotation score {rot:.1f}, p={p_rot:.2g}")
        note = (f"the decay model does not fit the counts ({'; '.join(why)}), e.g. a coherent error in Q; "
                "the interval is widened to what the k=0 counts support, and it is not tight")
    elif not reached:
        calls = diagnostics["calls_for_epsilon"]
        need = "not reachable" if calls is None else f"about {calls:.3g} honest calls would reach it"
        why = "the fit reached it; the over-rotation held widens it" if run.stopped == "reached" else run.stopped
        note = (f"eps={run.cfg.epsilon} not reached ({why}); half-width "
                f"{diagnostics['reachable_half_width']:.3g}; {need}")
    if fits and f.phi > 1.0:
        scattered = (f"the interval is widened by the dispersion phi = {f.phi:.3g} (deviance {dev:.1f} on {dof} dof, "
                     "tempered by the model error): the counts scatter more than the decay model allows, so its "
                     f"likelihood threshold is scaled by phi (about {math.sqrt(f.phi):.2f}x the width)")
        note = f"{note}; {scattered}" if note else scattered
    if 0.0 < widen < math.inf:
        wider = (f"on a real device the interval holds every coherent over-rotation of Q the counts cannot "
                 f"exclude (up to {held_rad:.2g} rad per Grover step; the counts resolve one to sd {sd:.2g} rad), "
                 f"which widens it by up to {widen * scale:.3g} a side; check rounds (--check-shots) resolve one "
                 "better and Pauli twirling (--twirl) turns coherent two-qubit errors into the decay the model fits")
        note = f"{note}; {wider}" if note else wider
    if k0_only:
        wider = ("on a real device an over-rotation of Q could move the fit, and the counts do not resolve one "
                 "at it (the fit sits at the end of the range): the interval is the k=0 rounds' own, which no "
                 "over-rotation moves; check rounds (--check-shots) resolve one")
        note = f"{note}; {wider}" if note else wider
    method = "mlae" if run.scales == (1,) else "mlae+zne"
    return to_estimate(
        oracle, a_low, a_high, value, epsilon=run.cfg.epsilon, alpha=run.alpha,
        rounds=tuple(run.rounds), wall_time=wall_time, method=method, target=target,
        reached_epsilon=reached, note=note, diagnostics=diagnostics,
    )


def reach_diagnostics(
    run: Schedule, dev: float, dof: int, p: float, fits: bool, method: str, scale: float, width: float
) -> dict[str, Any]:
    f, prior = run.fit, run.prior
    half = 0.5 * width
    calls_needed: float | None
    if not fits:
        calls_needed, floor, reachable = None, half * scale, half * scale
    elif half <= run.eps:
        calls_needed, floor, reachable = float(run.calls), 0.0, half * scale
    else:
        extra = run.calls_to_reach(run.eps)
        saturated = run.stopped == "unreachable" and prior.model_error > 0  # eps at or near the model-error floor
        calls_needed = None if extra is None or saturated else float(run.calls + extra)
        floor = 0.0 if extra is not None and run.stopped != "unreachable" else run.floor() * scale
        if saturated:
            floor = run.saturated_floor(run.plan_theta()) * scale
        reachable = half * scale
    return {
        "interval_method": method,
        "decay": "fit" if prior.free else "none",
        "prior_source": prior.source,
        "a0": math.exp(f.u), "r": math.exp(f.v), "offset": f.f, "offset_sd": prior.offset_sd,
        "dispersion": f.phi, "model_error": prior.model_error,
        "a0_prior": prior.a0, "r_prior": prior.r, "p01": prior.p01, "p10": prior.p10,
        "deviance": dev, "dof": dof, "gof_p_value": p, "model_fits": fits,
        "k_cap": run.k_cap(), "stopped": run.stopped, "modes": run.modes,
        "check_rounds": [list(c) for c in run.checked],
        "reachable_half_width": reachable,
        "calls_for_epsilon": calls_needed,
        "epsilon_floor": floor,
        **fold_diagnostics(run),
    }


def fold_diagnostics(run: Schedule) -> dict[str, Any]:
    """Which fold scales ran and the fold contrast model (empty without folds)."""
    mitigation = run.cfg.mitigation
    if mitigation is None:
        return {}
    b = run.prior.b
    return {
        "scales": list(run.scales), "mitigation": mitigation.name,
        "fold_model": "per call, b = r" if b is None else "per block, b fixed",
        "fold_b": b,
        "folded_calls": sum(r.oracle_calls for r in run.rounds if r.scale > 1),
        "readout": "inside the likelihood (confusion matrix); the counts are not readout-corrected",
    }


def topped_report(est: Estimate, topped: str) -> Estimate:
    """``est`` after ``qbo.qmc.give_up.k0_top_up`` replaced its interval with a fresh k = 0
    round's (``topped``: its sentence): the note and the diagnostics that described the
    discarded interval (the fit's reach, the over-rotation held, the widening) now describe
    the reported one, whose reach ``k0_top_up`` computed (``give_up.k0_reach``)."""
    d = dict(est.diagnostics)
    d["interval_method"] = ("the k=0 rounds' own: Clopper-Pearson, readout inverted, A0 and the offset over "
                            "their prior ranges (a fresh round after a wide interval)")
    d["rotation_widening"] = 0.0  # no over-rotation of Q moves a k = 0 round
    why = ("the decay model does not fit the counts" if not d.get("model_fits", True) else
           "on a real device the counts did not bound an over-rotation of Q narrowly (check rounds, --check-shots, "
           "resolve one better; Pauli twirling, --twirl, reaches two-qubit gates, not Q's single-qubit rotations)")
    note = f"{why}; {topped}"
    if not est.reached_epsilon:
        calls = d["calls_for_epsilon"]
        need = (f"about {calls:.3g} honest calls of k=0 rounds would reach it" if calls is not None else
                f"k=0 rounds cannot reach it: A0's and the offset's prior ranges leave {d['epsilon_floor']:.3g}")
        note = f"{note}; eps={est.epsilon} not reached; half-width {d['reachable_half_width']:.3g}; {need}"
    return replace(est, note=note, diagnostics=d)
