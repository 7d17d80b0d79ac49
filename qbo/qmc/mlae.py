"""Noise-aware maximum-likelihood amplitude estimation (issue 9, items 1, 2 and 9).

Likelihood (``qbo.qmc.likelihood``): counts of Q^k A read 1 with probability
q_k = readout(1/2 + A0 r^k (sin^2((2k + 1) theta) - 1/2)), Suzuki et al. 2020's MLAE
likelihood (product of binomials over the powers run) with the depolarising decay of
Tanaka et al. 2021 split into a SPAM contrast A0 and a per-step contrast r, and the
measured qubit's confusion matrix inside q_k. A0 and r are nuisances: on the noiseless
target they are fixed at 1 (no decay); on a device model their Gaussian priors (on log A0,
log r) are centred on the calibration depth model (``qbo.noise.depth``: A0 = c_0,
r = c_1 / c_0 of the predicted contrasts) and they are profiled out, i.e. maximised for
every theta (Tanaka et al. 2022 remove the nuisances by orthogonalisation instead; the
profile likelihood is the same target, computed directly).

Schedule (adaptive, IAE-style localisation under this likelihood; Grinko et al. 2021,
Alg. 2 for the choice of K): round 0 is k = 0 with ``shots`` shots. After each round the
likelihood of *all* rounds is profiled on a grid over the current localisation interval,
and the localisation interval becomes the hull of {theta: 2 (l_max - l(theta)) <= chi2_1
quantile at 1 - ``localise``}. The next K = 4k + 2 is the largest <= pi / width with K times
the interval inside one half period and K >= ``growth`` times the last (any larger K if
none; else, noiseless, the same k with doubled shots as in IAE, or, with free nuisances,
k + 1, since more k = 0 shots cannot separate theta from A0), so the new round's likelihood has one mode
inside the interval: this is what keeps small budgets unimodal (issue 9: a fixed schedule
with equal shots was multimodal at ~1.3e3 calls). K is capped at pi / (2 eps) (no deeper
power is needed) and, on a noisy target, at the depth cap k_cap: the largest k whose
information per oracle call for theta, proportional to (2k + 1) r^(2k) (Fisher
information (2k + 1)^2 c_k^2 per shot over 2k + 1 calls; Giurgica-Tiron et al. 2022 make
the same trade of depth against contrast), is at least half its maximum over k, r the
prior r until three powers have run and the fitted r after. At the cap, each round runs
at the power (among those already run, and k_cap) that most reduces the predicted variance
of theta per call (greedy c-optimal design with the expected information matrix).

Shots: an intermediate round takes ``shots``; a round is final when the shots that the
expected information predicts reach half-width eps at this k are at most ``final_factor``
times that, and then it takes just those (at the cap: the predicted shots, but no more
than double the last round's at a repeated power, so the design can re-choose the power;
on a noisy target at least 1/8 of the shots so far, so the rounds grow geometrically).
With a ``budget`` the loop spends it (stops at ``budget``), even when eps is predicted
out of reach: the result is the best half-width that budget buys; and no power is deeper
than budget / (``BUDGET_ROUNDS`` ``shots``) calls a round, so the ladder of 16-shot rounds
leaves most of it for the shots that pin A0 and r (with the whole budget on the ladder,
coverage fell to 83% on fake_brisbane x bernoulli at 1.8e4 calls). Without a budget, eps
that needs more than ``max_calls`` is reported unreachable before the calls are spent.

Interval: profile likelihood, {theta: 2 (l_max - l_p(theta)) <= chi2_1(1 - s alpha)} mapped
to a = sin^2 theta, the nuisances maximised out, s = ``stop_share`` = 1/2 by default: the
loop stops the first time the interval is <= 2 eps wide, which selects intervals that are
short by chance, and at s = 1 the measured coverage was 0.943 (eps = 1e-3, 300 amplitudes);
at s = 1/2 it is 0.978 (600 amplitudes, ``bench/results/qmc_mlae.txt``), for about 10% more
calls. It is asymptotic (Wilks), so its coverage is measured (``bench/qmc.py``, ``tests/test_mlae.py``), not proved; ``IterativeAmplitude
Estimation`` remains the rigorous option (Clopper-Pearson with alpha spending).

Goodness of fit, two tests, each at ``gof_level``: (1) the binomial deviance of the fit over
the powers run, on (#powers - 1 - #free nuisances) degrees of freedom; (2) a score test
(Neyman's C(alpha), 1 dof; ``likelihood.rotation_score``) against a coherent over-rotation
delta of every Grover step, sin^2((2k + 1) theta + k delta). If either p-value is below
``gof_level`` the model does not describe the data (e.g. decay on a target assumed
noiseless, or a coherent error): the result says which test failed, ``reached_epsilon``
is False, and the interval is widened to the hull of the profile interval with the log-likelihood divided by
the dispersion D / dof (quasi-likelihood) and the interval of the k = 0 rounds alone
(readout-corrected Clopper-Pearson with A0 anywhere in its prior's +- 3 sd, below 1). Both
tests run on all the data at the end. After every round, a deviance p-value below
``IN_LOOP_SHARE`` gof_level stops the estimate (more shots cannot make a wrong model
right), unless a ``budget`` is given: then the budget is spent and only the final tests
count. Such an early misfit, while no power is deeper than ``RELOCALISE_K``, first
re-profiles theta over all of [0, pi/2]: with A0 free and 16 shots per power the
localisation can lose the right mode (fake_sherbrooke x bernoulli, a = 0.54, flagged after
256 calls, and read as 0.98 after the whole budget without this). Testing every round at
gof_level itself, with 16 shots per power where the deviance is far from chi2, flagged 2 to 5 of 100 runs of a fitting model on the device models, and
stopped them after a few hundred calls with useless intervals. The prior sd of log A0 is
``a0_sd`` = 0.05. On the shipped snapshots the depth model's A0 is within 0.03 in log
(0.6 sd) of a least-squares fit of the exact P(k), k = 0..40, at a = 0.2 and 0.8: 0.0003 on
the Bernoulli oracle and 0.002 to 0.029 on the entangled one. At sd 0.2 the fit could
settle in a wrong mode (fake_brisbane x bernoulli, a = 0.50: A0 = 0.47, a = 0.02).
When the over-rotation test fails, the value is the k = 0 estimate (the deep powers' phase
is off by ~ delta / 2; k = 0 has no Grover step).
Power: an over-rotation delta reads as theta + delta k / (2k + 1) at power k, so in the
parameters (theta, psi = 2 theta + delta) the phase is theta + k psi: deep powers fix psi,
and theta is the intercept. The score test's non-centrality is delta^2 I, I the efficient
information for delta (theta and the free nuisances projected out; ``rotation_information``),
so it flags delta with power 99% at gof_level 1e-3 from delta ~ 5.6 I^-1/2. With A0 fixed
every shot at k < k_max adds the same lever and k = 0 shots are the cheapest: I ~ N0 for N0
k = 0 shots, i.e. N0 ~ 36 / delta^2. ``check_shots`` buys them: a k = 0 round of that many
shots after the schedule (last, so the precise theta cannot steer the schedule into an alias
of the deep powers, as a big ``anchor_shots`` round 0 does). With A0 free, k = 0 counts fix
A0 (a - 1/2), not theta, and the intercept has to be read off the phase across powers: the
``check_shots`` honest calls then run in ``CHECK_ROUNDS`` rounds of equal calls, each at the
power (0..k_cap) that adds the most expected efficient information on delta per call at the
fit of the rounds before it (greedy design; mostly k = 0, with k = 1, 2 and a deep power
that pin A0 and r). Measured with ``bench/mlae_coherent.py`` (``ModelExecutor``: MLAE's
model with delta; 10 amplitudes x 3 seeds; ``bench/results/mlae_coherent.txt``):
- A0 fixed (noiseless model, eps = 1e-3): check_shots = 14400 resolves delta to sd 0.0084
  rad and flagged delta = 0.05 in 28 of 30 runs, none at delta = 0;
- A0 free (A0 0.95, r 0.915, readout 0.01 / 0.02; priors off-centre, sd of log A0 0.05; budget
  4e4): 14400 check calls at k = 0 resolve delta to a mean sd of 0.037 to 0.042 rad and
  flagged 7 and 14 of 30 runs at delta = 0.05 and 0.1; spent by the design, to 0.020 to
  0.021 rad, 8 and 25 of 30; 24000 design calls, 0.018 to 0.019 rad, 12 and 28 of 30; none
  flagged at delta = 0. Without a
  check the data resolve delta to sd ~ 0.1 rad and nothing was flagged, while delta = 0.1
  moved the estimate by 0.036 against a width of 0.006. At budget 16000 with 12000 design
  calls (sd 0.025 to 0.033): 22, 28, 30, 30 of 30 at delta = 0.1, 0.15, 0.2, 0.3.
Limitation: with A0 free the same calls resolve delta about 2.4 times worse (sd 0.020 against
0.0084 rad for 14400 calls), so an over-rotation below ~0.1 rad per Grover step can pass at
budgets of ~4e4 even with a third of the budget on checks, and with the default
check_shots = 0 (sd ~ 0.1 rad) one below ~0.5 rad; and the power is first-order theory: a
large delta can be partly absorbed into A0 and r (seen: A0 pushed to its bound, the score
near 0, and the deviance flagging the run instead). The result says so rather than widening
every interval:
diagnostics ``rotation_sd`` (I^-1/2, rad), ``rotation_detectable`` (None above ROTATION_SD; else (z_(1 - gof_level / 2) +
z_0.99) sd, rad) and ``rotation_shift`` (d value / d delta to first order, White 1982's
pseudo-true parameter, reward units per rad); on real hardware (``ibm:`` targets; the
device-model simulators ``aer:NAME`` and ``fake:BACKEND`` have no coherent error unless one
is injected, so the note would be noise there), when an over-rotation smaller than
``rotation_detectable`` would move the estimate by
more than its half-width, the note says how small and names the remedies: Pauli twirling
(``--twirl``), which turns a coherent two-qubit error into the decay the model fits
(docs/mlae.md), and more check calls.

Reachability (item 2), in ``Estimate.diagnostics``, reward units: ``reachable_half_width``
(the half-width reached with the calls spent; with a ``budget`` that stopped the loop, the
best reached at that budget), ``calls_for_epsilon``
(the honest calls predicted to reach eps by continuing the greedy design under the expected
information at the fit; None when not reachable) and ``epsilon_floor`` (0 when eps is
reachable under a fitting model: the fitted decay only slows the rate to 1/sqrt(calls)
beyond k_cap; when it is not, the half-width that MAX_CALLS more calls would leave, e.g. A0's
prior bounding what k = 0 counts say of a when no deeper power is usable; the reached
half-width when the model does not fit, since then no smaller claim is supported). Without
a budget the loop stops as unreachable only when eps is out of reach both at the fit and at
the point of its interval where a is closest to 1/2 (where the k = 0 counts say most of a).
At a fit on an end of [0, pi/2] the design's information is taken at the middle of the
interval instead (there dP/dtheta = 0: before this, a 6-qubit Gaussian oracle on
fake_torino, A0 = 0.065, was reported unreachable after 16 shots).

ZNE (issue 9, item 3; ``mitigation``, method 'mlae+zne'): zero-noise extrapolation's
folded powers C (C^dagger C)^n, C = Q^k A, scale s = 2n + 1 (global folding, Giurgica-Tiron
et al. 2020, Sec. II.A) enter as extra binomial terms of the same likelihood, not as an
extrapolation: every schedule round of n shots at power k runs every scale s_j of the
mitigation at its own split n_j (``shots_per_scale``; Richardson (1, 3): 13 and 3 of 16).
A fold is the same unitary, so its ideal P(1) is sin^2((2k + 1) theta), and it shares
theta, A0 and r; its contrast follows the depolarising picture (Tanaka et al. 2021) in one
of two forms (``qbo.qmc.likelihood``): per oracle call, A0 r^((s (2k + 1) - 1) / 2) (each of
the 2k + 1 calls of Q^k A contributes sqrt r, SPAM in A0; s = 1 gives A0 r^k), used without
a calibration; or per block, A0 r^(s k) b^n, b the contrast of one A^dagger A pair, fixed at
the calibration depth model's c(0, 3) / c(0, 1). On bench/noise.py's exact channels the
per-call form misfits the entangled oracle's folds (a Grover step's reflections cost more
contrast than two oracle calls), the per-block form fits them (``bench/noise.py --fold-fit``,
docs/noise.md). Readout stays inside the likelihood: the folded counts are not corrected,
and a mitigation's REM is not applied a second time ('rem' alone is refused). Every folded
shot costs s (2k + 1) calls: in ``Round.oracle_calls``, the budget (a round is cut to the
shots whose folded calls fit), the ladder cap (budget / (3 ``shots`` sum_j w_j s_j)), the
design's information per call, ``calls_for_epsilon`` and the cost model (the mitigation's
device-free split, ``ProbabilityEstimator.cost_model``). The goodness-of-fit tests run over
the (k, s) terms: the deviance on (#terms - 1 - #free nuisances) dof. The k = 0 check round
is not folded.

Honest calls: every round is a ``Round`` of shots of Q^k A, k = 0 included, at
shots (2k + 1) calls each, folded ones at shots s (2k + 1) (``Estimate.oracle_calls``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from scipy.special import chdtrc, gammaincinv, ndtri  # scipy.stats' chi2/norm, bit for bit, without its 0.5 s import

from qbo.execution.base import Executor
from qbo.execution.sampler import SAMPLER_PREFIX
from qbo.execution.targets import parse_target
from qbo.grover import power_circuit
from qbo.noise.depth import circuit_noise, depth_table, power_noise
from qbo.noise.readout import snapshot_confusion
from qbo.oracles.base import Oracle
from qbo.qmc.base import NOISELESS_TARGETS, CostCache, check_accuracy, run_round, to_estimate, unit_epsilon
from qbo.qmc.confidence import clopper_pearson
from qbo.qmc.iae import find_next_k
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.likelihood import (
    DecayPrior, Pooled, amplitude_half_width, deviance, fisher, profile, rotation_information, rotation_score, theta_sd,
)
from qbo.qmc.result import Estimate, Round
from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator

if TYPE_CHECKING:
    from qbo.noise import Snapshot

DECAYS = ("auto", "none", "fit")
GRID = 1025
ALIAS_SLACK = 4.0  # a mode probed off its peak may read up to this much lower in 2 log-likelihood
MAX_CALLS = 1e15
IN_LOOP_SHARE = 0.1  # after each round, a deviance p below this share of gof_level stops the estimate
RELOCALISE_K = 7  # a misfit while no power is deeper re-profiles theta over [0, pi/2] (the grid resolves it)
# The depth model's A0 (global depolarising over every gate of A) was within 0.03 in log of
# the exact noisy P(0) on the shipped oracles, where it predicts c_0 >= 0.94; for the 6-qubit
# Gaussian oracle on fake_torino (367 two-qubit gates) it predicts c_0 = 0.065 while the
# counts follow P ~ a (4080 k = 0 shots: 0.47 against the ideal 0.46). Below this contrast
# A0 gets sd |log c_0| on its log (A0 anywhere from about c_0 to 1): k = 0 counts then cannot
# pin a, and the estimate says so rather than trusting the model.
TRUSTED_CONTRAST = 0.5
HOPE_SHRINK = 0.9  # _hoping: least shrink of the half-width per doubling of the calls
ROTATION_SD = 0.1  # the over-rotation test runs once the data resolve delta to this sd (rad)
BUDGET_ROUNDS = 3  # with a budget B, no power deeper than B / (BUDGET_ROUNDS shots) calls a round
CHECK_ROUNDS = 8  # with A0 free, the check's calls run in this many rounds, each at the power the design picks
ROTATION_POWER = 0.99  # rotation_detectable: the over-rotation the test flags with this probability
Sampler = Callable[[int, int], tuple[Round, ...]]


@dataclass(frozen=True)
class MaximumLikelihoodAE:
    """Noise-aware MLAE to half-width ``epsilon`` (reward units) at level 1 - ``alpha``
    (profile-likelihood interval; module docstring).

    Args:
        epsilon: target half-width, reward units.
        alpha: 1 - confidence level of the (asymptotic) interval.
        shots: shots of an intermediate round.
        decay: 'none' (A0 = r = 1), 'fit' (profile the nuisances out) or 'auto' ('none' on
            the exact and noiseless aer targets, 'fit' elsewhere).
        prior: explicit nuisance priors and readout (overrides the snapshot's).
        snapshot: calibration giving the priors (default: the target's own, for
            ``aer:NAME`` and ``fake:BACKEND``; weak priors and no readout model otherwise).
        k_max: optional cap on the Grover power.
        budget: optional cap on honest oracle calls.
        localise: level of the localisation set that picks the next K.
        stop_share: the interval is taken at level 1 - stop_share * alpha (module docstring).
        growth: each new K is at least this multiple of the last, when possible.
        final_factor: a round is final if it needs at most this times ``shots``.
        gof_level: p-value below which the model is declared not to fit.
        a0_sd, r_sd: prior sd of log A0 (absolute) and of log r (relative to |log r|).
        max_rounds: hard cap on the circuits run (a round with folds runs one per scale).
        anchor_shots: shots of round 0 (k = 0; default ``shots``).
        check_shots: honest calls of the check rounds after the schedule (0: none; counted in
            ``budget``): with A0 fixed one k = 0 round of that many shots (about 36 / delta^2
            of them let the goodness of fit flag a coherent over-rotation delta of Q); with A0
            free, ``CHECK_ROUNDS`` rounds, each at the power that adds the most information
            on delta per call (module docstring, "Power").
        max_calls: without a ``budget``, eps needing more honest calls than this is reported
            unreachable before any of them are spent.
        mitigation: zero-noise extrapolation's folds as extra likelihood terms (a
            ``qbo.qmc.rounds.ProbabilityEstimator`` with fold scales, e.g.
            ``qbo.mitigation.Mitigation(scales=(1, 3))``): every schedule round runs each
            scale at the mitigation's own shot split (module docstring, "ZNE").
    """

    epsilon: float
    alpha: float = 0.05
    shots: int = 16
    decay: Literal["auto", "none", "fit"] = "auto"
    prior: DecayPrior | None = None
    snapshot: "Snapshot | None" = field(default=None, compare=False, repr=False)
    k_max: int | None = None
    budget: int | None = None
    localise: float = 1e-2
    stop_share: float = 0.5
    growth: float = 2.0
    final_factor: float = 2.0
    gof_level: float = 1e-3
    a0_sd: float = 0.05
    r_sd: float = 0.5
    max_rounds: int = 400
    max_calls: int = 10**9
    anchor_shots: int | None = None
    check_shots: int = 0
    mitigation: ProbabilityEstimator | None = None

    def __post_init__(self) -> None:
        check_accuracy(self.epsilon, self.alpha)
        if not (isinstance(self.shots, int) and self.shots >= 1):
            raise ValueError(f"shots must be an integer >= 1, got {self.shots}")
        if self.decay not in DECAYS:
            raise ValueError(f"decay must be one of {', '.join(DECAYS)}, got '{self.decay}'")
        if self.k_max is not None and self.k_max < 0:
            raise ValueError(f"k_max must be >= 0, got {self.k_max}")
        if self.budget is not None and self.budget < 1:
            raise ValueError(f"budget must be >= 1 oracle call, got {self.budget}")
        if not 0 < self.localise < 1:
            raise ValueError(f"localise must be in (0, 1), got {self.localise}")
        if not 0 < self.stop_share <= 1:
            raise ValueError(f"stop_share must be in (0, 1], got {self.stop_share}")
        if not (isinstance(self.check_shots, int) and self.check_shots >= 0):
            raise ValueError(f"check_shots must be an integer >= 0, got {self.check_shots}")
        if self.budget is not None and self.check_shots >= self.budget:
            raise ValueError(f"check_shots must be below the budget ({self.budget} calls), got {self.check_shots}")
        for name in ("growth", "final_factor"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        check_fold_mitigation(self.mitigation)
        if self.mitigation is not None and self.budget is not None:
            cheapest = sum(self.mitigation.scales)  # a folded round at k = 0 with one shot per scale
            if self.budget - self.check_shots < cheapest:
                raise ValueError(f"budget must leave at least {cheapest} calls for one folded round at scales "
                                 f"{tuple(self.mitigation.scales)} (after {self.check_shots} check shots), "
                                 f"got {self.budget}")

    # --- public API -------------------------------------------------------------------
    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        start = time.perf_counter()
        eps = unit_epsilon(oracle, self.epsilon)
        prior = self.prior_for(oracle, executor)
        folds = None if self.mitigation is None else self.mitigation.bind(executor, oracle)
        run = _Run(self, eps, prior, folds)
        plain = lambda k, n: (run_round(executor, oracle, k, n),)  # noqa: E731
        run.loop(plain if folds is None else folds.sample)
        run.check(plain)  # the k = 0 check round is never folded
        return run.result(oracle, executor.target, time.perf_counter() - start)

    def planned_calls(self, oracle: Oracle) -> float:
        """The cost model for ``oracle`` (Dai et al. 2023, Alg. 1 line 5 plans a stage with it)."""
        return self.expected_calls(unit_epsilon(oracle, self.epsilon))

    def expected_calls(self, epsilon_unit: float) -> float:
        """Cost model on the noiseless likelihood: mean calls of the schedule when every round
        reads its expected count, over amplitudes (j + 1/2) / 16, plus ``check_shots``; with
        folds, every round split as the mitigation's device-free cost model splits it
        (``ProbabilityEstimator.cost_model``), each folded shot at s (2k + 1) calls. Cached."""
        config = replace(self, snapshot=None, prior=None, decay="none", check_shots=0, mitigation=None)
        if self.mitigation is None:
            return _expected_calls(config, float(epsilon_unit)) + self.check_shots
        key, model = self.mitigation.cost_model()
        return _expected_calls(config, float(epsilon_unit), key, model) + self.check_shots

    def prior_for(self, oracle: Oracle, executor: Executor) -> DecayPrior:
        """The nuisance priors this estimate uses on ``executor`` (module docstring)."""
        noiseless = executor.target in NOISELESS_TARGETS
        if self.decay == "none" or (self.decay == "auto" and noiseless):
            return DecayPrior() if self.prior is None else replace(self.prior, a0_sd=0.0, r_sd=0.0)
        if self.prior is not None:
            return self.prior
        snapshot = self.snapshot if self.snapshot is not None else target_snapshot(executor.target)
        if snapshot is None:
            return DecayPrior(1.0, 1.0, 0.5, 0.1, source="weak (no calibration)")
        return calibration_prior(snapshot, oracle, executor, self.a0_sd, self.r_sd, folds=self.mitigation is not None)


def check_fold_mitigation(mitigation: ProbabilityEstimator | None) -> None:
    """One-line ValueError unless ``mitigation`` is None or folds (zero-noise extrapolation's
    scales) without bias pads: REM alone is a no-op for MLAE (readout is inside its
    likelihood) and pads widen IAE's round intervals, which MLAE does not use."""
    if mitigation is None:
        return
    if mitigation.covers_device_bias:
        raise ValueError(f"mitigation '{mitigation.name}' pads IAE's round intervals; MLAE fits the decay "
                         "instead: use 'zne' or 'zne+rem' without pads, or method 'iae'")
    if tuple(mitigation.scales) == (1,):
        raise ValueError(f"mitigation '{mitigation.name}' does nothing for method 'mlae': readout error is already "
                         "inside its likelihood (confusion matrix); use 'zne' (folds as extra likelihood terms) "
                         "or method 'iae'")


def target_snapshot(target: str) -> "Snapshot | None":
    """The calibration behind ``aer:NAME`` / ``fake:BACKEND`` (None for other targets)."""
    return None if target.startswith(SAMPLER_PREFIX) else parse_target(target).snapshot()  # a bare sampler has none


def calibration_prior(
    snapshot: "Snapshot", oracle: Oracle, executor: Any = None, a0_sd: float = 0.05, r_sd: float = 0.5,
    folds: bool = False,
) -> DecayPrior:
    """Priors from the depth model's contrasts c_0, c_1 (A0 = c_0, r = c_1 / c_0; sd of log r
    is ``r_sd`` |log r| + 0.005; sd of log A0 is ``a0_sd``, or |log c_0| where c_0 <
    ``TRUSTED_CONTRAST``) and the readout flips of the measured physical qubit; with
    ``folds``, the fold contrast b = c(0, 3) / c_0 of one A^dagger A pair
    (``qbo.qmc.likelihood``, per-block model), held fixed."""
    executor = executor if hasattr(executor, "compiled") else None
    rows = depth_table(snapshot, oracle, [0, 1], executor=executor)
    c0, c1 = max(rows[0].contrast, 1e-3), max(rows[1].contrast, 1e-6)
    r = min(1.0, c1 / c0)
    b = None
    if folds:
        c3 = power_noise(snapshot, oracle, 0, 3, getattr(executor, "transpile_cache", None)).contrast
        b = min(1.0, max(c3, 1e-6) / c0)
    compiled = (executor or _aer(snapshot)).compiled(power_circuit(oracle, 0))
    confusion = snapshot_confusion(snapshot, circuit_noise(snapshot, compiled).measured_qubit)
    p01, p10 = confusion.p01, confusion.p10
    if c0 < TRUSTED_CONTRAST:  # the depth model's SPAM contrast is not trusted this far out
        a0_sd = max(a0_sd, abs(math.log(c0)))
    return DecayPrior(
        min(1.0, c0), r, a0_sd, r_sd * abs(math.log(r)) + 0.005, p01, p10, source=f"calibration {snapshot.name}", b=b,
    )


def _aer(snapshot: "Snapshot") -> Any:
    from qbo.execution.aer import AerExecutor

    return AerExecutor(snapshot)


# --- one estimate ----------------------------------------------------------------------
@dataclass
class _Fit:
    theta: float
    u: float
    v: float
    low: float  # final (1 - alpha) profile interval, theta
    high: float
    loc_low: float  # localisation hull, theta
    loc_high: float


class _Run:
    """State of one estimate: rounds, fit, localisation; ``loop`` then ``result``."""

    def __init__(
        self, config: MaximumLikelihoodAE, eps: float, prior: DecayPrior, folds: RoundEstimator | None = None,
    ) -> None:
        self.cfg, self.eps, self.prior = config, eps, prior
        # a round of n shots runs scale s_j at split(n)[j] shots (no folds: all n at scale 1)
        self.scales: tuple[int, ...] = (1,) if folds is None else tuple(folds.scales)
        self.split: Callable[[Any], list] = (lambda n: [n]) if folds is None else folds.shots_per_scale
        big = 1 << 20
        self.per_shot = sum(m * s for m, s in zip(self.split(big), self.scales)) / big  # calls per shot / (2k + 1)
        self.z = float(ndtri(1 - config.alpha / 2))
        self.c_final = _chi2_1_ppf(1 - config.alpha * config.stop_share)
        self.c_loc = _chi2_1_ppf(1 - config.localise)
        big_k = math.pi / (2 * eps)
        if config.k_max is not None:
            big_k = min(big_k, 4 * config.k_max + 2)
        self.k_bound = max(2.0, big_k)
        self.rounds: list[Round] = []
        self.fit: _Fit | None = None
        self.k, self.last_shots = 0, 0
        self.finishing = False  # the last round at the cap was sized to finish (by the prediction)
        self.hope: tuple[int, float] | None = None  # (calls, half-width) when _hoping last measured progress
        self.stopped = "max_rounds"
        self.modes = 1  # disjoint parts of the final profile-likelihood set (``_span_other_modes``)
        self._tests: dict[str, tuple[tuple[Any, int], Any]] = {}  # ``_cached``
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
            r = math.exp(self.fit.v)
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
            self._refit()
            if self.gof()[2] < IN_LOOP_SHARE * cfg.gof_level:
                if max(r.k for r in self.rounds) <= RELOCALISE_K:  # perhaps a wrong mode: look again
                    self._refit(whole=True)
                if cfg.budget is None and self.gof()[2] < IN_LOOP_SHARE * cfg.gof_level:
                    self.stopped = "misfit"  # more shots cannot make a wrong model right
                    return
            if self.half_width() <= self.eps:
                self.stopped = "reached"
                return

    def check(self, sample: Sampler) -> None:
        """Both goodness-of-fit tests at ``gof_level`` on all the data, after the check rounds
        when there are any (``check_shots`` honest calls, after the schedule, so that they
        cannot steer it). With A0 fixed, one round of ``check_shots`` shots of A (k = 0): it
        pins theta without any Grover step, so a coherent error of Q shows as a disagreement
        with the deep powers. With A0 free, k = 0 counts pin A0 (a - 1/2) rather than theta:
        the calls run in ``CHECK_ROUNDS`` rounds of equal calls, each at the power
        (``_check_power``) that adds the most expected efficient information on delta per call
        at the fit of all the rounds before it (greedy design; module docstring, "Power")."""
        calls = self.cfg.check_shots
        parts = 1 if self.prior.a0_sd == 0 else CHECK_ROUNDS
        if calls >= 1 and self.stopped != "misfit":
            for i in range(parts):
                part = (calls - sum(n * (2 * k + 1) for k, n in self.checked)) // (parts - i)  # what is left, evenly
                k = 0 if parts == 1 else self._check_power(part)
                n = part // (2 * k + 1)
                if n >= 1:
                    self.rounds.extend(sample(k, n))
                    self.checked.append((k, n))
                    self._refit()
        self._span_other_modes()
        if not self.model_fits():
            self.stopped = "misfit"

    def _span_other_modes(self) -> None:
        """Make the final interval the hull of the whole profile-likelihood set, not of its part
        in the localisation window. The window only narrows as rounds come in, so a mode it left
        behind can come back within the threshold (seen once: a = 0.52 read as 0.98, the true
        mode 0.83 in log-likelihood below the chosen one). Every mode of the likelihood sits
        where the deepest power K reads the fitted phase, at the aliases
        theta' = (j pi +- (2K + 1) theta) / (2K + 1): each alias outside the window is profiled
        at its centre; those within ``c_final`` + ``ALIAS_SLACK`` of the best are profiled on a
        fine grid over their own fringe (+- pi / (2 (2K + 1)), up to the window), and the
        interval (and, if one is higher, the estimate) takes every theta within ``c_final`` of
        the best point seen; ``modes`` counts the disjoint parts of that set."""
        f, data = self.fit, Pooled.of(self.rounds)
        m = 2 * int(data.ks.max()) + 1
        if m == 1 or f is None:
            return  # k = 0 alone: P(1) is monotone in theta, one mode
        phase, half = m * f.theta, math.pi / (2 * m)
        centres = np.array(sorted({(j * math.pi + sign * phase) / m for j in range(m + 1) for sign in (1, -1)}))
        centres = centres[(centres >= 0) & (centres <= math.pi / 2) & ((centres < f.loc_low) | (centres > f.loc_high))]
        if centres.size == 0:
            return
        fine, ll, _, _ = self._fine
        near = centres[2 * (float(ll.max()) - profile(centres, data, self.prior)[0]) <= self.c_final + ALIAS_SLACK]
        if near.size == 0:
            return
        grids = [self._fine]
        for centre in near:  # its fringe, up to the window (which the fit's own grid covers)
            low, high = max(0.0, centre - half), min(math.pi / 2, centre + half)
            low, high = (low, min(high, f.loc_low)) if centre < f.loc_low else (max(low, f.loc_high), high)
            grid = np.linspace(low, high, GRID)
            grids.append((grid, *profile(grid, data, self.prior)))
        top = max(float(values.max()) for _, values, _, _ in grids)
        spans = [_crossings(grid, 2 * (top - values), self.c_final) for grid, values, _, _ in grids
                 if np.any(2 * (top - values) <= self.c_final)]
        if len(spans) == 1 and spans[0] == (f.low, f.high):
            return
        grid, values, u, v = max(grids, key=lambda g: float(g[1].max()))
        i = int(np.argmax(values))
        low, high = min(a for a, _ in spans), max(b for _, b in spans)
        parts: list[list[float]] = []
        for a, b in sorted(spans):  # touching spans are one part of the set
            if parts and a <= parts[-1][1] + 1e-12:
                parts[-1][1] = max(parts[-1][1], b)
            else:
                parts.append([a, b])
        self.modes = len(parts)
        self.fit = _Fit(float(grid[i]), float(u[i]), float(v[i]), low, high, min(f.loc_low, low), max(f.loc_high, high))

    # --- decisions ----------------------------------------------------------------------
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
                extra = self._calls_to_reach(self.eps)
                if extra is None or extra > self.max_calls - self.calls:  # at the fit; and where a is most
                    extra = self._hoping()  # learnable within the interval, while that still pays
                if extra is None or extra > self.max_calls - self.calls:
                    return k, None
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

    def _pooled(self, extra: tuple[int, float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ks, shots, scales) of the terms so far, plus a round of ``extra`` = (k, shots)."""
        data = Pooled.of(self.rounds)
        terms = (data.ks, data.shots, data.scales)
        return terms if extra is None else self._with(terms, *extra)

    def _with(self, terms: tuple[np.ndarray, ...], k: int, shots: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``terms`` plus a round of ``shots`` at power k, one term per fold scale."""
        ks, n, scales = terms
        split = self.split(shots)
        return (np.append(ks, [float(k)] * len(split)), np.append(n, np.asarray(split, dtype=float)),
                np.append(scales, np.asarray(self.scales, dtype=float)))

    def _theta_sd(self, terms: tuple[np.ndarray, ...], theta: float | None = None) -> float:
        f = self.fit
        ks, shots, scales = terms
        at = f.theta if theta is None else theta
        return theta_sd(fisher(at, f.u, f.v, ks, shots, self.prior, scales), self.prior)

    def _plan_theta(self) -> float:
        """Where ``_calls_to_reach`` evaluates the expected information: the fit, or the middle
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
        ok = lambda n: self._predicted_half_width(*self._pooled((k, n))) <= self.eps
        if not ok(limit):
            return None
        low, high = 0, 1
        while not ok(high):
            low, high = high, high * 2
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if ok(mid) else (mid, high)
        return high

    def _check_power(self, calls: int) -> int:
        """The power among 0..k_cap whose round of ``calls`` // (2k + 1) shots adds the most
        expected efficient information on an over-rotation delta per call
        (``rotation_information`` at the current fit; greedy c-optimal design for delta)."""
        f = self.fit
        ks, shots, scales = self._pooled()
        base = rotation_information(f.theta, f.u, f.v, ks, shots, self.prior, scales)[0]
        best, gain = 0, -math.inf
        for k in range(self.k_cap() + 1):
            n = calls // (2 * k + 1)
            if n < 1:
                break
            info = rotation_information(f.theta, f.u, f.v, np.append(ks, float(k)), np.append(shots, float(n)),
                                        self.prior, np.append(scales, 1.0))[0]
            g = (info - base) / (n * (2 * k + 1))
            if g > gain:
                best, gain = k, g
        return best

    def _best_power(self, cap: int) -> int:
        """Greedy design at the cap: the power (run before, or k_cap) whose next shots most
        reduce the predicted variance of theta per oracle call."""
        terms = self._pooled()
        return self._greedy(terms, sorted({int(x) for x in terms[0] if x <= cap} | {cap}), self.cfg.shots)

    def _greedy(self, terms: tuple[np.ndarray, ...], cands: list[int], n: float, theta: float | None = None) -> int:
        """The power among ``cands`` whose round of n shots adds the most expected information
        on theta (at ``theta``, default the fit) per honest call; the first on ties."""
        base = self._theta_sd(terms, theta) ** -2
        gains = [(self._theta_sd(self._with(terms, c, n), theta) ** -2 - base) / self.round_calls(c, n) for c in cands]
        return cands[int(np.argmax(gains))]

    # --- fitting ------------------------------------------------------------------------
    def _refit(self, whole: bool = False) -> None:
        data = Pooled.of(self.rounds)
        lo, hi = (0.0, math.pi / 2) if self.fit is None or whole else (self.fit.loc_low, self.fit.loc_high)
        for _ in range(8):  # widen if the localisation set reaches the grid's edge
            grid = np.linspace(lo, hi, GRID)
            ll, _, _ = profile(grid, data, self.prior)
            lr = 2 * (ll.max() - ll)
            inside = np.flatnonzero(lr <= max(self.c_loc, self.c_final))  # the hull holds the interval too
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
        ll, u, v = profile(fine, data, self.prior)
        i = int(np.argmax(ll))
        low, high = _crossings(fine, 2 * (ll[i] - ll), self.c_final)
        self.fit = _Fit(float(fine[i]), float(u[i]), float(v[i]), low, high, loc_lo, loc_hi)
        self._fine = (fine, ll, u, v)

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
        data = Pooled.of(self.rounds)
        f = self.fit
        dev = deviance(f.theta, f.u, f.v, data, self.prior)
        dof = len(data.ks) - 1 - self.prior.free
        return dev, dof, float(chdtrc(dof, dev)) if dof > 0 else 1.0

    def rotation(self) -> tuple[float, float]:
        """(score statistic, p-value) of the coherent over-rotation test (``rotation_score``);
        untested (0, 1) until the data resolve delta to ``ROTATION_SD`` rad (sd): with less,
        the asymptotic test false-alarmed (measured: 2 false flags in 60 runs at budgets of
        about 1.3e3 calls, bench/noise.py's B1) and could
        not have seen any delta that small anyway."""
        return self._cached("rotation", self._rotation)

    def _rotation(self) -> tuple[float, float]:
        data = Pooled.of(self.rounds)
        if len(data.ks) < 2:
            return 0.0, 1.0
        f = self.fit
        stat, info = rotation_score(f.theta, f.u, f.v, data, self.prior)
        if info < ROTATION_SD**-2:
            return 0.0, 1.0
        return stat, float(chdtrc(1, stat))

    def rotation_reach(self) -> tuple[float, float, float]:
        """(sd, detectable, shift): the sd (rad) with which all the data resolve an
        over-rotation delta of every Grover step (expected efficient information at the fit,
        ``rotation_information``), the delta the score test flags with probability
        ``ROTATION_POWER`` at ``gof_level`` ((z_(1 - gof_level / 2) + z_power) sd), and the
        shift of the fitted amplitude per radian of delta (linearised, amplitude units)."""
        return self._cached("reach", self._rotation_reach)

    def _rotation_reach(self) -> tuple[float, float, float]:
        f = self.fit
        ks, shots, scales = self._pooled()
        info, dtheta = rotation_information(f.theta, f.u, f.v, ks, shots, self.prior, scales)
        sd = info**-0.5 if info > 0 else math.inf
        # above ROTATION_SD the test does not run (``rotation``): no delta is flagged at all
        detectable = float(ndtri(1 - self.cfg.gof_level / 2) + ndtri(ROTATION_POWER)) * sd if sd <= ROTATION_SD else math.inf
        return sd, detectable, math.sin(2 * f.theta) * dtheta

    def model_fits(self) -> bool:
        """Both tests pass at ``gof_level`` (tested at the end, in ``check``; ``loop`` stops
        on a deviance p below ``IN_LOOP_SHARE`` gof_level)."""
        level = self.cfg.gof_level
        return self.gof()[2] >= level and self.rotation()[1] >= level

    def _widened(self, dev: float, dof: int) -> tuple[float, float]:
        """Amplitude interval when the model does not fit (module docstring)."""
        phi = max(1.0, dev / max(dof, 1))
        # the dispersion-scaled region can reach past the localisation hull: profile over all theta
        whole = np.linspace(0.0, math.pi / 2, GRID)
        ll, _, _ = profile(whole, Pooled.of(self.rounds), self.prior)
        low, high = _crossings(whole, 2 * (ll.max() - ll) / phi, self.c_final)
        a_low, a_high = math.sin(low) ** 2, math.sin(high) ** 2
        s_low, s_high = _shallow_interval(self.rounds, self.prior, self.cfg.alpha)
        return min(a_low, s_low), max(a_high, s_high)

    # --- the result ---------------------------------------------------------------------
    def result(self, oracle: Oracle, target: str, wall_time: float) -> Estimate:
        f = self.fit
        dev, dof, p = self.gof()
        rot, p_rot = self.rotation()
        deviance_fits, rotation_fits = p >= self.cfg.gof_level, p_rot >= self.cfg.gof_level
        fits = deviance_fits and rotation_fits
        a_low, a_high = math.sin(f.low) ** 2, math.sin(f.high) ** 2
        method_note = "profile likelihood, chi2_1 at 1 - alpha" + (
            ", nuisances A0, r maximised out" if self.prior.free else ", decay fixed at none"
        ) + (f"; hull of {self.modes} modes" if self.modes > 1 else "")
        value = math.sin(f.theta) ** 2
        if not fits:
            a_low, a_high = self._widened(dev, dof)
            if not rotation_fits:  # the deep powers' phase is off: only the k = 0 counts are unbiased
                value = _shallow_value(self.rounds, self.prior)
            value = min(max(value, a_low), a_high)
            method_note += "; widened (model does not fit: dispersion-scaled, hull with the k=0 interval)"
        reached = fits and 0.5 * (a_high - a_low) <= self.eps * (1 + 1e-9)
        scale = oracle.high - oracle.low
        diagnostics = self._diagnostics(dev, dof, p, fits, method_note, scale, a_high - a_low)
        sd, detectable, shift = self.rotation_reach()
        finite = lambda x: x if math.isfinite(x) else None  # noqa: E731  (JSON has no inf)
        diagnostics.update(rotation_score=rot, rotation_p_value=p_rot, rotation_sd=finite(sd),
                           rotation_detectable=finite(detectable), rotation_shift=finite(shift * scale))
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
            note = (f"eps={self.cfg.epsilon} not reached ({self.stopped}); half-width "
                    f"{diagnostics['reachable_half_width']:.3g}; {need}")
        moves = 0.5 * (a_high - a_low) / abs(shift) if shift else math.inf  # delta moving a by the half-width
        if fits and target.startswith("ibm:") and moves < detectable:  # a real device can over-rotate
            if math.isfinite(detectable):
                flags = (f"flags one reliably ({ROTATION_POWER:.0%}) only from about {detectable:.2g} rad (the "
                         f"counts resolve one to sd {sd:.2g} rad)")
            elif math.isfinite(sd):
                flags = (f"does not test for one: the counts resolve one only to sd {sd:.2g} rad and the test "
                         f"runs from sd {ROTATION_SD} rad")
            else:
                flags = "cannot see one in these counts"
            size = f"{moves:.2g} rad" if math.isfinite(shift) else "unknown size"
            blind = (f"a coherent over-rotation of Q of {size} per Grover step would move the estimate out "
                     f"of its interval, yet the goodness of fit {flags}; Pauli twirling (--twirl) turns coherent "
                     "errors into the decay the model fits, and check rounds (--check-shots) resolve one better")
            note = f"{note}; {blind}" if note else blind
        method = "mlae" if self.scales == (1,) else "mlae+zne"
        return to_estimate(
            oracle, a_low, a_high, value, epsilon=self.cfg.epsilon, alpha=self.cfg.alpha,
            rounds=tuple(self.rounds), wall_time=wall_time, method=method, target=target,
            reached_epsilon=reached, note=note, diagnostics=diagnostics,
        )

    def _diagnostics(
        self, dev: float, dof: int, p: float, fits: bool, method: str, scale: float, width: float
    ) -> dict[str, Any]:
        f, prior = self.fit, self.prior
        half = 0.5 * width
        calls_needed: float | None
        if not fits:
            calls_needed, floor, reachable = None, half * scale, half * scale
        elif half <= self.eps:
            calls_needed, floor, reachable = float(self.calls), 0.0, half * scale
        else:
            extra = self._calls_to_reach(self.eps)
            calls_needed = None if extra is None else float(self.calls + extra)
            floor = 0.0 if extra is not None else self._floor() * scale
            reachable = half * scale
        return {
            "interval_method": method,
            "decay": "fit" if prior.free else "none",
            "prior_source": prior.source,
            "a0": math.exp(f.u), "r": math.exp(f.v),
            "a0_prior": prior.a0, "r_prior": prior.r, "p01": prior.p01, "p10": prior.p10,
            "deviance": dev, "dof": dof, "gof_p_value": p, "model_fits": fits,
            "k_cap": self.k_cap(), "stopped": self.stopped, "modes": self.modes,
            "check_rounds": [list(c) for c in self.checked],
            "reachable_half_width": reachable,
            "calls_for_epsilon": calls_needed,
            "epsilon_floor": floor,
            **self._fold_diagnostics(),
        }

    def _fold_diagnostics(self) -> dict[str, Any]:
        """Which fold scales ran and the fold contrast model (empty without folds)."""
        mitigation = self.cfg.mitigation
        if mitigation is None:
            return {}
        b = self.prior.b
        return {
            "scales": list(self.scales), "mitigation": mitigation.name,
            "fold_model": "per call, b = r" if b is None else "per block, b fixed",
            "fold_b": b,
            "folded_calls": sum(r.oracle_calls for r in self.rounds if r.scale > 1),
            "readout": "inside the likelihood (confusion matrix); the counts are not readout-corrected",
        }

    def _hoping(self) -> float | None:
        """``_calls_to_reach`` at ``_hopeful_theta``, while hoping still buys progress: each
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
        return self._calls_to_reach(self.eps, self._hopeful_theta())

    def _floor(self) -> float:
        """The half-width (amplitude) no budget gets below at the fit: MAX_CALLS more calls at
        the best power up to k_cap (the information per shot is bounded when A0 is free and
        only k = 0 is usable: the prior on A0 then bounds what the k = 0 counts say of a)."""
        theta, terms = self._plan_theta(), self._pooled()
        cands = sorted({int(x) for x in terms[0] if x <= self.k_cap()} | {self.k_cap()})
        sd = min(self._theta_sd(self._with(terms, c, MAX_CALLS / (2 * c + 1) / self.per_shot), theta) for c in cands)
        return min(0.5, amplitude_half_width(theta, sd, self.z))  # a is in [0, 1] whatever the data

    def _calls_to_reach(self, eps: float, theta: float | None = None) -> float | None:
        """Extra honest calls the greedy design at the cap predicts for half-width eps, with
        the expected information at ``theta`` (default ``_plan_theta``); None beyond MAX_CALLS."""
        cap = self.k_cap()
        theta = self._plan_theta() if theta is None else theta
        terms = self._pooled()
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
            terms = self._with(terms, c, n)
            extra += self.round_calls(c, n)
        return None


def _crossings(grid: np.ndarray, lr: np.ndarray, threshold: float) -> tuple[float, float]:
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


def _shallow_value(rounds: list[Round], prior: DecayPrior) -> float:
    """Amplitude from the unfolded k = 0 rounds alone, readout inverted, A0 at its prior value."""
    shots = sum(r.shots for r in rounds if r.k == 0 and r.scale == 1)
    ones_ = sum(r.ones for r in rounds if r.k == 0 and r.scale == 1)
    x = (ones_ / max(shots, 1) - prior.p01) / prior.gain - 0.5
    return min(1.0, max(0.0, 0.5 + x / prior.a0))


FALLBACK_A0_SD = 0.2  # the A0 spread the fallback allows: the old, wide prior


def _shallow_interval(rounds: list[Round], prior: DecayPrior, alpha: float) -> tuple[float, float]:
    """Amplitude interval from the k = 0 rounds alone: Clopper-Pearson on q_0, readout
    inverted, A0 anywhere in [exp(log a0 - 3 sd), 1] (module docstring). This interval serves
    when the decay model did not fit, so it does not trust the prior's sd below
    ``FALLBACK_A0_SD`` (a fixed A0, decay none, stays fixed). Folded k = 0 rounds (contrast
    below A0) are left out."""
    shots = sum(r.shots for r in rounds if r.k == 0 and r.scale == 1)
    ones_ = sum(r.ones for r in rounds if r.k == 0 and r.scale == 1)
    if shots == 0:
        return 0.0, 1.0
    q_low, q_high = clopper_pearson(ones_, shots, alpha)
    g = prior.gain
    ends = []
    sd = 0.0 if prior.a0_sd == 0 else max(prior.a0_sd, FALLBACK_A0_SD)
    a0_low = min(1.0, prior.a0 * math.exp(-3 * sd))
    for q in (q_low, q_high):
        x = (q - prior.p01) / g - 0.5  # A0 (a - 1/2)
        for a0 in (a0_low, 1.0):
            ends.append(min(1.0, max(0.0, 0.5 + x / a0)))
    return min(ends), max(ends)


_COSTS = CostCache()


def _expected_calls(
    config: MaximumLikelihoodAE, eps: float, key: Any = None, folds: RoundEstimator | None = None,
) -> float:
    """Mean calls over 16 amplitudes of the noiseless schedule with expected counts (a fold
    reads the unfolded p_k: the same unitary); cached per (configuration without its
    mitigation, the mitigation's cost key, eps)."""
    def calls_at(theta: float) -> int:
        run = _Run(config, eps, DecayPrior(), folds)

        def sample(k: int, n: int) -> tuple[Round, ...]:
            p = math.sin((2 * k + 1) * theta) ** 2
            return tuple(Round(k=k, shots=m, ones=round(m * p), scale=s) for m, s in zip(run.split(n), run.scales))

        run.loop(sample)
        return run.calls

    return _COSTS.mean_calls((config, key, eps), lambda: calls_at)


def _chi2_1_ppf(q: float) -> float:
    """The q-quantile of chi-square with one degree of freedom (``scipy.stats.chi2.ppf(q, 1)``)."""
    return float(2.0 * gammaincinv(0.5, q))
