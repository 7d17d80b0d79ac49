"""Per-arm resumable QMC estimates for quantum policies (``qbo.qmc.resumable``).

A policy built on :class:`ResumedArms` keeps one resumed state per arm (``qbo.qmc.resumable.ArmState``:
a blank ``LRState`` spending by eps above the policy's floor (below), which the stage loop
turns into the run's estimator's state where that is not LRAE, ``qbo.qmc.auto.resumed_kind``) and asks with
``Query(arm, eps, alpha_arm, resume=state)``. The stage loop (``qbo.experiments.trial``)
refines that state to ``eps`` on the arm's oracle, charges only the new shots, and tells
the policy the query with ``resume`` replaced by the refined state. The policy stores it,
so the next visit continues from everything measured.

Confidence.  Arm i's state has total failure budget ``alpha_arm = delta / m``; by
``qbo.qmc.resumable`` its intervals contain f_i after every refinement simultaneously with
probability >= 1 - delta / m, so all arms' intervals hold at all times with probability
>= 1 - delta (union bound over m arms).  ``delta`` defaults to 1 / T: on the failure event
the regret is at most T max-gap <= T (rewards in a unit window), so the failure term of the
expected regret is at most delta T = 1 (the usual choice for UCB-type regret bounds).

Spending (``qbo.qmc.lrae``, spending by eps).  An arm's LRAE state spends its alpha by the
eps of each refinement above a floor, ``floor = max(eps_min, 1 / T)`` (reward units; ``eps_min``
alone when T is not given): eps below 1 / T is out of reach within T calls at any constant
eps * calls >= 1, and the policy asks nothing below the floor (it reports ``exhausted``
instead). A refinement to eps in dyadic bin b above the floor gets alpha 2^-(b+1) / (i (i + 1))
(i: its rank in the bin); these sum to <= alpha for any eps sequence, so the union bound above
holds as it is, while the deep (costly) visits get the large shares. IAE's state keeps index
spending (``qbo.qmc.resumable``).

Checkpoints: each tell's history entry carries the refined state (``"qmc"``), and
``replay`` restores it, so ``restore_policy`` reproduces the policy exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from qbo.algorithms.base import PolicyBase, Query, check_float, check_int_opt
from qbo.qmc.lrae import LRState
from qbo.qmc.resumable import ArmState, arm_state_from_json

__all__ = ["ResumedArms", "ResumedConfig", "blank_states", "resolve_delta", "spending_floor"]


def resolve_delta(delta: float | None, budget: int | None) -> float:
    """``delta``, else ``1 / T`` (module docstring); one of them is needed."""
    if delta is not None:
        return float(delta)
    if budget is None:
        raise ValueError("resumable quantum policies need budget (T) or delta, got neither")
    return 1.0 / max(int(budget), 2)


def blank_states(num_arms: int, alpha: float, floor: float, reward_range: float) -> list[ArmState]:
    """One blank ``LRState`` per arm with failure budget ``alpha``, spending by eps above ``floor``
    (reward units, turned into amplitude units by ``reward_range``, at most 0.25; 0: index spending)."""
    unit_floor = min(floor / reward_range, 0.25) if floor > 0 else 0.0
    return [LRState(alpha, eps_floor=unit_floor) for _ in range(num_arms)]


def spending_floor(eps_min: float, budget: int | None, eps0: float) -> float:
    """The least eps (reward units) a resumed policy asks: max(eps_min, 1 / T), at most eps0
    (module docstring, Spending)."""
    floor = float(eps_min) if budget is None else max(float(eps_min), 1.0 / max(int(budget), 2))
    return min(floor, float(eps0))


@dataclass(frozen=True)
class ResumedConfig:
    """Options shared by ``q-ucb-halve`` and ``q-se``.

    ``budget``: T (for the default ``delta``).  ``delta``: total failure probability over
    all arms and stages (None -> 1 / T, see the module docstring); each arm gets delta / m.
    ``eps0``: eps of an arm's first visit (reward units).  ``reward_range``: high - low of
    the arms' reward window (1 for Bernoulli rewards), to read the amplitude interval in
    reward units.  ``eps_min``: below this eps the policy reports ``exhausted``.
    """

    budget: int | None = None
    delta: float | None = None
    eps0: float = 0.25
    reward_range: float = 1.0
    eps_min: float = 1e-7

    def __post_init__(self) -> None:
        check_int_opt("budget", self.budget)
        if self.delta is not None:
            check_float("delta", self.delta, low=0.0, high=1.0, high_open=True)
        if self.delta is None and self.budget is None:
            raise ValueError("resumable quantum policies need budget (T) or delta, got neither")
        check_float("eps0", self.eps0, low=0.0)
        check_float("reward_range", self.reward_range, low=0.0)
        check_float("eps_min", self.eps_min, low=0.0)


class ResumedArms(PolicyBase):
    """Per-arm resumed-state bookkeeping; subclasses read ``lcb``/``ucb``/``visits``."""

    quantum = True
    resumes = True

    def _init_arms(self, delta: float, reward_range: float, floor: float = 0.0) -> None:
        """Blank per-arm states with alpha = delta / m, spending by eps above ``floor`` (reward
        units; 0: index spending); the stage loop turns a blank into its estimator's state."""
        self.delta = delta
        self.alpha = delta / self.num_arms
        self.reward_range = float(reward_range)
        self.floor = float(floor)
        self.states: list[ArmState] = blank_states(self.num_arms, self.alpha, self.floor, self.reward_range)
        self.visits = np.zeros(self.num_arms, dtype=int)

    def interval(self, arm: int) -> tuple[float, float]:
        """Arm's confidence interval in reward units, relative to the window's low end."""
        low, high = self.states[arm].interval
        return low * self.reward_range, high * self.reward_range

    @property
    def lcb(self) -> np.ndarray:
        return np.array([self.interval(i)[0] for i in range(self.num_arms)])

    @property
    def ucb(self) -> np.ndarray:
        return np.array([self.interval(i)[1] for i in range(self.num_arms)])

    def half_width(self, arm: int) -> float:
        """Current half-width of arm's interval, reward units."""
        return self.states[arm].half_width * self.reward_range

    def recommend(self) -> int:
        """Arm with the highest lower confidence bound (lowest index on ties)."""
        return int(np.argmax(self.lcb))

    def _query(self, arm: int, eps: float) -> Query:
        return Query(arm, eps, self.alpha, resume=self.states[arm])

    def tell(self, query: Query, value: float, epsilon: float | None = None, **clock: Any) -> None:
        """Store the refined state the stage loop handed back in ``query.resume``."""
        state = query.resume
        if not isinstance(state, ArmState):
            raise ValueError(
                f"{self.name} needs the refined resumed state in query.resume (the stage loop "
                f"passes it back), got {type(state).__name__}")
        arm = self._check_arm(query.arm)
        if state.alpha != self.alpha:
            raise ValueError(f"query.resume has alpha {state.alpha}, expected this policy's {self.alpha}")
        self.states[arm] = state
        self.visits[arm] += 1
        super().tell(query, value, epsilon, **clock)
        self._history[-1]["qmc"] = state.to_json()

    def replay(self, history: list[dict[str, Any]]) -> None:
        for h in history:
            q = Query(int(h["arm"]), h["epsilon"], h["alpha"], resume=arm_state_from_json(h["qmc"]))
            self.tell(q, h["value"], h.get("used_epsilon"))
