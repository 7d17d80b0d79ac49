"""``q-se``: successive elimination on resumed QMC estimates.

Classical successive elimination (Even-Dar, Mannor, Mansour 2006) samples every active arm
once per round and drops arms whose UCB falls below the best LCB. The quantum version
refines every active arm to ``eps_r = eps0 2^-(r-1)`` in round r with QMC, which costs
O(1/eps_r) calls per arm instead of O(1/eps_r^2) samples: the QMC step is what Wang et al.
2021 ("Quantum exploration algorithms for multi-armed bandits", AAAI; arXiv 2007.07049)
build on for best-arm identification with O~(sqrt(sum_i 1/Delta_i^2)) queries (fixed
confidence, with a matching lower bound), and Wan et al. 2023 for O(poly log T) regret.
Here each round *continues* every active arm's estimate (``qbo.qmc.resumable``): round r's
refinement reuses all shots of rounds 1..r-1.

Rule.  Round r: active arms are refined in index order to eps_r; after the last one,
arm i is eliminated if ``UCB_i < max_j LCB_j`` (intervals valid simultaneously over all
rounds with probability >= 1 - delta, ``qbo.algorithms.resumed``). With one arm left the
policy is ``exhausted``: the stage loop stops and charges the rest at ``recommend()``,
which is that arm. On the good event the best arm is never eliminated.
"""

from __future__ import annotations

import numpy as np

from qbo.algorithms.base import Query
from qbo.algorithms.resumed import ResumedArms, ResumedConfig, resolve_delta, spending_floor

__all__ = ["QSE", "QSEConfig"]


class QSEConfig(ResumedConfig):
    """Options: see ``qbo.algorithms.resumed.ResumedConfig``."""


class QSE(ResumedArms):
    name = "q-se"

    def __init__(self, arms: np.ndarray, config: QSEConfig | None = None) -> None:
        cfg = config if config is not None else QSEConfig(delta=0.05)
        super().__init__(arms, cfg)
        self._init_arms(resolve_delta(cfg.delta, cfg.budget), cfg.reward_range,
                        spending_floor(cfg.eps_min, cfg.budget, cfg.eps0))
        self.active = np.ones(self.num_arms, dtype=bool)
        self.round = 1
        self._done = np.zeros(self.num_arms, dtype=int)  # last round each arm finished

    @property
    def eps_round(self) -> float:
        """eps_r = eps0 2^-(r-1) of the current round."""
        return float(self.config.eps0) * 0.5 ** (self.round - 1)

    @property
    def exhausted(self) -> bool:
        """One arm left (identified), or eps_r below the floor (``eps_min``, or 1 / T: ``qbo.algorithms.resumed``)."""
        return int(self.active.sum()) <= 1 or self.eps_round < self.floor

    def recommend(self) -> int:
        """The highest LCB among the active arms."""
        lcb = np.where(self.active, self.lcb, -np.inf)
        return int(np.argmax(lcb))

    def _select(self) -> Query:
        todo = np.flatnonzero(self.active & (self._done < self.round))
        arm = int(todo[0]) if todo.size else int(np.flatnonzero(self.active)[0])
        return self._query(arm, max(self.eps_round, self.floor))

    def _update(self, arm: int, value: float, eps: float) -> None:
        self._done[arm] = self.round
        if np.any(self.active & (self._done < self.round)):
            return
        best_lcb = float(np.max(np.where(self.active, self.lcb, -np.inf)))
        self.active &= self.ucb >= best_lcb
        self.round += 1
