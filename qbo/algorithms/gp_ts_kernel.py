"""``gp-ts``'s rounds on the rank-one posterior as one compiled loop (``qbo.algorithms.compiled``).

A round is ``GPTS``'s: m standard normals z from the policy's generator (the draws of
``rng.standard_normal(m)``, one by one), a root R of ``Sigma + jitter I`` (jitter 1e-12 times
the largest variance), ``f = mu + scale R z``, play the first argmax of f, then the rank-one
update of ``qbo.algorithms.gp_ucb_kernel`` (bit for bit ``ArmPosterior.add``).

Not bit-identical to ``GPTS.ask``: R is a scalar Cholesky-Banachiewicz loop and ``R z`` a
scalar sum, where the policy calls LAPACK's ``potrf`` and BLAS's ``gemv``, whose blocked and
vectorised sums round differently in the last bits; f then differs by rounding only, and the
arm by a tie within rounding (none in tests/test_compact.py's runs). Where a pivot is not
positive (a numerically singular covariance) this loop sets that column of R to zero (a
semidefinite Cholesky root, R R^T = Sigma + jitter I on the remaining directions) where the
policy takes ``eigh``'s root: the same law of f, a different draw from there on. The loop is
the same with or without numba (IEEE operations and libm's sqrt only), so a run is
reproducible from the seed on every platform; docs/runs.md says so too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import RewardTable
from qbo.algorithms.gp_ucb_kernel import _add, _tell_rounds
from qbo.algorithms.jit import draw_reward, jit


class GPTSStepper:
    """``GPTS``'s ask / tell loop on its rank-one posterior's own arrays (a ``Stepper``; module docstring)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.model = policy.model
        m = policy.num_arms
        self._scale = float(policy.config.scale)
        self._b, self._weight = self.model.b, self.model.weights
        self._info = np.array([self.model.information_gain])
        self._root, self._z, self._u = np.empty((m, m)), np.empty(m), np.empty(m)

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        Sigma, mu, var, sd = self.model.buffers()
        _rounds(count, self._scale, self.model.lam, Sigma, mu, var, sd, self._b, self._weight, self._info,
                self._root, self._z, self._u, self.policy.rng, table.coins, table.first, table.second, rng,
                arms, values)
        self._done(count)

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        Sigma, mu, var, sd = self.model.buffers()
        _tell_rounds(self.model.lam, Sigma, mu, var, sd, self._b, self._weight, self._info, self._u, arms, values)
        self._done(arms.shape[0])

    def _done(self, count: int) -> None:
        self.model.adopt(self._b, self._weight, self.model.n + count, self._info[0])

    def statistics(self) -> dict[str, Any]:
        return {"n": self._weight.tolist(), "sum": self._b.tolist()}

    def random_state(self) -> dict[str, Any] | None:
        return self.policy.rng.bit_generator.state

    def restore(self, state: dict[str, Any] | None) -> None:
        self.policy.rng.bit_generator.state = state


@jit
def psd_root(Sigma: np.ndarray, root: np.ndarray) -> None:
    """Lower-triangular R with R R^T = Sigma + jitter I (Cholesky-Banachiewicz by rows; a
    column whose pivot is not positive is zero), jitter = 1e-12 max(max diag, 1e-300)."""
    m = Sigma.shape[0]
    top = 1e-300
    for j in range(m):
        if Sigma[j, j] > top:
            top = Sigma[j, j]
    jitter = 1e-12 * top
    for i in range(m):
        for j in range(i + 1):
            s = Sigma[i, j] + jitter if i == j else Sigma[i, j]
            for k in range(j):
                s -= root[i, k] * root[j, k]
            if i == j:
                root[i, i] = math.sqrt(s) if s > 0.0 else 0.0
            elif root[j, j] > 0.0:
                root[i, j] = s / root[j, j]
            else:
                root[i, j] = 0.0
        for j in range(i + 1, m):
            root[i, j] = 0.0


@jit
def _rounds(count: int, scale: float, lam: float, Sigma: np.ndarray, mu: np.ndarray, var: np.ndarray,
            sd: np.ndarray, b: np.ndarray, weight: np.ndarray, info: np.ndarray, root: np.ndarray,
            z: np.ndarray, u: np.ndarray, prng: np.random.Generator, coins: np.ndarray, first: np.ndarray,
            second: np.ndarray, rng: np.random.Generator, arms: np.ndarray, values: np.ndarray) -> None:
    """``count`` rounds of GP-TS (Chowdhury & Gopalan 2017, f ~ N(mu, scale^2 Sigma), first argmax)."""
    m = mu.shape[0]
    for k in range(count):
        psd_root(Sigma, root)
        for j in range(m):
            z[j] = prng.standard_normal()
        arm, best = 0, -math.inf
        for j in range(m):
            s = 0.0
            for l in range(j + 1):
                s += root[j, l] * z[l]
            f = mu[j] + scale * s
            if f > best or j == 0:
                arm, best = j, f
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        _add(lam, Sigma, mu, var, sd, b, weight, info, u, arm, y)
        arms[k], values[k] = arm, y
