"""Exact weighted GP posterior on m arms in O(m s) time per stage and O(m s) memory.

Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), Eq. (3).  Observations at one arm
are summarised by ``W_i = sum 1/eps^2`` and ``b_i = sum y/eps^2`` (the Gaussian likelihood with
noise variance ``lambda eps^2``, Sec. 4.1, is sufficient in them).  Over the s distinct
observed arms U, with ``S = diag(sqrt W_U)``:

    A = S K_UU S + lambda I = L L^T,     V = L^{-1} S K_{U,:}   (s x m),
    sigma~^2 = diag K - colsum(V^2),     mu~ = V^T L^{-1} S ybar_U,

(A has eigenvalues >= lambda, so L is well conditioned).  ``CholeskyArmPosterior`` keeps L,
V, the mean and ``colsum(V^2)`` incrementally and never forms an m x m matrix:

* a new arm j appends one row: ``l = sqrt(w) V e_j``, ``L_ss = sqrt(w (sigma~_j^2 + lambda/w))``
  and the Kalman row ``v = Sigma e_j / sqrt(sigma~_j^2 + lambda/w)`` (``qbo.gp.square_root``);
  O(m s).
* a repeat at the arm in row p raises ``W_p`` to ``W_p + w``.  With ``r^2 = (W_p + w)/W_p`` and
  D scaling row p by r, ``A' = (D L)(D L)^T - lambda (r^2 - 1) e_p e_p^T``, a rank-one
  downdate that changes rows p.. of L only.  Its Cholesky factor is ``L' = D L M`` with M
  lower triangular, ``M_kk = d_k``, ``M_ik = q_i beta_k`` (i > k), where ``q = (D L)^{-1}
  e_p sqrt(lambda (r^2 - 1))`` and ``t_p = -1, d_k^2 = 1 + t_k q_k^2, beta_k = t_k q_k / d_k,
  t_{k+1} = t_k / d_k^2`` (Gill, Golub, Murray & Saunders 1974, method C1).  Then
  ``V' = M^{-1} V`` on rows p.. by prefix sums (``_downdate``), O(m (s - p)) plus O(s^2)
  for L; the mean and ``colsum(V^2)`` get the Kalman update.  If the downdate is not
  numerically definite (``d_k^2 <= 1e-12``) the factor is rebuilt from the per-arm
  statistics, O(m s^2 + s^3).

``from_stats`` builds the same posterior in one batch from per-arm statistics (``ArmStats``),
the refit the length-scale methods use each stage: O(m u^2 + u^3) for u observed arms.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from qbo.gp.information import check_eps
from qbo.gp.kernels import Kernel, as_points, check_positive
from qbo.gp.square_root import SquareRootArms

__all__ = ["ArmStats", "CholeskyArmPosterior", "whitened_cholesky"]

_BLOCK = 16  # rows of V transformed per prefix-sum block in a downdate


class ArmStats:
    """Per-arm sufficient statistics ``W_i = sum 1/eps^2`` and ``b_i = sum y/eps^2``."""

    def __init__(self, num_arms: int) -> None:
        self.W = np.zeros(num_arms)
        self.b = np.zeros(num_arms)
        self.n = 0

    def add(self, arm: int, y: float, eps: float) -> None:
        """Record ``y`` at ``arm`` with weight ``1/eps^2``."""
        w = 1.0 / float(eps) ** 2
        self.W[arm] += w
        self.b[arm] += w * float(y)
        self.n += 1

    def observed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(U, W_U, ybar_U)`` over the observed arms U (ascending index)."""
        U = np.flatnonzero(self.W > 0)
        return U, self.W[U], self.b[U] / self.W[U]


def whitened_cholesky(K_UU: np.ndarray, W: np.ndarray, lam: float) -> np.ndarray:
    """Lower Cholesky factor of ``diag(sqrt W) K_UU diag(sqrt W) + lam I``."""
    s = np.sqrt(W)
    A = s[:, None] * K_UU * s[None, :] + lam * np.eye(len(W))
    return cholesky(A, lower=True)


class CholeskyArmPosterior(SquareRootArms):
    """Weighted GP posterior (Dai et al. Eq. (3)) over the arms ``arms`` (m x d) of ``kernel``.

    Implements ``qbo.gp.ArmModel``: ``add(arm, y, eps)``, ``posterior()``,
    ``information_gain``, ``feature_dim`` (m) and ``max_feature_norm_sq`` (max k(x, x)).
    Memory: V (s x m) and L (s x s) for s distinct observed arms, plus O(m) vectors.
    """

    def __init__(self, kernel: Kernel, arms: np.ndarray, lam: float) -> None:
        self.kernel = kernel
        self.arms = as_points(arms, "arms")
        self.lam = check_positive("lam", lam)
        super().__init__(kernel.diag(self.arms), self._kernel_column)
        m = self.arms.shape[0]
        self._row_of = np.full(m, -1, dtype=np.int64)
        self._arm_of = np.zeros(16, dtype=np.int64)
        self._W = np.zeros(16)
        self._b = np.zeros(16)
        self._L = np.zeros((16, 16))
        self._n = 0
        self.refits = 0

    @classmethod
    def from_stats(cls, kernel: Kernel, arms: np.ndarray, lam: float, stats: ArmStats) -> CholeskyArmPosterior:
        """Eq. (3) on all data summarised in ``stats``, in one batch (module docstring).

        ``information_gain`` is ``1/2 log det(I + W^{1/2} K_UU W^{1/2} / lambda)``, equal to the
        chain-rule sum over the individual observations.
        """
        post = cls(kernel, arms, lam)
        U, W, ybar = stats.observed()
        post._n = int(stats.n)
        if U.size == 0:
            return post
        K_mU = kernel(post.arms, post.arms[U])
        L = whitened_cholesky(K_mU[U], W, post.lam)
        s = np.sqrt(W)
        post._mu = K_mU @ (s * cho_solve((L, True), s * ybar))
        post._load(U, W, W * ybar, L, solve_triangular(L, s[:, None] * K_mU.T, lower=True))
        post.information_gain = float(np.sum(np.log(np.diag(L)))) - 0.5 * U.size * math.log(post.lam)
        return post

    # ------------------------------------------------------------------ state
    @property
    def n(self) -> int:
        """Number of observations added so far (repeats counted)."""
        return self._n

    @property
    def num_observed(self) -> int:
        """Number s of distinct observed arms (rows of V and L)."""
        return self._rows

    @property
    def feature_dim(self) -> int:
        """Rank bound of the Gram matrix: the number of arms m (for m_bar)."""
        return self.num_arms

    @property
    def max_feature_norm_sq(self) -> float:
        """``max_i k(x_i, x_i)`` over the arms (for m_bar)."""
        return float(np.max(self._kdiag))

    @property
    def cholesky(self) -> np.ndarray:
        """Lower Cholesky factor of ``S K_UU S + lambda I`` over the observed arms (s x s, copy)."""
        return self._L[: self._rows, : self._rows].copy()

    @property
    def observed_arms(self) -> np.ndarray:
        """The observed arms U in row order (s, copy)."""
        return self._arm_of[: self._rows].copy()

    @property
    def weights(self) -> np.ndarray:
        """Total weight ``sum 1/eps^2`` observed at each arm (m)."""
        out = np.zeros(self.num_arms)
        out[self._arm_of[: self._rows]] = self._W[: self._rows]
        return out

    # ------------------------------------------------------------------ updates
    def add(self, arm: int, y: float, eps: float = 1.0) -> None:
        """Condition on ``y`` at arm ``arm`` with error ``eps`` (weight ``1/eps^2``); O(m s)."""
        j = self._check_arm(arm)
        yv = float(y)
        if not math.isfinite(yv):
            raise ValueError(f"y must be finite, got {yv!r}")
        w = 1.0 / float(check_eps(eps, 1)[0]) ** 2
        p = int(self._row_of[j])
        if p < 0:
            self._add_new(j, yv, w)
        else:
            self._add_repeat(p, yv, w)
        self._n += 1

    def extend(self, arms: np.ndarray, Y: np.ndarray, eps: np.ndarray) -> None:
        """``add`` each ``(arms[k], Y[k], eps[k])`` in order."""
        idx = np.asarray(arms).reshape(-1)
        y = np.asarray(Y, dtype=float).reshape(-1)
        e = check_eps(eps, idx.shape[0])
        if y.shape[0] != idx.shape[0]:
            raise ValueError(f"Y must have length {idx.shape[0]}, got {y.shape[0]}")
        for k in range(idx.shape[0]):
            self.add(int(idx[k]), y[k], e[k])

    def _add_new(self, j: int, y: float, w: float) -> None:
        s = self._rows
        self._reserve(s + 1)
        l_row = math.sqrt(w) * self._V[:s, j]
        v, s_j = self._kalman(j, y, self.lam / w)
        self._L[s, :s] = l_row
        self._L[s, s] = math.sqrt(w * s_j)
        self._arm_of[s], self._W[s], self._b[s] = j, w, w * y
        self._row_of[j] = s
        self._append(v)

    def _add_repeat(self, p: int, y: float, w: float) -> None:
        self._kalman(int(self._arm_of[p]), y, self.lam / w)
        W_old = self._W[p]
        self._W[p] += w
        self._b[p] += w * y
        if not self._downdate(p, W_old, self._W[p]):
            self._refit()

    def _downdate(self, p: int, W_old: float, W_new: float) -> bool:
        """Rows p.. of L and V for ``W_p: W_old -> W_new`` (module docstring); False if the
        downdate is not numerically definite (nothing is changed then).

        With ``g_k = 1/t_k = -1 + sum_{j<k} q_j^2`` the recurrence is closed-form:
        ``d_k^2 = g_{k+1}/g_k``, ``beta_k = q_k / (g_k d_k)`` and
        ``V'_i = (V_i - (q_i/g_i) sum_{k<i} q_k V_k) / d_i`` (prefix sums, no loop).
        """
        s = self._rows
        r = math.sqrt(W_new / W_old)
        T = self._L[p:s, p:s].copy()
        T[0, :] *= r  # D L on the trailing block (row p scaled)
        rhs = np.zeros(s - p)
        rhs[0] = math.sqrt(self.lam * (r * r - 1.0))
        q = solve_triangular(T, rhs, lower=True)
        g = np.concatenate(([-1.0], -1.0 + np.cumsum(q * q)))
        d2 = g[1:] / g[:-1]
        if not (g[-1] < 0.0 and np.all(d2 > 1e-12)):
            return False
        d = np.sqrt(d2)
        beta = q / (g[:-1] * d)
        # L' = (D L) M on the trailing block; row p's leading part is scaled by r
        P = T * q[None, :]
        tail = np.cumsum(P[:, ::-1], axis=1)[:, ::-1]
        S = np.zeros_like(T)
        S[:, :-1] = tail[:, 1:]
        self._L[p:s, p:s] = np.tril(T * d[None, :] + S * beta[None, :])
        self._L[p, :p] *= r
        # V' = M^{-1} V on rows p.., in blocks of rows carrying the prefix sum
        V, before = self._V, np.zeros(self._V.shape[1])  # before = sum_{k < a} q_k V_k
        for a in range(p, s, _BLOCK):
            b = min(a + _BLOCK, s)
            k = slice(a - p, b - p)
            pre = q[k, None] * V[a:b]
            for r in range(1, b - a):  # = np.cumsum(pre, axis=0), row by row: contiguous rows,
                np.add(pre[r - 1], pre[r], out=pre[r])  # the same sums (10x faster at m = 1e4)
            pre += before
            coef = q[k] / g[:-1][k]
            V[a] -= coef[0] * before
            before = pre[-1].copy()
            pre[:-1] *= coef[1:, None]
            V[a + 1 : b] -= pre[:-1]
            V[a:b] *= (1.0 / d[k])[:, None]
        return True

    def _refit(self) -> None:
        """Rebuild L, V and colsum(V^2) from the per-arm statistics (mean and info kept)."""
        s = self._rows
        U, W = self._arm_of[:s].copy(), self._W[:s].copy()
        K_mU = self.kernel(self.arms, self.arms[U])
        L = whitened_cholesky(K_mU[U], W, self.lam)
        V = solve_triangular(L, np.sqrt(W)[:, None] * K_mU.T, lower=True)
        self._load(U, W, self._b[:s].copy(), L, V)
        self.refits += 1

    def _load(self, U: np.ndarray, W: np.ndarray, b: np.ndarray, L: np.ndarray, V: np.ndarray) -> None:
        s = U.size
        self._rows = 0
        self._reserve(s)
        self._arm_of[:s], self._W[:s], self._b[:s] = U, W, b
        self._row_of[:] = -1
        self._row_of[U] = np.arange(s)
        self._L[:s, :s] = L
        self._L[s:, :] = 0.0
        self._V[:s] = V
        self._V[s:] = 0.0
        self._E = np.einsum("ij,ij->j", V, V)
        self._rows = s

    def _reserve(self, size: int) -> None:
        cap = self._W.shape[0]
        if size <= cap:
            return
        new = max(2 * cap, size)
        for name in ("_arm_of", "_W", "_b"):
            old = getattr(self, name)
            grown = np.zeros(new, dtype=old.dtype)
            grown[:cap] = old
            setattr(self, name, grown)
        L = np.zeros((new, new))
        L[:cap, :cap] = self._L
        self._L = L
        if self._V.shape[0] < new:
            V = np.zeros((new, self.num_arms))
            V[: self._V.shape[0]] = self._V
            self._V = V

    def _kernel_column(self, j: int) -> np.ndarray:
        return self.kernel(self.arms, self.arms[j : j + 1])[:, 0]
