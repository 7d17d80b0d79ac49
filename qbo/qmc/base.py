"""Shared pieces of the mean estimators: validation, one round of shots, the protocol."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Protocol

import numpy as np

from qbo import caches
from qbo.execution.base import DeclaresNoise, Executor, SamplesPowers, ones
from qbo.execution.targets import parse_target
from qbo.grover import power_circuit
from qbo.oracles.base import Oracle
from qbo.qmc.result import Estimate, Round


class MeanEstimator(Protocol):
    """Estimates E[y] of an oracle on an executor to the configured epsilon and alpha."""

    epsilon: float
    alpha: float

    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate: ...

    def expected_calls(self, epsilon_unit: float) -> float: ...

    def planned_calls(self, oracle: Oracle) -> float:
        """Predicted oracle calls of ``estimate(oracle, ...)``: the cost model a stage is
        planned with (Dai et al. 2023, Alg. 1 line 5); device-aware estimators plan per oracle."""
        ...


def declared_noise(target: str) -> DeclaresNoise | None:
    """What qbo knows of the noise behind an executor's ``target``: the target itself when it
    declares it (``qbo.execution.base.DeclaresNoise``: a Target, a bare sampler's target), a
    target string parsed, None for a label that names no target (a test double's)."""
    if isinstance(target, DeclaresNoise):
        return target
    try:
        return parse_target(target)
    except ValueError:
        return None


def is_noiseless(target: str) -> bool:
    """An executor's ``target`` runs exactly (an interval covers the ideal mean)."""
    noise = declared_noise(target)
    return noise is not None and noise.is_noiseless


def without_device_model(estimate: Estimate, target: str) -> Estimate:
    """An estimate whose rounds ignore device noise, made on a noisy ``target`` (its
    :func:`declared_noise`): its interval covers sampling error only, so eps is not promised
    (``reached_epsilon`` False, issue 9 item 2) and the note says why and how to get an honest
    one. On a noiseless target, unchanged. A target whose noise qbo does not know (a bare
    sampler's, a test double's label) promises nothing either."""
    noise = declared_noise(target)
    if noise is not None and noise.is_noiseless:
        return estimate
    if noise is not None and noise.has_device_model:
        note = (f"{target} carries device noise that this estimator does not model: the interval covers "
                "sampling error only and may miss the ideal mean; pass the device's snapshot "
                "(make_estimator(..., snapshot=...), or qbo estimate's calibration-aware default)")
    else:
        note = (f"{target}: its noise is unknown to qbo and no calibration-aware depth caps apply: the "
                "interval covers sampling error only and may miss the ideal mean; run on a qbo target "
                "(aer:CALIBRATION, fake:BACKEND, ibm:BACKEND) for calibration-aware estimates, or declare "
                "a noiseless sampler (SamplerExecutor(sampler, noiseless=True))")
    return replace(estimate, reached_epsilon=False, note=f"{estimate.note}; {note}" if estimate.note else note)


def check_accuracy(epsilon: float, alpha: float) -> None:
    """One-line ValueErrors for an epsilon or alpha out of range."""
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon}")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def unit_epsilon(oracle: Oracle, epsilon: float) -> float:
    """Epsilon in reward units -> epsilon on the amplitude scale [0, 1]."""
    return epsilon / (oracle.high - oracle.low)


def run_round(executor: Executor, oracle: Oracle, k: int, shots: int) -> Round:
    """Sample ``shots`` shots of Q^k A and count the ones on the objective qubit (through the
    executor's ``run_power`` where it has one: the same counts without building the circuit)."""
    if _samples_powers(type(executor)):
        counts = executor.run_power(oracle, k, shots)  # type: ignore[attr-defined]
    else:
        (counts,) = executor.run([power_circuit(oracle, k)], [shots])
    return Round(k=k, shots=shots, ones=ones(counts))


@caches.lru(maxsize=64)
def _samples_powers(kind: type) -> bool:
    """Whether executors of this class have ``run_power``, checked once per class: a
    ``runtime_checkable`` isinstance check costs tens of microseconds, once a round."""
    return issubclass(kind, SamplesPowers)


def to_estimate(
    oracle: Oracle, a_low: float, a_high: float, a_value: float, **fields: object
) -> Estimate:
    """Build the Estimate in reward units from an amplitude-scale interval."""
    return Estimate(
        value=float(oracle.to_reward(a_value)),
        ci_low=float(oracle.to_reward(a_low)),
        ci_high=float(oracle.to_reward(a_high)),
        **fields,  # type: ignore[arg-type]
    )


def budget_note(max_calls: int) -> str:
    """What a stop at the caller's call cap says (issue 24 item 3: a wide interval after few
    calls is the budget's doing, not the estimator giving up)."""
    return (f"the budget of {max_calls} oracle calls (max_calls, --max-calls) was the binding limit: "
            "the estimator stopped because it was spent, and more calls would narrow the interval")


_AMPLITUDES = 16
_COST_CACHES = itertools.count()


class CostCache:
    """Cost models of the estimators (Dai et al. 2023, Alg. 1 line 5 plans a stage with one):
    the mean over the amplitudes (j + 1/2) / 16 of the calls a schedule spends when every round
    reads its expected counts, computed once per key (configuration, mitigation, eps) and kept
    for the next ``size`` keys."""

    AMPLITUDES = _AMPLITUDES
    THETAS = tuple(math.asin(math.sqrt((j + 0.5) / _AMPLITUDES)) for j in range(_AMPLITUDES))

    def __init__(self, size: int = 4096, name: str = "") -> None:
        self._size = size
        self._values: dict[Hashable, float] = {}
        caches.register(name or f"qbo.qmc.base.CostCache.{next(_COST_CACHES)}", self)

    def cache_clear(self) -> None:
        self._values.clear()

    def __len__(self) -> int:
        return len(self._values)

    def mean_calls(self, key: Hashable, make_calls_at: Callable[[], Callable[[float], float]]) -> float:
        """The mean of ``calls_at(theta)`` over theta = arcsin sqrt((j + 1/2) / 16), cached by
        ``key``; ``make_calls_at()`` builds ``calls_at`` (and what its amplitudes share) on a miss."""
        value = self._values.get(key)
        if value is None:
            if len(self._values) >= self._size:
                self._values.clear()
            calls_at = make_calls_at()
            value = self._values[key] = float(np.mean([calls_at(theta) for theta in self.THETAS]))
        return value
