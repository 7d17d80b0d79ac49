"""The noise-aware amplitude likelihood, as pure functions on arrays (``qbo.qmc.mlae``).

A shot of Q^k A reads 1 with probability (issue 9, item 1)

    q_k(theta; A0, r, f) = p01 + g (f + A0 r^k (sin^2((2k + 1) theta) - f)),  g = 1 - p01 - p10,

the depolarising-decay model of Tanaka et al. 2021 (contrast e^{-gamma (2k+1)}, here split
into a SPAM contrast A0 and a per-Grover-step contrast r) composed with the measured qubit's
readout confusion (p01 = P(1|0), p10 = P(0|1)), which enters the likelihood directly, not
as an inversion. The offset f is the P(1) of the decayed part, the noise's fixed point: 1/2
under depolarising noise, below it where amplitude damping pulls towards |0> (issue 24);
at f = 1/2 this is the symmetric model, term for term. With A0 = r = 1 and no readout error
it is Suzuki et al. 2020's p_k = sin^2((2k + 1) theta). Counts are pooled per k (the
sufficient statistic), and

    l(theta, u, v, f) = sum_k y_k log q_k + (n_k - y_k) log(1 - q_k)
                        - (u - u0)^2 / (2 su^2) - (v - v0)^2 / (2 sv^2) - (f - f0)^2 / (2 sf^2),

u = log A0, v = log r, f with Gaussian priors (sd 0 fixes a nuisance at its prior value).
``profile`` maximises l over (u, v, f) for every theta of a grid by Fisher scoring (the
expected information below, plus the prior precisions; at most ``ITERATIONS`` steps from
the prior mean, projected onto A0, r <= 1).

Model error (``tempered``). No decay model is exact: the channels of a device are not one
exponential towards one fixed point. Its error in P(k) is taken as a share kappa of the
decayed part, sd tau_k = kappa g (1 - c_k) with c_k the prior's (the calibration depth
model's) contrast, and a term of n shots counts as n / (1 + n tau_k^2 / (q (1 - q))) shots
(the variance of the frequency is q (1 - q) / n + tau_k^2): a power's information
saturates, so no budget drives the interval below what the model itself can promise. The
information functions (``fisher``, ``rotation_information``) temper planned shots the same
way; they hold the offset fixed (at the fit, by the caller).

Expected information per shot of Q^k A, parameters (theta, u, v), q' the gradient of q_k:
I_k = q' q'^T / (q_k (1 - q_k)) with dq/dtheta = g A0 r^k (2k + 1) sin(2 (2k + 1) theta),
dq/du = g A0 r^k (s_k - 1/2), dq/dv = k dq/du (Suzuki et al. 2020's Fisher information
4 N (2k + 1)^2 when noiseless; Tanaka et al. 2021's two-parameter matrix, which degenerates
at anomalous theta, when not).

Folded powers (zero-noise extrapolation's circuits as extra likelihood terms, ``qbo.qmc.mlae``):
C (C^dagger C)^n, C = Q^k A, scale s = 2n + 1 (global folding, Giurgica-Tiron et al. 2020,
Sec. II.A), is the same unitary, so its ideal P(1) is sin^2((2k + 1) theta); only its
contrast differs, and every term is a binomial sharing theta, A0 and r. Its log contrast is
u + d v + o (``decay_exponents``), with two models of what one fold C^dagger C adds:
- per call (``prior.b`` None): the depolarising picture behind r (Tanaka et al. 2021): Q^k A
  makes 2k + 1 oracle calls at contrast A0 r^k, so each call contributes sqrt(r) and, SPAM
  absorbed in A0, a circuit of s (2k + 1) calls has contrast A0 r^((s (2k + 1) - 1) / 2):
  d = (s (2k + 1) - 1) / 2, o = 0;
- per block (``prior.b`` = b): a fold runs 2k Grover steps (Q^dagger as noisy as Q) and one
  A^dagger A pair of contrast b, so the contrast is A0 r^(s k) b^n: d = s k, o = n log b.
  With b = r this is the per-call model; b is taken from the calibration depth model
  (``qbo.noise.depth``, c(0, 3) / c(0, 1)), where the reflections make a Grover step cost
  more than two oracle calls' worth of contrast (measured, ``bench/noise.py --fold-fit``).
At s = 1 both give d = k, o = 0: the unfolded likelihood, term for term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ITERATIONS = 12
TINY = 1e-12
FIXED_SD = 1e-9  # a prior this narrow fixes the nuisance


@dataclass(frozen=True)
class DecayPrior:
    """Gaussian priors on u = log A0 and v = log r, and the measured qubit's readout flips.

    ``a0_sd`` / ``r_sd`` are standard deviations of log A0 / log r; 0 fixes that nuisance.
    The default (A0 = r = 1 fixed, no readout error) is the noiseless model.
    """

    a0: float = 1.0
    r: float = 1.0
    a0_sd: float = 0.0
    r_sd: float = 0.0
    p01: float = 0.0
    p10: float = 0.0
    source: str = "noiseless"
    b: float | None = None  # contrast of a fold's A^dagger A pair; None: per call, b = r (module docstring)
    offset: float = 0.5  # readout-free P(1) of the decayed part: the noise's fixed point (module docstring)
    offset_sd: float = 0.0  # prior sd of the offset; 0 fixes it
    model_error: float = 0.0  # kappa: sd of the model's error in P(k), as a share of g (1 - c_k) (``tempered``)

    def __post_init__(self) -> None:
        for name in ("a0", "r"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {value}")
        for name in ("a0_sd", "r_sd"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("p01", "p10"):
            if not 0 <= getattr(self, name) < 0.5:
                raise ValueError(f"readout {name} must be in [0, 0.5), got {getattr(self, name)}")
        if self.b is not None and not 0 < self.b <= 1:
            raise ValueError(f"fold contrast b must be in (0, 1] or None, got {self.b}")
        if not 0 < self.offset < 1:
            raise ValueError(f"offset must be in (0, 1), got {self.offset}")
        for name in ("offset_sd", "model_error"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    @property
    def free(self) -> int:
        """Number of free nuisances (0 to 3: A0, r, the offset)."""
        return int(self.a0_sd > 0) + int(self.r_sd > 0) + int(self.offset_sd > 0)

    @property
    def noiseless(self) -> bool:
        return (self.free == 0 and self.a0 == 1.0 and self.r == 1.0 and self.p01 == 0.0 and self.p10 == 0.0
                and self.model_error == 0.0)

    @property
    def gain(self) -> float:
        return 1.0 - self.p01 - self.p10

    def precisions(self) -> tuple[float, float]:
        return 1.0 / max(self.a0_sd, FIXED_SD) ** 2, 1.0 / max(self.r_sd, FIXED_SD) ** 2


@dataclass(frozen=True)
class Pooled:
    """Counts pooled per (Grover power, fold scale), one binomial term each, ascending in
    (k, scale); ``scales`` None means every term unfolded (scale 1)."""

    ks: np.ndarray
    shots: np.ndarray
    ones: np.ndarray
    scales: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.scales is None:
            object.__setattr__(self, "scales", np.ones_like(np.asarray(self.ks, dtype=float)))

    @classmethod
    def of(cls, rounds) -> "Pooled":
        terms = sorted({(r.k, r.scale) for r in rounds})
        shots = np.array([sum(r.shots for r in rounds if (r.k, r.scale) == t) for t in terms], dtype=float)
        ones = np.array([sum(r.ones for r in rounds if (r.k, r.scale) == t) for t in terms], dtype=float)
        return cls(np.array([t[0] for t in terms], dtype=float), shots, ones, np.array([t[1] for t in terms], dtype=float))


def decay_exponents(ks: np.ndarray, scales: np.ndarray | None, prior: DecayPrior) -> tuple[np.ndarray, np.ndarray]:
    """(d, o) with log contrast u + d v + o of Q^k A folded at ``scales`` (module docstring):
    per call d = (s (2k + 1) - 1) / 2, o = 0; per block d = s k, o = (s - 1) / 2 log b.
    Unfolded (s = 1) both give d = k, o = 0 exactly."""
    ks = np.asarray(ks, dtype=float)
    scales = np.ones_like(ks) if scales is None else np.asarray(scales, dtype=float)
    folds = (scales - 1) / 2
    if prior.b is None:
        return ks + folds * (2 * ks + 1), np.zeros_like(folds)
    return scales * ks, folds * math.log(prior.b)


def observed(
    theta: np.ndarray, k: np.ndarray, u: np.ndarray, v: np.ndarray, prior: DecayPrior, scale: np.ndarray | None = None,
    offset: np.ndarray | float | None = None,
) -> np.ndarray:
    """q_k(theta; e^u, e^v, f) = p01 + g (f + c (s_k - f)) with readout, broadcasting over all
    arguments; f is ``offset`` (default ``prior.offset``); ``scale`` folds the power (contrast
    e^(u + d v + o), ``decay_exponents``). At f = 1/2 it is the symmetric model, term for term."""
    s = np.sin((2 * k + 1) * theta) ** 2
    d, o = decay_exponents(k, scale, prior)
    c = np.exp(u + d * v + o)
    f = prior.offset if offset is None else offset
    return prior.p01 + prior.gain * (f + c * (s - f))


def prior_contrast(ks: np.ndarray, scales: np.ndarray | None, prior: DecayPrior) -> np.ndarray:
    """The contrast c_k = A0 r^d b^n the prior (the calibration depth model) predicts."""
    d, o = decay_exponents(ks, scales, prior)
    return np.exp(math.log(prior.a0) + d * math.log(prior.r) + o)


def model_sd(ks: np.ndarray, scales: np.ndarray | None, prior: DecayPrior) -> np.ndarray:
    """tau_k = kappa g (1 - c_k): the sd of the decay model's own error in P(k), a share kappa
    (``prior.model_error``) of the decayed part under the prior's contrast (module docstring)."""
    return prior.model_error * prior.gain * (1.0 - prior_contrast(ks, scales, prior))


def effective_shots(shots: np.ndarray, q: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """n / (1 + n tau^2 / (q (1 - q))): the shots whose binomial variance equals n shots'
    sampling variance plus a model error of sd tau (the information of a power saturates
    at q (1 - q) / tau^2 shots)."""
    q = np.clip(q, TINY, 1 - TINY)
    return np.asarray(shots, dtype=float) / (1.0 + np.asarray(shots, dtype=float) * tau**2 / (q * (1 - q)))


def tempered(data: "Pooled", prior: DecayPrior) -> "Pooled":
    """``data`` with every term's counts scaled to its ``effective_shots`` (the observed
    frequency, shrunk by a half count, stands for q): a fixed, data-only reweighting, so the
    tempered likelihood is a proper function of theta and of the nuisances. Unchanged when
    ``prior.model_error`` is 0."""
    if prior.model_error == 0:
        return data
    tau = model_sd(data.ks, data.scales, prior)
    share = effective_shots(data.shots, (data.ones + 0.5) / (data.shots + 1.0), tau) / np.maximum(data.shots, TINY)
    return Pooled(data.ks, data.shots * share, data.ones * share, data.scales)


def _loglik(y: np.ndarray, n: np.ndarray, q: np.ndarray) -> np.ndarray:
    q = np.clip(q, TINY, 1 - TINY)
    return np.sum(y * np.log(q) + (n - y) * np.log1p(-q), axis=-1)


def profile(thetas: np.ndarray, data: Pooled, prior: DecayPrior) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Penalised log-likelihood maximised over the nuisances at each theta: (l, u, v)."""
    return profile_nuisances(thetas, data, prior)[:3]


def profile_nuisances(
    thetas: np.ndarray, data: Pooled, prior: DecayPrior,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``profile`` with the offset: (l, u, v, f), f profiled too when ``prior.offset_sd`` > 0
    (a 3 x 3 Fisher-scoring step, dq/df = g (1 - c)); else f = ``prior.offset``."""
    thetas = np.asarray(thetas, dtype=float)
    u0, v0 = np.log(prior.a0), np.log(prior.r)
    u = np.full(thetas.shape, u0)
    v = np.full(thetas.shape, v0)
    f = np.full(thetas.shape, prior.offset)
    k, n, y = data.ks, data.shots, data.ones
    depth, offset = decay_exponents(k, data.scales, prior)
    th = thetas[:, None]
    pu, pv = prior.precisions()
    pf = 1.0 / max(prior.offset_sd, FIXED_SD) ** 2
    if prior.free and prior.offset_sd == 0:
        s = np.sin((2 * k + 1) * th) ** 2
        fk = prior.offset
        for _ in range(ITERATIONS):
            c = np.exp(u[:, None] + depth * v[:, None] + offset)
            q = np.clip(prior.p01 + prior.gain * (fk + c * (s - fk)), TINY, 1 - TINY)
            d = prior.gain * c * (s - fk)
            e = y / q - (n - y) / (1 - q)
            w = n / (q * (1 - q))
            gu = np.sum(e * d, axis=1) - pu * (u - u0)
            gv = np.sum(e * d * depth, axis=1) - pv * (v - v0)
            huu = np.sum(w * d * d, axis=1) + pu
            huv = np.sum(w * d * d * depth, axis=1)
            hvv = np.sum(w * d * d * depth * depth, axis=1) + pv
            det = huu * hvv - huv * huv
            du = np.clip((hvv * gu - huv * gv) / det, -0.5, 0.5)
            dv = np.clip((huu * gv - huv * gu) / det, -0.5, 0.5)
            u = np.clip(u + du, np.log(1e-3), 0.0)
            v = np.clip(v + dv, np.log(1e-3), 0.0)
            if max(np.max(np.abs(du)), np.max(np.abs(dv))) < 1e-7:
                break
    elif prior.free:
        s = np.sin((2 * k + 1) * th) ** 2
        for _ in range(ITERATIONS):
            c = np.exp(u[:, None] + depth * v[:, None] + offset)
            fk = f[:, None]
            q = np.clip(prior.p01 + prior.gain * (fk + c * (s - fk)), TINY, 1 - TINY)
            d = prior.gain * c * (s - fk)
            grads = np.stack([d, d * depth, prior.gain * (1.0 - c) + 0.0 * d], axis=1)  # (theta, 3, terms)
            e = y / q - (n - y) / (1 - q)
            w = n / (q * (1 - q))
            score = np.einsum("gat,gt->ga", grads, e) - np.stack(
                [pu * (u - u0), pv * (v - v0), pf * (f - prior.offset)], axis=1)
            hess = np.einsum("gat,gbt,gt->gab", grads, grads, w) + np.diag([pu, pv, pf])
            step = np.linalg.solve(hess, score[:, :, None])[:, :, 0]
            du, dv, df = np.clip(step[:, 0], -0.5, 0.5), np.clip(step[:, 1], -0.5, 0.5), np.clip(step[:, 2], -0.1, 0.1)
            u = np.clip(u + du, np.log(1e-3), 0.0)
            v = np.clip(v + dv, np.log(1e-3), 0.0)
            f = np.clip(f + df, 0.01, 0.99)
            if max(np.max(np.abs(du)), np.max(np.abs(dv)), np.max(np.abs(df))) < 1e-7:
                break
    q = observed(th, k, u[:, None], v[:, None], prior, data.scales, f[:, None])
    penalty = 0.0 if not prior.free else 0.5 * (pu * (u - u0) ** 2 + pv * (v - v0) ** 2 + pf * (f - prior.offset) ** 2)
    return _loglik(y, n, q) - penalty, u, v, f


def deviance(theta: float, u: float, v: float, data: Pooled, prior: DecayPrior, offset: float | None = None) -> float:
    """Binomial deviance 2 sum_k [y log(y / n q) + (n - y) log((n - y) / n (1 - q))] at the fit."""
    q = np.clip(observed(theta, data.ks, u, v, prior, data.scales, offset), TINY, 1 - TINY)
    y, n = data.ones, data.shots
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(y > 0, y * np.log(y / (n * q)), 0.0)
        b = np.where(n - y > 0, (n - y) * np.log((n - y) / (n * (1 - q))), 0.0)
    return float(2 * np.sum(a + b))


def fisher(
    theta: float, u: float, v: float, ks: np.ndarray, shots: np.ndarray, prior: DecayPrior,
    scales: np.ndarray | None = None,
) -> np.ndarray:
    """Expected information matrix for (theta, u, v) of ``shots[i]`` shots at ``ks[i]`` folded
    at ``scales[i]`` (default 1), plus the prior precisions (module docstring); with the
    offset free (``prior.offset_sd`` > 0) a fourth row and column for f (dq/df = g (1 - c),
    at f = ``prior.offset``), so ``theta_sd`` profiles it out too."""
    q, _, grad = _gradient(theta, u, v, ks, prior, scales)
    if prior.offset_sd > 0:
        depth, offset = decay_exponents(np.asarray(ks, dtype=float), scales, prior)
        grad = np.vstack([grad, prior.gain * (1.0 - np.exp(u + depth * v + offset))])
    w = _shots(shots, ks, scales, q, prior) / (q * (1 - q))
    info = (grad * w) @ grad.T
    pu, pv = prior.precisions()
    info[1, 1] += pu
    info[2, 2] += pv
    if prior.offset_sd > 0:
        info[3, 3] += prior.offset_sd**-2
    return info


def _gradient(
    theta: float, u: float, v: float, ks: np.ndarray, prior: DecayPrior, scales: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q_k, (2k + 1), the gradient of q_k for (theta, u, v), one row each) of the model."""
    k = np.asarray(ks, dtype=float)
    m = 2 * k + 1
    depth, offset = decay_exponents(k, scales, prior)
    c = np.exp(u + depth * v + offset)
    s = np.sin(m * theta) ** 2
    f = prior.offset
    q = np.clip(prior.p01 + prior.gain * (f + c * (s - f)), TINY, 1 - TINY)
    grad = np.stack([prior.gain * c * m * np.sin(2 * m * theta), prior.gain * c * (s - f), depth * prior.gain * c * (s - f)])
    return q, m, grad


def _shots(shots: np.ndarray, ks: np.ndarray, scales: np.ndarray | None, q: np.ndarray, prior: DecayPrior) -> np.ndarray:
    """Planned shots as the information sees them: ``effective_shots`` under the model error."""
    if prior.model_error == 0:
        return np.asarray(shots, dtype=float)
    return effective_shots(shots, q, model_sd(np.asarray(ks, dtype=float), scales, prior))


def theta_sd(info: np.ndarray, prior: DecayPrior) -> float:
    """sqrt((I^-1)_theta,theta) over theta and the free nuisances; inf when theta is not
    identified (a fixed nuisance is left out rather than given a huge precision)."""
    keep = [0] + ([1] if prior.a0_sd > 0 else []) + ([2] if prior.r_sd > 0 else [])
    keep += [3] if prior.offset_sd > 0 and info.shape[0] > 3 else []
    try:
        cov = np.linalg.inv(info[np.ix_(keep, keep)])
    except np.linalg.LinAlgError:
        return float("inf")
    var = cov[0, 0]
    return float(np.sqrt(var)) if np.isfinite(var) and var > 0 else float("inf")


def amplitude_half_width(theta: float, sd: float, z: float) -> float:
    """Half-width on a = sin^2 theta of theta +- z sd (delta method plus the curvature term,
    so theta near 0 or pi/2 is not predicted to give a zero-width interval)."""
    if not math.isfinite(sd):
        return math.inf
    return float(z * sd * abs(math.sin(2 * theta)) + (z * sd) ** 2)


def _rotation_terms(
    theta: float, u: float, v: float, ks: np.ndarray, shots: np.ndarray, prior: DecayPrior,
    scales: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gradient of q_k for (delta, theta, u, v), q_k, expected information matrix with the
    prior precisions) for ``rotation_score`` and ``rotation_information``."""
    q, m, model = _gradient(theta, u, v, ks, prior, scales)
    k = (m - 1) / 2
    grad = np.vstack([k * model[0] / m, model])  # delta, theta, u, v
    info = (grad * (_shots(shots, ks, scales, q, prior) / (q * (1 - q)))) @ grad.T
    pu, pv = prior.precisions()
    info[2, 2] += pu
    info[3, 3] += pv
    return grad, q, info


def rotation_score(theta: float, u: float, v: float, data: Pooled, prior: DecayPrior) -> tuple[float, float]:
    """Neyman's C(alpha) score statistic (chi2_1 under the model) for a coherent over-rotation
    delta of every Grover step, the alternative q_k with sin^2((2k + 1) theta + k delta)
    (Rao's score test, with the score for delta projected off the scores of theta and the
    free nuisances, so a grid MLE is good enough). dq/ddelta = k / (2k + 1) dq/dtheta: only
    the spread of k / (2k + 1) over the powers run separates delta from theta; with A0 fixed
    every shot at k < k_max adds the same lever, so cheap k = 0 shots detect it best (with A0
    free, ``rotation_information`` picks the powers). A nuisance at its
    bound (A0 = 1 or r = 1, score pointing out) is held fixed. Returns (statistic, efficient
    information for delta); 1 / sqrt(information) is the sd with which the data resolve delta.
    A folded term keeps its power's alternative phase (assumed: C^dagger undoes C's
    over-rotation, so the fold is the identity; the alternative only sets the test's
    direction) and its own decay (``decay_exponents``)."""
    n, y = data.shots, data.ones
    grad, q, info = _rotation_terms(theta, u, v, data.ks, n, prior, data.scales)
    e = y / q - (n - y) / (1 - q)
    score = grad @ e
    pu, pv = prior.precisions()
    score[2] -= pu * (u - math.log(prior.a0))
    score[3] -= pv * (v - math.log(prior.r))
    keep = [1]
    if prior.a0_sd > 0 and not (u >= -1e-9 and score[2] > 0):
        keep.append(2)
    if prior.r_sd > 0 and not (v >= -1e-9 and score[3] > 0):
        keep.append(3)
    i_dn = info[0, keep]
    try:
        solve = np.linalg.solve(info[np.ix_(keep, keep)], np.stack([i_dn, score[keep]], axis=1))
    except np.linalg.LinAlgError:
        return 0.0, 0.0
    eff_info = info[0, 0] - i_dn @ solve[:, 0]
    eff_score = score[0] - i_dn @ solve[:, 1]
    if not eff_info > 1e-12 * max(info[0, 0], TINY):
        return 0.0, 0.0
    return float(eff_score**2 / eff_info), float(eff_info)


def rotation_information(
    theta: float, u: float, v: float, ks: np.ndarray, shots: np.ndarray, prior: DecayPrior,
    scales: np.ndarray | None = None,
) -> tuple[float, float]:
    """Expected efficient information for an over-rotation delta (``rotation_score``'s
    alternative) of ``shots[i]`` shots at ``ks[i]``, theta and the free nuisances projected
    out, and the linearised shift of the null fit's theta per radian of delta,
    d theta* / d delta = (I_eta,eta^-1 I_eta,delta)_theta, eta = (theta, free nuisances): the
    pseudo-true theta the decay model converges to under an over-rotation (White 1982,
    Thm. 3.2, to first order). The non-centrality of the score test is delta^2 times the
    information."""
    _, _, info = _rotation_terms(theta, u, v, ks, shots, prior, scales)
    keep = [1] + ([2] if prior.a0_sd > 0 else []) + ([3] if prior.r_sd > 0 else [])
    i_dn = info[0, keep]
    try:
        solve = np.linalg.solve(info[np.ix_(keep, keep)], i_dn)
    except np.linalg.LinAlgError:
        return 0.0, math.inf
    eff_info = float(info[0, 0] - i_dn @ solve)
    return max(eff_info, 0.0), float(solve[0])
