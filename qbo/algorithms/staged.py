"""What every quantum (staged) policy shares: Dai et al. 2023, Alg. 1 lines 2-3 and 6.

A stage s of Q-GP-UCB, Q-LinUCB or Q-CTV-GP-UCB picks ``x_s = argmax_x score(x)`` (lowest
index on ties; the score is the policy's UCB, line 2), asks QMC for the half-width
``eps_s = max(sigma~_{s-1}(x_s) / sqrt(lambda), eps_min)`` (line 3; for Q-LinUCB
``||x_s||_{V^{-1}}``, the same quantity) and the failure probability ``alpha = delta /
(2 m_bar)`` (line 6).  Line 4's N_{eps_s} and line 5's stop rule belong to the runner, which
knows the QMC method (``qbo.experiments.trial``).  When the raw eps_s falls below ``eps_min``
(sigma~ = 0 makes the paper's N_eps infinite) the policy reports ``exhausted`` and the stage
loop stops.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.algorithms.base import PolicyBase, Query, argmax_lowest

__all__ = ["StagedPolicy", "default_m_bar", "resolve_alpha"]


def default_m_bar(
    budget: int, feature_dim: int, max_norm_sq: float, lam: float, noise_case: str = "bounded"
) -> int:
    """Upper bound on the number of stages m (DERIVED from Dai et al. App. D).

    Doubling identity (Eq. 25): ``m log 2 = 2 gamma~_m <= D log(1 + sum_s w_s k(x_s,x_s)/(D lam))``
    (Eq. 17), with ``sum_s 1/eps_s^2 <= T^2`` (Lemma 2, Eq. 8; bounded noise) or
    ``<= 9 sqrt(2) T^2`` (App. G Eq. 51; bounded variance).  Hence
    ``m_bar = min(T, ceil(D log2(1 + c T^2 max k / (D lam))))``; ``T`` itself is always valid
    because each stage uses at least one oracle query.
    """
    c = 1.0 if noise_case == "bounded" else 9.0 * math.sqrt(2.0)
    D = int(feature_dim)
    bound = D * math.log2(1.0 + c * budget**2 * max_norm_sq / (D * lam))
    return max(1, min(int(budget), math.ceil(bound)))


def resolve_alpha(delta: float, budget: int | None, m_bar: int | None, feature_dim: int,
                  max_norm_sq: float, lam: float, noise_case: str = "bounded") -> tuple[int, float]:
    """``(m_bar, alpha = delta / (2 m_bar))``, Alg. 1 line 6; m_bar from ``default_m_bar``
    unless given, which needs the budget T."""
    if m_bar is None:
        if budget is None:
            raise ValueError("q-policies need budget (T) or m_bar to set alpha, got neither")
        m_bar = default_m_bar(budget, feature_dim, max_norm_sq, lam, noise_case)
    return m_bar, delta / (2.0 * m_bar)


class StagedPolicy(PolicyBase):
    """A quantum policy of Alg. 1: subclasses set ``lam`` and ``alpha`` and build their
    query with ``_stage_query``; ``config.eps_min`` is the floor on eps_s."""

    quantum = True
    lam: float
    alpha: float
    _raw_eps: float = math.inf

    @property
    def exhausted(self) -> bool:
        """True when the next stage's raw eps_s is below ``eps_min`` (module doc)."""
        self.ask()
        return self._raw_eps < self.config.eps_min

    def _stage_query(self, scores: np.ndarray, raw_eps: np.ndarray, horizon: float | None = None) -> Query:
        """Lines 2-3 and 6: ``x_s = argmax scores``, ``eps_s = max(raw_eps[x_s], eps_min)``, alpha."""
        arm = argmax_lowest(scores)
        self._raw_eps = float(raw_eps[arm])
        return Query(arm, max(self._raw_eps, self.config.eps_min), self.alpha, horizon=horizon)
