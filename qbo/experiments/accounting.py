"""How a QMC stage is charged: honest oracle calls, or the reference code's count.

Honest (default): sum over rounds of shots * (2k + 1) -- A once, then A and A^dagger inside
each Grover step, every round included (k = 0 too).

Reference (UNDERCOUNTS; only for reproducing the Q-BO authors' published curves): their code
charges shots * k summed over rounds, ignoring the A calls and every k = 0 round, and when no
k > 0 round ran it charges ceil(0.8 / eps * ln(2 / alpha * log2(pi / (4 eps)))) instead
(about 6 calls at eps = 0.5).
"""

from __future__ import annotations

import math

from qbo.qmc.result import Estimate

ACCOUNTINGS = ("honest", "reference")


def honest_calls(estimate: Estimate) -> int:
    return estimate.oracle_calls


def reference_calls(estimate: Estimate, epsilon_unit: float) -> int:
    """The reference code's (under)count for one QMC call."""
    grover = sum(r.shots * r.k for r in estimate.rounds)
    if grover > 0:
        return grover
    eps, alpha = epsilon_unit, estimate.alpha
    inner = 2.0 / alpha * math.log2(math.pi / (4.0 * eps)) if eps < math.pi / 4 else 1.0
    return max(1, math.ceil(0.8 / eps * math.log(max(inner, math.e))))


def charged_calls(accounting: str, estimate: Estimate, epsilon_unit: float) -> int:
    if accounting == "honest":
        return honest_calls(estimate)
    if accounting == "reference":
        return reference_calls(estimate, epsilon_unit)
    raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got '{accounting}'")
