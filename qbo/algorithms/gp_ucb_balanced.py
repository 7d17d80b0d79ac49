"""LB-GP-UCB's rounds (``gp-ucb`` with ``lengthscale="lb"``) as one compiled loop.

LB-GP-UCB (Ziomek, Adachi & Osborne, NeurIPS 2024, Algorithm 1;
``qbo.algorithms.lengthscale.surrogates.BalancedSurrogate``) keeps one GP per candidate length
scale q(i) = theta_0 e^{-i/d}, all told every observation, and per candidate the running sums
|S^theta|, sum y and sum beta sigma (lines 10, 12). Each candidate's length scale is fixed, so
its model is updated in place; only a new candidate (lines 14-16, d ln g(T) of them in all) is
fit on the data so far, from the per-arm statistics (``surrogates.fitted``). State: the
per-arm counts and sums, O(m), and one posterior per candidate introduced.

This loop covers the rank-one posterior (``qbo.gp.ArmPosterior``: ``model="exact"`` below
``CHOLESKY_MIN_ARMS`` arms, or ``"exact-rank-one"``), O(m^2) a candidate: a round is line 3's
balancing rule (``bounds.suspected_regret``, lowest index on ties), the chosen model's UCB
(Srinivas et al. Eq. (6), first argmax), the reward drawn as ``qbo.sampling.classical_sampler``
does, then lines 6-16: the chosen model's sigma at the arm, the running sums, every active
model's ``ArmPosterior.add`` (eps = 1), the elimination of line 12 once every active candidate
has been played, and the introduction test of line 14. The loop stops after a round that
introduces a candidate; the stepper builds its model with the policy's own factory and
``fitted`` (the very code and floats of ``BalancedSurrogate._introduce``) and goes on. The
scalar formulas are the Python ones, operation for operation, with libm's log, exp, sqrt and
pow (the exponents passed as floats, as Python's ``float ** int`` does), and each ``add`` is
``ArmPosterior.add``'s elementwise operations in its order, so the arms, rewards, sums and
posteriors are those of the Python stepper bit for bit (tests/test_gp_ucb_balanced.py), with
or without numba (the kernel matrices are the policy's own, from numpy's ``exp``, so a run is
as reproducible across CPUs as the Python stepper's). Other posteriors (Cholesky, random
features) stay in Python (``qbo.algorithms.gp_ucb_steps``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import ArmSumsStepper, RewardTable
from qbo.algorithms.gp_ucb_kernel import beta_at, beta_params
from qbo.algorithms.gp_ucb_refit import grown
from qbo.algorithms.gp_ucb_schedule import growth_at
from qbo.algorithms.jit import draw_reward, jit
from qbo.algorithms.lengthscale.bounds import KERNEL_NU
from qbo.algorithms.lengthscale.surrogates import fitted
from qbo.gp.cholesky import ArmStats

__all__ = ["BalancedStepper"]

# params: theta_0, t0, power, d, nu (-1: SE), norm N, sigma_N^2, delta, lambda, pi^2
# candidates (rows): theta, |S|, sum y, sum beta sigma, active (1/0), the slot of its posterior
# arrays (an eliminated candidate's slot is reused by the next one introduced)
THETA, COUNT, SUM_Y, SUM_BS, ACTIVE, SLOT = range(6)
# state: candidates introduced, a candidate to introduce after the last round (1/0)
INTRODUCED, PENDING = 0, 1


class BalancedStepper(ArmSumsStepper):
    """``GPUCB``'s ask / tell loop on LB-GP-UCB's ``BalancedSurrogate`` over rank-one
    posteriors (a ``Stepper``; module docstring). Built on a policy whose surrogate has seen
    nothing; the surrogate is not advanced. ``statistics`` are the per-arm counts and sums, as
    the Python stepper's, so either one's checkpoints resume with the other's."""

    def __init__(self, policy: Any) -> None:
        surrogate = policy.surrogate
        if surrogate.stats.n != 0:
            raise ValueError(f"BalancedStepper needs a surrogate that has seen nothing, got {surrogate.stats.n} "
                             "observations")
        s = surrogate.settings
        self.policy, self.factory = policy, surrogate.factory
        m = s.arms.shape[0]
        self.rounds = policy.t
        self._beta = beta_params(policy.config)
        nu = KERNEL_NU[s.kernel]
        self._params = np.array([s.theta0, s.t0, s.power, float(s.dim), -1.0 if nu is None else nu, surrogate.norm,
                                 surrogate.noise_var, surrogate.delta, s.lam, math.pi ** 2])
        self._n, self._sum = np.zeros(m), np.zeros(m)
        self._u = np.empty(m)
        self._state = np.zeros(2)
        self._cand = np.zeros((0, 6))
        self._Sigma = np.zeros((0, m, m))
        self._mu, self._var, self._sd = np.zeros((0, m)), np.zeros((0, m)), np.zeros((0, m))
        self._introduce()  # line 1: Theta_1 = {theta_0}

    @property
    def thetas(self) -> list[float]:
        """The candidates introduced, in order (``BalancedSurrogate.thetas``)."""
        return self._cand[: int(self._state[INTRODUCED]), THETA].tolist()

    @property
    def active_lengthscales(self) -> list[float]:
        """Theta_t, longest first (``BalancedSurrogate.active_lengthscales``)."""
        k = int(self._state[INTRODUCED])
        return [float(row[THETA]) for row in self._cand[:k] if row[ACTIVE] != 0.0]

    def _introduce(self) -> None:
        """A new candidate q(i) fit on the data so far by the policy's factory (``fitted``)."""
        k = int(self._state[INTRODUCED])
        s = self.policy.surrogate.settings
        theta = s.theta0 * math.exp(-k / s.dim)  # lengthscale.growth.candidate
        stats = ArmStats(self._n.shape[0])
        stats.W, stats.b, stats.n = self._n.copy(), self._sum.copy(), self.rounds
        Sigma, mu, var, sd = fitted(self.factory, theta, stats).buffers()
        if k == self._cand.shape[0]:
            self._cand = grown(self._cand, (k + max(k, 4), 6))
        used = {int(row[SLOT]) for row in self._cand[:k] if row[ACTIVE] != 0.0}
        slot = min(set(range(len(used) + 1)) - used)  # memory: the active candidates' arrays only
        if slot == self._Sigma.shape[0]:
            grow = max(2 * slot, 4)
            self._Sigma = grown(self._Sigma, (grow, *Sigma.shape))
            self._mu, self._var, self._sd = (grown(a, (grow, a.shape[1])) for a in (self._mu, self._var, self._sd))
        self._Sigma[slot], self._mu[slot], self._var[slot], self._sd[slot] = Sigma, mu, var, sd
        self._cand[k] = (theta, 0.0, 0.0, 0.0, 1.0, float(slot))
        self._state[INTRODUCED], self._state[PENDING] = k + 1, 0.0

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (self._params, self._cand, self._Sigma, self._mu, self._var, self._sd, self._n, self._sum, self._u,
                self._state)

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        done = 0
        while done < count:
            k = _rounds(count - done, self.rounds, self._beta, table.coins, table.first, table.second, rng,
                        arms[done:], values[done:], *self._arrays())
            done += k
            self.rounds += k
            if self._state[PENDING] != 0.0:
                self._introduce()

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        done, count = 0, arms.shape[0]
        while done < count:
            k = _tell_rounds(self.rounds, self._beta, arms[done:], values[done:], *self._arrays())
            done += k
            self.rounds += k
            if self._state[PENDING] != 0.0:
                self._introduce()

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) of the next round's model (``BalancedSurrogate.select``)."""
        i = int(self._cand[_chosen(self._params, self._cand, int(self._state[INTRODUCED])), SLOT])
        return self._mu[i].copy(), self._var[i].copy()

    @property
    def lengthscale(self) -> float:
        """The next round's length scale (line 3)."""
        return float(self._cand[_chosen(self._params, self._cand, int(self._state[INTRODUCED])), THETA])


@jit
def _suspected_regret(n: int, theta: float, params: np.ndarray) -> float:
    """``bounds.suspected_regret(n, theta, theta_0, d, kernel, N)``, operation for operation."""
    d, nu = params[3], params[4]
    log_n = math.log(max(n, 1))
    if nu < 0.0:
        gamma = theta ** -d * log_n ** (d + 1.0)
    else:
        gamma = (theta ** -d * float(n) ** (d * (d + 1.0) / (2.0 * nu + d * (d + 1.0)))
                 * log_n ** (2.0 * nu / (2.0 * nu + d)))
    b = (params[0] / theta) ** (d / 2.0) * params[5]
    return math.sqrt(n) * (b * math.sqrt(gamma) + gamma)


@jit
def _chosen(params: np.ndarray, cand: np.ndarray, introduced: int) -> int:
    """Line 3: the active candidate of least ``R^theta(|S| + 1)``; ties -> the lowest index."""
    best, arg = math.inf, -1
    for i in range(introduced):
        if cand[i, ACTIVE] != 0.0:
            r = _suspected_regret(int(cand[i, COUNT]) + 1, cand[i, THETA], params)
            if arg < 0 or r < best:
                best, arg = r, i
    return arg


@jit
def _add(lam: float, Sigma: np.ndarray, mu: np.ndarray, var: np.ndarray, sd: np.ndarray, u: np.ndarray, i: int,
         y: float) -> None:
    """``ArmPosterior.add(i, y, eps=1)`` on one candidate's arrays (no information gain)."""
    m = mu.shape[0]
    for j in range(m):
        u[j] = Sigma[i, j]
    s_ii = max(u[i], 0.0)
    c = (1.0 / lam) / (1.0 + (1.0 / lam) * s_ii)
    k = c * (y - mu[i])
    for j in range(m):
        mu[j] += k * u[j]
    for j in range(m):
        for l in range(m):
            Sigma[j, l] -= (u[j] * u[l]) * c
    for j in range(m):
        var[j] = max(Sigma[j, j], 0.0)
        sd[j] = math.sqrt(var[j])


@jit
def _told(t: int, beta: float, j: int, y: float, params: np.ndarray, cand: np.ndarray, Sigma: np.ndarray,
          mu: np.ndarray, var: np.ndarray, sd: np.ndarray, n: np.ndarray, total: np.ndarray, u: np.ndarray,
          state: np.ndarray) -> None:
    """``BalancedSurrogate.tell(t, j, y, 1, beta)``: lines 6-16 (the introduction is flagged)."""
    introduced = int(state[INTRODUCED])
    i = _chosen(params, cand, introduced)
    s = math.sqrt(max(var[int(cand[i, SLOT]), j], 0.0))
    cand[i, COUNT] += 1.0
    cand[i, SUM_Y] += y
    cand[i, SUM_BS] += beta * s
    n[j] += 1.0
    total[j] += 1.0 * y
    for c in range(introduced):
        if cand[c, ACTIVE] != 0.0:
            at = int(cand[c, SLOT])
            _add(params[8], Sigma[at], mu[at], var[at], sd[at], u, j, y)
    # lines 9-12 once every active candidate has been played (bounds.xi, lower_bound)
    played = True
    for c in range(introduced):
        if cand[c, ACTIVE] != 0.0 and cand[c, COUNT] == 0.0:
            played = False
    g = growth_at(t, params)
    if played:
        count = max(params[3] * math.log(max(g, 1.0)), 1.0)
        x = 2.0 * params[6] * math.log(count * params[9] * float(t) * float(t) / (3.0 * params[7]))
        best = -math.inf
        for c in range(introduced):
            if cand[c, ACTIVE] != 0.0:
                low = cand[c, SUM_Y] / cand[c, COUNT] - math.sqrt(max(x, 0.0) / cand[c, COUNT])
                best = max(best, low)
        for c in range(introduced):
            if cand[c, ACTIVE] != 0.0:
                low = cand[c, SUM_Y] / cand[c, COUNT] - math.sqrt(max(x, 0.0) / cand[c, COUNT])
                if not low + 2.0 * cand[c, SUM_BS] / cand[c, COUNT] >= best:
                    cand[c, ACTIVE] = 0.0
    # lines 14-16, ``BalancedSurrogate._maybe_introduce``: q(l+1) >= theta_0 / g(t)
    q = params[0] * math.exp(-float(introduced) / params[3])
    if q >= params[0] / g * (1.0 - 1e-12):
        state[PENDING] = 1.0


@jit
def _tell_rounds(done: int, beta: np.ndarray, arms: np.ndarray, values: np.ndarray, params: np.ndarray,
                 cand: np.ndarray, Sigma: np.ndarray, mu: np.ndarray, var: np.ndarray, sd: np.ndarray, n: np.ndarray,
                 total: np.ndarray, u: np.ndarray, state: np.ndarray) -> int:
    """Tell rounds ``done + 1``.. in order; stop after one that introduces a candidate."""
    m = n.shape[0]
    for k in range(arms.shape[0]):
        t = done + k + 1
        _told(t, beta_at(t, m, beta), arms[k], values[k], params, cand, Sigma, mu, var, sd, n, total, u, state)
        if state[PENDING] != 0.0:
            return k + 1
    return arms.shape[0]


@jit
def _rounds(count: int, done: int, beta: np.ndarray, coins: np.ndarray, first: np.ndarray, second: np.ndarray,
            rng: np.random.Generator, arms: np.ndarray, values: np.ndarray, params: np.ndarray, cand: np.ndarray,
            Sigma: np.ndarray, mu: np.ndarray, var: np.ndarray, sd: np.ndarray, n: np.ndarray, total: np.ndarray,
            u: np.ndarray, state: np.ndarray) -> int:
    """Up to ``count`` rounds of LB-GP-UCB from round ``done + 1``; stop after one that
    introduces a candidate (rounds played)."""
    m = n.shape[0]
    for k in range(count):
        t = done + k + 1
        multiplier = beta_at(t, m, beta)
        i = int(cand[_chosen(params, cand, int(state[INTRODUCED])), SLOT])
        arm, best = 0, -math.inf
        for j in range(m):
            score = sd[i, j] * multiplier + mu[i, j]
            if score > best or j == 0:
                arm, best = j, score
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        arms[k], values[k] = arm, y
        _told(t, multiplier, arm, y, params, cand, Sigma, mu, var, sd, n, total, u, state)
        if state[PENDING] != 0.0:
            return k + 1
    return count
