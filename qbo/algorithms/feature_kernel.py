"""``linucb``'s and ``gp-ucb``'s (on random Fourier features) rounds as one compiled loop
(``qbo.algorithms.compiled``) on ``qbo.gp.WeightedFeatureGP``'s own arrays.

A round is the policy's: ``theta = V^{-1} b``, at every arm the mean ``x^T theta`` and
``q = phi^T V^{-1} phi`` (Dai et al. App. A Eq. (6)), the score (``linucb``: OFUL,
``mean + rho_t sqrt(max(lam q, 0) / lam)``; ``gp-ucb``: ``mean + beta_t^{1/2} sqrt(max(lam q,
0))``, Srinivas et al. Eq. (6)), the first argmax, then the Sherman-Morrison update of
``WeightedFeatureGP.add`` (its symmetrisation ``(A + A^T)/2`` is exact on an exactly
symmetric A, so it is left out). The features of the played arm are those ``add`` computes
from that arm alone, the scores' those of all arms at once, as in the policies.

Not bit-identical to the policies' ``ask``: the matrix products are scalar sums here and
BLAS's blocked, vectorised sums there, which round differently in the last bits (for d = 2
features, linucb's products are single sums and agree); the arm then differs only where two
scores tie to rounding (tests/test_compact.py compares both). The same with or without numba.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import RewardTable
from qbo.algorithms.gp_ucb_kernel import beta_at, beta_params
from qbo.algorithms.jit import draw_reward, jit


class FeatureStepper:
    """A feature-space policy's ask / tell loop (a ``Stepper``): ``linucb`` (``linear``; OFUL's
    R, delta, L, S and d) or ``gp-ucb`` (its config's beta schedule) on ``model``, a
    ``FeatureArmModel``; ``mean_features`` the rows whose product with theta is the mean."""

    def __init__(self, policy: Any, model: Any, mean_features: np.ndarray, linear: bool) -> None:
        self.policy, self.model = policy, model
        self.rounds = policy.t
        self._phi = np.ascontiguousarray(model.Phi, dtype=float)
        self._x = np.ascontiguousarray(mean_features, dtype=float)
        self._played = np.array([model.gp.feature_map(model.arms[i:i + 1])[0] for i in range(model.num_arms)])
        cfg = policy.config
        self._params, self._beta = np.zeros(6), np.zeros(5)
        if linear:
            self._params[:] = (1.0, cfg.R, cfg.delta, policy.L, cfg.S, float(policy.d))
        else:
            self._beta[:] = beta_params(cfg)
        self._info = np.array([model.information_gain])
        M = self._phi.shape[1]
        self._theta, self._u = np.empty(M), np.empty(M)

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        Vinv, b = self.model.gp.buffers()
        _rounds(count, self.rounds, self._params, self._beta, self.model.lam, Vinv, b, self._info, self._phi,
                self._x, self._played, self._theta, self._u, table.coins, table.first, table.second, rng,
                arms, values)
        self._done(count)

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        Vinv, b = self.model.gp.buffers()
        _tell_rounds(self.model.lam, Vinv, b, self._info, self._played, self._u, arms, values)
        self._done(arms.shape[0])

    def _done(self, count: int) -> None:
        self.rounds += count
        self.model.gp.adopt(self.model.gp.n + count, self._info[0])

    def statistics(self) -> dict[str, Any]:
        _, b = self.model.gp.buffers()
        return {"n": self.rounds, "b": b.tolist()}

    def random_state(self) -> dict[str, Any] | None:
        return None

    def restore(self, state: dict[str, Any] | None) -> None:
        """Nothing random to restore."""


@jit
def _add(lam: float, Vinv: np.ndarray, b: np.ndarray, info: np.ndarray, phi: np.ndarray, u: np.ndarray,
         y: float) -> None:
    """``WeightedFeatureGP.add(x, y, eps=1)`` with ``phi = phi(x)``."""
    M = phi.shape[0]
    for j in range(M):
        s = 0.0
        for l in range(M):
            s += Vinv[j, l] * phi[l]
        u[j] = s
    q = 0.0
    for j in range(M):
        q += phi[j] * u[j]
    q = max(q, 0.0)
    info[0] += 0.5 * math.log1p(1.0 * max(lam * q, 0.0) / lam)
    c = 1.0 / (1.0 + 1.0 * q)
    for j in range(M):
        for l in range(M):
            Vinv[j, l] = Vinv[j, l] - c * (u[j] * u[l])
    wy = 1.0 * y
    for j in range(M):
        b[j] += wy * phi[j]


@jit
def _tell_rounds(lam: float, Vinv: np.ndarray, b: np.ndarray, info: np.ndarray, played: np.ndarray,
                 u: np.ndarray, arms: np.ndarray, values: np.ndarray) -> None:
    for k in range(arms.shape[0]):
        _add(lam, Vinv, b, info, played[arms[k]], u, values[k])


@jit
def _rounds(count: int, done: int, params: np.ndarray, beta: np.ndarray, lam: float, Vinv: np.ndarray,
            b: np.ndarray, info: np.ndarray, phi: np.ndarray, x: np.ndarray, played: np.ndarray,
            theta: np.ndarray, u: np.ndarray, coins: np.ndarray, first: np.ndarray, second: np.ndarray,
            rng: np.random.Generator, arms: np.ndarray, values: np.ndarray) -> None:
    """``count`` rounds from round ``done + 1`` (module docstring)."""
    m, M = phi.shape[0], phi.shape[1]
    linear = params[0] != 0.0
    for k in range(count):
        t = done + k  # rounds told before this one
        if linear:  # OFUL radius (Abbasi-Yadkori et al. 2011 Thm 2), LinUCB.radius
            r = math.sqrt(params[5] * math.log((1 + t * params[3] ** 2 / lam) / params[2]))
            multiplier = params[1] * r + math.sqrt(lam) * params[4]
        else:
            multiplier = beta_at(t + 1, m, beta)
        for j in range(M):
            s = 0.0
            for l in range(M):
                s += Vinv[j, l] * b[l]
            theta[j] = s
        arm, best = 0, -math.inf
        for i in range(m):
            mean = 0.0
            for j in range(M):
                mean += x[i, j] * theta[j]
            q = 0.0
            for j in range(M):
                s = 0.0
                for l in range(M):
                    s += phi[i, l] * Vinv[l, j]
                q += s * phi[i, j]
            var = max(lam * q, 0.0)
            if linear:
                score = mean + multiplier * math.sqrt(var / lam)
            else:
                score = mean + multiplier * math.sqrt(var)
            if score > best or i == 0:
                arm, best = i, score
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        _add(lam, Vinv, b, info, played[arm], u, y)
        arms[k], values[k] = arm, y
