"""``q-gp-ucb`` with ``resume=true``: Q-GP-UCB (Dai et al. 2023, Alg. 1) whose QMC
estimates are continued per arm (``qbo.qmc.resumable``) instead of restarted.

How the weighted posterior (Eq. (3)) uses a refined estimate.  Alg. 1 would add, at stage s,
a second observation at x_s with error eps_s = sigma~_{s-1}(x_s) / sqrt(lambda).  Two
observations at one arm with errors eps_old and eps_s enter Eq. (3) only through their total
weight 1/eps_old^2 + 1/eps_s^2 (``qbo.gp.arms``).  With ``resume`` the stage instead asks to
refine the arm's estimate to

    eps_eq = (1/eps_old^2 + 1/eps_s^2)^(-1/2)

and the refined value **replaces** the arm's earlier observation: every arm carries at
most one observation, (y_x, eps_x) from its latest refinement, so nothing is counted twice
(the refinement already contains the earlier shots). The posterior variance, and so every
eps_s, x_s choice and the doubling identity of App. D, is exactly Alg. 1's; only the
estimate at x_s is a single, cheaper-to-reach, interval of all the shots at x_s. With
``weights="achieved"`` the weight is that of the refined interval's half-width.

Failure budget: each arm's resumed estimate gets alpha = delta / (2 m) (m arms), split over
its refinements as in ``qbo.qmc.resumable`` (``spending="index"``, the default: alpha
6 / (pi^2 j^2) at the j-th refinement) or, with ``spending="eps"``, spent by eps above the
floor as in ``qbo.algorithms.resumed`` (LRAE; IAE keeps index spending; docs/estimators.md
says why index is the default: it gave lower regret inside this policy); all
intervals hold at all stages with probability >= 1 - delta / 2, the same total as Alg. 1's
m_bar stages at delta / (2 m_bar).  ``reward_range`` (high - low of the rewards' window, set
from the problem as for ``q-ucb-halve``) turns the reward-unit floor into the amplitude floor.

With ``spending="eps"``: the floor, ``spending_floor(eps_min, T)`` = max(eps_min, 1 / T) (reward units).  A stage asks
``max(eps_eq, floor)``; when Alg. 1's raw eps_s = sigma~_{s-1}(x_s) / sqrt(lambda) (line 3) is
below the floor the policy reports ``exhausted`` and the stage loop ends as at line 5 (the
rest is charged at ``recommend()``): line 3's ``eps_min`` rule with eps_min raised to the
floor, since line 4 prices eps < 1 / T at N_eps > T (any constant eps N_eps >= 1).  An arm at
its floor is final: its posterior sd is below the sd sqrt(lambda) eps_x of its observation,
so its raw eps_s < eps_x <= floor and the acquisition's picking it (line 2) ends the run; the
policy never asks an arm at its floor again.  Every other stage either spends calls or
strictly lowers its arm's requested eps (eps_eq < eps_old, down to the floor).  Needs the
exact model with a fixed length scale (the posterior is rebuilt from the latest observation
of each arm, O(m^3) per stage).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from qbo.algorithms.base import Query, check_float
from qbo.algorithms.gp_ucb import QGPUCB, QGPUCBConfig
from qbo.algorithms.models import build_surrogate
from qbo.algorithms.resumed import blank_states, spending_floor
from qbo.qmc.resumable import ArmState, ResumableState, arm_state_from_json

__all__ = ["QGPUCBResumable", "QGPUCBResumableConfig", "SPENDINGS"]

SPENDINGS = ("index", "eps")  # index: alpha 6/(pi^2 j^2) per refinement (the default); eps: by eps above the floor


@dataclass(frozen=True)
class QGPUCBResumableConfig(QGPUCBConfig):
    """``QGPUCBConfig`` plus ``resume`` (default False: exactly Alg. 1) and ``reward_range``
    (high - low of the rewards' window; with ``resume``, the floor's amplitude scale)."""

    resume: bool = False
    reward_range: float = 1.0
    spending: str = "index"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_float("reward_range", self.reward_range, low=0.0)
        if self.spending not in SPENDINGS:
            raise ValueError(f"spending must be one of {', '.join(SPENDINGS)}, got {self.spending!r}")
        if not isinstance(self.resume, bool):
            raise ValueError(f"resume must be true or false, got {self.resume!r}")
        if self.resume and (self.model != "exact" or self.lengthscale_spec.mode != "fixed"):
            raise ValueError(f"resume needs model='exact' and a fixed lengthscale, got model={self.model!r}, lengthscale={self.lengthscale!r}")


class QGPUCBResumable(QGPUCB):
    """Q-GP-UCB; with ``resume`` its per-arm estimates are continued (module docstring)."""

    def __init__(self, arms: np.ndarray, config: QGPUCBResumableConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else QGPUCBResumableConfig())
        self.resume = bool(self.config.resume)
        self.resumes = self.resume
        if self.resume:
            self.alpha = self.config.delta / (2.0 * self.num_arms)
            self.by_eps = self.config.spending == "eps"
            if self.by_eps:
                self.floor = spending_floor(self.config.eps_min, self.config.budget, math.inf)
                self.states: list[ArmState] = blank_states(self.num_arms, self.alpha, self.floor,
                                                           float(self.config.reward_range))
            else:
                self.floor = float(self.config.eps_min)
                self.states = [ResumableState(self.alpha) for _ in range(self.num_arms)]
            self.latest: dict[int, tuple[float, float]] = {}

    @property
    def exhausted(self) -> bool:
        """Without resume, ``StagedPolicy``'s rule; with it, the raw eps_s is below the floor
        (module docstring); with index spending, ``StagedPolicy``'s rule."""
        if not self.resume or not self.by_eps:
            return super().exhausted
        self.ask()
        return self._raw_eps < self.floor

    def _select(self) -> Query:
        query = super()._select()
        if not self.resume:
            return query
        old = self.latest.get(query.arm)
        eps = query.epsilon if old is None else (old[1] ** -2 + query.epsilon ** -2) ** -0.5
        return replace(query, epsilon=max(eps, self.floor), alpha=self.alpha, resume=self.states[query.arm])

    def tell(self, query: Query, value: float, epsilon: float | None = None, **clock: Any) -> None:
        if not self.resume:
            return super().tell(query, value, epsilon, **clock)
        if not isinstance(query.resume, ArmState) or query.resume.alpha != self.alpha:
            raise ValueError(f"q-gp-ucb with resume needs the refined resumed state in query.resume, got {query.resume!r}")
        self.states[self._check_arm(query.arm)] = query.resume
        super().tell(query, value, epsilon, **clock)
        self._history[-1]["qmc"] = query.resume.to_json()

    def replay(self, history: list[dict[str, Any]]) -> None:
        if not self.resume:
            return super().replay(history)
        for h in history:
            q = Query(int(h["arm"]), h["epsilon"], h["alpha"], resume=arm_state_from_json(h["qmc"]))
            self.tell(q, h["value"], h.get("used_epsilon"))

    def _update(self, arm: int, value: float, eps: float) -> None:
        if not self.resume:
            return super()._update(arm, value, eps)
        self.latest[arm] = (value, eps)
        s = self.t + 1
        self.surrogate = build_surrogate(self.config, self.arms, self.lam, float(self.config.outputscale), self.config.delta)
        for a in sorted(self.latest):
            y, e = self.latest[a]
            self.surrogate.tell(s, a, y, e, self.beta(s))
