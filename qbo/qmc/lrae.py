"""Likelihood-ratio amplitude estimation (LRAE): geometric Grover powers, one likelihood over
every round, a likelihood-ratio interval; resumable across visits of an arm.

Schedule. With a = sin^2(theta), a shot of Q^k A reads 1 with p_k = sin^2(K theta), K = 2k + 1
(Brassard et al. 2002; Suzuki et al. 2020 use exponential powers with maximum likelihood).
One shot at K carries Fisher information 4 K^2 on theta whatever theta is, and costs K calls
(``qbo.grover.oracle_calls``), so deep powers are cheap per unit of information; what limits
the depth is ambiguity: p_K repeats every pi / K in theta. LRAE grows the power by up to
``GROWTH`` (1.7) a level, with ``default_shots`` = 7 shots a level (``LEVEL_SHOTS``, at every
alpha), so that the older powers' information rules out the new power's mirror alias
(placed a quarter period away, p_K near 1/2); once the information still missing to reach eps
fits in fewer than a level's shots at the next power, the last round takes ``FINAL_SHARE`` of
it, the interval is checked, and the rest follows only if the interval is still too wide. A
likelihood set ``SPLIT_RATIO`` Gaussian widths wide holds two modes: a round at the power that
separates them best per call (at most ``SPLIT_SHOTS`` of a level) comes first. The constant
eps * calls then grows like z sqrt(shots) (docs/estimators.md), against z^2-like growth of
union-bound schemes; the constants were chosen by simulated cost
at delta = 1e-6 with coverage checked at 0.05, 1e-2 and 1e-3 (bench/qmc.py).

Interval. After every round, the log-likelihood of all rounds,
l(theta) = sum_i h_i log sin^2(K_i theta) + (n_i - h_i) log cos^2(K_i theta), is maximised
over the plausible set, and the reported interval is the hull of
{theta : 2 (l(theta_hat) - l(theta)) <= q}, q the chi^2_1 quantile at 1 - alpha (Wilks),
mapped to a by sin^2. This is an *asymptotic* interval: its coverage is measured, not proved
(bench/qmc.py; docs/estimators.md gives the measured coverage at alpha = 0.05, 1e-2, 1e-3 and
how the tail is extrapolated to smaller alpha). The rigorous alternative is Clopper-Pearson IAE
(``qbo.qmc.iae``).

Resumption (Q-BO seed 004, Alg. 1 and App. H revisit arms at shrinking eps). An
:class:`LRState` keeps every round of an arm and the plausible set. Refinement j (1-based)
uses the level alpha_j = alpha / (j (j + 1)) (these sum to alpha), and its interval is the
likelihood-ratio set of *all* rounds so far, so nothing measured is wasted; if each interval
covers with probability 1 - alpha_j, all of them cover simultaneously with probability
>= 1 - alpha by the union bound (uniformly over the number of refinements and any eps
sequence an adaptive policy picks before each refinement's shots).

Spending by eps (``LRState.eps_floor`` > 0: the smallest eps the arm will be refined to, on
the amplitude scale; a refinement asking less is run to the floor). Visits to coarse eps are
cheap (calls ~ 1 / eps), so the budget goes where the calls are: a refinement to eps lies in
the dyadic bin b = floor(log2(eps / eps_floor)) >= 0, bin b holds alpha 2^-(b+1), and the i-th
refinement in bin b uses alpha 2^-(b+1) / (i (i + 1)) (``floor_level``). The levels of all
refinements sum to at most sum_b alpha 2^-(b+1) = alpha, so the union bound above holds as
it is; the last visits, at the floor, spend alpha / 4, alpha / 2 (bins 1, 0) where index
spending would give alpha / 30, alpha / 42. The bin of a refinement depends only on its eps,
fixed before its shots.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import chdtri

from qbo import caches
from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import CostCache, check_accuracy, run_round, to_estimate, unit_epsilon, without_device_model
from qbo.qmc.lr_interval import HALF_PI, Interval, Pool, likelihood_interval, pooled_interval, shot_information
from qbo.qmc.confidence import ThetaInterval
from qbo.qmc.progress import Tracker
from qbo.qmc.result import Estimate, Round

__all__ = [
    "LRState", "LikelihoodRatioAE", "likelihood_interval", "refine", "refine_estimate", "expected_refine_calls",
    "floor_level", "refinement_level", "threshold",
]

METHOD = "lrae"
METHOD_RESUMED = "lrae-resumed"
MAX_ROUNDS = 400
PHASE_SLACK = 1.25  # a new power may be up to this factor off the one asked, to sit where p_K is near 1/2
GROWTH = 1.7  # a new power is up to GROWTH times the deepest (docs/estimators.md: 2 cost more at 1e-6)
LEVEL_SHOTS = 7  # shots of a full level, at every alpha (default_shots)
TOP_UP = 0.02  # an interval the Gaussian model calls done but is not: add this share of the information
FINAL_SHARE = 0.8  # the round that should reach eps takes this share of the missing information first
SPLIT_SHOTS = 0.25  # a split round takes at most this share of a full level's shots
SPLIT_RATIO = 4.0  # a likelihood set this many Gaussian widths wide holds two modes: split them first
Sampler = Callable[[int, int], Round]


@caches.lru(maxsize=256)
def threshold(alpha: float) -> float:
    """Wilks' threshold on 2 (l_max - l(theta)): the chi^2_1 quantile at 1 - alpha."""
    return float(chdtri(1, alpha))


def default_shots(alpha: float) -> int:
    """Shots of a full level: ``LEVEL_SHOTS`` at every alpha, enough for the older powers to
    rule out the new power's aliases (docs/estimators.md)."""
    return LEVEL_SHOTS


def refinement_level(alpha: float, j: int) -> float:
    """Level of refinement j (1-based): alpha / (j (j + 1)); they sum to alpha."""
    if j < 1:
        raise ValueError(f"refinement index must be >= 1, got {j}")
    return alpha / (j * (j + 1))


def floor_level(alpha: float, eps: float, eps_floor: float, bins: tuple[int, ...]) -> tuple[float, int]:
    """(level, bin) of a refinement to ``eps`` (>= ``eps_floor`` > 0) after refinements in
    ``bins``: alpha 2^-(b+1) / (i (i + 1)), b = floor(log2(eps / eps_floor)), i the refinement's
    rank within bin b (module docstring)."""
    if not (eps_floor > 0 and eps >= eps_floor):
        raise ValueError(f"need eps >= eps_floor > 0, got eps {eps}, eps_floor {eps_floor}")
    b = int(math.floor(math.log2(eps / eps_floor) + 1e-12))
    i = bins.count(b) + 1
    return alpha * 2.0 ** -(b + 1) / (i * (i + 1)), b


def _theta_half_width(theta: float, eps: float) -> float:
    """The largest w with (sin^2 min(theta + w, pi/2) - sin^2 max(theta - w, 0)) / 2 <= eps, in
    closed form: unclipped, the width is sin(2 theta) sin(2 w) / 2; past the nearer end of
    [0, pi/2] it is sin^2(theta + w) / 2 (theta <= pi/4) or cos^2(theta - w) / 2."""
    if eps >= 0.5:
        return HALF_PI
    s2 = math.sin(2.0 * theta)
    if 0.5 * s2 * math.sin(2.0 * min(theta, HALF_PI - theta)) > eps:
        return 0.5 * math.asin(2.0 * eps / s2)
    if theta <= 0.25 * math.pi:
        return math.asin(math.sqrt(2.0 * eps)) - theta
    return theta - math.acos(math.sqrt(2.0 * eps))


def _next_round(pool: Pool, iv: Interval, eps: float, q: float, shots: int, k_max: int | None) -> tuple[int, int]:
    """(k, shots) of the next round (module docstring): ``_plan`` at the interval's estimate,
    given every round so far pooled in ``pool``."""
    k_last, info = pool.k_last, pool.information
    if q / _theta_half_width(iv.theta_hat, eps) ** 2 <= info or (
            SPLIT_RATIO > 0 and iv.theta_high - iv.theta_low > SPLIT_RATIO * 2.0 * math.sqrt(q / info)):
        return _split(iv.theta_low, iv.theta_high, q, k_last, shots, k_max)
    return _plan(iv.theta_hat, eps, q, info, k_last, shots, k_max, FINAL_SHARE)


def _split(theta_a: float, theta_b: float, q: float, k_last: int, shots: int, k_max: int | None) -> tuple[int, int]:
    """A round for an interval the Gaussian model calls done but is not: its likelihood keeps two
    modes near its ends (the deepest power's mirror alias, which more shots there never split).
    The power up to 2K + 1 whose p_K differs most between the ends per call, with the shots that
    make their likelihood ratio about q (n ~ q / (4 dp^2)), at most ``shots``."""
    big_cap = 4 * k_last + 3 if k_max is None else min(4 * k_last + 3, 2 * k_max + 1)
    cands = np.arange(1, big_cap + 1, 2, dtype=float)
    dp = np.sin(cands * theta_a) ** 2 - np.sin(cands * theta_b) ** 2
    i = int(np.argmax(dp * dp / cands))
    n = math.ceil(q / (4.0 * max(float(dp[i] ** 2), 1e-12)))
    return int(cands[i] - 1) // 2, int(min(max(n, 1), max(1, math.ceil(SPLIT_SHOTS * shots))))


def _plan(theta: float, eps: float, q: float, info: float, k_last: int, shots: int,
          k_max: int | None, share: float = 1.0) -> tuple[int, int]:
    """The round after a deepest power ``k_last`` (every power holds >= ``shots`` shots) when the
    information so far is ``info`` and the estimate is theta.

    The information still missing for amplitude half-width eps is q / w^2 - info (w: the theta
    half-width giving eps at theta; at least TOP_UP of ``info``, when the model calls done what
    the interval is not). If ``shots`` shots at K -> GROWTH K cannot supply it: a full level
    there. If the power that supplies it with ``shots`` shots is no deeper than the deepest:
    the missing shots at the deepest. Else a last level of ``shots`` shots at the least power
    that supplies it. A new power is placed where K theta is nearest an odd multiple of pi / 4
    (p_K near 1/2), within PHASE_SLACK of the power asked, so its mirror alias lies a quarter
    period away, where the older powers rule it out."""
    w = _theta_half_width(theta, eps)
    big_last = 2 * k_last + 1
    big_cap = max(big_last + 2, int(GROWTH * big_last) + 1)
    if k_max is not None:
        big_cap = min(big_cap, 2 * k_max + 1)
    missing = max(q / (w * w) - info, TOP_UP * info)
    if missing <= shots * shot_information(big_last) or big_cap <= big_last:
        return k_last, max(1, math.ceil(share * missing / shot_information(big_last)))
    low = max(big_last + 2, int(big_cap / PHASE_SLACK))
    big_k = _phase_power(theta, low, big_cap)
    n = math.ceil(missing / shot_information(big_k))
    if n <= shots:
        return (big_k - 1) // 2, max(1, math.ceil(share * missing / shot_information(big_k)))
    return (big_k - 1) // 2, shots


def _phase_power(theta: float, big_low: int, big_high: int) -> int:
    """The odd K in [big_low, big_high] (the largest odd <= big_high if none) with
    |sin(2 K theta)| largest: p_K = sin^2(K theta) nearest 1/2."""
    low = big_low + (1 - big_low % 2)
    high = big_high - (1 - big_high % 2)
    if high < low:
        return max(high, 1)
    cands = np.arange(low, high + 1, 2)
    return int(cands[int(np.argmax(np.abs(np.sin(2.0 * cands * theta))))])


@dataclass(frozen=True)
class LRState(ThetaInterval):
    """Everything an arm's amplitude estimate has measured, as a value (JSON via ``to_json``).

    ``alpha``: total failure budget over all refinements; ``rounds``: every round run;
    ``plausible``: the theta set still plausible (union of intervals); ``refinements``: how
    many refinements ran rounds; ``theta_low``/``theta_high``/``theta_hat``: the last interval;
    ``eps_floor``: 0 for index spending alpha / (j (j + 1)), else spending by eps with this
    floor (amplitude scale), ``bins`` the eps bin of each refinement (module docstring).
    """

    alpha: float
    rounds: tuple[Round, ...] = ()
    plausible: tuple[tuple[float, float], ...] = ((0.0, HALF_PI),)
    refinements: int = 0
    theta_low: float = 0.0
    theta_high: float = HALF_PI
    theta_hat: float = 0.25 * math.pi
    eps_floor: float = 0.0
    bins: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_accuracy(1.0, self.alpha)
        if not (math.isfinite(self.eps_floor) and 0.0 <= self.eps_floor < 0.5):
            raise ValueError(f"eps_floor must be 0 (index spending) or in (0, 0.5), got {self.eps_floor}")

    def level(self, eps: float) -> tuple[float, float, int]:
        """(eps run to, level, bin) of the next refinement asked for ``eps`` (bin -1: index spending)."""
        if self.eps_floor <= 0:
            return eps, refinement_level(self.alpha, self.refinements + 1), -1
        eps = max(eps, self.eps_floor)
        level, b = floor_level(self.alpha, eps, self.eps_floor, self.bins)
        return eps, level, b

    @property
    def oracle_calls(self) -> int:
        return sum(r.oracle_calls for r in self.rounds)

    def to_json(self) -> dict[str, Any]:
        out = {
            "alpha": self.alpha, "rounds": [[r.k, r.shots, r.ones] for r in self.rounds],
            "plausible": [list(p) for p in self.plausible], "refinements": self.refinements,
            "theta_low": self.theta_low, "theta_high": self.theta_high, "theta_hat": self.theta_hat,
        }
        if self.eps_floor > 0:
            out.update(eps_floor=self.eps_floor, bins=list(self.bins))
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "LRState":
        return cls(
            float(data["alpha"]), tuple(Round(int(k), int(n), int(o)) for k, n, o in data["rounds"]),
            tuple((float(a), float(b)) for a, b in data["plausible"]), int(data["refinements"]),
            float(data["theta_low"]), float(data["theta_high"]), float(data["theta_hat"]),
            float(data.get("eps_floor", 0.0)), tuple(int(b) for b in data.get("bins", ())),
        )


def run_schedule(
    rounds: tuple[Round, ...], plausible: tuple[tuple[float, float], ...], eps: float, alpha: float,
    sample: Sampler, shots: int | None = None, k_max: int | None = None,
) -> tuple[tuple[Round, ...], Interval | None]:
    """Run rounds until the likelihood-ratio interval at level ``alpha`` of all rounds (``rounds``
    given, then new) has amplitude half-width <= eps; return the new rounds and the last
    interval (None when no round ran and none was given)."""
    q = threshold(alpha)
    m = default_shots(alpha) if shots is None else shots
    new: list[Round] = []
    pool = Pool(rounds)
    iv = pooled_interval(pool, q, plausible) if rounds else None
    while len(new) < MAX_ROUNDS:
        if iv is not None:
            low, high, _ = iv.amplitude()
            if high - low <= 2 * eps * (1 + 1e-9):
                break
            plausible = iv.plausible
        k, n = _next_round(pool, iv, eps, q, m, k_max) if iv is not None else (0, m)
        new.append(sample(k, n))
        pool.add(new[-1])
        iv = pooled_interval(pool, q, plausible)
    return tuple(new), iv


def refine(state: LRState, eps: float, sample: Sampler, shots: int | None = None,
           k_max: int | None = None) -> tuple[LRState, tuple[Round, ...]]:
    """Continue ``state`` to amplitude half-width ``eps`` at level alpha_j (module docstring);
    pure given ``sample``. Returns the new state and the new rounds only."""
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps}")
    eps, alpha_j, b = state.level(eps)
    if state.rounds and state.half_width <= eps * (1 + 1e-9):
        return state, ()
    new, iv = run_schedule(state.rounds, state.plausible, eps, alpha_j, sample, shots, k_max)
    if not new or iv is None:
        return state, ()
    out = replace(state, rounds=state.rounds + new, plausible=iv.plausible, refinements=state.refinements + 1,
                  theta_low=iv.theta_low, theta_high=iv.theta_high, theta_hat=iv.theta_hat,
                  bins=state.bins + ((b,) if b >= 0 else ()))
    return out, new


def _expected_sampler(theta: float) -> Sampler:
    def sample(k: int, shots: int) -> Round:
        return Round(k, shots, round(shots * math.sin((2 * k + 1) * theta) ** 2))
    return sample


def _schedule_calls(theta: float, eps: float, q: float, m: int, info: float = 0.0, k_last: int = -1,
                    k_max: int | None = None) -> int:
    """Cost model of one schedule at amplitude sin^2 theta: the rounds ``run_schedule`` runs
    when the interval is the Gaussian one, theta_hat +- sqrt(q / I) (I: Fisher information so
    far), its last round split as there (``FINAL_SHARE`` first, then the rest), starting from
    information ``info`` with deepest power ``k_last`` (-1: nothing run), powers at most
    ``k_max`` (None: no cap)."""
    return sum(n * (2 * k + 1) for k, n in _model_rounds(theta, eps, q, m, info, k_last, k_max))


def _model_rounds(theta: float, eps: float, q: float, m: int, info: float = 0.0,
                  k_last: int = -1, k_max: int | None = None) -> Iterator[tuple[int, int]]:
    """The (k, shots) of the rounds ``_schedule_calls`` counts, in order."""
    w = _theta_half_width(theta, eps)
    need = q / (w * w)
    while info < need * (1 - 1e-12):
        k, n = (0, m) if k_last < 0 else _plan(theta, eps, q, info, k_last, m, k_max, FINAL_SHARE)
        big_k = 2 * k + 1
        info += shot_information(big_k) * n
        k_last = max(k_last, k)
        yield k, n


_COSTS = CostCache()


@dataclass(frozen=True)
class LikelihoodRatioAE:
    """LRAE to half-width ``epsilon`` (reward units) at level 1 - ``alpha`` (asymptotic; module
    docstring). ``shots``: shots per power (None: ``default_shots(alpha)``); ``k_max``: optional
    cap on the Grover power."""

    epsilon: float
    alpha: float = 0.05
    shots: int | None = None
    k_max: int | None = None

    def __post_init__(self) -> None:
        check_accuracy(self.epsilon, self.alpha)
        if self.shots is not None and not (isinstance(self.shots, int) and self.shots >= 1):
            raise ValueError(f"shots must be an integer >= 1 or None, got {self.shots}")
        if self.k_max is not None and not (isinstance(self.k_max, int) and self.k_max >= 0):
            raise ValueError(f"k_max must be an integer >= 0 or None, got {self.k_max}")

    def run(self, eps: float, sample: Sampler) -> tuple[tuple[Round, ...], Interval]:
        """The rounds and final interval of one estimate on amplitude scale ``eps``; pure given
        ``sample(k, shots) -> Round`` (the bench draws the binomials itself)."""
        if eps >= 0.5:  # [0, 1] already has half-width 1/2
            return (), Interval(0.25 * math.pi, 0.0, HALF_PI, ((0.0, HALF_PI),))
        rounds, iv = run_schedule((), ((0.0, HALF_PI),), eps, self.alpha, sample, self.shots, self.k_max)
        if iv is None:
            raise RuntimeError("run_schedule ran no round at eps < 1/2")
        return rounds, iv

    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        start = time.perf_counter()
        eps = unit_epsilon(oracle, self.epsilon)
        tracker = Tracker(METHOD, lambda: self.expected_calls(eps))
        rounds, iv = self.run(eps, lambda k, n: tracker.told((run_round(executor, oracle, k, n),))[0])
        low, high, value = iv.amplitude()
        est = to_estimate(
            oracle, low, high, value, epsilon=self.epsilon, alpha=self.alpha, rounds=rounds,
            wall_time=time.perf_counter() - start, method=METHOD, target=executor.target,
            reached_epsilon=high - low <= 2 * eps * (1 + 1e-9),
            diagnostics={"interval": "likelihood-ratio (Wilks, asymptotic)", "threshold": threshold(self.alpha)},
        )
        return without_device_model(est, executor.target)

    def planned_calls(self, oracle: Oracle) -> float:
        """The cost model for ``oracle`` (Dai et al. 2023, Alg. 1 line 5 plans a stage with it)."""
        return self.expected_calls(unit_epsilon(oracle, self.epsilon))

    def expected_calls(self, epsilon_unit: float) -> float:
        """Cost model: the mean over amplitudes (j + 1/2) / 16 of the schedule's calls when the
        interval is Gaussian (``_schedule_calls``); cached per (configuration, eps)."""
        eps = float(epsilon_unit)
        q = threshold(self.alpha)
        if eps >= 0.5:
            return 0.0
        m = default_shots(self.alpha) if self.shots is None else self.shots
        key = ("lrae", self.alpha, m, self.k_max, eps)
        return _COSTS.mean_calls(key, lambda: (lambda theta: _schedule_calls(theta, eps, q, m, k_max=self.k_max)))


def expected_refine_calls(state: LRState, eps: float) -> int:
    """Cost model of ``refine``: the calls its Gaussian schedule makes from the state's
    information at the state's estimate (deterministic; the stage loop's line-5 check)."""
    eps, alpha_j, _ = state.level(eps)
    if state.rounds and state.half_width <= eps * (1 + 1e-9):
        return 0
    pool = Pool(state.rounds)
    return _schedule_calls(state.theta_hat, eps, threshold(alpha_j), default_shots(alpha_j), pool.information,
                           pool.k_last)


def refine_estimate(state: LRState, oracle: Oracle, executor: Executor, epsilon: float) -> tuple[Estimate, LRState]:
    """Refine on a real executor to ``epsilon`` (reward units). The Estimate holds the new
    rounds only (its calls are what this visit spent) and the interval of all rounds, valid
    simultaneously with every earlier one at the state's total alpha (module docstring)."""
    start = time.perf_counter()
    eps = unit_epsilon(oracle, epsilon)
    tracker = Tracker(METHOD_RESUMED, lambda: float(expected_refine_calls(state, eps)))
    new_state, rounds = refine(state, eps, lambda k, n: tracker.told((run_round(executor, oracle, k, n),))[0])
    low, high = new_state.interval
    estimate = to_estimate(
        oracle, low, high, math.sin(new_state.theta_hat) ** 2, epsilon=epsilon, alpha=state.alpha, rounds=rounds,
        wall_time=time.perf_counter() - start, method=METHOD_RESUMED, target=executor.target,
        reached_epsilon=high - low <= 2 * eps * (1 + 1e-9),
    )
    return without_device_model(estimate, executor.target), new_state
