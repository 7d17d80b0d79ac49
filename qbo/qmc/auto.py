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
On a noisy target (``aer:NAME``, ``fake:BACKEND``, ``ibm:BACKEND``) ``auto`` runs the
noise-aware MLAE (``qbo.qmc.mlae``) instead: IAE and MC both assume the noiseless
P(1) and their intervals do not cover under decay (issue 9).
The noiseless choice compares the two estimators' own cost models (``expected_calls``); it depends
only on (eps, alpha, configuration), never on the data, so coverage is unaffected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import check_accuracy, is_noiseless, unit_epsilon
from qbo.qmc.iae import IterativeAmplitudeEstimation
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.lrae import LikelihoodRatioAE, LRState
from qbo.qmc.mlae import MaximumLikelihoodAE
from qbo.qmc.montecarlo import MonteCarloEstimator
from qbo.qmc.resumable import ResumableState
from qbo.qmc.result import Estimate


def choose_method(method: str, target: str, *, mitigation: bool = False, run: bool = False,
                  assume_noiseless: bool = False) -> str:
    """The estimator that runs for the configured ``method`` on ``target``: 'auto' is
    :class:`AutoEstimator` (LRAE or MC on noiseless targets, MLAE on noisy ones), except with a
    mitigation, which only IAE and MLAE take: then IAE. In a bandit run (``run``), 'auto' on a
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
    is cheaper for (epsilon, alpha), on the noiseless targets; MLAE on noisy ones.

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
        MLAE's when a device model is given (``mlae_options['snapshot']``: what ``estimate``
        runs there), else the cheaper of the quantum candidate and MC. A noisy target without a snapshot is
        planned with the noiseless models."""
        if self.mlae_options.get("snapshot") is not None:
            return MaximumLikelihoodAE(self.epsilon, self.alpha, **self.mlae_options).planned_calls(oracle)
        return self.expected_calls(unit_epsilon(oracle, self.epsilon))

    def expected_calls(self, epsilon_unit: float) -> float:
        mc = MonteCarloEstimator(self.epsilon, self.alpha, self.iae_options.get("max_calls"))
        return min(mc.expected_calls(epsilon_unit), self.quantum().expected_calls(epsilon_unit))

    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        if not is_noiseless(executor.target):
            return MaximumLikelihoodAE(self.epsilon, self.alpha, **self.mlae_options).estimate(oracle, executor)
        return self.choose(oracle).estimate(oracle, executor)
