"""Pick the cheapest estimator for the requested accuracy.

On the noiseless targets the quantum candidate is LRAE (``qbo.qmc.lrae``): of the methods
whose coverage is measured, it has the lowest measured constant eps * calls at every delta
in docs/estimators.md (bench/results/qmc_delta*.txt); its interval is asymptotic, with
coverage measured there. Configuring IAE (``iae_options``) makes the candidate that IAE
instead (its Clopper-Pearson rounds are rigorous). The text below is about that IAE.

Q-GP-UCB asks for large eps in its early stages (eps_s = sigma_{s-1}(x_s) / sqrt(lambda),
Alg. 1 line 3), where a fixed-shot IAE (e.g. 100 shots a round) costs far more than
Hoeffding's 8 calls at eps = 0.5. qbo's default IAE sizes its rounds (its first round is a
classical k = 0 round with Clopper-Pearson intervals), so measured on the exact target its
cost model is at or below Hoeffding's for every eps; ``auto`` still guards configurations
where that is not so (fixed ``shots``, a ``k_max`` cap).
On a noisy target (``aer:NAME``, ``fake:BACKEND``, ``ibm:BACKEND``) ``auto`` runs a noise-aware
estimator: IAE and MC without a device model assume the noiseless P(1) and their intervals do
not cover under decay (issue 9). With the device model it is built with
(``mlae_options['snapshot']``, ``make_estimator``'s ``snapshot``: the target's; ``planned_calls``
plans with the same one, so a stage runs the method it was planned with) it runs whichever of
the noise-aware MLAE (``qbo.qmc.mlae``) and the calibration-aware IAE (``qbo.qmc.capped``) the depth
model predicts reaches the smaller half-width at the budget (issue 24 item 3, ``device_choice``):
``budget`` when one is given, else MLAE's planned calls for eps. IAE's prediction is its own
(``CalibrationAwareIAE.predicted_half_width``: bias floor plus sampling); MLAE's is the sampling
half-width of its best power at the predicted contrast c_k (``mlae_half_width``; it fits the
decay, so no bias floor is added), except at k = 0, where its counts pin A0 (a - 1/2) and the
prior on A0 adds its own half-width: the depth model's contrast bounds A0 without pinning it
(``qbo.qmc.mlae.calibration_prior``), so on a deep oracle whose decay leaves k = 0 the only
usable power MLAE is no longer predicted narrower than it can be. Both are idealised the same
way (one power, no schedule overhead), and a tie goes to MLAE. On a real device (an ``ibm:``
target, ``qbo.qmc.over_rotation.on_real_device``) both intervals hold the over-rotation of Q
their counts cannot exclude, so each prediction adds that part (``predicted_hold``: the
expected information on delta of the method's own design, dry-run on expected counts and
scaled to the calls, through the formula ``held_interval`` applies, averaged over amplitudes);
where MLAE's short rounds resolve delta worse per call than IAE's deep ones, IAE runs there
(``diagnostics['auto_choice']['predicted_held_part']``). ``planned_calls`` knows no target and
plans the simulator choice. The choice, both predictions,
the budget and a one-line reason are in the estimate's ``diagnostics['auto_choice']``. Without
a device model, MLAE runs with its own prior (the calibration the target's name declares, else
a weak one).
The noiseless choice compares the two estimators' own cost models (``expected_calls``); it depends
only on (eps, alpha, configuration), never on the data, so coverage is unaffected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

from qbo.execution.base import Executor
from qbo.noise import Snapshot
from qbo.noise.depth import needed_k, power_noise
from qbo.oracles.base import Oracle
from qbo.qmc.base import check_accuracy, is_noiseless, unit_epsilon
from qbo.qmc.capped import CalibrationAwareIAE
from qbo.qmc.iae import IterativeAmplitudeEstimation
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.lrae import LikelihoodRatioAE, LRState
from qbo.qmc.mlae import MaximumLikelihoodAE, a0_log_sd
from qbo.qmc.montecarlo import MonteCarloEstimator
from qbo.qmc.over_rotation import on_real_device
from qbo.qmc.resumable import ResumableState
from qbo.qmc.result import Estimate


def choose_method(method: str, target: str, *, mitigation: bool = False, run: bool = False,
                  assume_noiseless: bool = False) -> str:
    """The estimator that runs for the configured ``method`` on ``target``: 'auto' is
    :class:`AutoEstimator` (LRAE or MC on noiseless targets; on noisy ones MLAE or the
    calibration-aware IAE, by the depth model), except with a mitigation, which only IAE and
    MLAE take: then IAE. In a bandit run (``run``), 'auto' on a
    target with a device model is IAE (calibration-aware), as before LRAE: the hardware cost
    plan (``qbo.execution.plan``) is exact on an ideal device for IAE, and MLAE's schedule
    follows its device prior, so a plan of it is not. ``assume_noiseless`` (``qbo estimate
    --no-calibration-aware``): 'auto' is LRAE, the noiseless targets' estimator, and the
    estimate says it ignored the device's noise. Any other name is that method."""
    if method != "auto":
        return method
    if mitigation or (run and not is_noiseless(target)):
        return "iae"
    if assume_noiseless:
        return "lrae"
    return method


def resumed_kind(method: str) -> type[ResumableState] | type[LRState]:
    """The resumed per-arm estimate for the configured ``method`` (resumed QMC runs on noiseless
    targets only): IAE's ``ResumableState`` for 'iae', else LRAE's ``LRState`` (the estimator
    ``auto`` picks there: ``qbo.qmc.lrae``, docs/estimators.md)."""
    if method not in ("iae", "lrae", "auto"):
        raise ValueError(f"resumed QMC runs estimator 'auto', 'lrae' or 'iae', got '{method}'")
    return ResumableState if method == "iae" else LRState


@dataclass(frozen=True)
class AutoEstimator:
    """LRAE (IAE when ``iae_options`` configure one) or MC, whichever its cost model predicts
    is cheaper for (epsilon, alpha), on the noiseless targets; on noisy ones MLAE or the
    calibration-aware IAE, whichever the depth model predicts narrower at the budget
    (``device_choice``).

    ``iae_options`` configure an IAE candidate (e.g. shots, k_max) in place of LRAE;
    ``mlae_options`` the MLAE (e.g. budget, snapshot).
    """

    epsilon: float
    alpha: float = 0.05
    iae_options: dict = field(default_factory=dict, hash=False)
    mlae_options: dict = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        check_accuracy(self.epsilon, self.alpha)

    def quantum(self) -> IterativeAmplitudeEstimation | LikelihoodRatioAE:
        """The quantum candidate on noiseless targets: the configured IAE (any ``iae_options``,
        ``max_calls`` included: IAE honours a call cap), else LRAE."""
        if self.iae_options:
            return IterativeAmplitudeEstimation(self.epsilon, self.alpha, **self.iae_options)
        return LikelihoodRatioAE(self.epsilon, self.alpha)

    def choose(self, oracle: Oracle) -> IterativeAmplitudeEstimation | LikelihoodRatioAE | MonteCarloEstimator:
        eps = unit_epsilon(oracle, self.epsilon)
        quantum = self.quantum()
        mc = MonteCarloEstimator(self.epsilon, self.alpha, self.iae_options.get("max_calls"))
        return mc if mc.expected_calls(eps) <= quantum.expected_calls(eps) else quantum

    def planned_calls(self, oracle: Oracle) -> float:
        """The cost model for ``oracle`` (Dai et al. 2023, Alg. 1 line 5 plans a stage with it):
        with a device model (``mlae_options['snapshot']``), that of the method ``device_choice``
        runs there; else the cheaper of the quantum candidate and MC. A noisy target without a
        snapshot is planned with the noiseless models."""
        snapshot = self.mlae_options.get("snapshot")
        if snapshot is not None:
            return self.device_choice(oracle, snapshot)[0].planned_calls(oracle)
        return self.expected_calls(unit_epsilon(oracle, self.epsilon))

    def device_choice(self, oracle: Oracle, snapshot: Snapshot, real_device: bool = False
                      ) -> tuple[MaximumLikelihoodAE | CalibrationAwareIAE, dict[str, Any]]:
        """MLAE or calibration-aware IAE, whichever the depth model predicts reaches the smaller
        half-width at the budget (module docstring), and the numbers it compared (unit scale);
        on a ``real_device`` each prediction includes what holding the over-rotation of Q adds
        (``predicted_hold``)."""
        mlae = MaximumLikelihoodAE(self.epsilon, self.alpha, **{**self.mlae_options, "snapshot": snapshot})
        budget = self.mlae_options.get("budget")
        calls = float(budget) if budget is not None else mlae.planned_calls(oracle)
        cap = {} if budget is None else {"max_calls": int(budget)}
        iae = CalibrationAwareIAE(IterativeAmplitudeEstimation(self.epsilon, self.alpha, **{**self.iae_options, **cap}), snapshot)
        eps_unit = unit_epsilon(oracle, self.epsilon)
        a0_sd = a0_log_sd(power_noise(snapshot, oracle, 0).contrast, mlae.a0_sd)
        mlae_width, mlae_k = mlae_prediction(snapshot, oracle, calls, self.alpha, needed_k(eps_unit), a0_sd=a0_sd)
        predicted = {"mlae": mlae_width, "iae+pad": iae.predicted_half_width(oracle, calls)}
        held: dict[str, float] = {}
        if real_device:  # hardware can over-rotate Q: each interval holds what its counts cannot exclude
            held = {"mlae": mlae.predicted_hold(oracle, calls, predicted["mlae"]),
                    "iae+pad": iae.predicted_hold(oracle, calls, predicted["iae+pad"])}
            predicted = {m: min(0.5, predicted[m] + held[m]) for m in predicted}
        chosen = "iae+pad" if predicted["iae+pad"] < predicted["mlae"] else "mlae"
        facts = {"chosen": chosen, "calls": calls, "predicted_half_width": predicted, "reason": choice_reason(
            chosen, predicted, mlae_k, prior_half_width(a0_sd, self.alpha), a0_sd, held)}
        if held:
            facts["predicted_held_part"] = held
        return (iae if chosen == "iae+pad" else mlae), facts

    def expected_calls(self, epsilon_unit: float) -> float:
        mc = MonteCarloEstimator(self.epsilon, self.alpha, self.iae_options.get("max_calls"))
        return min(mc.expected_calls(epsilon_unit), self.quantum().expected_calls(epsilon_unit))

    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        snapshot = self.mlae_options.get("snapshot")  # the one device model: planned_calls plans with it
        if snapshot is None and not is_noiseless(executor.target):  # none: MLAE's own prior (the target's)
            return MaximumLikelihoodAE(self.epsilon, self.alpha, **self.mlae_options).estimate(oracle, executor)
        if snapshot is not None:
            estimator, facts = self.device_choice(oracle, snapshot, on_real_device(executor.target))
            est = estimator.estimate(oracle, executor)
            note = (f"auto ran {facts['chosen']}: predicted half-width (amplitude scale) at {facts['calls']:.4g} calls "
                    + ", ".join(f"{k} {v:.3g}" for k, v in facts["predicted_half_width"].items())
                    + f" ({facts['reason']})")
            return replace(est, note=f"{note}; {est.note}" if est.note else note,
                           diagnostics={**est.diagnostics, "auto_choice": facts})
        return self.choose(oracle).estimate(oracle, executor)


def choice_reason(chosen: str, predicted: dict[str, float], mlae_k: int, prior_half: float, a0_sd: float,
                  held: dict[str, float] | None = None) -> str:
    """One line on why ``device_choice`` ran ``chosen``: the smaller predicted half-width, and
    when MLAE's best power is k = 0, where A0's prior holds its prediction up (the depth model
    bounds the contrast, it does not pin it: ``qbo.qmc.mlae.calibration_prior``), that part;
    on a real device (``held``), the part of each that holds the over-rotation of Q."""
    other = "mlae" if chosen == "iae+pad" else "iae+pad"
    line = f"{chosen} predicted narrower ({predicted[chosen]:.3g} vs {other} {predicted[other]:.3g})"
    if held:
        line += (f"; on a real device each includes the over-rotation of Q its counts are predicted not to exclude "
                 f"({chosen} {held[chosen]:.3g}, {other} {held[other]:.3g})")
    if mlae_k == 0 and predicted["mlae"] < 0.5:
        line += (f"; MLAE's best power is k = 0, where the depth model's contrast bounds A0 without pinning it "
                 f"(prior sd {a0_sd:.2g} of log A0: {prior_half:.3g} of its half-width)")
    return line


def mlae_half_width(snapshot: Snapshot, oracle: Oracle, calls: float, alpha: float, k_top: int,
                    k_limit: int = 256, a0_sd: float = 0.0) -> float:
    """MLAE's predicted half-width (unit scale) after ``calls`` (``mlae_prediction``)."""
    return mlae_prediction(snapshot, oracle, calls, alpha, k_top, k_limit, a0_sd)[0]


def mlae_prediction(snapshot: Snapshot, oracle: Oracle, calls: float, alpha: float, k_top: int,
                    k_limit: int = 256, a0_sd: float = 0.0) -> tuple[float, int]:
    """(half-width, power): min over k <= min(k_top, ``k_limit``) of z sqrt((2k + 1) / N) /
    ((4k + 2) c_k), the theta half-width of N / (2k + 1) shots at power k whose contrast c_k
    the depth model predicts (``power_noise``), and the k attaining it; at most 1/2 (k -1 when
    no power does better). At k = 0 the counts pin A0 (a - 1/2), not a: with ``a0_sd`` the
    prior sd of log A0 (``qbo.qmc.mlae.a0_log_sd``) the prior's own half-width is added in
    quadrature (``prior_half_width``); deeper powers read a from their phases."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    best, best_k = 0.5, -1
    for k in range(min(k_top, k_limit) + 1):
        contrast = power_noise(snapshot, oracle, k).contrast
        if contrast > 0:
            sampling = z * math.sqrt((2 * k + 1) / max(calls, 1.0)) / ((4 * k + 2) * contrast)
            width = math.hypot(sampling, prior_half_width(a0_sd, alpha)) if k == 0 else sampling
            if width < best:
                best, best_k = width, k
    return best, best_k


def prior_half_width(a0_sd: float, alpha: float) -> float:
    """The half-width that A0's prior alone leaves on a from k = 0 counts: z a0_sd |a - 1/2| at
    the mean |a - 1/2| = 1/4 (``mlae_half_width``)."""
    return NormalDist().inv_cdf(1 - alpha / 2) * a0_sd / 4
