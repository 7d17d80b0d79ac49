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

Calibration-aware IAE (``qbo.qmc.capped``) pads every round by its power's predicted noise
bias; a mitigation that supports this implements :class:`PaddableEstimator` as well.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from qbo.execution.base import Executor
from qbo.noise.blocks import TranspileCache
from qbo.noise.schema import Snapshot
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


@runtime_checkable
class PaddableEstimator(Protocol):
    """A :class:`ProbabilityEstimator` whose rounds calibration-aware IAE can pad by the
    device's predicted residual bias (``qbo.qmc.capped``, module docstring there)."""

    def predicted_pads(
        self, snapshot: Snapshot, oracle: Oracle, ks: Sequence[int], compiler: TranspileCache | None = None,
    ) -> tuple[float, ...]:
        """The residual-bias pad of every power in ``ks`` on ``snapshot``, as this estimator
        corrects it (``qbo.noise.depth.predicted_pads``)."""
        ...

    def with_pads(self, pads: Sequence[float]) -> ProbabilityEstimator:
        """This estimator with fixed per-power pads (the last one for deeper powers)."""
        ...

    def shot_factors(self) -> tuple[float, float]:
        """(variance, oracle calls) per shot of a round relative to a plain round."""
        ...
