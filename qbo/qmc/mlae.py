"""Noise-aware maximum-likelihood amplitude estimation: configuration and priors.

Counts of Q^k A read 1 with probability q_k = readout(f + A0 r^k (sin^2((2k + 1) theta)
- f)): Suzuki et al. 2020's MLAE likelihood (their Eq. 4, a product of binomials over the
powers run) with the depolarising decay of Tanaka et al. 2021 (their Eq. 9) split into a
SPAM contrast A0 and a per-step contrast r, the decayed part's P(1) f (1/2 when
depolarising; amplitude damping moves it), and the measured qubit's confusion matrix. A0, r
and f are nuisances with Gaussian priors (log A0 and log r centred on the calibration depth
model, ``qbo.noise.depth``; f on 1/2), profiled out for every theta (Tanaka et al. 2022
remove them by orthogonalisation; the profile likelihood is the same target, computed
directly). Each power's counts are tempered by a model error proportional to its decayed
part (``qbo.qmc.likelihood.tempered``), and the interval's threshold is scaled by the
dispersion of what is left (``qbo.qmc.mlae_fit``).

Why: MLAE uses the counts of every round at once, so a device's decay enters the fit
instead of biasing the interval, and the deep powers that a noiseless schedule would run
are capped where they stop paying (``mlae_design``). The interval is asymptotic (Wilks), so
its coverage is measured (bench/qmc.py, bench/noise.py); ``IterativeAmplitudeEstimation``
remains the rigorous option. Zero-noise extrapolation's folds (Giurgica-Tiron et al. 2020,
Sec. II.A) enter as extra binomial terms of the same likelihood, not as an extrapolation.

Modules: this one (what the user configures, the priors), ``mlae_design`` (which power and
how many shots), ``mlae_fit`` (the fit, its interval and goodness of fit), ``mlae_report``
(the Estimate). docs/mlae.md has the derivations and the measurements behind the constants.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

from qbo import caches
from qbo.execution.base import Compiling, Executor, Target
from qbo.grover import power_circuit
from qbo.noise.blocks import TranspileCached
from qbo.noise.depth import circuit_noise, depth_table, power_noise
from qbo.noise.readout import snapshot_confusion
from qbo.oracles.base import Oracle
from qbo.qmc.base import CostCache, budget_note, check_accuracy, declared_noise, is_noiseless, run_round, unit_epsilon
from qbo.qmc.give_up import k0_top_up
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.likelihood import DecayPrior, observed
from qbo.qmc.mlae_design import Schedule
from qbo.qmc.mlae_report import report, topped_report
from qbo.qmc.over_rotation import mean_held_part, on_real_device
from qbo.qmc.progress import Tracker
from qbo.qmc.result import Estimate, Round
from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator

if TYPE_CHECKING:
    from qbo.noise import Snapshot

DECAYS = ("auto", "none", "fit")
CHECK_DESIGNS = ("greedy", "k0")
# Prior sd of the offset (the decayed part's P(1)) and the model error kappa (docs/mlae.md,
# "Large budgets": the exact channels' fixed points and residuals on FakeKingston).
OFFSET_SD = 0.02
MODEL_ERROR = 0.02


def noiseless_target(target: str) -> bool:
    """Whether ``target`` carries no device noise (what it declares, ``qbo.qmc.base.is_noiseless``);
    any other label (a test double's) is taken to carry noise."""
    return is_noiseless(target)


@dataclass(frozen=True)
class MaximumLikelihoodAE:
    """Noise-aware MLAE to half-width ``epsilon`` (reward units) at level 1 - ``alpha``
    (profile-likelihood interval; docs/mlae.md).

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
        stop_share: the interval is taken at level 1 - stop_share * alpha (docs/mlae.md).
        growth: each new K is at least this multiple of the last, when possible.
        final_factor: a round is final if it needs at most this times ``shots``.
        gof_level: p-value below which the model is declared not to fit.
        a0_sd, r_sd: least prior sd of log A0 (absolute; ``a0_prior``) and sd of log r (relative
            to |log r|).
        max_rounds: hard cap on the circuits run (a round with folds runs one per scale).
        anchor_shots: shots of round 0 (k = 0; default ``shots``).
        check_shots: honest calls of the check rounds after the schedule (0: none; counted in
            ``budget``): with A0 fixed one k = 0 round of that many shots (about 36 / delta^2
            of them let the goodness of fit flag a coherent over-rotation delta of Q); with A0
            free, ``CHECK_ROUNDS`` rounds, each at the power that adds the most information
            on delta per call (docs/mlae.md, "Power").
        max_calls: without a ``budget``, eps needing more honest calls than this is reported
            unreachable before any of them are spent.
        mitigation: zero-noise extrapolation's folds as extra likelihood terms (a
            ``qbo.qmc.rounds.ProbabilityEstimator`` with fold scales, e.g.
            ``qbo.mitigation.Mitigation(scales=(1, 3))``): every schedule round runs each
            scale at the mitigation's own shot split (docs/mlae.md, "ZNE").
        check_design: with A0 free, 'greedy' runs each check round at the power that adds
            the most information on delta per call; 'k0' runs them all at k = 0 (the
            comparison in bench/mlae_coherent.py).
        offset_sd: prior sd of the offset f, the P(1) the decayed part reads (1/2 under
            depolarising noise; amplitude damping pulls it towards 0), profiled out with A0
            and r (0: f = 1/2 fixed, the symmetric model).
        model_error: kappa, the sd of the decay model's own error in P(k) as a share of the
            decayed part g (1 - c_k) (``qbo.qmc.likelihood.tempered``; 0: none).
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
    check_design: Literal["greedy", "k0"] = "greedy"
    offset_sd: float = OFFSET_SD
    model_error: float = MODEL_ERROR

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
        for name in ("offset_sd", "model_error"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.check_design not in CHECK_DESIGNS:
            raise ValueError(f"check_design must be one of {', '.join(CHECK_DESIGNS)}, got '{self.check_design}'")
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
        run = Schedule(self, eps, prior, folds)
        tracker = Tracker("mlae" if folds is None else "mlae+zne",
                          lambda: float(self.budget) if self.budget is not None else self.expected_calls(eps))
        plain = lambda k, n: tracker.told((run_round(executor, oracle, k, n),))  # noqa: E731
        run.loop(plain if folds is None else lambda k, n: tracker.told(folds.sample(k, n)))
        run.check(plain)  # the k = 0 check round is never folded
        est = report(run, oracle, executor.target, time.perf_counter() - start, on_real_device(executor.target))
        # wider than 1/2 after few calls (held on hardware, or a misfit's k = 0 hull): a fresh k = 0
        # round, within the cap the schedule obeyed (the budget, else max_calls)
        cap = self.budget if self.budget is not None else self.max_calls
        est, topped = k0_top_up(est, oracle, executor, prior, cap)
        if topped:
            est = topped_report(est, topped)
        if est.diagnostics.get("budget_bound"):
            est = replace(est, note=f"{est.note}; {budget_note(cap)}" if est.note else budget_note(cap))
        return est

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

    def predicted_hold(self, oracle: Oracle, calls: float, half: float) -> float:
        """What holding the over-rotation of Q on a real device is predicted to add to the
        half-width ``half`` after ``calls`` (unit scale): ``expected_held_part`` of this
        configuration's design without a budget (the schedule dry-run on the expected counts
        of the device prior's model), with the fit's own lever, averaged over the amplitudes
        ``HELD_AMPLITUDES``. Needs ``snapshot`` (the device prior); 0 without one."""
        if self.snapshot is None:
            return 0.0
        prior = self.device_prior(self.snapshot, oracle)
        eps = unit_epsilon(oracle, self.epsilon)
        config = replace(self, budget=None, check_shots=0, mitigation=None)
        z = float(NormalDist().inv_cdf(1 - self.alpha / 2))
        return mean_held_part(lambda theta: (_dry_run(config, eps, prior, theta), None), half, prior, calls, z)

    def device_prior(self, snapshot: "Snapshot", oracle: Oracle, executor: Executor | None = None) -> DecayPrior:
        """The nuisance priors from ``snapshot``'s calibration (``calibration_prior``) with this
        configuration's offset and model error (what ``prior_for`` uses on a device target)."""
        prior = calibration_prior(snapshot, oracle, executor, self.a0_sd, self.r_sd, folds=self.mitigation is not None)
        return replace(prior, offset_sd=self.offset_sd, model_error=self.model_error)

    def prior_for(self, oracle: Oracle, executor: Executor) -> DecayPrior:
        """The nuisance priors this estimate uses on ``executor`` (docs/mlae.md)."""
        noiseless = noiseless_target(executor.target)
        if self.decay == "none" or (self.decay == "auto" and noiseless):
            return DecayPrior() if self.prior is None else replace(self.prior, a0_sd=0.0, r_sd=0.0)
        if self.prior is not None:
            return self.prior
        snapshot = self.snapshot if self.snapshot is not None else target_snapshot(executor.target)
        if snapshot is None:
            return DecayPrior(1.0, 1.0, 0.5, 0.1, source="weak (no calibration)", offset_sd=self.offset_sd,
                              model_error=self.model_error)
        return self.device_prior(snapshot, oracle, executor)


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
    noise = declared_noise(target)  # a bare sampler's target declares no device model
    return noise.snapshot() if isinstance(noise, Target) else None


def calibration_prior(
    snapshot: "Snapshot", oracle: Oracle, executor: Any = None, a0_sd: float = 0.05, r_sd: float = 0.5,
    folds: bool = False,
) -> DecayPrior:
    """Priors from the depth model's contrasts c_0, c_1 (A0 around c_0 as ``a0_prior`` puts it,
    r = c_1 / c_0 with sd of log r ``r_sd`` |log r| + 0.005) and the readout flips of the
    measured physical qubit; with ``folds``, the fold contrast b = c(0, 3) / c_0 of one
    A^dagger A pair (``qbo.qmc.likelihood``, per-block model), held fixed."""
    executor = executor if isinstance(executor, Compiling) else None
    rows = depth_table(snapshot, oracle, [0, 1], executor=executor)
    c0, c1 = max(rows[0].contrast, C0_FLOOR), max(rows[1].contrast, 1e-6)
    r = min(1.0, c1 / c0)
    b = None
    if folds:
        c3 = power_noise(snapshot, oracle, 0, 3, executor.transpile_cache if isinstance(executor, TranspileCached) else None).contrast
        b = min(1.0, max(c3, 1e-6) / c0)
    compiled = (executor or _aer(snapshot)).compiled(power_circuit(oracle, 0))
    confusion = snapshot_confusion(snapshot, circuit_noise(snapshot, compiled).measured_qubit)
    p01, p10 = confusion.p01, confusion.p10
    a0, sd = a0_prior(c0, a0_sd)
    return DecayPrior(
        a0, r, sd, r_sd * abs(math.log(r)) + 0.005, p01, p10, source=f"calibration {snapshot.name}", b=b,
    )


C0_FLOOR = 1e-3  # the smallest contrast the priors take from the depth model (which can underflow to 0)


def a0_prior(c0: float, a0_sd: float) -> tuple[float, float]:
    """(centre, sd of log A0) of the prior on the SPAM contrast from the depth model's c_0:
    A0 = sqrt(c_0), sd max(``a0_sd``, |log c_0| / 2), so that A0 anywhere from c_0 to 1 is
    within one sd.

    Why not A0 = c_0: the depth model counts every gate's error as a full loss of the read-out
    qubit's contrast and adds idle decay (``qbo.noise.depth``), so its log contrast
    bounds the loss; it does not estimate it. On deep multi-qubit oracles the exact channels
    keep far more contrast than it predicts (docs/noise.md, ``bench/noise_prior.py``). A
    prior of sd ``a0_sd`` around c_0 then moved every k = 0 estimate by the factor c_0 / A0
    (MLAE runs k = 0 alone when r is small, where the counts pin A0 (a - 1/2) and the prior
    pins A0), and its intervals missed. The middle of [log c_0, 0] with half its length as sd
    is the prior that says only what the bound says."""
    loss = abs(math.log(min(1.0, max(c0, C0_FLOOR))))
    return math.exp(-loss / 2), max(a0_sd, loss / 2)


def a0_log_sd(c0: float, a0_sd: float) -> float:
    """The prior sd of log A0 for the depth model's c_0 (``a0_prior``)."""
    return a0_prior(c0, a0_sd)[1]


@caches.lru(maxsize=1024)
def _dry_run(config: MaximumLikelihoodAE, eps: float, prior: DecayPrior, theta: float) -> tuple[Round, ...]:
    """The rounds of ``config``'s schedule at amplitude sin^2 theta when every round reads the
    expected count of ``prior``'s model (``predicted_hold``); cached (the snapshot enters
    through ``prior``)."""
    run = Schedule(config, eps, prior)

    def sample(k: int, n: int) -> tuple[Round, ...]:
        q = float(observed(theta, k, math.log(prior.a0), math.log(prior.r), prior))
        return (Round(k=k, shots=n, ones=round(n * q)),)

    run.loop(sample)
    return tuple(run.rounds)


def _aer(snapshot: "Snapshot") -> Any:
    from qbo.execution.aer import AerExecutor

    return AerExecutor(snapshot)


_COSTS = CostCache(name="qbo.qmc.mlae.costs")


def _expected_calls(
    config: MaximumLikelihoodAE, eps: float, key: Any = None, folds: RoundEstimator | None = None,
) -> float:
    """Mean calls over 16 amplitudes of the noiseless schedule with expected counts (a fold
    reads the unfolded p_k: the same unitary); cached per (configuration without its
    mitigation, the mitigation's cost key, eps)."""
    def calls_at(theta: float) -> int:
        run = Schedule(config, eps, DecayPrior(), folds)

        def sample(k: int, n: int) -> tuple[Round, ...]:
            p = math.sin((2 * k + 1) * theta) ** 2
            return tuple(Round(k=k, shots=m, ones=round(m * p), scale=s) for m, s in zip(run.split(n), run.scales))

        run.loop(sample)
        return run.calls

    return _COSTS.mean_calls((config, key, eps), lambda: calls_at)
