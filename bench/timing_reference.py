"""Timing: the default `qbo run` against the same experiment on qiskit-algorithms IAE + Aer.

The reference code runs QMC with qiskit-algorithms' IterativeAmplitudeEstimation on the Aer
sampler. Here that estimator replaces qbo's in an otherwise identical experiment (same
problems, policies and seeds), with its oracle calls counted honestly (shots*(2k+1) for
every round), so only the QMC implementation differs. Bench-local; needs the `bench` extra.
"""

from __future__ import annotations

import tempfile
import time

from qbo.experiments import trial
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.runner import run_experiment
from qbo.experiments.summary import format_table, summarise
from qbo.qmc.result import Estimate, Round

SHOTS = 100


class QiskitAlgorithmsIAE:
    """qiskit-algorithms IAE on qiskit-aer's SamplerV2, wrapped as a qbo estimator."""

    def __init__(self, epsilon: float, alpha: float) -> None:
        self.epsilon, self.alpha = epsilon, alpha

    def expected_calls(self, epsilon_unit: float) -> float:
        return 0.0  # the reference code applies no line-5 prediction

    def planned_calls(self, oracle) -> float:
        return 0.0  # as expected_calls: no line-5 prediction

    def estimate(self, oracle, executor) -> Estimate:
        from qiskit.transpiler import generate_preset_pass_manager
        from qiskit_aer import AerSimulator
        from qiskit_aer.primitives import SamplerV2
        from qiskit_algorithms import EstimationProblem, IterativeAmplitudeEstimation

        start = time.perf_counter()
        eps = min(self.epsilon / (oracle.high - oracle.low), 0.49)
        sampler = SamplerV2(default_shots=SHOTS, seed=int(executor.rng.integers(2**31)))
        transpiler = generate_preset_pass_manager(optimization_level=1, backend=AerSimulator())
        result = IterativeAmplitudeEstimation(eps, self.alpha, sampler=sampler, transpiler=transpiler).estimate(
            EstimationProblem(oracle.circuit, [oracle.objective]))
        rounds = tuple(Round(k, SHOTS, 0) for k in result.powers[1:])  # ones not reported
        lo, hi = result.confidence_interval
        return Estimate(
            float(oracle.to_reward(result.estimation)), float(oracle.to_reward(lo)), float(oracle.to_reward(hi)),
            self.epsilon, self.alpha, rounds, time.perf_counter() - start, "qiskit-algorithms-iae", executor.target)


def compare_default_run(trials: int) -> None:
    config = ExperimentConfig(trials=trials)
    for label, factory in (("qbo (default qbo run)", None), ("qiskit-algorithms IAE + Aer SamplerV2", QiskitAlgorithmsIAE)):
        original = trial.make_estimator
        if factory is not None:
            trial.make_estimator = lambda method, eps, alpha, shots=None, mitigation=None, **kw: factory(eps, alpha)
        try:
            with tempfile.TemporaryDirectory() as out:
                start = time.perf_counter()
                records = run_experiment(config, out)
                wall = time.perf_counter() - start
        finally:
            trial.make_estimator = original
        print(f"\n{label}: synthetic-bernoulli, q-gp-ucb vs gp-ucb, T=10000, {trials} trials, honest: {wall:.1f} s")
        print(format_table(summarise(records, config)))
