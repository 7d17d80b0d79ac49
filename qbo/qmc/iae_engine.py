"""The schedule engine of iterative amplitude estimation: plan, state and shot searches.

Grinko, Gacon, Zoufal, Woerner 2021, Algorithm 1 with qbo's alpha spending. ``Plan`` holds
the constants of one schedule at one eps and decides each round's shots and level alpha_i
from the past rounds only (``Plan.spend``); ``State`` holds the theta interval, the power
and the unspent budgets. Each round picks the largest K = 4k + 2 <= pi / width keeping
K [theta_l, theta_u] in one half period (``find_next_k``, Grinko et al. Algorithm 2), and
its interval for p_k = (1 - cos(K theta)) / 2 maps back to theta (``theta_interval``).
Every alpha_i is a fraction of a budget that is never overdrawn, so by the union bound all
rounds' fresh intervals hold together with probability >= 1 - alpha (docs/iae.md).
``qbo.qmc.iae`` runs a schedule from scratch; ``qbo.qmc.resumable`` continues one from a
carried interval. The shot searches are pure functions of the state's numbers and cached.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from qbo import caches
from qbo.qmc.confidence import interval
from qbo.qmc.result import Round

TWO_PI = 2.0 * math.pi
MAX_SHOTS = 1 << 20
SHOT_CAP = 4096


class PlanConfig(Protocol):
    """What a plan reads of an IAE configuration (``qbo.qmc.iae.IterativeAmplitudeEstimation``)."""

    @property
    def alpha(self) -> float: ...
    @property
    def shots(self) -> int | None: ...
    @property
    def confidence(self) -> Literal["beta", "chernoff"]: ...
    @property
    def min_ratio(self) -> float: ...
    @property
    def k_max(self) -> int | None: ...
    @property
    def alpha_split(self) -> Literal["spend", "uniform", "geometric"]: ...
    @property
    def max_rounds(self) -> int | None: ...
    @property
    def final_share(self) -> float: ...
    @property
    def growth(self) -> float: ...
    @property
    def final_factor(self) -> float: ...
    @property
    def final_safety(self) -> float: ...


@dataclass(frozen=True)
class Plan:
    """Derived, per-estimate constants and the shot / alpha decisions."""

    config: PlanConfig
    eps: float
    k_bound: float
    max_rounds: int
    stages: int
    l_max: float
    fixed_shots: int
    probe: Any = None
    k_top: int | None = None  # k_max when it binds (4 k_max + 2 < pi / (2 eps)), else None
    first: dict[tuple, Any] = field(default_factory=dict, compare=False, repr=False)  # first rounds (``spend``)

    @classmethod
    def make(cls, cfg: PlanConfig, eps: float, probe: Any = None) -> "Plan":
        k_bound = math.pi / (2 * eps)
        if cfg.k_max is not None:
            k_bound = min(k_bound, 4 * cfg.k_max + 2)
        stages = max(1, math.ceil(math.log2(math.pi / (8 * eps)))) if eps < math.pi / 16 else 1
        depth = math.log(max(k_bound, 2.0) / 2.0) / math.log(cfg.min_ratio)
        max_rounds = cfg.max_rounds or 4 * (math.ceil(depth) + 2)
        shots = cfg.shots or 100
        log_term = math.log(2 * stages / cfg.alpha)
        l_max = math.asin((2.0 / shots * log_term) ** 0.25) if shots > 2 * log_term else math.pi / 2
        binds = cfg.k_max is not None and 4 * cfg.k_max + 2 < math.pi / (2 * eps)
        return cls(cfg, eps, k_bound, max_rounds, stages, l_max, shots, probe, cfg.k_max if binds else None)

    # --- Grinko et al. ('uniform', 'geometric'): fixed shots, pooled repeats -------------
    def shots_at(self, k: int) -> int:
        """Grinko's no-overshooting rule: fewer shots once K exceeds L_max / eps."""
        big_k = 4 * k + 2
        if big_k > math.ceil(self.l_max / self.eps):
            return max(1, math.ceil(self.fixed_shots * self.l_max / self.eps / big_k / 10))
        return self.fixed_shots

    def round_alpha(self, k: int, repeat: int) -> float:
        cfg = self.config
        if cfg.alpha_split == "uniform":
            return cfg.alpha / self.stages
        r = cfg.min_ratio
        k_sum = max(self.k_bound, 2.0) * r / (r - 1)
        return cfg.alpha * (4 * k + 2) / k_sum * 6 / (math.pi**2 * repeat**2)

    # --- alpha spending ('spend'): sized shots, fresh intervals ---------------------------
    def spend(self, state: "State", k: int) -> tuple[int, float] | None:
        """(shots, alpha_i) of the next round at power k, from the past rounds only; None if
        no useful round with alpha_i > 0 can run here (the loop then stops, docs/iae.md).
        Before any round has run, the decision and the budgets it leaves are remembered per
        plan, keyed on everything they read: the cost model's amplitudes all start there."""
        if state.last_k >= 0:
            return self._spend(state, k)
        before = (k, state.theta_low, state.theta_high, state.up, state.last_k, state.last_shots, state.last_final,
                  state.mid_left, state.final_left)
        known = self.first.get(before)
        if known is None:
            decision = self._spend(state, k)
            self.first[before] = (decision, state.mid_left, state.final_left, state.last_final)
            return decision
        decision, state.mid_left, state.final_left, state.last_final = known
        if decision is not None:
            state.alphas.append(decision[1])
        return decision

    def _spend(self, state: "State", k: int) -> tuple[int, float] | None:
        if self._at_cap(state, k):
            return self._spend_at_cap(state, k)
        alpha_mid = state.mid_left / self._rounds_left(state, k)
        n_mid = max(self.config.shots or 1, self._shots_to_grow(state, k, alpha_mid))
        if k == state.last_k:  # K did not grow: double the shots so that it must, eventually
            n_mid = min(SHOT_CAP, max(n_mid, 2 * state.last_shots))
        at_depth = self.config.min_ratio * (4 * k + 2) > self.k_bound
        cap = MAX_SHOTS if at_depth else math.ceil(self.config.final_factor * n_mid)
        alpha_final = 0.75 * state.final_left
        need = self._shots_to_finish(state, k, alpha_final, cap)
        if need is not None:
            shots = math.ceil(need * self.config.final_safety)
            if k == state.last_k and state.last_final:  # a final round fell short: double (cost tail)
                shots = max(shots, 2 * state.last_shots)
            state.final_left -= alpha_final
            state.last_final = True
            return self._record(state, min(MAX_SHOTS, shots), alpha_final)
        if not alpha_mid > 0:  # no intermediate budget left: a round would be [0, 1]
            return None
        state.mid_left -= alpha_mid
        state.last_final = False
        return self._record(state, n_mid, alpha_mid)

    def _at_cap(self, state: "State", k: int) -> bool:
        """K cannot grow: k is the binding k_max, or K failed to grow after SHOT_CAP shots at
        k under a binding k_max (the half-period constraint keeps it there)."""
        if self.k_top is None:
            return False
        return k >= self.k_top or (k == state.last_k and state.last_shots >= SHOT_CAP)

    def _spend_at_cap(self, state: "State", k: int) -> tuple[int, float] | None:
        """Rounds where K cannot grow (docs/iae.md, 'Depth cap'). The intermediate budget
        joins the final one; a finishing round takes 3/4 of it and its plug-in shots, at
        least double the last round's at this k (so repeats cost <= 2 MAX_SHOTS in all); on
        first arriving here, if the plug-in cannot finish within MAX_SHOTS from the current
        midpoint, one SHOT_CAP round at half the budget sharpens the interval and the
        midpoint; after that an unreachable eps stops the loop (None)."""
        state.final_left += state.mid_left
        state.mid_left = 0.0
        repeat = k == state.last_k
        alpha_final = 0.75 * state.final_left
        need = self._shots_to_finish(state, k, alpha_final, MAX_SHOTS)
        if need is not None:
            shots = math.ceil(need * self.config.final_safety)
            if repeat:
                shots = max(shots, 2 * state.last_shots)
            state.final_left -= alpha_final
            return self._record(state, min(MAX_SHOTS, shots), alpha_final)
        if repeat:
            return None
        alpha_scout = 0.5 * state.final_left
        state.final_left -= alpha_scout
        return self._record(state, SHOT_CAP, alpha_scout)

    @staticmethod
    def _record(state: "State", shots: int, alpha_i: float) -> tuple[int, float]:
        state.alphas.append(alpha_i)
        return shots, alpha_i

    def _rounds_left(self, state: "State", k: int) -> int:
        """Predicted intermediate rounds left, counting this one (an overestimate is safe)."""
        low, high = state.theta_low, state.theta_high
        slope = max(math.sin(2 * t) for t in (low, high, min(max(math.pi / 4, low), high)))
        k_goal = min(self.k_bound, math.pi * max(slope, 1e-3) / (2 * self.eps)) / self.config.growth
        left = 1 + max(0, math.ceil(math.log(k_goal / (4 * k + 2)) / math.log(self.config.growth)))
        return left if self.k_top is None else max(2, left)  # capped: never spend it all below k_max

    def _shots_to_finish(self, state: "State", k: int, alpha_i: float, cap: int) -> int | None:
        if self.probe is None:
            return finish_shots(k, state.theta_low, state.theta_high, state.up, alpha_i,
                                 self.config.confidence, self.eps, cap)
        done = lambda n: amplitude_width(state.predict(k, n, alpha_i, self)) <= 2 * self.eps
        return least_shots(done, cap)

    def _shots_to_grow(self, state: "State", k: int, alpha_i: float) -> int:
        """Fewest shots whose plug-in interval admits a next K >= growth * K (half period
        included, so a theta near a half-period boundary gets more shots, not a repeat)."""
        if self.probe is None:
            return grow_shots(k, state.theta_low, state.theta_high, state.up, alpha_i,
                               self.config.confidence, self.config.growth, int(self.k_bound))

        def grows(n: int) -> bool:
            low, high = state.predict(k, n, alpha_i, self)
            return find_next_k(k, low, high, state.up, self.config.growth, self.k_bound)[0] != k

        return least_shots(grows, SHOT_CAP) or SHOT_CAP


def least_shots(ok: Callable[[int], bool], cap: int) -> int | None:
    """Fewest shots n <= cap with ok(n) (ok assumed monotone), by bisection; None if none."""
    if not ok(cap):
        return None
    low, high = 0, cap
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if ok(mid) else (mid, high)
    return high


# The shot searches without a mitigation are pure functions of the state's numbers, so they
# are cached: the first round of a schedule starts from the same state for every amplitude
# of the cost model (and every estimate at one (eps, alpha)), and replays of one schedule
# (resume, the cost model of a repeated eps) repeat every search. The bisection itself is
# unchanged (the predicate need not be monotone, so only its exact path gives its answer);
# the predicate hoists what does not depend on n. Same results as ``State.predict``.
# One level down, the plug-in interval at n shots depends on the state (k, theta interval,
# half period, alpha_i, method) and n only, not on eps: the states of a run's schedules recur
# across stages and amplitudes (a default run has a few hundred distinct states), so each
# state's intervals are kept per n (``plug_in_intervals``) and most searches read them. The grow search
# reads eps only through int(k_bound) (``grow_shots``), so nearby eps share it too.


@caches.lru(maxsize=1 << 16)
def finish_shots(
    k: int, theta_low: float, theta_high: float, up: bool, alpha_i: float, confidence: str,
    eps: float, cap: int,
) -> int | None:
    """``least_shots`` of 'the plug-in interval is at most 2 eps wide' (no mitigation)."""
    plug_in = plug_in_intervals(k, theta_low, theta_high, up, alpha_i, confidence)
    return least_shots(lambda n: plug_in(n)[2] <= 2 * eps, cap)


@caches.lru(maxsize=1 << 16)
def grow_shots(
    k: int, theta_low: float, theta_high: float, up: bool, alpha_i: float, confidence: str,
    growth: float, k_bound: int,
) -> int:
    """``least_shots`` of 'the plug-in interval lets K grow by ``growth``' (no mitigation).
    ``find_next_k`` reads k_bound only as int(min(pi / width, k_bound)) = min(int(pi / width),
    int(k_bound)) (both > 0), so int(k_bound) gives the same searches and many eps share them."""
    plug_in = plug_in_intervals(k, theta_low, theta_high, up, alpha_i, confidence)

    def grows(n: int) -> bool:
        low, high, _ = plug_in(n)
        return find_next_k(k, low, high, up, growth, k_bound)[0] != k

    return least_shots(grows, SHOT_CAP) or SHOT_CAP


@caches.lru(maxsize=1 << 12)
def plug_in_intervals(
    k: int, theta_low: float, theta_high: float, up: bool, alpha_i: float, confidence: str
) -> Callable[[int], tuple[float, float, float]]:
    """n -> (theta interval that round(n p) ones at the midpoint would give (``State.predict``),
    its amplitude width); remembered per n."""
    p = math.sin((2 * k + 1) * (0.5 * (theta_low + theta_high))) ** 2
    seen: dict[int, tuple[float, float, float]] = {}

    def plug_in(n: int) -> tuple[float, float, float]:
        known = seen.get(n)
        if known is None:
            thetas = round_thetas(confidence, k, round(n * p), n, alpha_i, theta_low, theta_high, up)
            known = seen[n] = (*thetas, amplitude_width(thetas))
        return known

    return plug_in


def round_thetas(
    confidence: str, k: int, ones: int, shots: int, alpha_i: float, theta_low: float, theta_high: float, up: bool
) -> tuple[float, float]:
    """The theta interval after a round of ``ones`` of ``shots`` at power k and level alpha_i
    (its fresh interval, intersected with the current one)."""
    p_low, p_high = interval(confidence, ones, shots, alpha_i)
    return intersect_thetas(k, p_low, p_high, theta_low, theta_high, up)


# The rounds that schedules run recur: the cost model's amplitudes and nearby eps run the same
# first rounds (a default run's cost model runs 13,038 rounds, 4,033 distinct). Plug-in
# intervals are kept per state instead (``plug_in_intervals``).
_run_round_thetas = caches.lru(maxsize=1 << 13)(round_thetas)


def intersect_thetas(
    k: int, p_low: float, p_high: float, theta_low: float, theta_high: float, up: bool
) -> tuple[float, float]:
    """The theta interval of [p_low, p_high] at power k, intersected with the current one
    (the fresh one alone if they miss each other, which happens inside alpha)."""
    low, high = theta_interval(k, p_low, p_high, theta_low, up)
    new_low, new_high = max(low, theta_low), min(high, theta_high)
    if new_low > new_high:
        return low, high
    return new_low, new_high


def amplitude_width(thetas: tuple[float, float]) -> float:
    return math.sin(thetas[1]) ** 2 - math.sin(thetas[0]) ** 2



class State:
    """theta interval, current power, alpha budgets and the shots pooled at that power."""

    def __init__(self, alpha: float, final_share: float) -> None:
        self.theta_low, self.theta_high = 0.0, math.pi / 2
        self.k, self.up = 0, True
        self.pooled_k, self.pooled_shots, self.pooled_ones, self.repeat = -1, 0, 0, 0
        self.final_left, self.mid_left = alpha * final_share, alpha * (1 - final_share)
        self.last_k, self.last_shots = -1, 0
        self.last_final = False  # the last 'spend' round was planned to finish
        self.alphas: list[float] = []  # level alpha_i of every round run, in order
        self.budget_bound = False  # a round was cut, or none ran, because the call cap was spent

    @property
    def width(self) -> float:
        low, high = self.amplitude_interval()
        return high - low

    def amplitude_interval(self) -> tuple[float, float]:
        return math.sin(self.theta_low) ** 2, math.sin(self.theta_high) ** 2

    def next_k(self, plan: Plan) -> int:
        """find_next_k; with alpha spending (no pooling) any larger K beats a repeat."""
        args = (self.theta_low, self.theta_high, self.up)
        k, up = find_next_k(self.k, *args, plan.config.min_ratio, plan.k_bound)
        if k == self.k and plan.config.alpha_split == "spend":
            k, up = find_next_k(self.k, *args, 1.0, plan.k_bound)
        self.k, self.up = k, up
        return k

    def predict(self, k: int, shots: int, alpha_i: float, plan: Plan) -> tuple[float, float]:
        """Plug-in interval: what round(shots p) ones at the current midpoint would give."""
        mid = 0.5 * (self.theta_low + self.theta_high)
        p = math.sin((2 * k + 1) * mid) ** 2
        if plan.probe is not None:
            return self._intersect_p(k, *plan.probe.plug_in(k, p, shots, alpha_i))
        return self._intersect(k, round(shots * p), shots, alpha_i, plan)

    def update_fresh(self, rnd: Round, alpha_i: float, plan: Plan) -> None:
        self.last_k, self.last_shots = rnd.k, rnd.shots
        self.theta_low, self.theta_high = self._intersect(rnd.k, rnd.ones, rnd.shots, alpha_i, plan)

    def update_interval(self, k: int, shots: int, p_low: float, p_high: float) -> None:
        """A fresh interval for p_k from a (mitigated) round."""
        self.last_k, self.last_shots = k, shots
        self.theta_low, self.theta_high = self._intersect_p(k, p_low, p_high)

    def next_repeat(self, k: int) -> int:
        """Checks so far at power k, counting this one (fresh intervals, no pooling)."""
        if k != self.pooled_k:
            self.pooled_k, self.repeat = k, 0
        self.repeat += 1
        return self.repeat

    def update_pooled(self, rnd: Round, plan: Plan) -> None:
        if rnd.k != self.pooled_k:
            self.pooled_k, self.pooled_shots, self.pooled_ones, self.repeat = rnd.k, 0, 0, 0
        self.pooled_shots += rnd.shots
        self.pooled_ones += rnd.ones
        self.repeat += 1
        alpha_i = plan.round_alpha(rnd.k, self.repeat)
        self.alphas.append(alpha_i)
        self.theta_low, self.theta_high = self._intersect(
            rnd.k, self.pooled_ones, self.pooled_shots, alpha_i, plan
        )

    def _intersect(self, k: int, ones: int, shots: int, alpha_i: float, plan: Plan) -> tuple[float, float]:
        return _run_round_thetas(plan.config.confidence, k, ones, shots, alpha_i, self.theta_low, self.theta_high, self.up)

    def _intersect_p(self, k: int, p_low: float, p_high: float) -> tuple[float, float]:
        return intersect_thetas(k, p_low, p_high, self.theta_low, self.theta_high, self.up)


def find_next_k(
    k: int, theta_low: float, theta_high: float, up: bool, min_ratio: float, k_bound: float
) -> tuple[int, bool]:
    """Largest K = 4k'+2 <= min(pi / width, k_bound), K >= min_ratio (4k+2) (K > 4k+2 if
    min_ratio <= 1), keeping K [theta_low, theta_high] inside one half period (Grinko et
    al., Algorithm 2). Returns (k, up) unchanged if there is none."""
    current = 4 * k + 2
    width = theta_high - theta_low
    if width <= 0:
        return k, up
    big_k = int(min(math.pi / width, k_bound))
    big_k -= (big_k - 2) % 4
    floor = min_ratio * current if min_ratio > 1 else current + 1
    while big_k >= floor:
        low, high = _half_period_position(big_k, theta_low, theta_high)
        if high <= math.pi + 1e-12:
            return (big_k - 2) // 4, True
        if math.pi - 1e-12 <= low and high <= TWO_PI + 1e-12:
            return (big_k - 2) // 4, False
        big_k -= 4
    return k, up


def _half_period_position(big_k: int, theta_low: float, theta_high: float) -> tuple[float, float]:
    """K theta_low and K theta_high shifted by the period of K theta_low (so that a theta_high
    on a multiple of pi, e.g. theta = pi / 2, is not wrapped to 0 by rounding)."""
    period = math.floor(big_k * theta_low / TWO_PI)
    return big_k * theta_low - period * TWO_PI, big_k * theta_high - period * TWO_PI


def theta_interval(k: int, p_low: float, p_high: float, theta_low: float, up: bool) -> tuple[float, float]:
    """Map an interval for p_k = (1 - cos(K theta)) / 2 back to theta, given the half period."""
    big_k = 4 * k + 2
    period = math.floor(big_k * theta_low / TWO_PI)
    angle_low, angle_high = math.acos(1 - 2 * p_low), math.acos(1 - 2 * p_high)
    if not up:
        angle_low, angle_high = TWO_PI - angle_high, TWO_PI - angle_low
    return (period * TWO_PI + angle_low) / big_k, (period * TWO_PI + angle_high) / big_k

