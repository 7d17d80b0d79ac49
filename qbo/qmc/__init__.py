"""Quantum Monte Carlo mean estimation: IAE, noise-aware MLAE, classical Monte Carlo and an automatic choice."""

from qbo.qmc.auto import AutoEstimator
from qbo.qmc.base import MeanEstimator
from qbo.qmc.capped import CalibrationAwareIAE, CalibrationAwareMC
from qbo.qmc.iae import IterativeAmplitudeEstimation
from qbo.qmc.lrae import LikelihoodRatioAE, LRState
from qbo.qmc.mlae import MaximumLikelihoodAE
from qbo.qmc.montecarlo import MonteCarloEstimator, hoeffding_shots
from qbo.qmc.result import Estimate, Round
from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator, RoundResult
from qbo.noise import Snapshot

METHODS = ("iae", "mlae", "mc", "lrae", "auto")


def make_estimator(
    method: str, epsilon: float, alpha: float = 0.05, shots: int | None = None,
    mitigation: ProbabilityEstimator | None = None, snapshot: Snapshot | None = None,
    check_shots: int = 0, max_calls: int | None = None,
) -> MeanEstimator:
    """Estimator by name: 'iae', 'mlae', 'mc', 'lrae' (``qbo.qmc.lrae``; ``shots``: its shots
    per power) or 'auto'; ``shots`` sets IAE's (MLAE's
    intermediate) shots per round.

    ``mitigation`` (a ``qbo.mitigation.Mitigation``, or None) applies to IAE rounds, and to
    MLAE as zero-noise extrapolation's folded powers, extra terms of its likelihood (method
    'mlae+zne'; 'zne' or 'zne+rem' only: REM alone is refused, since MLAE's likelihood
    already holds the readout confusion); Monte Carlo and 'auto' do not support it.
    ``check_shots``: honest calls of MLAE's check rounds, which let its goodness of fit flag a
    coherent over-rotation delta of Q (with A0 fixed one k = 0 round, about 36 / delta^2
    shots; with A0 free, rounds at the powers that resolve delta best, ``qbo.qmc.mlae``);
    only 'mlae' takes it.

    ``snapshot`` is the target's device model. With it, IAE (mitigated or not) is
    :class:`CalibrationAwareIAE` (Grover depth capped, every round padded by the residual
    noise bias the model allows, ``reached_epsilon`` False with the wider interval when eps is
    out of reach, reachability numbers in ``diagnostics``), Monte Carlo is
    :class:`CalibrationAwareMC`, and MLAE and 'auto' take their decay prior from it.
    **Without a snapshot every estimator assumes a noiseless device**: on a noisy executor its
    interval covers sampling error only (IAE, MC) and may miss the ideal mean, so there it
    reports ``reached_epsilon`` False with a note (``qbo.qmc.base.without_device_model``);
    MLAE reads the device model from the target's name ('auto' then runs that MLAE).

    ``max_calls`` caps the honest oracle calls (MLAE's ``budget``, IAE's and Monte Carlo's
    ``max_calls``): an estimate that hits it returns its honest, wider interval with
    ``reached_epsilon`` False. The calibration-aware Monte Carlo does not take it.
    """
    if check_shots and method != "mlae":
        raise ValueError(f"check shots work with method 'mlae', got method '{method}'")
    if mitigation is not None and method not in ("iae", "mlae"):
        raise ValueError(f"mitigation works with methods 'iae' and 'mlae', got method '{method}'")
    if max_calls is not None and method == "mc" and snapshot is not None:
        raise ValueError("max calls work with method 'mc' only without a device model (--no-calibration-aware)")
    iae_options: dict = {} if shots is None else {"shots": shots}
    if max_calls is not None:
        iae_options["max_calls"] = max_calls
    budget: dict = {} if max_calls is None else {"budget": max_calls}
    if mitigation is not None:
        iae_options["mitigation"] = mitigation
    if method == "iae":
        iae = IterativeAmplitudeEstimation(epsilon, alpha, **iae_options)
        return iae if snapshot is None else CalibrationAwareIAE(iae, snapshot)
    if method == "mlae":
        return MaximumLikelihoodAE(epsilon, alpha, snapshot=snapshot, check_shots=check_shots, mitigation=mitigation,
                                   **({} if shots is None else {"shots": shots}), **budget)
    if method == "lrae":
        if snapshot is not None:
            raise ValueError("method 'lrae' assumes a noiseless device; got a device snapshot (use 'mlae' or 'iae')")
        if max_calls is not None:
            raise ValueError(f"method 'lrae' takes no call cap, got max_calls {max_calls} (use 'iae' or 'mlae')")
        return LikelihoodRatioAE(epsilon, alpha, **({} if shots is None else {"shots": shots}))
    if method == "mc":
        mc = MonteCarloEstimator(epsilon, alpha, max_calls)
        return mc if snapshot is None else CalibrationAwareMC(mc, snapshot)
    if method == "auto":
        return AutoEstimator(epsilon, alpha, iae_options, {**budget, **({} if snapshot is None else {"snapshot": snapshot})})
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got '{method}'")


__all__ = [
    "AutoEstimator", "CalibrationAwareIAE", "CalibrationAwareMC", "Estimate", "IterativeAmplitudeEstimation", "LRState", "LikelihoodRatioAE", "METHODS",
    "MaximumLikelihoodAE", "MeanEstimator", "MonteCarloEstimator", "ProbabilityEstimator", "Round",
    "RoundEstimator", "RoundResult", "hoeffding_shots", "make_estimator",
]
