"""The rich result of a mean estimate: value, interval, cost and how it was reached."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from qbo.grover import oracle_calls


@dataclass(frozen=True)
class Round:
    """One batch of shots of Q^k A: ``ones`` of ``shots`` measured the objective in |1>.

    ``scale`` is the odd global-folding factor of zero-noise extrapolation
    (``qbo.mitigation.folding``): the circuit ran was (Q^k A) ((Q^k A)^dagger (Q^k A))^((scale-1)/2).
    """

    k: int
    shots: int
    ones: int
    scale: int = 1

    @property
    def oracle_calls(self) -> int:
        """shots * scale * (2k + 1) (``qbo.grover.oracle_calls``)."""
        return oracle_calls(self.k, self.shots, self.scale)


@dataclass(frozen=True)
class Estimate:
    """An estimate of E[y] in reward units, built once at the end of an estimation.

    ``oracle_calls`` is exactly ``sum(r.shots * r.scale * (2 r.k + 1) for r in rounds)``.
    ``note`` says what limited the estimate, e.g. a device on which eps is out of reach.
    ``reached_epsilon`` is False when the estimator stopped (e.g. at its round or depth cap)
    with an interval wider than 2 epsilon; the interval is still honest.
    ``diagnostics`` holds estimator-specific plain-JSON facts (e.g. MLAE's interval method,
    goodness of fit and reachability, ``qbo.qmc.mlae``); empty for the others. It takes no
    part in equality or hashing.
    """

    value: float
    ci_low: float
    ci_high: float
    epsilon: float
    alpha: float
    rounds: tuple[Round, ...]
    wall_time: float
    method: str
    target: str
    reached_epsilon: bool = True
    note: str = ""
    diagnostics: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def oracle_calls(self) -> int:
        return sum(r.oracle_calls for r in self.rounds)

    @property
    def half_width(self) -> float:
        return 0.5 * (self.ci_high - self.ci_low)

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form; keys as printed by ``qbo estimate --json``."""
        out = asdict(self)
        out["rounds"] = [asdict(r) for r in self.rounds]
        out["oracle_calls"] = self.oracle_calls
        return out
