"""Quantum Monte Carlo mean estimation: IAE, noise-aware MLAE, classical Monte Carlo and an automatic choice."""

from qbo.qmc.auto import AutoEstimator
from qbo.qmc.base import MeanEstimator
from qbo.qmc.iae import IterativeAmplitudeEstimation
from qbo.qmc.mlae import MaximumLikelihoodAE
from qbo.qmc.montecarlo import MonteCarloEstimator, hoeffding_shots
from qbo.qmc.result import Estimate, Round

METHODS = ("iae", "mlae", "mc", "auto")


def make_estimator(
    method: str, epsilon: float, alpha: float = 0.05, shots: int | None = None, mitigation: object = None
) -> MeanEstimator:
    """Estimator by name: 'iae', 'mlae', 'mc' or 'auto'; ``shots`` sets IAE's (MLAE's
    intermediate) shots per round.

    ``mitigation`` (a ``qbo.mitigation.Mitigation``, or None) applies to IAE rounds; Monte
    Carlo and 'auto' do not support it.
    """
    if mitigation is not None and method != "iae":
        raise ValueError(f"mitigation works with method 'iae', got method '{method}'")
    iae_options: dict = {} if shots is None else {"shots": shots}
    if mitigation is not None:
        iae_options["mitigation"] = mitigation
    if method == "iae":
        return IterativeAmplitudeEstimation(epsilon, alpha, **iae_options)
    if method == "mlae":
        return MaximumLikelihoodAE(epsilon, alpha, **({} if shots is None else {"shots": shots}))
    if method == "mc":
        return MonteCarloEstimator(epsilon, alpha)
    if method == "auto":
        return AutoEstimator(epsilon, alpha, iae_options)
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got '{method}'")


__all__ = [
    "AutoEstimator", "Estimate", "IterativeAmplitudeEstimation", "METHODS", "MaximumLikelihoodAE", "MeanEstimator",
    "MonteCarloEstimator", "Round", "hoeffding_shots", "make_estimator",
]
