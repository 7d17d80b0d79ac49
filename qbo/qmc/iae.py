"""Iterative amplitude estimation (Grinko, Gacon, Zoufal, Woerner 2021, Algorithm 1).

Written on qbo's executor interface. Notation: a = sin^2(theta), K = 4k + 2, and a shot of
Q^k A reads 1 with probability p_k = sin^2((2k+1) theta) = (1 - cos(K theta)) / 2.

Each round picks the largest K <= pi / (theta_u - theta_l) (at least ``min_ratio`` times
the last one) for which K [theta_l, theta_u] stays inside one half period, so the round's
interval for p_k maps back to an interval for theta (Grinko et al., Algorithm 2). The
intervals of all rounds are intersected; the loop stops once the amplitude interval is at
most 2 epsilon wide (Grinko et al. stop on the theta interval, which is never shorter).

Failure probability, ``alpha_split='spend'`` (default): alpha spending. Before a round runs,
its level alpha_i and its shots N_i are chosen from the past rounds only, and its interval
uses only its own fresh N_i shots. Given the past, the Clopper-Pearson (or Hoeffding)
interval misses p_k with probability <= alpha_i, so by the union bound
P(some round misses) <= sum_i E[alpha_i 1{round i runs}] <= alpha, because every alpha_i is
a fraction of a budget that is never overdrawn: ``final_share`` of alpha is kept for rounds
planned to finish (the first such round spends 3/4 of what is left, later ones 3/4 of the
rest), the remainder is spread over the predicted number of remaining intermediate rounds.
If no interval misses, theta lies in every interval and so in their intersection.

The shots are sized from the past (still predictable, so still covered by the bound above):
an intermediate round takes the fewest shots whose plug-in interval (the interval that
round(N p) ones at the current midpoint would give) lets the next K grow by ``growth``
(half-period constraint included; shots double while K cannot grow, so K must grow); a
round is *final* when the plug-in interval reaches 2 epsilon with at most ``final_factor``
times that many shots, and then takes just those shots times ``final_safety``. This avoids
the overshoot of a fixed shot count in the last round, which dominates the cost. The
optimum of a geometric schedule (cost sum N_i K_i / 2, width shrinking by
f = pi sqrt(N) / (2 z) per round, total ~ N / (f - 1)) is f = 2, hence ``growth`` = 2.

``alpha_split='uniform'`` and ``'geometric'`` keep Grinko et al.'s fixed ``shots`` per round
with their no-overshooting rule and pool the shots of repeated rounds at one K:
- 'uniform': alpha / T per round, T = ceil(log2(pi / (8 eps))) (Grinko et al. Sec. 3,
  qiskit-algorithms). Their bound counts stages, not repeated checks, so it is heuristic.
- 'geometric': a round at K gets alpha * K / K_sum * 6 / (pi^2 j^2), j the repeat count at
  that K; distinct K grow by ``min_ratio`` = r up to K_bound = pi / (2 eps), so
  sum K <= K_bound r / (r - 1) =: K_sum and the total is <= alpha (modified IAE,
  Fukuzawa, Ho, Irie, Mori, Yoshino, Yukawa 2023: alpha_i proportional to K_i).

Cost tail: a final round that falls short of 2 epsilon (its plug-in is only a prediction;
at p_k near 0 or 1 the midpoint moves and it can fall short again) is repeated at the same
K with at least double its shots, so the repeats cost at most about twice the last one
(without this, rounds of 3, 8, 12, ... shots at 3/4 of a shrinking level gave 0.1% of runs
up to 20x the median cost; issue 9).

Termination: at most ``max_rounds`` rounds (default 4 (log_r(K_bound) + 2)); the K search
steps down by 4, the shot search is a bounded bisection. If the cap is hit the estimate is
returned with its honest, wider interval and reached_epsilon=False. A round never runs
with alpha_i = 0 (its interval would be [0, 1]): if no budget is left for it, the loop
stops there with the honest interval and reached_epsilon=False.

Depth cap: a ``k_max`` (e.g. from ``qbo.noise.depth.choose_k_max``) caps K at 4 k_max + 2. When
it binds (4 k_max + 2 < pi / (2 eps)), intermediate rounds below k_max take at most half of
the intermediate budget left (``_rounds_left`` >= 2), so repeats at a K that cannot grow
(half-period constraint) get ever smaller but positive levels. Once k = k_max, K can never
grow, so no intermediate round is useful: the intermediate budget left joins the final
share (both are unspent parts of alpha, so the budget is still never overdrawn) and every
round there is a finishing round (3/4 of what is left, as above) sized by the plug-in
interval with at most MAX_SHOTS shots. If even MAX_SHOTS at k_max cannot reach 2 epsilon
by the plug-in, the loop stops before spending anything at k_max (reached_epsilon=False,
the honest intersection so far). So a capped run costs the rounds that grow K (each at
most SHOT_CAP shots) plus finishing rounds at k_max, never a string of zero-level rounds.

Mitigation (``mitigation``, a ``qbo.qmc.rounds.ProbabilityEstimator``, e.g. ``qbo.mitigation.Mitigation``): each round asks the
bound estimator for an interval of the ideal p_k at the round's level alpha_i and records
every circuit it ran (folded circuits count scale (2k + 1) calls per shot). The schedule
is unchanged: 'spend' sizes shots with the estimator's own plug-in interval (so a wider,
Hoeffding-based ZNE interval gets proportionally more shots) and its union bound holds
as before because each round's interval is fresh; 'uniform' / 'geometric' use fresh
intervals at their per-check levels instead of pooling counts (mitigated values of
different rounds are not binomial counts). With ``mitigation=None`` nothing changes.

Cost model (``expected_calls``): the schedule run on 16 amplitudes (j + 1/2) / 16 with every
round reading its expected counts, deterministic and cached per (configuration, eps). The
amplitudes share one plan (and with it the first round, the same for all); the pure pieces
of a round (plug-in intervals, shot searches, round intervals) are cached across eps, with
the values an uncached replay gives. With a mitigation it runs the *mitigated* schedule:
the same plug-in intervals (``plug_in``, e.g. the wider Hoeffding ZNE interval) and the same
per-scale shot split (``shots_per_scale``), counting sum_j n_j s_j (2k + 1) calls per round.
It cannot know the executor or the oracle: the mitigation supplies its own device-free cost
model and cache key (``ProbabilityEstimator.cost_model``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from collections.abc import Hashable
from typing import Any, Literal

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import CostCache, check_accuracy, run_round, to_estimate, unit_epsilon, without_device_model
from qbo.qmc.confidence import METHODS, interval
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.result import Estimate, Round
from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator

TWO_PI = 2.0 * math.pi
SPLITS = ("spend", "uniform", "geometric")
MAX_SHOTS = 1 << 20
SHOT_CAP = 4096
Sampler = Callable[[int, int], Round]


@dataclass(frozen=True)
class IterativeAmplitudeEstimation:
    """IAE to half-width ``epsilon`` (reward units) with probability >= 1 - ``alpha``.

    Args:
        epsilon: target half-width of the interval, in reward units.
        alpha: failure probability.
        shots: least shots per intermediate round ('spend' sizes them, and doubles them when K
            cannot grow; see module docstring). The 'uniform' and 'geometric' splits need a
            fixed count and use 100 when None.
        confidence: 'beta' (Clopper-Pearson) or 'chernoff'.
        min_ratio: each new K is at least this multiple of the last.
        k_max: optional cap on the Grover power (e.g. from a device's coherence).
        alpha_split: 'spend' (default), 'uniform' (Grinko et al.) or 'geometric'.
        max_rounds: hard cap on rounds; None derives it from epsilon.
        final_share: share of alpha kept for the rounds planned to finish ('spend').
        growth: intermediate rounds are sized so that K can grow by this factor ('spend').
        final_factor: a round is final if it needs <= this times an intermediate's shots.
        final_safety: final rounds take this times the plug-in shot count.
        mitigation: optional ``qbo.mitigation`` probability estimator (None: plain rounds).
    """

    epsilon: float
    alpha: float = 0.05
    shots: int | None = None
    confidence: Literal["beta", "chernoff"] = "beta"
    min_ratio: float = 2.0
    k_max: int | None = None
    alpha_split: Literal["spend", "uniform", "geometric"] = "spend"
    max_rounds: int | None = None
    final_share: float = 0.5
    growth: float = 2.0
    final_factor: float = 2.0
    final_safety: float = 1.0
    mitigation: ProbabilityEstimator | None = None

    def __post_init__(self) -> None:
        check_accuracy(self.epsilon, self.alpha)
        if self.shots is not None and not (isinstance(self.shots, int) and self.shots >= 1):
            raise ValueError(f"shots must be an integer >= 1 or None, got {self.shots}")
        if self.confidence not in METHODS:
            raise ValueError(f"confidence must be one of {sorted(METHODS)}, got '{self.confidence}'")
        if not self.min_ratio > 1:
            raise ValueError(f"min_ratio must be > 1, got {self.min_ratio}")
        if self.k_max is not None and self.k_max < 0:
            raise ValueError(f"k_max must be >= 0, got {self.k_max}")
        if self.alpha_split not in SPLITS:
            raise ValueError(f"alpha_split must be one of {', '.join(SPLITS)}, got '{self.alpha_split}'")
        if self.max_rounds is not None and self.max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {self.max_rounds}")
        if not 0 < self.final_share < 1:
            raise ValueError(f"final_share must be in (0, 1), got {self.final_share}")
        for name in ("growth", "final_factor", "final_safety"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        start = time.perf_counter()
        eps = unit_epsilon(oracle, self.epsilon)
        probe = None if self.mitigation is None else self.mitigation.bind(executor, oracle)
        rounds, state = self._run(eps, lambda k, n: run_round(executor, oracle, k, n), probe)
        a_low, a_high = state.amplitude_interval()
        method = "iae" if self.mitigation is None else f"iae+{self.mitigation.name}"
        est = to_estimate(
            oracle, a_low, a_high, 0.5 * (a_low + a_high),
            epsilon=self.epsilon, alpha=self.alpha, rounds=tuple(rounds),
            wall_time=time.perf_counter() - start, method=method, target=executor.target,
            reached_epsilon=a_high - a_low <= 2 * eps * (1 + 1e-9),
        )
        if self.mitigation is not None and self.mitigation.covers_device_bias:
            return est
        return without_device_model(est, executor.target)

    def planned_calls(self, oracle: Oracle) -> float:
        """The cost model for ``oracle`` (Dai et al. 2023, Alg. 1 line 5 plans a stage with it)."""
        return self.expected_calls(unit_epsilon(oracle, self.epsilon))

    def expected_calls(self, epsilon_unit: float) -> float:
        """Cost model: the mean oracle calls of the schedule this configuration runs when every
        round reads its expected count of ones, round(N p_k), over amplitudes (j + 1/2) / 16;
        with a mitigation, the mitigated schedule and its folded calls (module docstring).
        Cached; the key is the configuration with its mitigation made explicit."""
        if self.mitigation is None:
            return _expected_calls(self, None, float(epsilon_unit))
        key, model = self.mitigation.cost_model()
        return _expected_calls(replace(self, mitigation=None), key, float(epsilon_unit), model)

    def _run(
        self, eps: float, sample: Sampler, probe: RoundEstimator | None = None, plan: "_Plan | None" = None
    ) -> tuple[list[Round], "_State"]:
        """The rounds and final state of one schedule; ``plan`` (``_Plan.make(self, eps, ...)``)
        may be passed in when several schedules share it (the cost model's amplitudes)."""
        if plan is None:
            plan = _Plan.make(self, eps, probe)
        state = _State(self.alpha, self.final_share)
        rounds: list[Round] = []
        done = 0
        while state.width > 2 * eps and done < plan.max_rounds:
            k = state.next_k(plan) if done else 0
            done += 1
            if probe is not None:
                ran = self._mitigated_round(plan, state, probe, k)
                if ran is None:
                    break
                rounds.extend(ran)
            elif self.alpha_split == "spend":
                decision = plan.spend(state, k)
                if decision is None:  # eps out of reach at this depth: stop before spending
                    break
                shots, alpha_i = decision
                rnd = sample(k, shots)
                state.update_fresh(rnd, alpha_i, plan)
                rounds.append(rnd)
            else:
                rnd = sample(k, plan.shots_at(k))
                state.update_pooled(rnd, plan)
                rounds.append(rnd)
        return rounds, state

    def _mitigated_round(
        self, plan: "_Plan", state: "_State", probe: RoundEstimator, k: int
    ) -> tuple[Round, ...] | None:
        """One round through a mitigation: a fresh interval at this round's level (None: stop,
        as ``_Plan.spend`` decides)."""
        if self.alpha_split == "spend":
            decision = plan.spend(state, k)
            if decision is None:
                return None
            shots, alpha_i = decision
        else:
            shots, alpha_i = plan.shots_at(k), plan.round_alpha(k, state.next_repeat(k))
            state.alphas.append(alpha_i)
        result = probe.estimate(k, shots, alpha_i)
        state.update_interval(k, shots, result.p_low, result.p_high)
        return result.rounds


@dataclass(frozen=True)
class _Plan:
    """Derived, per-estimate constants and the shot / alpha decisions."""

    config: IterativeAmplitudeEstimation
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
    def make(cls, cfg: IterativeAmplitudeEstimation, eps: float, probe: Any = None) -> "_Plan":
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
    def spend(self, state: "_State", k: int) -> tuple[int, float] | None:
        """(shots, alpha_i) of the next round at power k, from the past rounds only; None if
        no useful round with alpha_i > 0 can run here (the loop then stops, module docstring).
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

    def _spend(self, state: "_State", k: int) -> tuple[int, float] | None:
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

    def _at_cap(self, state: "_State", k: int) -> bool:
        """K cannot grow: k is the binding k_max, or K failed to grow after SHOT_CAP shots at
        k under a binding k_max (the half-period constraint keeps it there)."""
        if self.k_top is None:
            return False
        return k >= self.k_top or (k == state.last_k and state.last_shots >= SHOT_CAP)

    def _spend_at_cap(self, state: "_State", k: int) -> tuple[int, float] | None:
        """Rounds where K cannot grow (module docstring, 'Depth cap'). The intermediate budget
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
    def _record(state: "_State", shots: int, alpha_i: float) -> tuple[int, float]:
        state.alphas.append(alpha_i)
        return shots, alpha_i

    def _rounds_left(self, state: "_State", k: int) -> int:
        """Predicted intermediate rounds left, counting this one (an overestimate is safe)."""
        low, high = state.theta_low, state.theta_high
        slope = max(math.sin(2 * t) for t in (low, high, min(max(math.pi / 4, low), high)))
        k_goal = min(self.k_bound, math.pi * max(slope, 1e-3) / (2 * self.eps)) / self.config.growth
        left = 1 + max(0, math.ceil(math.log(k_goal / (4 * k + 2)) / math.log(self.config.growth)))
        return left if self.k_top is None else max(2, left)  # capped: never spend it all below k_max

    def _shots_to_finish(self, state: "_State", k: int, alpha_i: float, cap: int) -> int | None:
        if self.probe is None:
            return _finish_shots(k, state.theta_low, state.theta_high, state.up, alpha_i,
                                 self.config.confidence, self.eps, cap)
        done = lambda n: _amplitude_width(state.predict(k, n, alpha_i, self)) <= 2 * self.eps
        return _least_shots(done, cap)

    def _shots_to_grow(self, state: "_State", k: int, alpha_i: float) -> int:
        """Fewest shots whose plug-in interval admits a next K >= growth * K (half period
        included, so a theta near a half-period boundary gets more shots, not a repeat)."""
        if self.probe is None:
            return _grow_shots(k, state.theta_low, state.theta_high, state.up, alpha_i,
                               self.config.confidence, self.config.growth, int(self.k_bound))

        def grows(n: int) -> bool:
            low, high = state.predict(k, n, alpha_i, self)
            return find_next_k(k, low, high, state.up, self.config.growth, self.k_bound)[0] != k

        return _least_shots(grows, SHOT_CAP) or SHOT_CAP


def _least_shots(ok: Callable[[int], bool], cap: int) -> int | None:
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
# the predicate hoists what does not depend on n. Same results as ``_State.predict``.
# One level down, the plug-in interval at n shots depends on the state (k, theta interval,
# half period, alpha_i, method) and n only, not on eps: the states of a run's schedules recur
# across stages and amplitudes (a default run has a few hundred distinct states), so each
# state's intervals are kept per n (``_plug_in``) and most searches read them. The grow search
# reads eps only through int(k_bound) (``_grow_shots``), so nearby eps share it too.


@lru_cache(maxsize=1 << 16)
def _finish_shots(
    k: int, theta_low: float, theta_high: float, up: bool, alpha_i: float, confidence: str,
    eps: float, cap: int,
) -> int | None:
    """``_least_shots`` of 'the plug-in interval is at most 2 eps wide' (no mitigation)."""
    plug_in = _plug_in(k, theta_low, theta_high, up, alpha_i, confidence)
    return _least_shots(lambda n: plug_in(n)[2] <= 2 * eps, cap)


@lru_cache(maxsize=1 << 16)
def _grow_shots(
    k: int, theta_low: float, theta_high: float, up: bool, alpha_i: float, confidence: str,
    growth: float, k_bound: int,
) -> int:
    """``_least_shots`` of 'the plug-in interval lets K grow by ``growth``' (no mitigation).
    ``find_next_k`` reads k_bound only as int(min(pi / width, k_bound)) = min(int(pi / width),
    int(k_bound)) (both > 0), so int(k_bound) gives the same searches and many eps share them."""
    plug_in = _plug_in(k, theta_low, theta_high, up, alpha_i, confidence)

    def grows(n: int) -> bool:
        low, high, _ = plug_in(n)
        return find_next_k(k, low, high, up, growth, k_bound)[0] != k

    return _least_shots(grows, SHOT_CAP) or SHOT_CAP


@lru_cache(maxsize=1 << 12)
def _plug_in(
    k: int, theta_low: float, theta_high: float, up: bool, alpha_i: float, confidence: str
) -> Callable[[int], tuple[float, float, float]]:
    """n -> (theta interval that round(n p) ones at the midpoint would give (``_State.predict``),
    its amplitude width); remembered per n."""
    p = math.sin((2 * k + 1) * (0.5 * (theta_low + theta_high))) ** 2
    seen: dict[int, tuple[float, float, float]] = {}

    def plug_in(n: int) -> tuple[float, float, float]:
        known = seen.get(n)
        if known is None:
            thetas = _round_thetas(confidence, k, round(n * p), n, alpha_i, theta_low, theta_high, up)
            known = seen[n] = (*thetas, _amplitude_width(thetas))
        return known

    return plug_in


def _round_thetas(
    confidence: str, k: int, ones: int, shots: int, alpha_i: float, theta_low: float, theta_high: float, up: bool
) -> tuple[float, float]:
    """The theta interval after a round of ``ones`` of ``shots`` at power k and level alpha_i
    (its fresh interval, intersected with the current one)."""
    p_low, p_high = interval(confidence, ones, shots, alpha_i)
    return _intersect_thetas(k, p_low, p_high, theta_low, theta_high, up)


# The rounds that schedules run recur: the cost model's amplitudes and nearby eps run the same
# first rounds (a default run's cost model runs 13,038 rounds, 4,033 distinct). Plug-in
# intervals are kept per state instead (``_plug_in``).
_run_round_thetas = lru_cache(maxsize=1 << 13)(_round_thetas)


def _intersect_thetas(
    k: int, p_low: float, p_high: float, theta_low: float, theta_high: float, up: bool
) -> tuple[float, float]:
    """The theta interval of [p_low, p_high] at power k, intersected with the current one
    (the fresh one alone if they miss each other, which happens inside alpha)."""
    low, high = theta_interval(k, p_low, p_high, theta_low, up)
    new_low, new_high = max(low, theta_low), min(high, theta_high)
    if new_low > new_high:
        return low, high
    return new_low, new_high


def _amplitude_width(thetas: tuple[float, float]) -> float:
    return math.sin(thetas[1]) ** 2 - math.sin(thetas[0]) ** 2


_COSTS = CostCache()


def _expected_calls(
    config: IterativeAmplitudeEstimation, key: Hashable, eps: float, model: RoundEstimator | None = None
) -> float:
    """Mean calls over 16 amplitudes of the (mitigated, if ``model``) schedule; cached per
    (configuration without its mitigation, the mitigation's cost key, eps)."""
    def make_calls_at() -> Callable[[float], int]:
        plan = _Plan.make(config, eps, model)  # shared by the amplitudes (the probes' plug_in is the model's)

        def calls_at(theta: float) -> int:
            probe = None if model is None else _ExpectedProbe(model, theta)
            rounds, _ = config._run(eps, _expected_sampler(theta), probe, plan)
            return sum(r.oracle_calls for r in rounds)

        return calls_at

    return _COSTS.mean_calls((config, key, eps), make_calls_at)


def _expected_sampler(theta: float) -> Sampler:
    def sample(k: int, shots: int) -> Round:
        p = math.sin((2 * k + 1) * theta) ** 2
        return Round(k=k, shots=shots, ones=round(shots * p))

    return sample


@dataclass(frozen=True)
class _Expected:
    """What a mitigated round reports when every circuit reads its expected counts."""

    p_low: float
    p_high: float
    rounds: tuple[Round, ...]


class _ExpectedProbe:
    """A bound mitigation's plug-in interval and shot split at a fixed theta (cost model)."""

    def __init__(self, bound: RoundEstimator, theta: float) -> None:
        self.bound, self.theta = bound, theta

    def plug_in(self, k: int, p: float, shots: int, alpha: float) -> tuple[float, float]:
        return self.bound.plug_in(k, p, shots, alpha)

    def estimate(self, k: int, shots: int, alpha: float) -> _Expected:
        p = math.sin((2 * k + 1) * self.theta) ** 2
        low, high = self.bound.plug_in(k, p, shots, alpha)
        per_scale = self.bound.shots_per_scale(shots)
        rounds = tuple(Round(k=k, shots=n, ones=round(n * p), scale=s) for s, n in zip(self.bound.scales, per_scale))
        return _Expected(low, high, rounds)


class _State:
    """theta interval, current power, alpha budgets and the shots pooled at that power."""

    def __init__(self, alpha: float, final_share: float) -> None:
        self.theta_low, self.theta_high = 0.0, math.pi / 2
        self.k, self.up = 0, True
        self.pooled_k, self.pooled_shots, self.pooled_ones, self.repeat = -1, 0, 0, 0
        self.final_left, self.mid_left = alpha * final_share, alpha * (1 - final_share)
        self.last_k, self.last_shots = -1, 0
        self.last_final = False  # the last 'spend' round was planned to finish
        self.alphas: list[float] = []  # level alpha_i of every round run, in order

    @property
    def width(self) -> float:
        low, high = self.amplitude_interval()
        return high - low

    def amplitude_interval(self) -> tuple[float, float]:
        return math.sin(self.theta_low) ** 2, math.sin(self.theta_high) ** 2

    def next_k(self, plan: _Plan) -> int:
        """find_next_k; with alpha spending (no pooling) any larger K beats a repeat."""
        args = (self.theta_low, self.theta_high, self.up)
        k, up = find_next_k(self.k, *args, plan.config.min_ratio, plan.k_bound)
        if k == self.k and plan.config.alpha_split == "spend":
            k, up = find_next_k(self.k, *args, 1.0, plan.k_bound)
        self.k, self.up = k, up
        return k

    def predict(self, k: int, shots: int, alpha_i: float, plan: _Plan) -> tuple[float, float]:
        """Plug-in interval: what round(shots p) ones at the current midpoint would give."""
        mid = 0.5 * (self.theta_low + self.theta_high)
        p = math.sin((2 * k + 1) * mid) ** 2
        if plan.probe is not None:
            return self._intersect_p(k, *plan.probe.plug_in(k, p, shots, alpha_i))
        return self._intersect(k, round(shots * p), shots, alpha_i, plan)

    def update_fresh(self, rnd: Round, alpha_i: float, plan: _Plan) -> None:
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

    def update_pooled(self, rnd: Round, plan: _Plan) -> None:
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

    def _intersect(self, k: int, ones: int, shots: int, alpha_i: float, plan: _Plan) -> tuple[float, float]:
        return _run_round_thetas(plan.config.confidence, k, ones, shots, alpha_i, self.theta_low, self.theta_high, self.up)

    def _intersect_p(self, k: int, p_low: float, p_high: float) -> tuple[float, float]:
        return _intersect_thetas(k, p_low, p_high, self.theta_low, self.theta_high, self.up)


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
