"""Never give up cheaply (issue 24, item 3): an interval wider than 1/2 (amplitude) after fewer
than ``GIVE_UP_CALLS`` honest calls, short of eps, is not an answer to stop at.

Two estimates can end there: a held interval on hardware (near a = 0 or 1 the counts resolve
an over-rotation of Q poorly, ``qbo.qmc.over_rotation``) and MLAE's when its decay model does
not fit (on any noisy target), whose interval is the hull with the k = 0 rounds'. More of
the same rounds cannot make a wrong model right, but a fresh k = 0 round, which neither an
over-rotation of Q nor a misfit of the decay model moves, narrows the k = 0 interval
(``mlae_fit.shallow_interval``: Clopper-Pearson, readout inverted, A0 and the offset over
their prior ranges). ``k0_top_up`` runs it and reports its interval. The round's size is set
before any of its counts, and it runs only where the widest interval it could give
(``widest_k0_interval``) is narrower than the one it replaces, so the result is never wider.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy.special import betaincinv

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import run_round
from qbo.qmc.likelihood import DecayPrior
from qbo.qmc.mlae_fit import k0_ends, shallow_interval
from qbo.qmc.result import Estimate, Round

__all__ = ["GIVE_UP_CALLS", "TOP_UP_LIMIT", "k0_shots_narrower_than", "k0_top_up", "widest_k0_interval"]

GIVE_UP_CALLS = 1000  # on a noisy target, eps out of reach stops an estimate only after this many calls
TOP_UP_LIMIT = 64 * GIVE_UP_CALLS  # without a budget, the most shots a top-up round may need


def k0_top_up(est: Estimate, oracle: Oracle, executor: Executor, prior: DecayPrior,
              max_calls: int | None) -> tuple[Estimate, str]:
    """``est`` (a held interval, or MLAE's when its model does not fit) where it misses eps and
    is wider than 1/2 (amplitude) after fewer than ``GIVE_UP_CALLS`` calls: a fresh k = 0 round
    brings the calls to ``GIVE_UP_CALLS`` (within ``max_calls``, the cap the estimator obeys),
    and its own interval (``shallow_interval`` under ``prior``) is the estimate's. The round
    runs after the decision to run it, so its interval holds at 1 - alpha given that decision.
    Its size is known before any count: without a binding cap, at least the shots whose widest
    possible interval is narrower than ``est``'s (``k0_shots_narrower_than``, up to
    ``TOP_UP_LIMIT``; none such: no round); where ``max_calls`` leaves fewer than
    ``GIVE_UP_CALLS``, what it leaves, and only if that round's widest interval is narrower.
    Returns the estimate and a sentence for its note ("" when unchanged);
    ``diagnostics['budget_bound']`` True where ``max_calls`` (below ``GIVE_UP_CALLS``) cut it
    and eps is still missed."""
    scale = oracle.high - oracle.low
    width = (est.ci_high - est.ci_low) / scale
    spent = est.oracle_calls
    if est.reached_epsilon or width <= 0.5 or spent >= GIVE_UP_CALLS:  # reached: as wide as asked for
        return est, ""
    bound = max_calls is not None and max_calls < GIVE_UP_CALLS
    room = (TOP_UP_LIMIT + spent if max_calls is None else max_calls) - spent
    shots = min(GIVE_UP_CALLS - spent, room)
    if shots < 1 or widest_k0_interval(shots, prior, est.alpha) >= width:
        if bound:  # the budget leaves no round whose interval is sure to be narrower: the caller's cap binds
            return replace(est, diagnostics={**est.diagnostics, "budget_bound": True}), ""
        more = k0_shots_narrower_than(width, prior, est.alpha, shots + 1, min(room, TOP_UP_LIMIT))
        if more is None:  # no k = 0 round within reach is sure to be narrower
            return est, ""
        shots = more
    fresh = run_round(executor, oracle, 0, shots)
    low, high = (float(oracle.to_reward(x)) for x in shallow_interval([fresh], prior, est.alpha))
    reached = 0.5 * (high - low) <= est.epsilon * (1 + 1e-9)
    need, floor = k0_reach(fresh, prior, est.alpha, 0.5 * (high - low) / scale, est.epsilon / scale, spent)
    note = (f"the interval was {width:.3g} wide (amplitude) after {spent} calls: a fresh k=0 round of {shots} shots, "
            "which no over-rotation of Q or misfit of the decay model moves, gives the interval (its own, at level "
            "1 - alpha)")
    diagnostics = {**est.diagnostics, "k0_top_up_shots": shots, "width_before_top_up": width * scale,
                   "reachable_half_width": 0.5 * (high - low), "budget_bound": bound and not reached,
                   "calls_for_epsilon": float(spent + shots) if reached else need,
                   "epsilon_floor": 0.0 if reached else floor * scale}
    return replace(est, value=min(max(est.value, low), high), ci_low=low, ci_high=high, rounds=est.rounds + (fresh,),
                   reached_epsilon=reached, diagnostics=diagnostics), note


def widest_k0_interval(shots: int, prior: DecayPrior, alpha: float) -> float:
    """The widest amplitude interval ``shallow_interval`` can give for one k = 0 round of
    ``shots`` shots, over all its possible counts: known before the round runs."""
    ones = np.arange(shots + 1, dtype=float)
    q_low = np.where(ones == 0, 0.0, betaincinv(np.maximum(ones, 1.0), shots - ones + 1, alpha / 2))
    q_high = np.where(ones == shots, 1.0, betaincinv(ones + 1, np.maximum(shots - ones, 1.0), 1 - alpha / 2))
    low, high = k0_ends(q_low, q_high, prior)
    return float(np.max(high - low))


def k0_shots_narrower_than(width: float, prior: DecayPrior, alpha: float, least: int, most: int) -> int | None:
    """The fewest shots n in [``least``, ``most``] whose widest k = 0 interval
    (``widest_k0_interval``) is narrower than ``width``, found by doubling, then bisection
    (which keeps a narrower upper end, so the n returned is always checked); None if even
    ``most`` shots are not sure to be narrower (the prior's A0 and offset ranges leave a floor)."""
    narrower = lambda n: widest_k0_interval(n, prior, alpha) < width  # noqa: E731
    if least > most:
        return None
    low, high = least - 1, least
    while not narrower(high):
        if high >= most:
            return None
        low, high = high, min(most, 2 * high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if narrower(mid) else (mid, high)
    return high


def k0_reach(fresh: Round, prior: DecayPrior, alpha: float, half: float, eps: float,
             spent: int) -> tuple[float | None, float]:
    """(calls_for_epsilon, floor) of the k = 0 interval of ``fresh`` (half-width ``half``,
    amplitude) after ``spent`` earlier calls: the floor is the half-width that A0's and the
    offset's prior ranges leave at the observed frequency with no sampling error
    (``k0_ends`` at q = ones / shots); the rest shrinks as shots^-1/2, so about
    shots ((half - floor) / (eps - floor))^2 k = 0 shots reach eps (None where eps <= floor)."""
    q = np.asarray([fresh.ones / fresh.shots])
    low, high = k0_ends(q, q, prior)
    floor = 0.5 * float(high[0] - low[0])
    if eps <= floor:
        return None, floor
    return float(spent + math.ceil(fresh.shots * ((half - floor) / (eps - floor)) ** 2)), floor
