"""IAE with a calibration-aware depth cap (``qbo.noise.depth``): never deeper than the device allows.

The noise model and ``choose_k_max`` live in ``qbo.noise.depth``; this wrapper only applies the
cap to an :class:`~qbo.qmc.iae.IterativeAmplitudeEstimation` and says, in the estimate, when the
requested eps is out of reach on the device.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from qbo.execution.base import Executor
from qbo.noise.depth import choose_k_max, needed_k
from qbo.noise.snapshot import Snapshot
from qbo.oracles.base import Oracle
from qbo.qmc.base import unit_epsilon
from qbo.qmc.iae import IterativeAmplitudeEstimation
from qbo.qmc.result import Estimate


@dataclass(frozen=True)
class CalibrationAwareIAE:
    """IAE whose Grover depth is capped by a device's calibration.

    Before estimating, ``choose_k_max`` finds the deepest power whose predicted noise bias
    stays below ``fraction * eps``; IAE then never goes deeper (nor deeper than a ``k_max``
    the IAE already has). The bias bound is not monotone in k (shallow powers can be worse
    in amplitude terms, see ``amplitude_bias``), so this caps depth; it does not bound the
    bias of every shallower round. When no power qualifies, eps is out of reach on this
    device: the estimate is still made (at k = 0) but says so, with ``reached_epsilon=False``
    and a note, instead of passing off a biased interval as 2 eps wide.
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

    def capped(self, oracle: Oracle) -> tuple[IterativeAmplitudeEstimation, int | None]:
        """The IAE this device allows for ``oracle``, and the device's k_max (None: eps out of reach)."""
        eps_unit = unit_epsilon(oracle, self.iae.epsilon)
        k_max = choose_k_max(self.snapshot, oracle, eps_unit, self.fraction)
        cap = 0 if k_max is None else k_max
        if self.iae.k_max is not None:
            cap = min(cap, self.iae.k_max)
        return replace(self.iae, k_max=cap), k_max

    def expected_calls_for(self, oracle: Oracle) -> float:
        """Cost model of the capped IAE (use this, not the uncapped model, to plan a budget)."""
        iae, _ = self.capped(oracle)
        return iae.expected_calls(unit_epsilon(oracle, self.iae.epsilon))

    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        iae, k_max = self.capped(oracle)
        est = iae.estimate(oracle, executor)
        if k_max is None:
            note = (f"eps={self.iae.epsilon} is out of reach on {self.snapshot.name}: the predicted noise bias "
                    f"exceeds {self.fraction} eps at every Grover power; the interval covers sampling error only")
            return replace(est, reached_epsilon=False, note=note)
        if iae.k_max < needed_k(unit_epsilon(oracle, self.iae.epsilon)):
            return replace(est, note=f"Grover powers capped at k_max={iae.k_max} by {self.snapshot.name}'s calibration")
        return replace(est, note=f"{self.snapshot.name}'s calibration allows every power IAE needs (k <= {k_max})")
