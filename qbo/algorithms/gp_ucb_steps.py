"""``gp-ucb``'s rounds stepped in Python where it has no compiled kernel (a ``Stepper``).

``gp-ucb`` with an adaptive length scale (LB-GP-UCB on the Cholesky posterior or random
features: ``qbo.algorithms.lengthscale.surrogates``; A-GP-UCB, LB-GP-UCB on rank-one
posteriors and the MLE refits have compiled loops from their first round,
``qbo.algorithms.gp_ucb_schedule``, ``qbo.algorithms.gp_ucb_balanced``,
``qbo.algorithms.gp_ucb_mle``), a surrogate that has already seen data, or on the Cholesky posterior whose
model has already seen data (a fresh one has a compiled loop, ``qbo.algorithms.gp_ucb_cholesky``),
still makes one classical call a round, so its unit can be compact (``qbo.experiments.compact``:
a call file and records at checkpoints) even though its round stays Python and numpy: each round is the policy's own
``ask`` and ``tell`` (``surrogate.select(t).ucb(beta_t)``, the first argmax,
``surrogate.tell(t, arm, y, 1, beta_t)``, Srinivas et al. Eq. (6)), and the reward is the draw
of ``qbo.sampling.classical_sampler`` (``rng.binomial(1, p_first)``), so the arms, rewards and
records are those of the unit stepped a stage at a time, bit for bit. What it saves is the
stage loop's records, not the model's cost: an MLE refit (every ``mle_every`` tells) or an
A-GP-UCB refit (O(m u^2 + u^3) every round), where the surrogate has seen data, is as slow as
before (docs/runs.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qbo.algorithms.base import argmax_lowest
from qbo.algorithms.compiled import RewardTable

__all__ = ["SurrogateStepper"]


class SurrogateStepper:
    """``GPUCB``'s ask / tell loop on its surrogate, in Python (module docstring).

    The round count is the stepper's (the policy's history is not grown: a compact unit keeps
    O(arms) state); ``statistics`` are the per-arm counts and reward sums of the rounds told,
    which a resume checks after replaying the call file."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.surrogate = policy.surrogate
        self.rounds = policy.t
        self._n = np.zeros(policy.num_arms)
        self._sum = np.zeros(policy.num_arms)

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        surrogate, beta_of = self.surrogate, self.policy.beta
        p_first, first, second = table.p_first.tolist(), table.first.tolist(), table.second.tolist()
        binomial = rng.binomial
        for k in range(count):
            t = self.rounds + 1
            beta = beta_of(t)
            score, _ = surrogate.select(t).ucb(beta)
            arm = argmax_lowest(score)
            y = first[arm] if binomial(1, p_first[arm]) else second[arm]
            surrogate.tell(t, arm, y, 1.0, beta)
            self._told(arm, y)
            arms[k], values[k] = arm, y

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        surrogate, beta_of = self.surrogate, self.policy.beta
        for arm, y in zip(arms.tolist(), values.tolist()):
            t = self.rounds + 1
            surrogate.tell(t, arm, y, 1.0, beta_of(t))
            self._told(arm, y)

    def _told(self, arm: int, y: float) -> None:
        self.rounds += 1
        self._n[arm] += 1.0
        self._sum[arm] += y

    def statistics(self) -> dict[str, Any]:
        return {"n": self._n.tolist(), "sum": self._sum.tolist()}

    def random_state(self) -> dict[str, Any] | None:
        return None

    def restore(self, state: dict[str, Any] | None) -> None:
        """Nothing random to restore (the surrogates are deterministic given their tells)."""
