"""The seam between amplitude estimation and what runs a round: the round-estimator protocols.

An amplitude estimator (IAE, ``qbo.qmc.iae``) asks, per round, for an interval of the *ideal*
p_k = sin^2((2k + 1) theta) of the Grover power Q^k A at a level alpha_i, and for the circuits
that round ran (so oracle calls are counted exactly, folded circuits at their scale). The
maximum-likelihood estimator (``qbo.qmc.mlae``) asks only for the raw counts of every circuit
a round runs (``sample``: one ``Round`` per fold scale), which enter its likelihood. Plain
rounds need nothing from here. A mitigation (``qbo.mitigation``) implements
:class:`ProbabilityEstimator`; qmc never imports it.

The cost model (line 5 of Dai et al. 2023, Alg. 1: a stage's cost is predicted before it runs)
replays the schedule with expected counts. It needs each estimator's plug-in interval and
shot split without a device: :meth:`ProbabilityEstimator.cost_model` supplies both, with a
hashable key that names everything the cost depends on.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Protocol

from qbo.execution.base import Executor
from qbo.oracles.base import Oracle
from qbo.qmc.result import Round


@dataclass(frozen=True)
class RoundResult:
    """Interval [p_low, p_high] and point value for the ideal p_k, and the circuits run."""

    p_low: float
    p_high: float
    value: float
    rounds: tuple[Round, ...]


class RoundEstimator(Protocol):
    """A probability estimator bound to one executor and one oracle.

    ``scales``: the folding scales a round runs (``(1,)`` without zero-noise extrapolation);
    ``shots_per_scale(N)``: how a round's N shots are split over them.
    """

    scales: tuple[int, ...]

    def estimate(self, k: int, shots: int, alpha: float) -> RoundResult: ...

    def sample(self, k: int, shots: int) -> tuple[Round, ...]:
        """Run every circuit of a round (scale s_j at ``shots_per_scale(shots)[j]`` shots) and
        return the raw counts, uncorrected: one Round per scale."""
        ...

    def plug_in(self, k: int, p: float, shots: int, alpha: float) -> tuple[float, float]: ...

    def shots_per_scale(self, shots: int) -> list[int]: ...


class ProbabilityEstimator(Protocol):
    """What IAE needs from a mitigation: a name, a binding to (executor, oracle), and its cost
    model; MLAE also reads ``scales`` (the fold scales every round runs; ``(1,)``: none)."""

    @property
    def name(self) -> str: ...

    @property
    def scales(self) -> tuple[int, ...]: ...

    @property
    def covers_device_bias(self) -> bool:
        """True when its round intervals are widened by the device's predicted noise bias
        (``qbo.qmc.capped``); IAE then promises eps on a noisy target."""
        ...

    def bind(self, executor: Executor, oracle: Oracle) -> RoundEstimator: ...

    def cost_model(self) -> tuple[Hashable, RoundEstimator]:
        """(key, estimator) for the cost model: the estimator is bound to no device (only its
        ``plug_in`` and ``shots_per_scale`` are used) and equal keys mean equal costs."""
        ...
