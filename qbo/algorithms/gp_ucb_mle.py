"""gp-ucb with a marginal-likelihood length scale (``lengthscale="mle"``, ``"mle+outputscale"``)
as one compiled loop.

The MLE baseline of Ziomek, Adachi & Osborne (NeurIPS 2024), Sec. 5
(``qbo.algorithms.lengthscale.surrogates.MLESurrogate``): GP-UCB (Srinivas et al. 2010 Eq. (6))
on the exact posterior at the length scale (and output scale) that maximises the marginal
likelihood of the data so far, refit after every ``mle_every``-th tell once two distinct arms
are observed (theta_0 and the configured output scale before). The posterior and the
likelihood are functions of the per-arm counts W and reward sums b (Dai et al. Eq. (3) with
eps = 1), so the loop keeps those, O(m), and the Cholesky form over the s observed arms, O(m s):

* a round refits the posterior from the statistics at the (theta, s) in hand
  (``qbo.algorithms.gp_ucb_refit.refit``, O(m s^2 + s^3)), as the Python stepper's
  ``MLESurrogate.select`` does (``CholeskyArmPosterior.from_stats``), plays the UCB arm (the
  first argmax, ``SquareRootArms.ucb``'s operations) and draws its reward as
  ``qbo.sampling.classical_sampler`` does;
* the tell adds the reward to the statistics and, where the surrogate would, refits
  (theta, s) by ``qbo.algorithms.lengthscale.mle_search.fit``, the very function
  ``MLESurrogate`` calls (through ``mle.fit_hyperparameters``), on the same per-arm arrays:
  the same floats in, so the same length scale out, bit for bit.

So the length scales are the Python stepper's, bit for bit; the posterior agrees to rounding (the
refit's sums are scalar loops over the observed arms in the order first observed, where
``from_stats`` calls LAPACK on them in ascending order), and an arm can differ only where two
scores tie to that rounding (tests/test_gp_ucb_mle.py; docs/runs.md). The loop uses IEEE
operations and libm's sqrt, exp and log only, so it gives the same run with numba or without
it (``qbo.compiling.jit``).

A resume replays the call file into the statistics and fits once a replayed chunk, at its last
round whose tell fits: the (theta, s) in hand after a round is the fit of the statistics at the
last fitting tell (a pure function of them), and the posterior is refit before the next round
anyway, so the state after a replay is the uninterrupted run's, bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import ArmSumsStepper, RewardTable
from qbo.algorithms.gp_ucb_kernel import beta_at, beta_params
from qbo.algorithms.gp_ucb_refit import KERNEL_CODES, grown_rows, refit
from qbo.algorithms.jit import draw_reward, jit
from qbo.algorithms.lengthscale.mle import BOUNDS, GRID, N_STARTS, SCALE_GRID, XTOL
from qbo.algorithms.lengthscale.mle_search import FIT_SCALE, FIT_THETA, fit

__all__ = ["MLEStepper"]

# params: theta in hand, output scale in hand, kernel code, lambda
THETA, SCALE, CODE, LAM = range(4)
# fitting: every k-th tell, fit the output scale (1/0), starts, Brent's tolerance
EVERY, FIT_OS, STARTS, TOL = range(4)
# state: rows s, stale (1 where the posterior lags the statistics), tells, fits
ROWS, STALE, TOLD, FITS = range(4)


class MLEStepper(ArmSumsStepper):
    """``GPUCB``'s ask / tell loop on the MLE baseline's ``MLESurrogate`` (a ``Stepper``; module
    docstring). Built on a policy whose surrogate has seen nothing; the surrogate is not
    advanced. ``statistics`` are the per-arm counts and reward sums, as the Python stepper's,
    so either one's checkpoints resume with the other's."""

    def __init__(self, policy: Any) -> None:
        surrogate = policy.surrogate
        if surrogate.stats.n != 0:
            raise ValueError(f"MLEStepper needs a surrogate that has seen nothing, got {surrogate.stats.n} "
                             "observations")
        settings = surrogate.settings
        if settings.kernel not in KERNEL_CODES:
            raise ValueError(f"MLEStepper needs a kernel in {tuple(KERNEL_CODES)}, got {settings.kernel!r}")
        self.policy = policy
        self.points = np.ascontiguousarray(settings.arms, dtype=float)
        m = self.points.shape[0]
        self.rounds = policy.t
        self._beta = beta_params(policy.config)
        self._params = np.array([surrogate.theta, surrogate.scale, KERNEL_CODES[settings.kernel],
                                 float(settings.lam)])
        self._fitting = np.array([surrogate.every, float(surrogate.fit_outputscale), N_STARTS, XTOL])
        self._mu, self._E = np.zeros(m), np.zeros(m)
        self._n, self._sum = np.zeros(m), np.zeros(m)
        self._row_of = np.full(m, -1, dtype=np.int64)
        self._info, self._state, self._out = np.zeros(1), np.zeros(4), np.zeros(4)
        self._state[STALE] = 1.0
        self._work = np.zeros((2, m))
        self._V, self._K, self._L = np.zeros((0, m)), np.zeros((0, m)), np.zeros((0, 0))
        self._arm_of, self._W, self._b = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
        self._grow(min(16, m))

    def _grow(self, cap: int) -> None:
        """Room for ``cap`` observed arms (``gp_ucb_refit.grown_rows``)."""
        self._V, self._K, self._L, self._arm_of, self._W, self._b = grown_rows(cap, self._V, self._K, self._L,
                                                                               self._arm_of, self._W, self._b)

    def _full(self) -> bool:
        """All rows in use and room for more arms: the loop stops and asks for room."""
        rows, cap = int(self._state[ROWS]), self._V.shape[0]
        return rows == cap < self._mu.shape[0]

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (self._fitting, GRID, SCALE_GRID, BOUNDS, self._params, self.points, self._mu, self._E, self._V, self._K,
                self._L, self._arm_of, self._row_of, self._W, self._b, self._n, self._sum, self._info, self._state,
                self._work, self._out)

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        done = 0
        while done < count:
            if self._full():
                self._grow(min(2 * self._V.shape[0], self._mu.shape[0]))
            done += _rounds(count - done, self.rounds + done, self._beta, table.coins, table.first, table.second, rng,
                            arms[done:], values[done:], *self._arrays())
        self.rounds += count

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        """Tell the rounds again (module docstring: one fit, at the chunk's last fitting tell)."""
        count = arms.shape[0]
        if count == 0:
            return
        arms = np.ascontiguousarray(arms, dtype=np.int64)
        kinds, index = np.unique(arms, return_index=True)
        fresh = np.zeros(count, dtype=bool)
        fresh[index[self._row_of[kinds] < 0]] = True  # where an arm is observed first
        rows = int(self._state[ROWS])
        if rows + int(fresh.sum()) > self._V.shape[0]:
            self._grow(min(max(rows + int(fresh.sum()), 2 * self._V.shape[0]), self._mu.shape[0]))
        told = int(self._state[TOLD]) + np.arange(1, count + 1)
        fits = np.flatnonzero((told % int(self._fitting[EVERY]) == 0) & (rows + np.cumsum(fresh) >= 2))
        last = int(fits[-1]) + 1 if fits.size else 0
        _tell_rounds(arms[:last], values[:last], *self._arrays())
        if last:
            _refit_hyperparameters(*self._arrays())
        _tell_rounds(arms[last:], values[last:], *self._arrays())
        self.rounds += count

    def _ready(self) -> None:
        """The posterior of the next round (the refit it would start with, done now: the same one)."""
        _prepare(*self._arrays())

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) at every arm of the next round's model (``MLESurrogate.select``)."""
        self._ready()
        return self._mu.copy(), np.maximum(self._params[SCALE] - self._E, 0.0)

    @property
    def information_gain(self) -> float:
        """The next round's model's information gain."""
        self._ready()
        return float(self._info[0])

    @property
    def lengthscale(self) -> float:
        """theta of the next round, ``MLESurrogate.lengthscale``."""
        return float(self._params[THETA])

    @property
    def outputscale(self) -> float:
        """The output scale of the next round (``MLESurrogate.scale``)."""
        return float(self._params[SCALE])

    @property
    def fits(self) -> int:
        """Marginal-likelihood fits made by this object (a replay makes one a chunk)."""
        return int(self._state[FITS])


@jit
def _prepare(fitting: np.ndarray, grid: np.ndarray, scale_grid: np.ndarray, bounds: np.ndarray, params: np.ndarray,
             points: np.ndarray, mu: np.ndarray, E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray,
             row_of: np.ndarray, W: np.ndarray, b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray,
             state: np.ndarray, work: np.ndarray, out: np.ndarray) -> None:
    """The posterior at the (theta, s) in hand from the statistics, where it lags them."""
    if state[STALE] != 0.0:
        info[0] = refit(int(params[CODE]), params[THETA], params[SCALE], params[LAM], points, int(state[ROWS]), mu,
                        E, V, K, L, arm_of, W, b, work)
        state[STALE] = 0.0


@jit
def _refit_hyperparameters(fitting: np.ndarray, grid: np.ndarray, scale_grid: np.ndarray, bounds: np.ndarray,
                           params: np.ndarray, points: np.ndarray, mu: np.ndarray, E: np.ndarray, V: np.ndarray, K: np.ndarray,
                           L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray, b: np.ndarray,
                           n: np.ndarray, total: np.ndarray, info: np.ndarray, state: np.ndarray, work: np.ndarray,
                           out: np.ndarray) -> None:
    """``MLESurrogate.tell``'s fit: (theta, s) of ``mle_search.fit`` on the per-arm counts and sums."""
    fit(points, n, total, int(params[CODE]), params[LAM], params[SCALE], fitting[FIT_OS] != 0.0,
        int(fitting[STARTS]), grid, scale_grid, fitting[TOL], bounds, out)
    params[THETA], params[SCALE] = out[FIT_THETA], out[FIT_SCALE]
    state[FITS] += 1.0
    state[STALE] = 1.0


@jit
def _told(j: int, y: float, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray, b: np.ndarray, n: np.ndarray,
          total: np.ndarray, state: np.ndarray) -> None:
    """Reward y at arm j into the statistics (``ArmStats.add`` with eps = 1); a new arm gets a row."""
    p = row_of[j]
    if p < 0:
        p = int(state[ROWS])
        arm_of[p], W[p], b[p] = j, 0.0, 0.0
        row_of[j] = p
        state[ROWS] = p + 1
    W[p] += 1.0
    b[p] += 1.0 * y
    n[j] += 1.0
    total[j] += 1.0 * y
    state[TOLD] += 1.0
    state[STALE] = 1.0


@jit
def _tell_rounds(arms: np.ndarray, values: np.ndarray, fitting: np.ndarray, grid: np.ndarray,
                 scale_grid: np.ndarray, bounds: np.ndarray, params: np.ndarray, points: np.ndarray, mu: np.ndarray,
                 E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray,
                 b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray, state: np.ndarray,
                 work: np.ndarray, out: np.ndarray) -> None:
    """The rounds (``arms``, ``values``) into the statistics, in order, without fitting (a replay)."""
    for k in range(arms.shape[0]):
        _told(arms[k], values[k], arm_of, row_of, W, b, n, total, state)


@jit
def _rounds(count: int, done: int, beta: np.ndarray, coins: np.ndarray, first: np.ndarray, second: np.ndarray,
            rng: np.random.Generator, arms: np.ndarray, values: np.ndarray, fitting: np.ndarray, grid: np.ndarray,
            scale_grid: np.ndarray, bounds: np.ndarray, params: np.ndarray, points: np.ndarray, mu: np.ndarray,
            E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray,
            b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray, state: np.ndarray, work: np.ndarray,
            out: np.ndarray) -> int:
    """Up to ``count`` rounds from round ``done + 1`` (module docstring); stop early (rounds
    played) where the rows are full."""
    m = mu.shape[0]
    every = int(fitting[EVERY])
    for k in range(count):
        if int(state[ROWS]) == V.shape[0] and V.shape[0] < m:
            return k
        t = done + k + 1
        _prepare(fitting, grid, scale_grid, bounds, params, points, mu, E, V, K, L, arm_of, row_of, W, b, n, total,
                 info, state, work, out)
        multiplier, scale = beta_at(t, m, beta), params[SCALE]
        arm, best = 0, -math.inf
        for j in range(m):
            sd = math.sqrt(max(scale - E[j], 0.0))
            score = sd * multiplier + mu[j]
            if score > best or j == 0:
                arm, best = j, score
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        arms[k], values[k] = arm, y
        _told(arm, y, arm_of, row_of, W, b, n, total, state)
        if int(state[TOLD]) % every == 0 and state[ROWS] >= 2.0:
            _refit_hyperparameters(fitting, grid, scale_grid, bounds, params, points, mu, E, V, K, L, arm_of, row_of,
                                   W, b, n, total, info, state, work, out)
    return count
