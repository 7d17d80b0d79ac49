"""``tv-gp-ucb``'s rounds as one compiled loop (``qbo.algorithms.compiled``), O(m^2) a round.

The policy (``qbo.algorithms.time_varying.TVGPUCB``; Bogunovic et al. 2016, the seed 000's
Sec. 2.3 baseline) scores ``alpha(x) = mu_n(x, n + 1) + beta_n sigma_n(x, n + 1)`` on the
forgetting posterior of seed 000 Eq. (2), ``k_time(tau, tau') = (1 - eps)^{|tau - tau'|/2}``,
with the round index as its clock; a round advances the clock by 1, then conditions on the
reward. The policy keeps the posterior in ``ForgettingArmPosterior``'s dense form: the m x m
matrix ``P = K - Sigma`` (the Kalman filter of the AR(1) state ``f(., tau)``, whose predict
step is ``P <- a^2 P`` with ``a = (1 - eps)^{1/2}``), O(m^2) a round and constant memory,
where the square-root form's one row per observation costs O(n m).

This loop does the policy's rounds on the same arrays' copies, operation for operation:
``mu <- a mu``, ``E <- a^2 E``, ``P <- a^2 P``, the column ``c = K e_j - P e_j``,
``s = max(c_j, 0) + lambda``, ``v = c / sqrt(s)``, ``mu += v (y - mu_j) / sqrt(s)``,
``E += v^2``, ``P += v v^T``, the information gain ``+ log(s / lambda) / 2``, and the score
``a mu + beta sqrt(max(k - a^2 E, 0))`` with its first argmax (``ucb_at``). Every one is
elementwise, so numpy and this loop round alike: the same arms, rewards and posterior, bit for
bit (tests/test_tv_gp_ucb_kernel.py). With eps = 0 nothing decays and the loop is GP-UCB on
the static GP with this policy's beta. The loop uses IEEE operations and libm's sqrt and log
only, so a run is the same on every CPU, with numba or without it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import ArmSumsStepper, RewardTable
from qbo.algorithms.gp_ucb_kernel import beta_at
from qbo.algorithms.jit import draw_reward, jit
from qbo.gp.forgetting import decay

__all__ = ["TVStepper"]

_MODES = {"practical": 1, "bogunovic": 2}  # ``beta_at``'s modes; 3 is a constant


class TVStepper(ArmSumsStepper):
    """``TVGPUCB``'s ask / tell loop on the m x m form of its posterior (a ``Stepper``; module docstring).

    Built on a policy whose posterior has seen nothing (a compact unit's fresh policy; a resume
    replays the call file): the loop keeps the posterior in arrays of its own, and the policy's
    model is not advanced. ``statistics`` are the per-arm counts and reward sums (what a
    checkpoint compares after a replay; the posterior itself depends on the order of the rounds).
    """

    def __init__(self, policy: Any) -> None:
        post = policy.posterior
        if post.n != 0:
            raise ValueError(f"TVStepper needs a posterior that has seen nothing, got {post.n} observations")
        cfg, m = policy.config, policy.num_arms
        self.policy, self.rounds = policy, policy.t
        self._K = np.array(post.kernel_matrix, dtype=float)
        self._kdiag = np.array(post.prior_var, dtype=float)
        # a = (1 - eps)^{1/2} (the model's ``decay(eps, 1)``), lambda, then ``beta_at``'s parameters
        beta = cfg.beta
        self._params = np.array([decay(post.eps, 1.0), post.lam, _MODES[beta] if isinstance(beta, str) else 3, 1.0,
                                 1.0, 0.0 if isinstance(beta, str) else float(beta), math.pi ** 2])
        self._mu, self._E, self._P = np.zeros(m), np.zeros(m), np.zeros((m, m))
        self._n, self._sum, self._info = np.zeros(m), np.zeros(m), np.zeros(1)
        self._work = np.empty((2, m))  # the column c and the Kalman row v
        self._no_draws = np.random.default_rng(0)  # ``replay`` draws nothing (the loop's rng argument)

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return self._params, self._K, self._kdiag, self._mu, self._E, self._P, self._n, self._sum, self._info, self._work

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        _rounds(count, self.rounds, False, table.coins, table.first, table.second, rng, arms, values, *self._arrays())
        self.rounds += count

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        none = np.zeros((0, 4))
        _rounds(arms.shape[0], self.rounds, True, none, none[:, 0], none[:, 0], self._no_draws, arms, values,
                *self._arrays())
        self.rounds += arms.shape[0]

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) at every arm now (m each), as ``ForgettingArmPosterior.posterior``."""
        return self._mu.copy(), np.maximum(self._kdiag - self._E, 0.0)

    @property
    def information_gain(self) -> float:
        """Chain-rule information gain of the rounds told (``SquareRootArms.information_gain``)."""
        return float(self._info[0])


@jit
def _rounds(count: int, t0: int, replay: bool, coins: np.ndarray, first: np.ndarray, second: np.ndarray,
            rng: np.random.Generator, arms: np.ndarray, values: np.ndarray, params: np.ndarray, K: np.ndarray,
            kdiag: np.ndarray, mu: np.ndarray, E: np.ndarray, P: np.ndarray, n: np.ndarray, total: np.ndarray,
            info: np.ndarray, work: np.ndarray) -> None:
    """``count`` rounds from round ``t0``: choose (``TVGPUCB._select``: the first argmax of
    ``ucb_at(posterior, 1, beta_{t+1})``), draw the reward from the table, tell
    (``advance(1)``, then ``add``; module docstring); ``replay``: tell ``arms`` and ``values``
    again instead (a resume; the table and ``rng`` are not read). One loop, not a function a
    step: numba does not inline those calls, which cost a third of a round at 20 arms."""
    m = mu.shape[0]
    a, lam = params[0], params[1]
    aa = a * a
    beta_params = params[2:]
    c, v = work[0], work[1]
    for r in range(count):
        if replay:
            j, y = arms[r], values[r]
        else:
            beta = beta_at(t0 + r + 1, m, beta_params)
            j, best = 0, -math.inf
            for i in range(m):
                score = a * mu[i] + beta * math.sqrt(max(kdiag[i] - aa * E[i], 0.0))
                if score > best or i == 0:
                    j, best = i, score
            y = draw_reward(rng, coins[j], first[j], second[j])
            arms[r], values[r] = j, y
        if a != 1.0:
            for i in range(m):
                mu[i] *= a
            for i in range(m):
                E[i] *= aa
            for i in range(m):
                for k in range(m):
                    P[i, k] *= aa
        for i in range(m):
            c[i] = K[i, j] - P[i, j]
        s = max(c[j], 0.0) + lam
        root = math.sqrt(s)
        for i in range(m):
            v[i] = c[i] / root
        step = (y - mu[j]) / root
        for i in range(m):
            mu[i] += v[i] * step
        for i in range(m):
            E[i] += v[i] * v[i]
        for i in range(m):
            vi = v[i]
            for k in range(m):
                P[i, k] += vi * v[k]
        info[0] += 0.5 * math.log(s / lam)
        n[j] += 1.0
        total[j] += y
