"""Classical Monte Carlo mean estimation: shots of A alone (k = 0), one oracle call each.

Hoeffding: N = ceil(ln(2/alpha) / (2 eps^2)) samples of a [0, 1] variable give
|p_hat - a| <= eps with probability >= 1 - alpha. This is the O(1/eps^2) classical rate
that QMC improves to O(1/eps) (Q-BO seed, Sec. 3.2).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from qbo.execution.base import MAX_SHOTS, Executor
from qbo.oracles.base import Oracle
from qbo.qmc.base import check_accuracy, run_round, to_estimate, unit_epsilon, without_device_model
from qbo.qmc.inputs import accepts_user_inputs
from qbo.qmc.progress import Tracker
from qbo.qmc.result import Estimate, Round


def hoeffding_shots(epsilon_unit: float, alpha: float) -> int:
    """Samples needed for half-width ``epsilon_unit`` on [0, 1] at level 1 - alpha.

    Zero when epsilon_unit >= 1/2: the midpoint 1/2 is then within epsilon of any mean.
    """
    if epsilon_unit >= 0.5:
        return 0
    return math.ceil(math.log(2.0 / alpha) / (2.0 * epsilon_unit**2))


@dataclass(frozen=True)
class MonteCarloEstimator:
    """Sample A to half-width ``epsilon`` (reward units) at level 1 - ``alpha``; with
    ``max_calls`` below Hoeffding's count, that many samples and the wider Hoeffding interval
    they give (reached_epsilon False)."""

    epsilon: float
    alpha: float = 0.05
    max_calls: int | None = None

    def __post_init__(self) -> None:
        check_accuracy(self.epsilon, self.alpha)
        if self.max_calls is not None and not (isinstance(self.max_calls, int) and self.max_calls >= 1):
            raise ValueError(f"max_calls must be an integer >= 1 oracle call or None, got {self.max_calls}")

    def planned_calls(self, oracle: Oracle) -> float:
        """The cost model for ``oracle`` (Dai et al. 2023, Alg. 1 line 5 plans a stage with it)."""
        return self.expected_calls(unit_epsilon(oracle, self.epsilon))

    def expected_calls(self, epsilon_unit: float) -> float:
        return float(self._shots(epsilon_unit))

    def _shots(self, epsilon_unit: float) -> int:
        shots = hoeffding_shots(epsilon_unit, self.alpha)
        return shots if self.max_calls is None else min(shots, self.max_calls)

    @accepts_user_inputs
    def estimate(self, oracle: Oracle, executor: Executor) -> Estimate:
        start = time.perf_counter()
        eps = unit_epsilon(oracle, self.epsilon)
        shots = self._shots(eps)
        tracker = Tracker("mc", lambda: float(shots))
        rounds, p = sample_k0(executor, oracle, shots, self.epsilon)
        tracker.add(rounds)
        capped = shots < hoeffding_shots(eps, self.alpha)
        half = math.sqrt(math.log(2.0 / self.alpha) / (2.0 * shots)) if capped else eps
        est = to_estimate(
            oracle, max(0.0, p - half), min(1.0, p + half), p,
            epsilon=self.epsilon, alpha=self.alpha, rounds=rounds,
            wall_time=time.perf_counter() - start, method="mc", target=executor.target,
            **({"reached_epsilon": False, "note": f"max_calls={self.max_calls} stopped it at half-width "
                f"{half * (oracle.high - oracle.low):.3g}"} if capped else {}),
        )
        return without_device_model(est, executor.target)


def sample_k0(executor: Executor, oracle: Oracle, shots: int, epsilon: float) -> tuple[tuple[Round, ...], float]:
    """One k = 0 round of ``shots`` (1 call each) and its fraction of ones (0.5 for no shots);
    a ValueError names ``epsilon`` when the shots exceed 2^53."""
    if shots > MAX_SHOTS:
        raise ValueError(f"epsilon {epsilon} needs {shots:.3g} Monte Carlo samples, more than 2^53; use IAE")
    rounds = (run_round(executor, oracle, 0, shots),) if shots else ()
    return rounds, (rounds[0].ones / shots if shots else 0.5)
