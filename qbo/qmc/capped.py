"""IAE with a calibration-aware depth cap (``qbo.noise.depth``): never deeper than the device allows.

The noise model and ``choose_k_max`` live in ``qbo.noise.depth``; this wrapper only applies the
cap to an :class:`~qbo.qmc.iae.IterativeAmplitudeEstimation` and says, in the estimate, when the
requested eps is out of reach on the device.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace

from qbo.execution.base import Executor
from qbo.noise.depth import choose_k_max, depth_table, needed_k
from qbo.noise import Snapshot
from qbo.oracles.base import Oracle
from qbo.qmc.base import run_round, unit_epsilon
from qbo.qmc.confidence import clopper_pearson
from qbo.qmc.iae import IterativeAmplitudeEstimation
from qbo.qmc.result import Estimate
from qbo.qmc.rounds import RoundResult


@dataclass(frozen=True)
class BiasPad:
    """Plain IAE rounds whose intervals also cover the device's predicted noise bias: round k's
    Clopper-Pearson interval for the noisy p_k, widened on both sides by ``p_bias[k]``, the
    depolarising model's bound |P_noisy - P_ideal| <= max(p01, p10) + g (1 - c_k) / 2
    (``qbo.noise.depth``). A ``qbo.qmc.rounds.ProbabilityEstimator``; IAE's union bound is
    unchanged, so its interval covers the ideal amplitude whenever the model's bound holds."""

    p_bias: tuple[float, ...]
    label: str = ""

    @property
    def name(self) -> str:
        return "pad"

    def bind(self, executor: Executor, oracle: Oracle) -> "_BoundPad":
        return _BoundPad(self, executor, oracle)

    def cost_model(self) -> tuple[Hashable, "_BoundPad"]:
        return self, _BoundPad(self, None, None)


class _BoundPad:
    scales = (1,)

    def __init__(self, config: BiasPad, executor: Executor | None, oracle: Oracle | None) -> None:
        self.config, self.executor, self.oracle = config, executor, oracle

    def _pad(self, k: int) -> float:
        pads = self.config.p_bias
        return pads[min(k, len(pads) - 1)]

    def _interval(self, k: int, ones: int, shots: int, alpha: float) -> tuple[float, float]:
        low, high = clopper_pearson(ones, shots, alpha)
        pad = self._pad(k)
        return max(0.0, low - pad), min(1.0, high + pad)

    def shots_per_scale(self, shots: int) -> list[int]:
        return [shots]

    def plug_in(self, k: int, p: float, shots: int, alpha: float) -> tuple[float, float]:
        return self._interval(k, round(shots * p), shots, alpha)

    def estimate(self, k: int, shots: int, alpha: float) -> RoundResult:
        rnd = run_round(self.executor, self.oracle, k, shots)  # type: ignore[arg-type]
        low, high = self._interval(k, rnd.ones, rnd.shots, alpha)
        return RoundResult(low, high, rnd.ones / rnd.shots, (rnd,))


@dataclass(frozen=True)
class CalibrationAwareIAE:
    """IAE whose Grover depth is capped by a device's calibration, with intervals that cover
    the predicted noise bias too.

    Before estimating, ``choose_k_max`` finds the deepest power whose predicted amplitude bias
    (``qbo.noise.depth.amplitude_bias``) stays below ``fraction * eps``; IAE never goes deeper
    (nor deeper than a ``k_max`` the IAE already has). Without a mitigation, every round's
    interval is widened by its power's predicted probability bias (:class:`BiasPad`), so the
    final interval (an intersection of rounds) covers the ideal amplitude whenever the
    depolarising model's bound holds, and ``reached_epsilon`` is IAE's own, honest verdict.
    With a mitigation, its own ``bias_pad`` option plays that part. When no power qualifies,
    eps is out of reach on this device: the estimate runs at k = 0, padded, says so, and
    returns the wider interval the model supports. The model's bound is as good as the model
    (T1 decay pulls towards 0, not 1/2): ``bench/noise.py`` measures coverage, it is not assumed.
    """

    iae: IterativeAmplitudeEstimation
    snapshot: Snapshot
    fraction: float = 0.5

    @property
    def epsilon(self) -> float:
        return self.iae.epsilon

    @property
    def alpha(self) -> float:
        return self.iae.alpha

    def plan(self, oracle: Oracle) -> tuple[IterativeAmplitudeEstimation, int | None]:
        """The IAE this device allows for ``oracle``, and the device's k_max (None: eps out of reach)."""
        eps_unit = unit_epsilon(oracle, self.iae.epsilon)
        k_max = choose_k_max(self.snapshot, oracle, eps_unit, self.fraction)
        cap = 0 if k_max is None else k_max
        if self.iae.k_max is not None:
            cap = min(cap, self.iae.k_max)
        iae = replace(self.iae, k_max=cap)
        if iae.mitigation is None:
            rows = depth_table(self.snapshot, oracle, range(cap + 1))
            iae = replace(iae, mitigation=BiasPad(tuple(r.p_bias for r in rows), f"{self.snapshot.name}/{oracle.key}"))
        return iae, k_max

    def planned_calls(self, oracle: Oracle) -> float:
        """Cost model of the capped, padded IAE for ``oracle`` (not the uncapped model)."""
        iae, _ = self.plan(oracle)
        return iae.expected_calls(unit_epsilon(oracle, self.iae.epsilon))

    def expected_calls(self, epsilon_unit: float) -> float:
        """The uncapped IAE's model (no oracle, so no device cap): use ``planned_calls``."""
        return self.iae.expected_calls(epsilon_unit)

    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        iae, k_max = self.plan(oracle)
        est = iae.estimate(oracle, executor)
        padded = "" if self.iae.mitigation is not None else "; every round's interval covers the predicted noise bias"
        if k_max is None:
            note = (f"eps={self.iae.epsilon} is out of reach on {self.snapshot.name}: the predicted noise bias "
                    f"exceeds {self.fraction} eps at every Grover power{padded}")
            return replace(est, reached_epsilon=False, note=note)
        if iae.k_max < needed_k(unit_epsilon(oracle, self.iae.epsilon)):
            return replace(est, note=f"Grover powers capped at k_max={iae.k_max} by {self.snapshot.name}'s calibration{padded}")
        return replace(est, note=f"{self.snapshot.name}'s calibration allows every power IAE needs (k <= {k_max}){padded}")
