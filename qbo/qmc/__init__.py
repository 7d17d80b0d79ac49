"""Quantum Monte Carlo mean estimation: IAE, noise-aware MLAE, classical Monte Carlo and an automatic choice."""

from qbo.qmc.auto import AutoEstimator
from qbo.qmc.base import MeanEstimator
from qbo.qmc.capped import CalibrationAwareIAE
from qbo.qmc.iae import IterativeAmplitudeEstimation
from qbo.qmc.mlae import MaximumLikelihoodAE
from qbo.qmc.montecarlo import MonteCarloEstimator, hoeffding_shots
from qbo.qmc.result import Estimate, Round
from qbo.qmc.rounds import ProbabilityEstimator, RoundEstimator, RoundResult
from qbo.noise import Snapshot

METHODS = ("iae", "mlae", "mc", "auto")


def make_estimator(
    method: str, epsilon: float, alpha: float = 0.05, shots: int | None = None,
    mitigation: ProbabilityEstimator | None = None, snapshot: Snapshot | None = None,
) -> MeanEstimator:
    """Estimator by name: 'iae', 'mlae', 'mc' or 'auto'; ``shots`` sets IAE's (MLAE's
    intermediate) shots per round.

    ``mitigation`` (a ``qbo.mitigation.Mitigation``, or None) applies to IAE rounds; Monte
    Carlo and 'auto' do not support it. With a calibration ``snapshot`` (the target's device
    model), IAE's Grover depth is capped by it (:class:`CalibrationAwareIAE`).
    """
    if mitigation is not None and method != "iae":
        raise ValueError(f"mitigation works with method 'iae', got method '{method}'")
    iae_options: dict = {} if shots is None else {"shots": shots}
    if mitigation is not None:
        iae_options["mitigation"] = mitigation
    if method == "iae":
        iae = IterativeAmplitudeEstimation(epsilon, alpha, **iae_options)
        return iae if snapshot is None else CalibrationAwareIAE(iae, snapshot)
    if method == "mlae":
        return MaximumLikelihoodAE(epsilon, alpha, snapshot=snapshot, **({} if shots is None else {"shots": shots}))
    if method == "mc":
        return MonteCarloEstimator(epsilon, alpha)
    if method == "auto":
        return AutoEstimator(epsilon, alpha, iae_options, {} if snapshot is None else {"snapshot": snapshot})
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got '{method}'")


__all__ = [
    "AutoEstimator", "CalibrationAwareIAE", "Estimate", "IterativeAmplitudeEstimation", "METHODS",
    "MaximumLikelihoodAE", "MeanEstimator", "MonteCarloEstimator", "ProbabilityEstimator", "Round",
    "RoundEstimator", "RoundResult", "hoeffding_shots", "make_estimator",
]
