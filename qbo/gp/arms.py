"""Weighted GP posterior on a finite arm set, Dai et al. "Quantum Bayesian Optimization"
(NeurIPS 2023), Eq. (3), kept in "arm space".

On a finite set of m arms the GP is the Gaussian vector ``f ~ N(0, K)`` (K the m x m prior
covariance).  By the identity ``W^{1/2}(K~ + lambda I)^{-1} W^{1/2} = (K + lambda W^{-1})^{-1}``
(Sec. 4.1), an observation with error ``eps`` is a Gaussian likelihood with noise variance
``lambda / w``, ``w = 1/eps^2``.  Repeated observations at one arm are therefore summarised by
the sufficient statistics ``sum w`` and ``sum w y``: the posterior precision gains ``w/lambda``
on the diagonal and

    Sigma = (K^{-1} + diag(W_arm) / lambda)^{-1},      mu~ = Sigma b / lambda,
    b_i   = sum_{obs at arm i} w y,

(the last identity holds even for singular K, by the push-through identity).  Each ``add`` is a
rank-one Sherman-Morrison (Kalman) downdate of Sigma and update of the mean, O(m^2), with
no refit and independent of the number of observations.  A classical observation is
``eps = 1``: the ordinary GP posterior of Eq. (1) (Srinivas et al. 2010, Eqs. (1)-(2)) with
noise variance ``lambda``.  A ``qbo.gp.ArmModel``; for many arms (O(m^2) memory) use
``qbo.gp.CholeskyArmPosterior`` (docs/models.md).

Speed (a classical run makes one ``add`` per oracle call): the update works in place on
preallocated buffers with the same floating-point operations in the same order, so results
are bit-for-bit those of the plain formulas; Sigma stays exactly symmetric (below), so its
row i is its column i; ``var`` and ``sigma`` are kept current for ``ucb``; the information
gain's chain-rule terms are summed, in order, when it is read.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.gp.information import check_eps, check_eps_scalar, information_gain_increment
from qbo.gp.kernels import Kernel, as_points, check_positive

__all__ = ["ArmPosterior", "ArmStack"]


def _check_kernel_matrix(K: np.ndarray) -> np.ndarray:
    A = np.asarray(K, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(f"kernel_matrix must be a non-empty square m x m array, got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("kernel_matrix must be finite, got non-finite entries")
    asym = float(np.max(np.abs(A - A.T)))
    if asym > 1e-8 * max(1.0, float(np.max(np.abs(A)))):
        raise ValueError(f"kernel_matrix must be symmetric, got max |K - K^T| = {asym!r}")
    return 0.5 * (A + A.T)


class ArmPosterior:
    """Weighted GP posterior (Dai et al. Eq. (3)) over m fixed arms.

    ``kernel_matrix`` is the m x m prior covariance ``K[i, j] = k(a_i, a_j)``; ``lam`` is the
    regulariser lambda of Eq. (3) (the noise variance for classical, ``eps = 1`` data).
    State: posterior covariance ``Sigma`` (m x m), ``b`` (m), the mean, per-arm total weight and the
    running weighted information gain ``gamma~ = 1/2 log det(I + K~/lambda)`` (Sec. 5.1).
    """

    def __init__(self, kernel_matrix: np.ndarray, lam: float) -> None:
        self.lam = check_positive("lam", lam)
        self._K = _check_kernel_matrix(kernel_matrix)
        self._Sigma = self._K.copy()
        self._b = [0.0] * self.num_arms  # per-arm sums (Python floats: scalar updates)
        self._mu = np.zeros(self.num_arms)
        self._weight = [0.0] * self.num_arms
        self._n = 0
        self._info = 0.0
        self._info_terms: list[tuple[float, float]] = []  # (sigma~^2(x_s), w_s) not yet summed
        self._diagonal = self._Sigma.diagonal()  # a view: follows the in-place updates
        self._var = np.maximum(self._diagonal, 0.0)
        self._sd = np.sqrt(self._var)
        self._outer: np.ndarray | None = None  # m x m work buffer, made at the first add
        self._score = np.empty_like(self._mu)

    @classmethod
    def from_kernel(cls, kernel: Kernel, arms: np.ndarray, lam: float) -> ArmPosterior:
        """Build from a kernel and the arm coordinates ``arms`` (m x d)."""
        A = as_points(arms, "arms")
        return cls(kernel(A, A), lam)

    # ------------------------------------------------------------------ state
    @property
    def num_arms(self) -> int:
        """Number of arms m."""
        return self._K.shape[0]

    @property
    def n(self) -> int:
        """Number of observations added so far (repeats counted)."""
        return self._n

    @property
    def feature_dim(self) -> int:
        """Rank bound of the Gram matrix: the number of arms m (for m_bar)."""
        return self.num_arms

    @property
    def max_feature_norm_sq(self) -> float:
        """``max_i K_ii`` (``||phi(x_i)||^2`` for ``phi = rows of K^{1/2}``; for m_bar)."""
        return float(np.max(np.diag(self._K)))

    @property
    def kernel_matrix(self) -> np.ndarray:
        """Prior covariance K (m x m, copy)."""
        return self._K.copy()

    @property
    def Sigma(self) -> np.ndarray:
        """Posterior covariance over the arms (m x m, copy); its diagonal is sigma~^2."""
        return self._Sigma.copy()

    @property
    def b(self) -> np.ndarray:
        """``b_i = sum_{obs at arm i} y / eps^2`` (m, copy)."""
        return np.array(self._b)

    @property
    def weights(self) -> np.ndarray:
        """Total weight ``sum 1/eps^2`` observed at each arm (m, copy)."""
        return np.array(self._weight)

    @property
    def information_gain(self) -> float:
        """``gamma~ = 1/2 log det(I + K~/lambda)`` by the chain rule (Dai et al. App. D Eq. 25)."""
        for s_ii, w in self._info_terms:
            self._info += information_gain_increment(s_ii, w, self.lam)
        self._info_terms.clear()
        return self._info

    # ------------------------------------------------------------------ posterior
    @property
    def mean(self) -> np.ndarray:
        """Posterior mean ``mu~`` at every arm (m), equal to ``Sigma b / lambda``.

        Kept by the Kalman update ``mu <- mu + c Sigma e_i (y - mu_i)``, which stays accurate
        when weights ``1/eps^2`` are huge (``Sigma b`` would multiply O(1e-16) rounding in
        Sigma by O(w) entries of b).
        """
        return self._mu.copy()

    @property
    def var(self) -> np.ndarray:
        """Posterior variance ``sigma~^2`` at every arm (m), clipped at 0."""
        return self._var.copy()

    @property
    def std(self) -> np.ndarray:
        """Posterior standard deviation ``sigma~`` at every arm (m)."""
        return self._sd.copy()

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mean (m), var (m))`` at every arm (``qbo.gp.ArmModel``)."""
        return self._mu.copy(), self._var.copy()

    def ucb(self, beta: float) -> tuple[np.ndarray, np.ndarray]:
        """``(mu~ + beta sigma~, sigma~)`` at every arm (``qbo.gp.ArmModel.ucb``), in the
        model's buffers: read them, do not modify them; valid until the next ``add``."""
        score = np.multiply(self._sd, beta, out=self._score)
        score += self._mu
        return score, self._sd

    # ------------------------------------------------------------------ updates
    def add(self, arm: int, y: float, eps: float = 1.0) -> None:
        """Condition on ``y`` at arm ``arm`` with error ``eps`` (weight ``w = 1/eps^2``); O(m^2).

        With ``u = Sigma e_i`` and ``c = (w/lam) / (1 + (w/lam) Sigma_ii)``:
        ``mu <- mu + c u (y - mu_i)``,
        ``Sigma <- Sigma - (w/lam) Sigma e_i e_i^T Sigma / (1 + (w/lam) Sigma_ii)``,
        ``b_i += w y``, ``gamma~ += 1/2 log(1 + w Sigma_ii / lam)`` (chain rule, Srinivas et al.
        Lemma 5.3, weighted as in Dai et al. App. D Eq. (25)).
        """
        i = self._check_arm(arm)
        yv = float(y)
        if not math.isfinite(yv):
            raise ValueError(f"y must be finite, got {yv!r}")
        w = 1.0 / check_eps_scalar(eps) ** 2
        Sigma, mu = self._Sigma, self._mu
        u = Sigma[i]  # = Sigma e_i (Sigma is exactly symmetric); a view, read before Sigma changes
        s_ii = max(float(u[i]), 0.0)
        self._info_terms.append((s_ii, w))
        c = (w / self.lam) / (1.0 + (w / self.lam) * s_ii)
        mu += (c * (yv - mu[i])) * u
        if self._outer is None:  # not in __init__: the caller's kernel matrix may still be alive there
            self._outer = np.empty_like(Sigma)
        outer = np.multiply(u[:, None], u, self._outer)  # u_i u_j, as np.outer
        outer *= c
        Sigma -= outer  # c (u_i u_j) is exactly symmetric
        np.maximum(self._diagonal, 0.0, self._var)
        np.sqrt(self._var, self._sd)
        self._b[i] += w * yv
        self._weight[i] += w
        self._n += 1

    def buffers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(Sigma, mean, var, sd): the model's own arrays, for a compiled loop that does
        ``add``'s operations on them in place (``qbo.algorithms.gp_ucb``); it then hands the
        per-arm sums back with ``adopt``."""
        return self._Sigma, self._mu, self._var, self._sd

    def adopt(self, b: np.ndarray, weight: np.ndarray, n: int, information_gain: float) -> None:
        """Take the per-arm sums, count and information gain a compiled loop reached (``buffers``)."""
        self._b, self._weight, self._n = b.tolist(), weight.tolist(), int(n)
        self._info_terms.clear()
        self._info = float(information_gain)

    def extend(self, arms: np.ndarray, Y: np.ndarray, eps: np.ndarray) -> None:
        """``add`` each ``(arms[k], Y[k], eps[k])`` in order."""
        idx = np.asarray(arms).reshape(-1)
        y = np.asarray(Y, dtype=float).reshape(-1)
        e = check_eps(eps, idx.shape[0])
        if y.shape[0] != idx.shape[0]:
            raise ValueError(f"Y must have length {idx.shape[0]}, got {y.shape[0]}")
        for k in range(idx.shape[0]):
            self.add(int(idx[k]), y[k], e[k])

    def _check_arm(self, arm: int) -> int:
        if type(arm) is int and 0 <= arm < self._K.shape[0]:
            return arm
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)):
            raise ValueError(f"arm must be an integer index, got {arm!r}")
        if not 0 <= int(arm) < self.num_arms:
            raise ValueError(f"arm must be in [0, {self.num_arms}), got {arm!r}")
        return int(arm)


class ArmStack:
    """Several ``ArmPosterior`` s of one size (one per trial) updated together, with classical
    (``eps = 1``) observations: one numpy operation on a (B, m, m) stack serves all B models,
    where B separate updates would pay numpy's per-call overhead B times (a classical run makes
    one update per oracle call, Srinivas et al. Eqs. (1)-(2)).

    The models' state moves into the stack (each model then holds views of its slice), so every
    model stays usable on its own; ``ucb`` and ``add`` do the same floating-point operations,
    in the same order, as ``ArmPosterior.ucb`` and ``ArmPosterior.add`` on each model, so the
    results are bit-for-bit those of B separate updates.
    """

    def __init__(self, models: list[ArmPosterior]) -> None:
        if not models or any(type(model) is not ArmPosterior for model in models):
            raise ValueError("ArmStack needs one or more ArmPosterior models")
        if len({id(model) for model in models}) != len(models):
            raise ValueError("ArmStack needs distinct models, got one model twice")
        m = models[0].num_arms
        if any(model.num_arms != m for model in models):
            raise ValueError(f"ArmStack needs models of one size, got {sorted({model.num_arms for model in models})} arms")
        self.models = list(models)
        self._Sigma = np.stack([model._Sigma for model in models])
        self._mu = np.stack([model._mu for model in models])
        self._var = np.stack([model._var for model in models])
        self._sd = np.stack([model._sd for model in models])
        self._scale = np.array([1.0 / model.lam for model in models])  # w / lam with w = 1
        self._diagonal = self._Sigma.diagonal(axis1=1, axis2=2)
        self._starts = np.arange(len(models)) * m
        self._rows_of_all = self._Sigma.reshape(-1, m)  # a view: row b * m + i is Sigma_b's row i
        self._outer = np.empty_like(self._Sigma)
        self._score = np.empty_like(self._mu)
        for b, model in enumerate(models):
            model._Sigma, model._mu, model._var, model._sd = self._Sigma[b], self._mu[b], self._var[b], self._sd[b]
            model._diagonal = model._Sigma.diagonal()

    @staticmethod
    def nbytes(models: int, arms: int) -> int:
        """Memory a stack of ``models`` models of ``arms`` arms holds beyond the models (Sigma and its work buffer)."""
        return 2 * models * arms * arms * 8

    def ucb(self, beta: float | np.ndarray) -> np.ndarray:
        """``mu~ + beta sigma~`` of every model (B x m; ``beta`` a number or a (B, 1) column), in
        the stack's buffer: valid until the next ``add``."""
        score = np.multiply(self._sd, beta, out=self._score)
        score += self._mu
        return score

    def add(self, arms: list[int], ys: list[float]) -> None:
        """``ArmPosterior.add(arms[b], ys[b], 1.0)`` on every model b (one classical observation each)."""
        count, m = self._mu.shape
        if len(arms) != count or len(ys) != count:
            raise ValueError(f"arms and ys must hold one entry per model ({count}), got {len(arms)} and {len(ys)}")
        if not all(type(i) is int and 0 <= i < m for i in arms):
            if any(isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < m for i in arms):
                raise ValueError(f"arms must be integer indices in [0, {m}), got {list(arms)[:8]!r}")
            arms = [int(i) for i in arms]  # numpy integers, as ArmPosterior.add takes them
        ys = [float(y) for y in ys]
        if not all(map(math.isfinite, ys)):
            raise ValueError(f"y must be finite, got {next(y for y in ys if not math.isfinite(y))!r}")
        at = self._starts + arms  # row b * m + i of the stacked rows
        u = self._rows_of_all.take(at, axis=0)  # row i of each Sigma (a copy, read before Sigma changes)
        s = self._var.reshape(-1).take(at)  # max(Sigma_ii, 0), as ArmPosterior.add takes it (var is kept so)
        c = self._scale / (1.0 + self._scale * s)
        self._mu += (c * (np.array(ys) - self._mu.reshape(-1).take(at)))[:, None] * u
        outer = np.multiply(u[:, :, None], u[:, None, :], self._outer)
        outer *= c[:, None, None]
        self._Sigma -= outer
        np.maximum(self._diagonal, 0.0, self._var)
        np.sqrt(self._var, self._sd)
        for model, i, y, s_ii in zip(self.models, arms, ys, s.tolist()):
            model._info_terms.append((s_ii, 1.0))
            model._b[i] += 1.0 * y
            model._weight[i] += 1.0
            model._n += 1
