"""The fit of noise-aware MLAE: profile likelihood, interval and goodness of fit.

Counts of Q^k A read 1 with probability q_k = readout(f + A0 r^k (sin^2((2k + 1) theta)
- f)) (``qbo.qmc.likelihood``): Suzuki et al. 2020's product of binomials (their Eq. 4)
with the depolarising decay of Tanaka et al. 2021 split into a SPAM contrast A0 and a
per-step contrast r, and the offset f. The nuisances are profiled out on a grid over the
localisation window, on counts tempered by the model error (``likelihood.tempered``).

Interval: {theta: 2 (l_max - l_p(theta)) <= phi chi2_1(1 - s alpha)} (Wilks, with the
quasi-likelihood dispersion phi = max(1, D / dof) of the tempered counts when the decay is
fitted, McCullagh and Nelder 1989, Sec. 9.2), mapped to a = sin^2 theta, as the hull of
every mode of the profile-likelihood set (``span_other_modes``: the aliases of the deepest
power). phi grows with the evidence of misfit, continuously, not past a test's cut.

Goodness of fit, each at ``gof_level``: the binomial deviance on (#terms - 1 - #free
nuisances) dof, and Neyman's C(alpha) score test against a coherent over-rotation delta of
every Grover step, sin^2((2k + 1) theta + k delta) (``likelihood.rotation_score``). When
either fails, the interval is widened: the log-likelihood divided by the dispersion D / dof
(quasi-likelihood, McCullagh and Nelder 1989, Sec. 9.2) joined with the k = 0 rounds' own
readout-corrected Clopper-Pearson interval (``shallow_interval``). docs/mlae.md has the
derivations and the measurements behind the constants.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import chdtrc, gammaincinv, ndtri  # scipy.stats' chi2/norm, bit for bit, without importing scipy.stats (docs/scale-out.md)

from qbo.qmc.confidence import clopper_pearson
from qbo.qmc.likelihood import (
    DecayPrior, Pooled, deviance, profile_nuisances, rotation_information, rotation_score, tempered,
)
from qbo.qmc.result import Round

GRID = 1025
ALIAS_SLACK = 4.0  # a mode probed off its peak may read up to this much lower in 2 log-likelihood
ROTATION_SD = 0.1  # the over-rotation test runs once the data resolve delta to this sd (rad)
ROTATION_POWER = 0.99  # rotation_detectable: the over-rotation the test flags with this probability
FALLBACK_A0_SD = 0.2  # the A0 spread the k = 0 fallback allows: the old, wide prior
PRIOR_Z = 3.0  # the k = 0 interval takes A0 and the offset over their prior centres +- this many sd
PHI_PRIOR_DOF = 4.0  # the dispersion is shrunk towards 1 with this many pseudo degrees of freedom


@dataclass
class Fit:
    """The profile-likelihood maximum (theta, log A0 = u, log r = v) and its intervals."""

    theta: float
    u: float
    v: float
    low: float  # final (1 - alpha) profile interval, theta
    high: float
    loc_low: float  # localisation hull, theta
    loc_high: float
    f: float = 0.5  # the offset (the noise's fixed point) at the maximum
    phi: float = 1.0  # the dispersion the interval was scaled by (``ProfileFit.dispersion``)


class ProfileFit:
    """The rounds of one estimate and their fit (``refit``), interval and tests."""

    def __init__(self, prior: DecayPrior, alpha: float, stop_share: float, localise: float, gof_level: float) -> None:
        self.prior, self.alpha, self.gof_level, self.stop_share = prior, alpha, gof_level, stop_share
        self.c_final = chi2_1_ppf(1 - alpha * stop_share)
        self.c_loc = chi2_1_ppf(1 - localise)
        self.rounds: list[Round] = []
        self.fit: Fit | None = None
        self.modes = 1  # disjoint parts of the final profile-likelihood set (``span_other_modes``)
        self._tests: dict[str, tuple[tuple[Any, int], Any]] = {}  # ``_cached``

    def terms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ks, shots, scales) of the likelihood terms so far (one per (k, scale)), raw shots
        (the information functions temper planned shots themselves)."""
        data = Pooled.of(self.rounds)
        return data.ks, data.shots, data.scales

    def data(self) -> Pooled:
        """The pooled counts as the likelihood sees them: ``tempered`` by the model error."""
        return tempered(Pooled.of(self.rounds), self.prior)

    def at_fit(self) -> DecayPrior:
        """The prior with its offset at the fitted one: what the tests and the design's
        information read (they hold the offset fixed)."""
        return self.prior if self.fit is None or self.fit.f == self.prior.offset else replace(self.prior, offset=self.fit.f)

    def threshold(self) -> float:
        """The interval's threshold on 2 (l_max - l_p): ``c_final`` (chi2_1 at 1 - s alpha), or,
        where every count sits at one end (no ones at all, or only ones), -2 log(s alpha) when
        that is larger. There the likelihood is the tail probability itself, P(all zeros | theta),
        and the chi2_1 calibration of the ratio fails at the boundary; with -2 log(s alpha) every
        theta kept has P(all zeros | theta) >= s alpha P(all zeros | theta_hat), so the interval
        holds the exact one-sided binomial bound at level s alpha (Clopper and Pearson 1934).
        Early stops at the ends of the range missed before (docs/mlae.md, "Counts at one end")."""
        return self._cached("threshold", self._threshold)

    def _threshold(self) -> float:
        data = Pooled.of(self.rounds)
        if data.ks.size and (not data.ones.any() or np.array_equal(data.ones, data.shots)):
            return max(self.c_final, -2.0 * math.log(self.alpha * self.stop_share))
        return self.c_final

    def profiled(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return profile_nuisances(grid, self.data(), self.prior)

    def dispersion(self, theta: float, u: float, v: float, f: float) -> float:
        """phi = max(1, (D + nu) / (dof + nu)): the tempered deviance at (theta, u, v, f) over its
        degrees of freedom (quasi-likelihood, McCullagh and Nelder 1989, Sec. 9.2), shrunk
        towards 1 by nu = ``PHI_PRIOR_DOF`` pseudo dof (a scaled inverse chi-square prior on
        phi centred on 1: with one dof, D / dof exceeds 3.8 in 5% of fitting runs, and the
        estimate then chased a width it could not reach); the interval's threshold is
        multiplied by it, so it grows with the evidence of misfit. 1 without dof,
        and 1 with the decay fixed (decay 'none': the model has no nuisance to be wrong in;
        the goodness of fit alone guards it, ``widened``)."""
        data = self.data()
        dof = len(data.ks) - 1 - self.prior.free
        if dof < 1 or not self.prior.free:
            return 1.0
        return max(1.0, (deviance(theta, u, v, data, self.prior, f) + PHI_PRIOR_DOF) / (dof + PHI_PRIOR_DOF))

    def span_other_modes(self) -> None:
        """Make the final interval the hull of the whole profile-likelihood set, not of its part
        in the localisation window. The window only narrows as rounds come in, so a mode it left
        behind can come back within the threshold (docs/mlae.md). Every mode of the likelihood sits
        where the deepest power K reads the fitted phase, at the aliases
        theta' = (j pi +- (2K + 1) theta) / (2K + 1): each alias outside the window is profiled
        at its centre; those within ``c_final`` + ``ALIAS_SLACK`` of the best are profiled on a
        fine grid over their own fringe (+- pi / (2 (2K + 1)), up to the window), and the
        interval (and, if one is higher, the estimate) takes every theta within ``c_final`` of
        the best point seen; ``modes`` counts the disjoint parts of that set."""
        f, data = self.fit, self.data()
        m = 2 * int(data.ks.max()) + 1
        if m == 1 or f is None:
            return  # k = 0 alone: P(1) is monotone in theta, one mode
        phase, half = m * f.theta, math.pi / (2 * m)
        centres = np.array(sorted({(j * math.pi + sign * phase) / m for j in range(m + 1) for sign in (1, -1)}))
        centres = centres[(centres >= 0) & (centres <= math.pi / 2) & ((centres < f.loc_low) | (centres > f.loc_high))]
        if centres.size == 0:
            return
        fine, ll, _, _, _ = self._fine
        threshold = self.threshold() * f.phi
        near = centres[2 * (float(ll.max()) - self.profiled(centres)[0]) <= threshold + ALIAS_SLACK]
        if near.size == 0:
            return
        grids = [self._fine]
        for centre in near:  # its fringe, up to the window (which the fit's own grid covers)
            low, high = max(0.0, centre - half), min(math.pi / 2, centre + half)
            low, high = (low, min(high, f.loc_low)) if centre < f.loc_low else (max(low, f.loc_high), high)
            grid = np.linspace(low, high, GRID)
            grids.append((grid, *self.profiled(grid)))
        top = max(float(values.max()) for _, values, _, _, _ in grids)
        spans = [crossings(grid, 2 * (top - values), threshold) for grid, values, _, _, _ in grids
                 if np.any(2 * (top - values) <= threshold)]
        if len(spans) == 1 and spans[0] == (f.low, f.high):
            return
        grid, values, u, v, off = max(grids, key=lambda g: float(g[1].max()))
        i = int(np.argmax(values))
        low, high = min(a for a, _ in spans), max(b for _, b in spans)
        parts: list[list[float]] = []
        for a, b in sorted(spans):  # touching spans are one part of the set
            if parts and a <= parts[-1][1] + 1e-12:
                parts[-1][1] = max(parts[-1][1], b)
            else:
                parts.append([a, b])
        self.modes = len(parts)
        self.fit = Fit(float(grid[i]), float(u[i]), float(v[i]), low, high, min(f.loc_low, low), max(f.loc_high, high),
                       float(off[i]), f.phi)

    def refit(self, whole: bool = False) -> None:
        """The maximum over a grid of theta, and the interval {2 (l_max - l_p) <= phi c_final}
        (``dispersion`` phi at the coarse grid's maximum)."""
        lo, hi = (0.0, math.pi / 2) if self.fit is None or whole else (self.fit.loc_low, self.fit.loc_high)
        for _ in range(8):  # widen if the localisation set reaches the grid's edge
            grid = np.linspace(lo, hi, GRID)
            ll, u, v, off = self.profiled(grid)
            j = int(np.argmax(ll))
            phi = self.dispersion(float(grid[j]), float(u[j]), float(v[j]), float(off[j]))
            lr = 2 * (ll.max() - ll)
            inside = np.flatnonzero(lr <= max(self.c_loc, self.threshold() * phi))  # the hull holds the interval too
            step = (hi - lo) / (GRID - 1)
            grow_lo = inside[0] == 0 and lo > 0
            grow_hi = inside[-1] == GRID - 1 and hi < math.pi / 2
            if not (grow_lo or grow_hi):
                break
            width = hi - lo
            lo = max(0.0, lo - width) if grow_lo else lo
            hi = min(math.pi / 2, hi + width) if grow_hi else hi
        loc_lo = max(0.0, grid[inside[0]] - step)
        loc_hi = min(math.pi / 2, grid[inside[-1]] + step)
        fine = np.linspace(loc_lo, loc_hi, GRID)
        ll, u, v, off = self.profiled(fine)
        i = int(np.argmax(ll))
        low, high = crossings(fine, 2 * (ll[i] - ll), self.threshold() * phi)
        self.fit = Fit(float(fine[i]), float(u[i]), float(v[i]), low, high, loc_lo, loc_hi, float(off[i]), phi)
        self._fine = (fine, ll, u, v, off)

    def half_width(self) -> float:
        f = self.fit
        return 0.5 * (math.sin(f.high) ** 2 - math.sin(f.low) ** 2)

    def _cached(self, name: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept until the fit or the rounds change (the loop, ``check`` and
        ``result`` ask for the same tests of one fit)."""
        key = (self.fit, len(self.rounds))
        kept = self._tests.get(name)
        if kept is None or kept[0][0] is not key[0] or kept[0][1] != key[1]:
            kept = self._tests[name] = (key, compute())
        return kept[1]

    def gof(self) -> tuple[float, int, float]:
        """(deviance, dof, p-value); dof 0 means untested (p = 1)."""
        return self._cached("gof", self._gof)

    def _gof(self) -> tuple[float, int, float]:
        data = self.data()
        f = self.fit
        dev = deviance(f.theta, f.u, f.v, data, self.prior, f.f)
        dof = len(data.ks) - 1 - self.prior.free
        return dev, dof, float(chdtrc(dof, dev)) if dof > 0 else 1.0

    def rotation(self) -> tuple[float, float]:
        """(score statistic, p-value) of the coherent over-rotation test (``rotation_score``);
        untested (0, 1) until the data resolve delta to ``ROTATION_SD`` rad (sd): with less,
        the asymptotic test false-alarmed (docs/mlae.md) and could not have seen any delta
        that small anyway."""
        return self._cached("rotation", self._rotation)

    def _rotation(self) -> tuple[float, float]:
        data = self.data()
        if len(data.ks) < 2:
            return 0.0, 1.0
        f = self.fit
        stat, info = rotation_score(f.theta, f.u, f.v, data, self.at_fit())
        if info < ROTATION_SD**-2:
            return 0.0, 1.0
        return stat, float(chdtrc(1, stat))

    def rotation_statistic(self) -> float:
        """The score statistic for an over-rotation, ungated (``rotation`` reports 0 below
        ``ROTATION_SD``, where the test false-alarms; a bound on delta must still use it)."""
        return self._cached("statistic", self._statistic)

    def _statistic(self) -> float:
        data = self.data()
        if len(data.ks) < 2:
            return 0.0
        f = self.fit
        return rotation_score(f.theta, f.u, f.v, data, self.at_fit())[0]

    def rotation_lever(self) -> float:
        """d theta* / d delta: how far the fitted theta moves per radian of over-rotation
        (``rotation_information``; White 1982)."""
        return self._cached("lever", self._lever)

    def _lever(self) -> float:
        f = self.fit
        ks, shots, scales = self.terms()
        return rotation_information(f.theta, f.u, f.v, ks, shots, self.at_fit(), scales)[1]

    def rotation_reach(self) -> tuple[float, float, float]:
        """(sd, detectable, shift): the sd (rad) with which all the data resolve an
        over-rotation delta of every Grover step (expected efficient information at the fit,
        ``rotation_information``), the delta the score test flags with probability
        ``ROTATION_POWER`` at ``gof_level`` ((z_(1 - gof_level / 2) + z_power) sd), and the
        shift of the fitted amplitude per radian of delta (linearised, amplitude units)."""
        return self._cached("reach", self._rotation_reach)

    def _rotation_reach(self) -> tuple[float, float, float]:
        f = self.fit
        ks, shots, scales = self.terms()
        info, dtheta = rotation_information(f.theta, f.u, f.v, ks, shots, self.at_fit(), scales)
        sd = info**-0.5 if info > 0 else math.inf
        # above ROTATION_SD the test does not run (``rotation``): no delta is flagged at all
        detectable = float(ndtri(1 - self.gof_level / 2) + ndtri(ROTATION_POWER)) * sd if sd <= ROTATION_SD else math.inf
        return sd, detectable, math.sin(2 * f.theta) * dtheta

    def model_fits(self) -> bool:
        """Both tests pass at ``gof_level`` (tested at the end, in ``check``; ``loop`` stops
        on a deviance p below ``IN_LOOP_SHARE`` gof_level)."""
        level = self.gof_level
        return self.gof()[2] >= level and self.rotation()[1] >= level

    def widened(self, dev: float, dof: int) -> tuple[float, float]:
        """Amplitude interval when the model does not fit (module docstring)."""
        phi = max(1.0, dev / max(dof, 1))
        # the dispersion-scaled region can reach past the localisation hull: profile over all theta
        whole = np.linspace(0.0, math.pi / 2, GRID)
        ll = self.profiled(whole)[0]
        low, high = crossings(whole, 2 * (ll.max() - ll) / phi, self.threshold())
        a_low, a_high = math.sin(low) ** 2, math.sin(high) ** 2
        s_low, s_high = shallow_interval(self.rounds, self.prior, self.alpha)
        return min(a_low, s_low), max(a_high, s_high)


def crossings(grid: np.ndarray, lr: np.ndarray, threshold: float) -> tuple[float, float]:
    """Hull of {lr <= threshold} on the grid, its ends interpolated linearly."""
    inside = np.flatnonzero(lr <= threshold)
    i, j = int(inside[0]), int(inside[-1])

    def cross(a: int, b: int) -> float:
        la, lb = lr[a], lr[b]
        t = 0.0 if lb == la else (threshold - la) / (lb - la)
        return float(grid[a] + min(max(t, 0.0), 1.0) * (grid[b] - grid[a]))

    low = float(grid[0]) if i == 0 else cross(i - 1, i)
    high = float(grid[-1]) if j == len(grid) - 1 else cross(j + 1, j)
    return low, high


def shallow_value(rounds: list[Round], prior: DecayPrior) -> float:
    """Amplitude from the unfolded k = 0 rounds alone, readout inverted, A0 and the offset f at
    their prior values (q_0 = readout(f + A0 (a - f)))."""
    shots = sum(r.shots for r in rounds if r.k == 0 and r.scale == 1)
    ones_ = sum(r.ones for r in rounds if r.k == 0 and r.scale == 1)
    x = (ones_ / max(shots, 1) - prior.p01) / prior.gain - prior.offset
    return min(1.0, max(0.0, prior.offset + x / prior.a0))


def shallow_interval(rounds: list[Round], prior: DecayPrior, alpha: float) -> tuple[float, float]:
    """Amplitude interval from the k = 0 rounds alone: Clopper-Pearson on q_0, readout
    inverted, A0 and the offset f over their prior ranges (``k0_ends``; docs/mlae.md). Folded
    k = 0 rounds (contrast below A0) are left out."""
    shots = sum(r.shots for r in rounds if r.k == 0 and r.scale == 1)
    ones_ = sum(r.ones for r in rounds if r.k == 0 and r.scale == 1)
    if shots == 0:
        return 0.0, 1.0
    q_low, q_high = clopper_pearson(ones_, shots, alpha)
    low, high = k0_ends(np.asarray([q_low]), np.asarray([q_high]), prior)
    return float(low[0]), float(high[0])


def k0_ends(q_low: np.ndarray, q_high: np.ndarray, prior: DecayPrior) -> tuple[np.ndarray, np.ndarray]:
    """The amplitude interval that k = 0 probabilities in [``q_low``, ``q_high``] allow, for every
    A0 and offset the prior allows: q_0 = readout(f + A0 (a - f)) inverted, a = f + (x - f) / A0
    with x = (q_0 - p01) / gain, over the corners of x in [x(q_low), x(q_high)], A0 in
    [exp(log a0 - PRIOR_Z sd), 1] and f in prior.offset +- PRIOR_Z offset_sd (a is linear in
    each of x, f and 1 / A0, so the corners bound it), clipped to [0, 1]. This interval serves
    when the decay model did not fit, so it does not trust A0's prior sd below
    ``FALLBACK_A0_SD`` (a fixed A0, decay none, stays fixed); a fixed offset stays fixed."""
    g = prior.gain
    sd = 0.0 if prior.a0_sd == 0 else max(prior.a0_sd, FALLBACK_A0_SD)
    a0_low = min(1.0, prior.a0 * math.exp(-PRIOR_Z * sd))
    spread = PRIOR_Z * prior.offset_sd
    offsets = {min(max(prior.offset + s, 0.0), 1.0) for s in (-spread, spread)}
    ends = [np.clip(f + ((q - prior.p01) / g - f) / a0, 0.0, 1.0)
            for q in (q_low, q_high) for a0 in (a0_low, 1.0) for f in sorted(offsets)]
    return np.min(ends, axis=0), np.max(ends, axis=0)


def chi2_1_ppf(q: float) -> float:
    """The q-quantile of chi-square with one degree of freedom (``scipy.stats.chi2.ppf(q, 1)``)."""
    return float(2.0 * gammaincinv(0.5, q))
