"""The design of noise-aware MLAE: which power and how many shots each round runs.

Adaptive, IAE-style localisation under the likelihood of ``qbo.qmc.mlae_fit``: after each
round the next K = 4k + 2 is the largest <= pi / width with K times the localisation
interval inside one half period and K >= ``growth`` times the last (Grinko et al. 2021,
Alg. 2), so the new round's likelihood has one mode inside the interval. K is capped at
pi / (2 eps) and, on a noisy target, at the depth cap k_cap: the largest k whose information
per call for theta, proportional to (2k + 1) r^(2k) (Fisher information (2k + 1)^2 c_k^2
per shot over 2k + 1 calls; Giurgica-Tiron et al. 2022), is at least half its maximum. At
the cap each round runs at the power that most reduces the predicted variance of theta per
call (greedy c-optimal design with the expected information matrix, Fedorov 1972 Ch. 2).

A round is final when the shots that the expected information predicts reach half-width
eps are few (``final_factor``); with a ``budget`` the loop spends it, without one an eps
beyond ``max_calls`` stops as unreachable before the calls are spent. Check rounds after
the schedule (``check_shots``) buy information on a coherent over-rotation delta for the
score test. Every round is charged shots s (2k + 1) calls (``qbo.grover.oracle_calls``).
docs/mlae.md has the reasoning and the measurements behind each constant.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal, Protocol

import numpy as np
from scipy.special import ndtri

from qbo.qmc.give_up import GIVE_UP_CALLS
from qbo.qmc.iae_engine import find_next_k
from qbo.qmc.likelihood import DecayPrior, amplitude_half_width, fisher, rotation_information, theta_sd
from qbo.qmc.mlae_fit import ProfileFit
from qbo.qmc.result import Round
from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator

MAX_CALLS = 1e15
IN_LOOP_SHARE = 0.1  # after each round, a deviance p below this share of gof_level stops the estimate
RELOCALISE_K = 7  # a misfit while no power is deeper re-profiles theta over [0, pi/2] (the grid resolves it)
HOPE_SHRINK = 0.9  # hoping: least shrink of the half-width per doubling of the calls
BUDGET_ROUNDS = 3  # with a budget B, no power deeper than B / (BUDGET_ROUNDS shots) calls a round
SATURATION_MARGIN = 0.7  # with a model error, eps must be this far above the saturated floor to be chased
CHECK_ROUNDS = 8  # with A0 free, the check's calls run in this many rounds, each at the power the design picks
Sampler = Callable[[int, int], tuple[Round, ...]]


class DesignConfig(Protocol):
    """What the design reads of an MLAE configuration (``qbo.qmc.mlae.MaximumLikelihoodAE``)."""

    @property
    def epsilon(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def shots(self) -> int: ...
    @property
    def k_max(self) -> int | None: ...
    @property
    def budget(self) -> int | None: ...
    @property
    def localise(self) -> float: ...
    @property
    def stop_share(self) -> float: ...
    @property
    def growth(self) -> float: ...
    @property
    def final_factor(self) -> float: ...
    @property
    def gof_level(self) -> float: ...
    @property
    def max_rounds(self) -> int: ...
    @property
    def max_calls(self) -> int: ...
    @property
    def anchor_shots(self) -> int | None: ...
    @property
    def check_shots(self) -> int: ...
    @property
    def check_design(self) -> Literal["greedy", "k0"]: ...
    @property
    def mitigation(self) -> ProbabilityEstimator | None: ...


class Schedule(ProfileFit):
    """One estimate's rounds and the decisions that add them: ``loop``, then ``check``."""

    def __init__(
        self, config: DesignConfig, eps: float, prior: DecayPrior, folds: RoundEstimator | None = None,
    ) -> None:
        super().__init__(prior, config.alpha, config.stop_share, config.localise, config.gof_level)
        self.cfg, self.eps = config, eps
        # a round of n shots runs scale s_j at split(n)[j] shots (no folds: all n at scale 1)
        self.scales: tuple[int, ...] = (1,) if folds is None else tuple(folds.scales)
        self.split: Callable[[Any], list] = (lambda n: [n]) if folds is None else folds.shots_per_scale
        big = 1 << 20
        self.per_shot = sum(m * s for m, s in zip(self.split(big), self.scales)) / big  # calls per shot / (2k + 1)
        self.z = float(ndtri(1 - config.alpha / 2))
        big_k = math.pi / (2 * eps)
        if config.k_max is not None:
            big_k = min(big_k, 4 * config.k_max + 2)
        self.k_bound = max(2.0, big_k)
        self.k, self.last_shots = 0, 0
        self.finishing = False  # the last round at the cap was sized to finish (by the prediction)
        self.hope: tuple[int, float] | None = None  # (calls, half-width) when hoping last measured progress
        self.stopped = "max_rounds"
        self.max_calls = (config.budget if config.budget is not None else config.max_calls) - config.check_shots
        self.checked: list[tuple[int, int]] = []  # (k, shots) of the check rounds (``check``)

    @property
    def calls(self) -> int:
        return sum(r.oracle_calls for r in self.rounds)

    def round_calls(self, k: int, shots: float) -> float:
        """Honest calls of a round of ``shots`` at power k: sum_j n_j s_j (2k + 1)."""
        return sum(m * s for m, s in zip(self.split(shots), self.scales)) * (2 * k + 1)

    def shots_within(self, k: int, room: int, most: int = 1 << 40) -> int:
        """The most shots (<= ``most``) of a round at power k whose calls fit in ``room``."""
        if self.scales == (1,):
            return min(most, room // (2 * k + 1))
        if self.round_calls(k, 1) > room:
            return 0
        low, high = 1, most
        while high - low > 1:  # round_calls is non-decreasing in shots
            mid = (low + high) // 2
            low, high = (mid, high) if self.round_calls(k, mid) <= room else (low, mid)
        return high if self.round_calls(k, high) <= room else low

    def k_cap(self) -> int:
        """Deepest useful power under the decay (module docstring); K bound otherwise."""
        top = int((self.k_bound - 2) // 4)
        if self.cfg.budget is not None:  # leave most of a budget for shots, not for the ladder
            ladder = BUDGET_ROUNDS * self.cfg.shots * self.per_shot
            top = min(top, max(1, int((self.cfg.budget / ladder - 1) // 2)))
        if self.prior.r_sd == 0 and self.prior.r >= 1.0:
            return top
        r = self.prior.r
        if self.fit is not None and self.prior.r_sd > 0 and len({x.k for x in self.rounds}) >= 3:
            r = min(r, math.exp(self.fit.v))  # a fit at r = 1 (r not pinned) must not send the design deep
        if r >= 1.0:
            return top
        ks = np.arange(top + 1)
        info = (2 * ks + 1) * r ** (2.0 * ks)
        return int(ks[info >= 0.5 * info.max()].max())

    def loop(self, sample: Sampler) -> None:
        cfg = self.cfg
        while len(self.rounds) < cfg.max_rounds:
            k, n = (0, cfg.anchor_shots or cfg.shots) if not self.rounds else self._next()
            if n is None:
                self.stopped = "unreachable"
                return
            n = self.shots_within(k, self.max_calls - self.calls, n)
            if n < 1:
                self.stopped = "budget" if cfg.budget is not None else "max_calls"
                return
            self.rounds.extend(sample(k, int(n)))
            self.k, self.last_shots = k, int(n)
            self.refit()
            if self.gof()[2] < IN_LOOP_SHARE * cfg.gof_level:
                if max(r.k for r in self.rounds) <= RELOCALISE_K:  # perhaps a wrong mode: look again
                    self.refit(whole=True)
                if cfg.budget is None and self.gof()[2] < IN_LOOP_SHARE * cfg.gof_level:
                    self.stopped = "misfit"  # more shots cannot make a wrong model right
                    return
            if self.half_width() <= self.eps and (self.may_give_up() or self.model_fits()):
                self.stopped = "reached"  # under GIVE_UP_CALLS, not on a fit that ``check`` would widen
                return

    def check(self, sample: Sampler) -> None:
        """Both goodness-of-fit tests at ``gof_level`` on all the data, after the check rounds
        when there are any (``check_shots`` honest calls, after the schedule, so that they
        cannot steer it). With A0 fixed, one round of ``check_shots`` shots of A (k = 0): it
        pins theta without any Grover step, so a coherent error of Q shows as a disagreement
        with the deep powers. With A0 free, k = 0 counts pin A0 (a - 1/2) rather than theta:
        the calls run in ``CHECK_ROUNDS`` rounds of equal calls, each at the power
        (``check_power``) that adds the most expected efficient information on delta per call
        at the fit of all the rounds before it (greedy design; docs/mlae.md, "Power")."""
        calls = self.cfg.check_shots
        parts = 1 if self.prior.a0_sd == 0 else CHECK_ROUNDS
        if calls >= 1 and self.stopped != "misfit":
            for i in range(parts):
                part = (calls - sum(n * (2 * k + 1) for k, n in self.checked)) // (parts - i)  # what is left, evenly
                k = 0 if parts == 1 or self.cfg.check_design == "k0" else self.check_power(part)
                n = part // (2 * k + 1)
                if n >= 1:
                    self.rounds.extend(sample(k, n))
                    self.checked.append((k, n))
                    self.refit()
        self.span_other_modes()
        if not self.model_fits():
            self.stopped = "misfit"


    def _next(self) -> tuple[int, int | None]:
        fit, cfg = self.fit, self.cfg
        cap = self.k_cap()
        bound = min(self.k_bound, 4 * cap + 2)
        lo, hi = fit.loc_low, fit.loc_high
        k, _ = find_next_k(self.k, lo, hi, True, cfg.growth, bound)
        if k == self.k:
            k, _ = find_next_k(self.k, lo, hi, True, 1.0, bound)
        at_cap = k <= self.k and 4 * self.k + 6 > bound
        stuck = k <= self.k and not at_cap
        if stuck and not self.prior.noiseless:  # A0 confounds theta at k = 0 and so on: go deeper
            k, stuck = self.k + 1, False
        if at_cap and not self.prior.noiseless:
            k = self._best_power(cap)
        room = self.shots_within(k, self.max_calls - self.calls)
        need = self._shots_to_finish(k, max(1, room))
        if at_cap:
            if cfg.budget is None:  # with a budget, spend it: the best half-width it buys
                extra = self.calls_to_reach(self.eps)
                if extra is None or extra > self.max_calls - self.calls:  # at the fit; and where a is most
                    extra = self._hoping()  # learnable within the interval, while that still pays
                if (extra is None or extra > self.max_calls - self.calls) and self.may_give_up():
                    return k, None
                if self.prior.model_error > 0 and self.may_give_up() and min(
                        self.saturated_floor(self.plan_theta()),
                        self.saturated_floor(self._hopeful_theta())) > SATURATION_MARGIN * self.eps:
                    return k, None  # the model error caps every power's information: eps near the floor
                    # needs calls that diverge like 1 / (eps^2 - floor^2), and the prediction is optimistic
            floor = 2 * self.last_shots if k == self.k else cfg.shots
            if not self.prior.noiseless:  # rounds grow with the data: O(log calls) refits
                floor = max(floor, sum(r.shots for r in self.rounds) // 8)
            short = self.finishing  # the predicted last round (at any power) fell short: grow, do not
            n = max(cfg.shots, floor) if short or need is None else min(need, max(cfg.shots, floor))
            self.finishing = not short and need is not None and n == need  # (1-shot rounds up to max_rounds)
            return k, max(1, min(n, room))
        if need is not None and need <= cfg.final_factor * cfg.shots:
            low = 1 if self.prior.noiseless else (self.last_shots if k == self.k else cfg.shots // 2)
            return k, max(1, need, low)
        if stuck:  # the half period blocks growth: more shots at this k (IAE's rule)
            return k, max(cfg.shots, 2 * self.last_shots)
        return k, cfg.shots

    def pooled(self, extra: tuple[int, float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ks, shots, scales) of the terms so far, plus a round of ``extra`` = (k, shots)."""
        terms = self.terms()
        return terms if extra is None else self.with_round(terms, *extra)

    def with_round(self, terms: tuple[np.ndarray, ...], k: int, shots: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``terms`` plus a round of ``shots`` at power k, one term per fold scale."""
        ks, n, scales = terms
        split = self.split(shots)
        return (np.append(ks, [float(k)] * len(split)), np.append(n, np.asarray(split, dtype=float)),
                np.append(scales, np.asarray(self.scales, dtype=float)))

    def _theta_sd(self, terms: tuple[np.ndarray, ...], theta: float | None = None) -> float:
        f = self.fit
        ks, shots, scales = terms
        at = f.theta if theta is None else theta
        # the interval's threshold is scaled by the dispersion: so is every predicted sd
        return theta_sd(fisher(at, f.u, f.v, ks, shots, self.at_fit(), scales), self.prior) * math.sqrt(f.phi)

    def plan_theta(self) -> float:
        """Where ``calls_to_reach`` evaluates the expected information: the fit, or the middle
        of its interval when the fit sits on an end of [0, pi/2]. There dP/dtheta = 0, so the
        information at the fit is zero and would predict that no budget reaches eps, while
        the data only say the amplitude is somewhere in a wide interval (e.g. a 6-qubit
        Gaussian oracle on fake_torino, A0 = 0.065: 5 ones in 16 k = 0 shots put the fit at
        a = 0, and eps = 0.02 was reported unreachable after those 16 shots)."""
        f = self.fit
        if 0.0 < f.theta < math.pi / 2:
            return f.theta
        return 0.5 * (f.low + f.high)

    def _hopeful_theta(self) -> float:
        """The point of the fit's interval where a = sin^2 theta is closest to 1/2: with A0
        free, k = 0 shots pin A0 (a - 1/2) and A0's prior leaves a floor of about
        a0_sd |a - 1/2| on a, smallest there (``_next`` stops as unreachable only when eps is
        out of reach even at this point)."""
        f = self.fit
        return min(max(math.pi / 4, f.low), f.high)

    def _predicted_half_width(self, ks: np.ndarray, shots: np.ndarray, scales: np.ndarray) -> float:
        return amplitude_half_width(self.fit.theta, self._theta_sd((ks, shots, scales)), self.z)

    def _shots_to_finish(self, k: int, limit: int = 1 << 40) -> int | None:
        """Fewest shots at k whose predicted half-width is <= eps (None beyond ``limit``)."""
        ok = lambda n: self._predicted_half_width(*self.pooled((k, n))) <= self.eps
        if not ok(limit):
            return None
        low, high = 0, 1
        while not ok(high):
            low, high = high, high * 2
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if ok(mid) else (mid, high)
        return high

    def check_power(self, calls: int) -> int:
        """The power among 0..k_cap whose round of ``calls`` // (2k + 1) shots adds the most
        expected efficient information on an over-rotation delta per call
        (``rotation_information`` at the current fit; greedy c-optimal design for delta)."""
        f = self.fit
        ks, shots, scales = self.pooled()
        base = rotation_information(f.theta, f.u, f.v, ks, shots, self.at_fit(), scales)[0]
        best, gain = 0, -math.inf
        for k in range(self.k_cap() + 1):
            n = calls // (2 * k + 1)
            if n < 1:
                break
            info = rotation_information(f.theta, f.u, f.v, np.append(ks, float(k)), np.append(shots, float(n)),
                                        self.at_fit(), np.append(scales, 1.0))[0]
            g = (info - base) / (n * (2 * k + 1))
            if g > gain:
                best, gain = k, g
        return best

    def _best_power(self, cap: int) -> int:
        """Greedy design at the cap: the power (run before, or k_cap) whose next shots most
        reduce the predicted variance of theta per oracle call."""
        terms = self.pooled()
        return self._greedy(terms, sorted({int(x) for x in terms[0] if x <= cap} | {cap}), self.cfg.shots)

    def _greedy(self, terms: tuple[np.ndarray, ...], cands: list[int], n: float, theta: float | None = None) -> int:
        """The power among ``cands`` whose round of n shots adds the most expected information
        on theta (at ``theta``, default the fit) per honest call; the first on ties."""
        base = self._theta_sd(terms, theta) ** -2
        gains = [(self._theta_sd(self.with_round(terms, c, n), theta) ** -2 - base) / self.round_calls(c, n) for c in cands]
        return cands[int(np.argmax(gains))]


    def may_give_up(self) -> bool:
        """Whether an eps out of reach may stop the estimate now (issue 24, item 3): on a noisy
        target only after ``GIVE_UP_CALLS`` honest calls. The predicted floor (``floor``) is
        no proof that nothing better is reachable: it is local (Fisher information at the
        fit), and with A0 free the k = 0 counts still bound |a - 1/2| from below."""
        return self.prior.noiseless or self.calls >= min(GIVE_UP_CALLS, self.max_calls)

    def _hoping(self) -> float | None:
        """``calls_to_reach`` at ``_hopeful_theta``, while hoping still buys progress: each
        time the calls have doubled since it was last measured, the half-width must have
        shrunk to ``HOPE_SHRINK`` of what it was (sampling error shrinks by 1 / sqrt 2 per
        doubling; at a floor it stays), else None (unreachable). Without this, a wide prior
        on A0 kept a = 1/2 inside the interval and the estimate spent all of ``max_calls``."""
        half = self.half_width()
        if self.hope is None:
            self.hope = (self.calls, half)
        elif self.calls >= 2 * self.hope[0]:
            if half > HOPE_SHRINK * self.hope[1]:
                return None
            self.hope = (self.calls, half)
        return self.calls_to_reach(self.eps, self._hopeful_theta())

    def floor(self) -> float:
        """The half-width (amplitude) no budget gets below at the fit: MAX_CALLS more calls at
        the best power up to k_cap (the information per shot is bounded when A0 is free and
        only k = 0 is usable: the prior on A0 then bounds what the k = 0 counts say of a)."""
        theta, terms = self.plan_theta(), self.pooled()
        cands = sorted({int(x) for x in terms[0] if x <= self.k_cap()} | {self.k_cap()})
        sd = min(self._theta_sd(self.with_round(terms, c, MAX_CALLS / (2 * c + 1) / self.per_shot), theta) for c in cands)
        return min(0.5, amplitude_half_width(theta, sd, self.z))  # a is in [0, 1] whatever the data

    def saturated_floor(self, theta: float) -> float:
        """With a model error (``prior.model_error``), the half-width (amplitude) at ``theta``
        that MAX_CALLS more calls at *every* power up to k_cap would leave: each power's
        information saturates at q (1 - q) / tau_k^2 shots, so this is the floor of any design
        within the cap (``floor`` is one power's)."""
        terms = self.pooled()
        for c in range(self.k_cap() + 1):
            terms = self.with_round(terms, c, MAX_CALLS / (2 * c + 1) / self.per_shot)
        return min(0.5, amplitude_half_width(theta, self._theta_sd(terms, theta), self.z))

    def calls_to_reach(self, eps: float, theta: float | None = None) -> float | None:
        """Extra honest calls the greedy design at the cap predicts for half-width eps, with
        the expected information at ``theta`` (default ``plan_theta``); None beyond MAX_CALLS."""
        cap = self.k_cap()
        theta = self.plan_theta() if theta is None else theta
        terms = self.pooled()
        extra = 0.0
        for _ in range(200):
            if amplitude_half_width(theta, self._theta_sd(terms, theta), self.z) <= eps:
                return extra
            if extra > MAX_CALLS:
                return None
            ks, shots, _ = terms
            k = min(cap, int(max(ks)))
            cands = sorted({int(x) for x in ks if x <= cap} | {k})
            n = max(self.cfg.shots, float(shots.sum()) / 4)
            c = self._greedy(terms, cands, n, theta)
            terms = self.with_round(terms, c, n)
            extra += self.round_calls(c, n)
        return None
