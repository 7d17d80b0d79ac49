"""``q-ucb-halve``: per-arm UCB on resumed QMC estimates, halving an arm's eps at each visit.

The quantum UCB of Wan et al. 2023 ("Quantum multi-armed bandits and stochastic linear
bandits enjoy logarithmic regrets", AAAI; arXiv 2205.14988, Alg. QUCB) pulls the arm with
the highest upper confidence bound and, on each pull, estimates it with QMC at half the
previous eps, starting afresh; they prove regret O(poly log T). Here each visit *continues*
the arm's estimate (``qbo.qmc.resumable``), so the k-th visit costs about one halving's
shots instead of a whole new estimate, and the interval used is that of everything measured.

Stage s: play ``argmax_i UCB_i`` (unvisited arms first, lowest index on ties), where
UCB_i is the upper end of arm i's resumed interval, valid for all visits simultaneously
(``qbo.algorithms.resumed``); ask for ``eps = half_width_i / 2`` (``eps0`` on the first
visit).  The stage loop stops (Alg. 1 line 5 of Dai et al.) when a refinement's predicted
cost no longer fits the budget; the rest is charged at ``recommend()`` (highest LCB).
"""

from __future__ import annotations

import math

import numpy as np

from qbo.algorithms.base import Query, argmax_lowest
from qbo.algorithms.resumed import ResumedArms, ResumedConfig, resolve_delta, spending_floor

__all__ = ["QUCBHalve", "QUCBHalveConfig"]


class QUCBHalveConfig(ResumedConfig):
    """Options: see ``qbo.algorithms.resumed.ResumedConfig``."""


class QUCBHalve(ResumedArms):
    name = "q-ucb-halve"

    def __init__(self, arms: np.ndarray, config: QUCBHalveConfig | None = None) -> None:
        cfg = config if config is not None else QUCBHalveConfig(delta=0.05)
        super().__init__(arms, cfg)
        self._init_arms(resolve_delta(cfg.delta, cfg.budget), cfg.reward_range,
                        spending_floor(cfg.eps_min, cfg.budget, cfg.eps0))
        self._raw_eps = math.inf

    @property
    def exhausted(self) -> bool:
        """True when the next eps would fall below the floor (``eps_min``, or 1 / T: ``qbo.algorithms.resumed``)."""
        self.ask()
        return self._raw_eps < self.floor

    def _select(self) -> Query:
        unvisited = np.flatnonzero(self.visits == 0)
        if unvisited.size:
            arm = int(unvisited[0])
            self._raw_eps = float(self.config.eps0)
        else:
            arm = argmax_lowest(self.ucb)
            self._raw_eps = 0.5 * self.half_width(arm)
        return self._query(arm, max(self._raw_eps, self.floor))

    def _update(self, arm: int, value: float, eps: float) -> None:
        pass  # everything lives in the arm's resumed state (ResumedArms.tell)
