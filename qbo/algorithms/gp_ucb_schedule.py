"""A-GP-UCB's rounds (``gp-ucb`` with ``lengthscale="a-gp-ucb"``) as one compiled loop.

A-GP-UCB (Berkenkamp, Schoellig & Krause, JMLR 2019; the baseline of Ziomek, Adachi &
Osborne, NeurIPS 2024, Sec. 5) plays GP-UCB (Srinivas et al. 2010 Eq. (6)) on the exact
posterior with length scale ``theta_t = theta_0 / g(t)``, ``g(t) = max(t0, t^p)``
(``qbo.algorithms.lengthscale.growth``), on all data so far
(``qbo.algorithms.lengthscale.surrogates.ScheduleSurrogate``). The posterior of round t is a
function of theta_t and the per-arm statistics (counts W and sums b of the t - 1 rewards,
Dai et al. Eq. (3) with eps = 1), so the loop keeps those, O(m), and the Cholesky form of
``qbo.algorithms.gp_ucb_cholesky`` over the s observed arms, O(m s):

* where theta_t differs from the length scale of the posterior in hand (g(t) changed: every
  round once t^p >= t0, never while t^p < t0, never at all for p = 0), the posterior is
  refit from the statistics at theta_t (``qbo.algorithms.gp_ucb_refit.refit``,
  ``CholeskyArmPosterior.from_stats``'s maths): O(m s^2 + s^3) a round;
* where theta_{t+1} = theta_t, round t's reward updates the posterior in place as
  ``qbo.algorithms.gp_ucb_cholesky`` does (the Kalman update and a rank-one downdate, a new
  arm's row with its kernel column at theta_t, rows moved last by ski rental): O(m s);
* where theta_{t+1} differs, round t's reward goes to the statistics only (the next round
  refits anyway).

The Python stepper (``qbo.algorithms.gp_ucb_steps``) refits the model from the statistics
every round (its cache is keyed on the observation count), so this loop does the same maths
with fewer refits. It is therefore not bit-identical to it: in the stretches of constant theta
the posterior is updated in place, where the stepper refits with LAPACK's ``potrf`` /
``trtrs`` and BLAS's ``gemv``; the kernel is evaluated here as scalar loops with libm's
``exp`` where the model calls numpy's (vectorised) ``exp`` on ``cdist``; the refit's sums are
scalar loops. The posterior agrees to rounding and an arm can differ only where two scores tie
to that rounding (tests/test_gp_ucb_schedule.py; docs/runs.md). The loop uses IEEE
operations and libm's sqrt, exp, log and pow only, so it gives the same run on every CPU, with
numba or without it (``qbo.compiling.jit``).

A resume replays the call file through the same rules, lazily: a refit that the replay would
only need for choosing an arm is not done (a round's posterior is a function of the
statistics and theta alone wherever it was refit), so the state after a replay is the state
of the uninterrupted run wherever that state is used next, bit for bit, and replaying the
rounds of changing theta costs O(1) each.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import ArmSumsStepper, RewardTable
from qbo.algorithms.gp_ucb_cholesky import _tell, _tell_new
from qbo.algorithms.gp_ucb_kernel import beta_at, beta_params
from qbo.algorithms.gp_ucb_refit import KERNEL_CODES, grown_rows, kernel_row, refit
from qbo.algorithms.jit import draw_reward, jit

__all__ = ["ScheduleStepper", "growth_at"]

# params: theta_0, t0, power, outputscale, kernel code, lambda
# state: rows s, downdate rebuilds, (unused), (unused), rows moved, g of the posterior in hand
# (0: none), stale (1: the posterior in hand lags the statistics), refits at a theta change
G_NOW, STALE, THETA_REFITS = 5, 6, 7


class ScheduleStepper(ArmSumsStepper):
    """``GPUCB``'s ask / tell loop on A-GP-UCB's ``ScheduleSurrogate`` (a ``Stepper``; module
    docstring). Built on a policy whose surrogate has seen nothing; the surrogate is not
    advanced. ``statistics`` are the per-arm counts and reward sums, as the Python stepper's,
    so either one's checkpoints resume with the other's."""

    def __init__(self, policy: Any) -> None:
        surrogate = policy.surrogate
        if surrogate.stats.n != 0:
            raise ValueError(f"ScheduleStepper needs a surrogate that has seen nothing, got {surrogate.stats.n} "
                             "observations")
        settings = surrogate.settings
        if settings.kernel not in KERNEL_CODES:
            raise ValueError(f"ScheduleStepper needs a kernel in {tuple(KERNEL_CODES)}, got {settings.kernel!r}")
        self.policy = policy
        self.points = np.ascontiguousarray(settings.arms, dtype=float)
        m = self.points.shape[0]
        self.rounds = policy.t
        self._beta = beta_params(policy.config)
        self.lam = float(settings.lam)
        self._params = np.array([settings.theta0, settings.t0, settings.power, settings.outputscale,
                                 KERNEL_CODES[settings.kernel], self.lam])
        self._kdiag = np.full(m, float(settings.outputscale))
        self._mu, self._E = np.zeros(m), np.zeros(m)
        self._n, self._sum = np.zeros(m), np.zeros(m)
        self._row_of = np.full(m, -1, dtype=np.int64)
        self._info, self._state = np.zeros(1), np.zeros(8)
        self._work = np.empty((7, m))
        self._work[6] = 0.0  # gp_ucb_cholesky.WASTE: each arm's account of downdate work lost
        self._V, self._K, self._L = np.zeros((0, m)), np.zeros((0, m)), np.zeros((0, 0))
        self._arm_of, self._W, self._b = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
        self._grow(min(16, m))

    def _grow(self, cap: int) -> None:
        """Room for ``cap`` observed arms (``gp_ucb_refit.grown_rows``) and the downdate's scratch."""
        self._V, self._K, self._L, self._arm_of, self._W, self._b = grown_rows(cap, self._V, self._K, self._L,
                                                                               self._arm_of, self._W, self._b)
        self._scratch = np.zeros((max(cap, 7), cap + 1))

    def _full(self) -> bool:
        """All rows in use and room for more arms: the loops stop and ask for room."""
        rows, cap = int(self._state[0]), self._V.shape[0]
        return rows == cap < self._mu.shape[0]

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (self._params, self.points, self._kdiag, self._mu, self._E, self._V, self._K, self._L, self._arm_of,
                self._row_of, self._W, self._b, self._n, self._sum, self._info, self._state, self._work,
                self._scratch)

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
        done, count = 0, arms.shape[0]
        while done < count:
            if self._full():
                self._grow(min(2 * self._V.shape[0], self._mu.shape[0]))
            done += _tell_rounds(self.rounds + done, arms[done:], values[done:], *self._arrays())
        self.rounds += count

    def _ready(self) -> None:
        """The posterior of the next round (the refit it would start with, done now: the same one)."""
        _prepare(self.rounds + 1, *self._arrays())

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) at every arm of the next round's model (``ScheduleSurrogate.select``)."""
        self._ready()
        return self._mu.copy(), np.maximum(self._kdiag - self._E, 0.0)

    @property
    def information_gain(self) -> float:
        """The next round's model's information gain (batch after a refit, chain rule in place)."""
        self._ready()
        return float(self._info[0])

    @property
    def lengthscale(self) -> float:
        """theta of the next round, ``ScheduleSurrogate.lengthscale``."""
        return float(self._params[0] / growth_at(self.rounds + 1, self._params))

    @property
    def theta_refits(self) -> int:
        """Refits at a change of theta made by this object (a replay skips the unused ones)."""
        return int(self._state[THETA_REFITS])

    @property
    def moves(self) -> int:
        """Rows moved to the end (``qbo.algorithms.gp_ucb_cholesky``'s ski rental)."""
        return int(self._state[4])


@jit
def growth_at(t: int, params: np.ndarray) -> float:
    """``g(t) = max(t0, t^p)`` (``qbo.algorithms.lengthscale.growth.growth``), with t0 and p at
    ``params[1]`` and ``params[2]`` (this loop's and ``qbo.algorithms.gp_ucb_balanced``'s)."""
    return max(params[1], float(t) ** params[2])


@jit
def _refit_at(g: float, params: np.ndarray, points: np.ndarray, mu: np.ndarray, E: np.ndarray, V: np.ndarray,
              K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, W: np.ndarray, b: np.ndarray, info: np.ndarray,
              state: np.ndarray, work: np.ndarray) -> None:
    """The posterior from the statistics at ``theta_0 / g`` (module docstring; ``gp_ucb_refit.refit``)."""
    info[0] = refit(int(params[4]), params[0] / g, params[3], params[5], points, int(state[0]), mu, E, V, K, L,
                    arm_of, W, b, work)
    state[G_NOW], state[STALE] = g, 0.0
    state[THETA_REFITS] += 1.0


@jit
def _prepare(t: int, params: np.ndarray, points: np.ndarray, kdiag: np.ndarray, mu: np.ndarray, E: np.ndarray,
             V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray,
             b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray, state: np.ndarray, work: np.ndarray,
             scratch: np.ndarray) -> None:
    """Round t's posterior in hand: refit where theta_t is not the posterior's or it lags."""
    g = growth_at(t, params)
    if g != state[G_NOW] or state[STALE] != 0.0:
        _refit_at(g, params, points, mu, E, V, K, L, arm_of, W, b, info, state, work)


@jit
def _told(t: int, j: int, y: float, params: np.ndarray, points: np.ndarray, kdiag: np.ndarray, mu: np.ndarray,
          E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray,
          W: np.ndarray, b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray, state: np.ndarray,
          work: np.ndarray, scratch: np.ndarray) -> None:
    """Round t's reward y at arm j: in place where theta_{t+1} = theta_t, else to the
    statistics only (room for a new row is made)."""
    lam, g = params[5], state[G_NOW]
    if growth_at(t + 1, params) == g:
        if state[STALE] != 0.0:  # a replay's deferred refit, now needed
            _refit_at(g, params, points, mu, E, V, K, L, arm_of, W, b, info, state, work)
        if not _tell(lam, j, y, kdiag, mu, E, V, K, L, arm_of, row_of, W, b, n, total, info, state, work, scratch):
            kcol = work[3]
            kernel_row(int(params[4]), params[0] / g, params[3], points, j, kcol)
            _tell_new(lam, kcol, j, y, kdiag, mu, E, V, K, L, arm_of, row_of, W, b, n, total, info, state, work,
                      scratch)
        return
    p = row_of[j]
    if p < 0:
        p = int(state[0])
        arm_of[p], W[p], b[p] = j, 0.0, 0.0
        row_of[j] = p
        state[0] = p + 1
    W[p] += 1.0
    b[p] += 1.0 * y
    n[j] += 1.0
    total[j] += y
    state[STALE] = 1.0


@jit
def _tell_rounds(done: int, arms: np.ndarray, values: np.ndarray, params: np.ndarray, points: np.ndarray,
                 kdiag: np.ndarray, mu: np.ndarray, E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray,
                 arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray, b: np.ndarray, n: np.ndarray,
                 total: np.ndarray, info: np.ndarray, state: np.ndarray, work: np.ndarray,
                 scratch: np.ndarray) -> int:
    """Tell rounds ``done + 1``.. (``arms``, ``values``) in order, a refit at a change of theta
    deferred until a tell in place needs it; stop early (rounds told) where the rows are full."""
    m = mu.shape[0]
    for k in range(arms.shape[0]):
        if int(state[0]) == V.shape[0] and V.shape[0] < m:
            return k
        t = done + k + 1
        g = growth_at(t, params)
        if g != state[G_NOW]:
            state[G_NOW], state[STALE] = g, 1.0
        _told(t, arms[k], values[k], params, points, kdiag, mu, E, V, K, L, arm_of, row_of, W, b, n, total, info,
              state, work, scratch)
    return arms.shape[0]


@jit
def _rounds(count: int, done: int, beta: np.ndarray, coins: np.ndarray, first: np.ndarray, second: np.ndarray,
            rng: np.random.Generator, arms: np.ndarray, values: np.ndarray, params: np.ndarray, points: np.ndarray,
            kdiag: np.ndarray, mu: np.ndarray, E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray,
            arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray, b: np.ndarray, n: np.ndarray, total: np.ndarray,
            info: np.ndarray, state: np.ndarray, work: np.ndarray, scratch: np.ndarray) -> int:
    """Up to ``count`` rounds of A-GP-UCB from round ``done + 1`` (Srinivas et al. Eq. (6) at
    theta_t, the first argmax, ``SquareRootArms.ucb``'s operations); stop early (rounds
    played) where the rows are full."""
    m = mu.shape[0]
    for k in range(count):
        if int(state[0]) == V.shape[0] and V.shape[0] < m:
            return k
        t = done + k + 1
        _prepare(t, params, points, kdiag, mu, E, V, K, L, arm_of, row_of, W, b, n, total, info, state, work,
                 scratch)
        multiplier = beta_at(t, m, beta)
        arm, best = 0, -math.inf
        for j in range(m):
            sd = math.sqrt(max(kdiag[j] - E[j], 0.0))
            score = sd * multiplier + mu[j]
            if score > best or j == 0:
                arm, best = j, score
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        arms[k], values[k] = arm, y
        _told(t, arm, y, params, points, kdiag, mu, E, V, K, L, arm_of, row_of, W, b, n, total, info, state, work,
              scratch)
    return count
