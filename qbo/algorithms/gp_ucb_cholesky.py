"""``gp-ucb``'s rounds on the Cholesky posterior as one compiled loop (``qbo.algorithms.compiled``).

The posterior is ``qbo.gp.CholeskyArmPosterior``'s (Dai et al. 2023 Eq. (3) with eps = 1, i.e.
Srinivas et al. 2010 Eqs. (1)-(2)), kept the same way: over the s distinct observed arms U,
``A = S K_UU S + lambda I = L L^T`` and ``V = L^{-1} S K_{U,:}`` (s x m), the mean and
``E = colsum(V^2)``, so ``sigma^2 = diag K - E``. A round is the policy's: the score
``mu + beta_t sigma`` (Srinivas et al. Eq. (6)), the first argmax, the reward drawn as
``qbo.sampling.classical_sampler`` does, then the model's ``add``:

* the Kalman update of the mean, E and the information gain with the column
  ``Sigma e_j = K e_j - V^T V e_j`` (``qbo.gp.square_root``), O(m s);
* a new arm appends a row to L and V, O(m s): the loop stops there and hands the arm back, so
  that ``K e_j`` comes from the policy's own kernel (the very floats the model uses) and is
  kept for later rounds (memory: K's rows of the observed arms, s x m, next to V);
* a repeat at the arm of row p is the rank-one downdate of rows p.. of L and V (Gill, Golub,
  Murray & Saunders 1974, method C1; ``CholeskyArmPosterior._downdate``), O(m (s - p) +
  (s - p)^2), with the same closed-form recurrence, the same prefix sums in blocks of 16 rows
  and the same order of operations; where it is not numerically definite, L and V are rebuilt
  from the per-arm statistics as the model does (O(m s^2 + s^3)).
* rows are in the order the arms were first played, so an arm found early but played most
  (GP-UCB's best arm, at T = 10^6 most of the calls) pays the whole downdate every round. Each
  repeat at row p < s - 1 adds to its arm's account the work it cost beyond a repeat at the
  last row, m (s - 1 - p) + (s - p)^2 - 1; when the account reaches one rebuild's work,
  m s^2 + s^3, the row moves last, L and V are rebuilt in the new order (the same posterior:
  U's order is free in Eq. (3)) and the account empties. A rebuild is paid only with work
  already lost (ski rental), so the loop never does more than twice the work of never moving.
  Here the loop departs from the model, which keeps the first-played order.

Not bit-identical to ``CholeskyArmPosterior``: the products ``V^T (V e_j)``, the downdate's
triangular solve and a rebuild's Cholesky factor are scalar loops here, where the model calls
BLAS's ``gemv`` and LAPACK's ``trtrs`` / ``potrf``, whose blocked, vectorised (and, by CPU,
differently dispatched) sums round differently in the last bits, and the moved rows' rebuilds
are the model's factor reached another way; every other operation is the model's,
elementwise, in its order. The posterior agrees to rounding and the arm can differ only where
two scores tie to that rounding (tests/test_gp_ucb_cholesky.py and bench/cholesky_agreement.py
compare both with the policy's own ask and tell; docs/runs.md gives the figures). The loop uses
IEEE operations and libm's sqrt and log only, so, unlike the model, it gives the same run
on every CPU, with numba or without it (``qbo.compiling.jit``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qbo.algorithms.compiled import ArmSumsStepper, RewardTable
from qbo.algorithms.gp_ucb_kernel import beta_at, beta_params
from qbo.algorithms.gp_ucb_refit import grown_rows
from qbo.algorithms.jit import draw_reward, jit

__all__ = ["CholeskyStepper"]

_BLOCK = 16  # rows of V per prefix-sum block in a downdate (qbo.gp.cholesky._BLOCK: the same sums)
WASTE = 6  # the row of ``work`` holding each arm's account of downdate work lost (module docstring)


class CholeskyStepper(ArmSumsStepper):
    """``GPUCB``'s ask / tell loop on the Cholesky posterior (a ``Stepper``; module docstring).

    Built on a policy whose model has seen nothing (a compact unit's fresh policy; a resume
    replays the call file): the loop keeps the posterior in arrays of its own, and the
    policy's model is not advanced. ``statistics`` are the per-arm counts and reward sums,
    as the Python stepper's (``qbo.algorithms.gp_ucb_steps``), so either one's checkpoints
    resume with the other's.
    """

    def __init__(self, policy: Any) -> None:
        model = policy.surrogate.model
        if model.n != 0:
            raise ValueError(f"CholeskyStepper needs a model that has seen nothing, got {model.n} observations")
        self.policy = policy
        self.kernel, self.points = model.kernel, model.arms
        cfg, m = policy.config, policy.num_arms
        self.rounds = policy.t
        self._beta = beta_params(cfg)
        self.lam = float(model.lam)
        self._kdiag = np.array(model.prior_var, dtype=float)
        self._mu, self._E = np.zeros(m), np.zeros(m)
        self._n, self._sum = np.zeros(m), np.zeros(m)
        self._row_of = np.full(m, -1, dtype=np.int64)
        # info: information gain; state: rows s, refits, pending arm (-1: none), its reward, moves
        self._info, self._state = np.zeros(1), np.array([0.0, 0.0, -1.0, 0.0, 0.0])
        # column c, Kalman row v, products; the downdate's prefix sums (before, run, prev); WASTE
        self._work = np.empty((7, m))
        self._work[WASTE] = 0.0
        self._V, self._K, self._L = np.zeros((0, m)), np.zeros((0, m)), np.zeros((0, 0))
        self._arm_of, self._W, self._b = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
        self._grow(16)

    def _grow(self, cap: int) -> None:
        """Room for ``cap`` observed arms (``gp_ucb_refit.grown_rows``: V and K's rows, L, per row
        arm, weight and weighted sum) and the downdate's scratch."""
        self._V, self._K, self._L, self._arm_of, self._W, self._b = grown_rows(cap, self._V, self._K, self._L,
                                                                               self._arm_of, self._W, self._b)
        self._scratch = np.zeros((max(cap, 7), cap + 1))  # the downdate's q, g, d, beta, coef, 1/d, sums; a rebuild's A

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (self._kdiag, self._mu, self._E, self._V, self._K, self._L, self._arm_of, self._row_of, self._W,
                self._b, self._n, self._sum, self._info, self._state, self._work, self._scratch)

    def _add_pending(self) -> None:
        """Tell the pending round's new arm: its kernel column from the policy's kernel, then the row."""
        arm, y = int(self._state[2]), float(self._state[3])
        rows = int(self._state[0])
        if rows == self._V.shape[0]:
            self._grow(2 * rows)
        column = self.kernel(self.points, self.points[arm:arm + 1])[:, 0]
        _tell_new(self.lam, column, arm, y, *self._arrays())
        self._state[2] = -1.0

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        done = 0
        while done < count:
            done += _rounds(count - done, self.rounds + done, self._beta, self.lam, table.coins, table.first,
                            table.second, rng, arms[done:], values[done:], *self._arrays())
            if self._state[2] >= 0.0:
                self._add_pending()
        self.rounds += count

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        done, count = 0, arms.shape[0]
        while done < count:
            done += _tell_rounds(self.lam, arms[done:], values[done:], *self._arrays())
            if self._state[2] >= 0.0:
                self._add_pending()
        self.rounds += count

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean, variance) at every arm (m each), as ``CholeskyArmPosterior.posterior``."""
        return self._mu.copy(), np.maximum(self._kdiag - self._E, 0.0)

    @property
    def information_gain(self) -> float:
        """Chain-rule information gain of the rounds told (``CholeskyArmPosterior.information_gain``)."""
        return float(self._info[0])

    @property
    def refits(self) -> int:
        """Rebuilds of L and V after a downdate that was not numerically definite."""
        return int(self._state[1])

    @property
    def moves(self) -> int:
        """Rows moved to the end (``_tell``: the most-played arm's row last)."""
        return int(self._state[4])


@jit
def _kalman(j: int, y: float, r: float, mu: np.ndarray, E: np.ndarray, info: np.ndarray,
            c: np.ndarray, v: np.ndarray) -> float:
    """``SquareRootArms._kalman`` on the column ``c = Sigma e_j``: the Kalman row into ``v``;
    returns ``s_j = sigma_j^2 + r``."""
    m = mu.shape[0]
    s = max(c[j], 0.0) + r
    root = math.sqrt(s)
    for i in range(m):
        v[i] = c[i] / root
    step = (y - mu[j]) / root
    for i in range(m):
        mu[i] += v[i] * step
    for i in range(m):
        E[i] += v[i] * v[i]
    info[0] += 0.5 * math.log(s / r)
    return s


@jit
def _column(j: int, kcol: np.ndarray, V: np.ndarray, rows: int, c: np.ndarray, acc: np.ndarray) -> None:
    """``c = K e_j - V^T V e_j`` (each product summed over the rows in order)."""
    m = c.shape[0]
    for i in range(m):
        acc[i] = 0.0
    for k in range(rows):
        row = V[k]  # a row view: the inner loops index 1-d arrays by range (vectorised)
        x = row[j]
        for i in range(m):
            acc[i] += row[i] * x
    for i in range(m):
        c[i] = kcol[i] - acc[i]


@jit
def _tell_new(lam: float, kcol: np.ndarray, j: int, y: float, kdiag: np.ndarray, mu: np.ndarray, E: np.ndarray,
              V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray,
              b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray, state: np.ndarray,
              work: np.ndarray, scratch: np.ndarray) -> None:
    """``CholeskyArmPosterior._add_new(j, y, w=1)`` with ``K e_j = kcol`` (room for the row is made)."""
    s = int(state[0])
    w = 1.0
    for k in range(s):
        L[s, k] = math.sqrt(w) * V[k, j]
    _column(j, kcol, V, s, work[0], work[2])
    s_j = _kalman(j, y, lam / w, mu, E, info, work[0], work[1])
    L[s, s] = math.sqrt(w * s_j)
    arm_of[s], W[s], b[s] = j, w, w * y
    row_of[j] = s
    v, row, krow = work[1], V[s], K[s]
    for i in range(mu.shape[0]):
        row[i] = v[i]
        krow[i] = kcol[i]
    state[0] = s + 1
    n[j] += 1.0
    total[j] += y


@jit
def _tell(lam: float, j: int, y: float, kdiag: np.ndarray, mu: np.ndarray, E: np.ndarray, V: np.ndarray,
          K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray, b: np.ndarray,
          n: np.ndarray, total: np.ndarray, info: np.ndarray, state: np.ndarray, work: np.ndarray,
          scratch: np.ndarray) -> bool:
    """``CholeskyArmPosterior.add(j, y, eps=1)`` at an observed arm (a repeat); False, with
    nothing done, where ``j`` is new (the caller brings its kernel column to ``_tell_new``)."""
    p = row_of[j]
    if p < 0:
        return False
    s = int(state[0])
    w = 1.0
    _column(j, K[p], V, s, work[0], work[2])
    _kalman(j, y, lam / w, mu, E, info, work[0], work[1])
    W_old = W[p]
    W[p] += w
    b[p] += w * y
    if not _downdate(lam, p, s, W_old, W[p], L, V, scratch, work):
        _refit(lam, s, V, K, L, arm_of, W, E, scratch)
        state[1] += 1.0
    n[j] += 1.0
    total[j] += y
    if p < s - 1:
        m, gap = float(mu.shape[0]), float(s - p)
        work[WASTE, j] += m * (gap - 1.0) + gap * gap - 1.0
        if work[WASTE, j] >= m * s * s + float(s) * s * s:
            _move_last(p, s, K, arm_of, row_of, W, b, work[3])
            _refit(lam, s, V, K, L, arm_of, W, E, scratch)
            work[WASTE, j] = 0.0
            state[4] += 1.0
    return True


@jit
def _move_last(p: int, s: int, K: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray, W: np.ndarray,
               b: np.ndarray, spare: np.ndarray) -> None:
    """Move observed row p to the end (rows p + 1.. up one): its arm, weight, sum and kernel row."""
    j, w, bj = arm_of[p], W[p], b[p]
    m = K.shape[1]
    for col in range(m):
        spare[col] = K[p, col]
    for r in range(p, s - 1):
        arm_of[r], W[r], b[r] = arm_of[r + 1], W[r + 1], b[r + 1]
        row_of[arm_of[r]] = r
        for col in range(m):
            K[r, col] = K[r + 1, col]
    arm_of[s - 1], W[s - 1], b[s - 1] = j, w, bj
    row_of[j] = s - 1
    for col in range(m):
        K[s - 1, col] = spare[col]


@jit
def _downdate(lam: float, p: int, s: int, W_old: float, W_new: float, L: np.ndarray, V: np.ndarray,
              scratch: np.ndarray, work: np.ndarray) -> bool:
    """``CholeskyArmPosterior._downdate``: rows p.. of L and V for ``W_p: W_old -> W_new``;
    False, with nothing changed, where it is not numerically definite. ``T`` is the trailing
    block of L with row p scaled by r (read from L, which changes only once q, g, d are known;
    T_pp = L_pp r is the only entry of T's row 0 on or below the diagonal)."""
    n = s - p
    r = math.sqrt(W_new / W_old)
    q, g, d, beta = scratch[0, :n], scratch[1, :n + 1], scratch[2, :n], scratch[3, :n]
    coef, inv_d, tail = scratch[4, :n], scratch[5, :n], scratch[6, :n]
    # T q = e_0 sqrt(lambda (r^2 - 1)) by columns: tail_i = -sum_{k < i} T_ik q_k, summed in k order
    for i in range(n):
        tail[i] = 0.0
    q[0] = math.sqrt(lam * (r * r - 1.0)) / (L[p, p] * r)
    for k in range(1, n):
        x = q[k - 1]
        for i in range(k, n):
            tail[i] -= L[p + i, p + k - 1] * x
        q[k] = tail[k] / L[p + k, p + k]
    g[0] = -1.0
    acc = 0.0
    for k in range(n):
        acc += q[k] * q[k]
        g[k + 1] = -1.0 + acc
    if not g[n] < 0.0:
        return False
    for k in range(n):
        d[k] = g[k + 1] / g[k]
    for k in range(n):
        if not d[k] > 1e-12:
            return False
    for k in range(n):
        d[k] = math.sqrt(d[k])
    for k in range(n):
        beta[k] = q[k] / (g[k] * d[k])
        coef[k] = q[k] / g[k]
        inv_d[k] = 1.0 / d[k]
    # L' = (D L) M: L'_ik = T_ik d_k + beta_k sum_{j > k} T_ij q_j, each row's sum taken from the
    # right in order (the model's cumsum); rows interleaved, k from the right
    L[p, p] *= r
    for k in range(n - 1, -1, -1):
        t_kk = L[p + k, p + k]
        L[p + k, p + k] = t_kk * d[k] + 0.0 * beta[k]
        tail[k] = t_kk * q[k]
        x, y = d[k], beta[k]
        for i in range(k + 1, n):
            t_ik = L[p + i, p + k]
            L[p + i, p + k] = t_ik * x + tail[i] * y
            tail[i] = tail[i] + t_ik * q[k]
    for k in range(p):
        L[p, k] *= r  # row p's leading part (its trailing part is T's row 0 above)
    # V' = M^{-1} V on rows p.., in blocks of _BLOCK rows carrying the prefix sum ``before``,
    # one pass a block: row t's prefix sum ``run`` (from the block's start) plus ``before`` is
    # the model's ``pre[t]``, which row t + 1 subtracts times its coef; each element's operations
    # are those of the model's block form, vectorised over the columns
    m = V.shape[1]
    before, run, prev = work[3], work[4], work[5]
    for col in range(m):
        before[col] = 0.0
    for a in range(p, s, _BLOCK):
        rows = min(a + _BLOCK, s) - a
        x, c, e = q[a - p], coef[a - p], inv_d[a - p]
        row = V[a]
        for col in range(m):
            old = row[col]
            run[col] = x * old
            row[col] = (old - c * before[col]) * e
            prev[col] = run[col] + before[col]
        for t in range(1, rows):
            x, c, e = q[a - p + t], coef[a - p + t], inv_d[a - p + t]
            row = V[a + t]
            for col in range(m):
                old = row[col]
                run[col] = run[col] + x * old
                row[col] = (old - prev[col] * c) * e
                prev[col] = run[col] + before[col]
        for col in range(m):
            before[col] = prev[col]
    return True


@jit
def _refit(lam: float, s: int, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, W: np.ndarray,
           E: np.ndarray, scratch: np.ndarray) -> None:
    """``CholeskyArmPosterior._refit``: L = chol(S K_UU S + lambda I), V = L^{-1} S K_{U,:} and
    E = colsum(V^2) from the per-row weights (mean and information gain kept)."""
    A = scratch[:s, :s]
    for i in range(s):
        si = math.sqrt(W[i])
        for k in range(s):
            A[i, k] = si * K[k, arm_of[i]] * math.sqrt(W[k]) + (lam if i == k else 0.0)
    for i in range(s):  # Cholesky-Banachiewicz, by rows
        for k in range(i + 1):
            acc = A[i, k]
            for t in range(k):
                acc -= L[i, t] * L[k, t]
            L[i, k] = math.sqrt(acc) if i == k else acc / L[k, k]
        for k in range(i + 1, L.shape[1]):
            L[i, k] = 0.0
    m = V.shape[1]
    for i in range(s):  # forward substitution, one row of V at a time
        si = math.sqrt(W[i])
        for col in range(m):
            acc = si * K[i, col]
            for t in range(i):
                acc -= L[i, t] * V[t, col]
            V[i, col] = acc / L[i, i]
    for col in range(m):
        acc = 0.0
        for i in range(s):
            acc += V[i, col] * V[i, col]
        E[col] = acc


@jit
def _tell_rounds(lam: float, arms: np.ndarray, values: np.ndarray, kdiag: np.ndarray, mu: np.ndarray,
                 E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray, row_of: np.ndarray,
                 W: np.ndarray, b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray,
                 state: np.ndarray, work: np.ndarray, scratch: np.ndarray) -> int:
    """Tell the rounds (``arms``, ``values``) in order; at a new arm, stop with it pending in
    ``state`` (rounds told, that one included)."""
    for k in range(arms.shape[0]):
        j, y = arms[k], values[k]
        if not _tell(lam, j, y, kdiag, mu, E, V, K, L, arm_of, row_of, W, b, n, total, info, state, work, scratch):
            state[2], state[3] = j, y
            return k + 1
    return arms.shape[0]


@jit
def _rounds(count: int, done: int, beta: np.ndarray, lam: float, coins: np.ndarray, first: np.ndarray,
            second: np.ndarray, rng: np.random.Generator, arms: np.ndarray, values: np.ndarray, kdiag: np.ndarray,
            mu: np.ndarray, E: np.ndarray, V: np.ndarray, K: np.ndarray, L: np.ndarray, arm_of: np.ndarray,
            row_of: np.ndarray, W: np.ndarray, b: np.ndarray, n: np.ndarray, total: np.ndarray, info: np.ndarray,
            state: np.ndarray, work: np.ndarray, scratch: np.ndarray) -> int:
    """Up to ``count`` rounds of GP-UCB from round ``done + 1`` (Srinivas et al. Eq. (6), first
    argmax, ``SquareRootArms.ucb``'s operations); at a new arm, stop with it pending in
    ``state`` (rounds played, that one included)."""
    m = mu.shape[0]
    for k in range(count):
        multiplier = beta_at(done + k + 1, m, beta)
        arm, best = 0, -math.inf
        for j in range(m):
            sd = math.sqrt(max(kdiag[j] - E[j], 0.0))
            score = sd * multiplier + mu[j]
            if score > best or j == 0:
                arm, best = j, score
        y = draw_reward(rng, coins[arm], first[arm], second[arm])
        arms[k], values[k] = arm, y
        if not _tell(lam, arm, y, kdiag, mu, E, V, K, L, arm_of, row_of, W, b, n, total, info, state, work, scratch):
            state[2], state[3] = arm, y
            return k + 1
    return count
