"""Length-scale strategies behind the GP policies: fixed, A-GP-UCB, MLE and LB-GP-UCB.

A surrogate owns the GP model(s) of a policy.  ``select(t)`` is the model used at stage t
(1-based; pure: it never changes state), ``tell(t, arm, y, eps, beta)`` records stage t's
observation, where ``beta`` is the sigma multiplier the policy used at stage t, and
``lengthscale(t)`` is the length scale behind ``select(t)``.  Every surrogate is a
deterministic function of its construction arguments and the sequence of tells, so
replay-based restore reproduces it exactly.

References: Ziomek, Adachi & Osborne, "Bayesian Optimisation with Unknown Hyperparameters:
Regret Bounds Logarithmically Closer to Optimal" (NeurIPS 2024), Algorithm 1 (LB-GP-UCB)
and Sec. 5 (MLE and A-GP-UCB baselines); Berkenkamp, Schoellig & Krause, "No-Regret Bayesian
Optimization with Unknown Hyperparameters" (JMLR 2019) (A-GP-UCB).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from qbo.gp.kernels import make_kernel
from qbo.algorithms.lengthscale.bounds import suspected_regret, xi
from qbo.algorithms.lengthscale.growth import candidate, growth
from qbo.algorithms.lengthscale.mle import fit_hyperparameters
from qbo.gp.cholesky import ArmStats, CholeskyArmPosterior

__all__ = [
    "BalancedSurrogate", "FixedSurrogate", "MLESurrogate", "ScheduleSurrogate", "Surrogate",
    "SurrogateSettings", "fitted",
]


class Surrogate(Protocol):
    """The model(s) of a GP policy and the rule that picks the length scale of each stage."""

    def select(self, t: int) -> Any: ...

    def lengthscale(self, t: int) -> float: ...

    def tell(self, t: int, arm: int, y: float, eps: float, beta: float) -> None: ...


@dataclass(frozen=True)
class SurrogateSettings:
    """What every adaptive surrogate needs: kernel name, output scale, arms (m x d),
    regulariser lambda, theta_0 (or MLE's initial value) and the growth function g."""

    kernel: str
    outputscale: float
    arms: np.ndarray
    lam: float
    theta0: float
    t0: float
    power: float = 0.5

    @property
    def dim(self) -> int:
        return int(self.arms.shape[1])

    def g(self, t: int) -> float:
        """Growth function ``g(t) = max(t0, t^power)`` (Sec. 5)."""
        return growth(t, self.t0, self.power)

    def direct_model(self, theta: float, stats: ArmStats, outputscale: float | None = None) -> CholeskyArmPosterior:
        """The weighted posterior with length scale ``theta`` on all data in ``stats``."""
        kernel = make_kernel(self.kernel, theta, self.outputscale if outputscale is None else outputscale)
        return CholeskyArmPosterior.from_stats(kernel, self.arms, self.lam, stats)


class FixedSurrogate:
    """One model with a fixed length scale (the policies' original behaviour)."""

    def __init__(self, model: Any, theta: float) -> None:
        self.model, self.theta = model, float(theta)

    def select(self, t: int) -> Any:
        return self.model

    def lengthscale(self, t: int) -> float:
        return self.theta

    def tell(self, t: int, arm: int, y: float, eps: float, beta: float) -> None:
        self.model.add(arm, y, eps)


class _CachedDirect:
    """Shared ``ArmStats`` bookkeeping and a one-entry model cache keyed on the data."""

    def __init__(self, settings: SurrogateSettings) -> None:
        self.settings = settings
        self.stats = ArmStats(settings.arms.shape[0])
        self._cache: tuple[tuple, CholeskyArmPosterior] | None = None

    def _model(self, theta: float, outputscale: float | None = None) -> CholeskyArmPosterior:
        key = (self.stats.n, theta, outputscale)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self.settings.direct_model(theta, self.stats, outputscale))
        return self._cache[1]


class ScheduleSurrogate(_CachedDirect):
    """A-GP-UCB (Berkenkamp et al. 2019): ``theta_t = theta_0 / g(t)``, never increasing
    because g is non-decreasing; the posterior is refit on all data at theta_t each stage
    (``qbo.algorithms.gp_ucb_schedule`` runs gp-ucb's rounds on it as a compiled loop that
    refits only where theta_t changes). As in seed 001's experiments (Sec. 5: one UCB
    acquisition, the methods differing only in how they pick the length scale), beta is the
    policy's; Berkenkamp et al.'s theory also grows the norm bound in beta with g(t), which
    qbo does not."""

    def lengthscale(self, t: int) -> float:
        return self.settings.theta0 / self.settings.g(t)

    def select(self, t: int) -> CholeskyArmPosterior:
        return self._model(self.lengthscale(t))

    def tell(self, t: int, arm: int, y: float, eps: float, beta: float) -> None:
        self.stats.add(arm, y, eps)


class MLESurrogate(_CachedDirect):
    """MLE baseline (Sec. 5): after every ``every``-th tell, refit the length scale (and
    the output scale if ``fit_outputscale``) by a multi-start search of the marginal likelihood
    (``mle.fit_hyperparameters``: grid starts, Brent's method where the paper used L-BFGS-B);
    ``theta_0`` is used until two distinct arms have been observed (one point does not identify
    a length scale). ``qbo.algorithms.gp_ucb_mle`` runs gp-ucb's rounds on it as a compiled
    loop that calls the same fit on the same statistics."""

    def __init__(self, settings: SurrogateSettings, every: int = 1, fit_outputscale: bool = False) -> None:
        super().__init__(settings)
        self.every, self.fit_outputscale = int(every), bool(fit_outputscale)
        self.theta, self.scale = settings.theta0, settings.outputscale

    def lengthscale(self, t: int) -> float:
        return self.theta

    def select(self, t: int) -> CholeskyArmPosterior:
        return self._model(self.theta, self.scale)

    def tell(self, t: int, arm: int, y: float, eps: float, beta: float) -> None:
        self.stats.add(arm, y, eps)
        if self.stats.n % self.every == 0 and np.count_nonzero(self.stats.W) >= 2:
            s = self.settings
            self.theta, self.scale = fit_hyperparameters(
                s.kernel, s.arms, self.stats, s.lam, self.scale, self.fit_outputscale)


def fitted(factory: Callable[[float], Any], theta: float, stats: ArmStats) -> Any:
    """``factory(theta)`` told all data so far, one observation an observed arm: ``ybar_i =
    b_i / W_i`` with ``eps = W_i^{-1/2}``, ascending arm order (``BalancedSurrogate``)."""
    model = factory(theta)
    U, W, ybar = stats.observed()
    for arm, w, y in zip(U.tolist(), W.tolist(), ybar.tolist()):
        model.add(arm, y, 1.0 / math.sqrt(w))
    return model


class BalancedSurrogate:
    """LB-GP-UCB, Algorithm 1 of Ziomek, Adachi & Osborne (NeurIPS 2024).

    Candidate i has length scale ``q(i) = theta_0 e^{-i/d}`` (Def. 3.1) and its own model from
    ``factory(theta)`` (all active models are told every observation: the base learners share
    data, Sec. 3).  Indexing: candidates are used consecutively theta_0 = q(0), q(1), q(2), ...;
    the printed Algorithm 1 starts with l = 1 and tests q(l + 1), which would skip q(1).
    Per candidate: ``count`` = |S^theta|, ``sum_y`` = sum of y over S^theta and ``sum_bs`` =
    sum over S^theta of beta_tau sigma^theta_{tau-1}(x_tau) (line 12).

    Memory O(arms), not O(T): Algorithm 1 reads the data buffer D_t (line 6) only to fit a
    newly introduced candidate's model on all data so far (lines 14-16); lines 10 and 12 need
    only the three running sums above (sigma^theta_{tau-1}(x_tau) is the chosen model's, read
    at stage tau). The model is a GP with Gaussian likelihood of noise variance lambda eps^2 on
    a finite arm set, for which the per-arm weights ``W_i = sum 1/eps^2`` and sums
    ``b_i = sum y/eps^2`` (``ArmStats``) are sufficient (``qbo.gp.cholesky``): the new model
    is told one observation an observed arm, ``ybar_i = b_i / W_i`` with ``eps = W_i^{-1/2}``,
    ascending arm order, which is the posterior of every observation one by one (and the same
    information gain, by Sylvester's determinant identity), equal to rounding, not bit for
    bit (the model computes ``1/eps^2``, and sums in another order). The state is the
    statistics (O(m)) and the active candidates' models; candidates are introduced
    d ln g(t) in all (Sec. 3), logarithmically many in T.
    """

    def __init__(self, settings: SurrogateSettings, factory: Callable[[float], Any],
                 noise_var: float, delta: float, norm: float = 1.0) -> None:
        self.settings, self.factory = settings, factory
        self.noise_var, self.delta, self.norm = float(noise_var), float(delta), float(norm)
        self.thetas: list[float] = []
        self.models: list[Any] = []
        self.active: list[int] = []
        self.count: list[int] = []
        self.sum_y: list[float] = []
        self.sum_bs: list[float] = []
        self.stats = ArmStats(settings.arms.shape[0])
        self._introduce()  # line 1: Theta_1 = {theta_0}

    # ---------------------------------------------------------------- selection (line 3)
    def regret_bound(self, i: int, n: int) -> float:
        """Suspected regret ``R^{q(i)}(n)`` (Thm 2.3 with B(theta, N), Sec. 2)."""
        s = self.settings
        return suspected_regret(n, self.thetas[i], s.theta0, s.dim, s.kernel, self.norm)

    def chosen(self) -> int:
        """Line 3: ``argmin_{theta in Theta_t} R^theta(|S^theta_{t-1}| + 1)``; ties -> the
        longest length scale (lowest index)."""
        bounds = [self.regret_bound(i, self.count[i] + 1) for i in self.active]
        return self.active[int(np.argmin(bounds))]

    def select(self, t: int) -> Any:
        return self.models[self.chosen()]

    def lengthscale(self, t: int) -> float:
        return self.thetas[self.chosen()]

    @property
    def active_lengthscales(self) -> list[float]:
        """Theta_t, longest first."""
        return [self.thetas[i] for i in self.active]

    # ---------------------------------------------------------------- update (lines 5-16)
    def tell(self, t: int, arm: int, y: float, eps: float, beta: float) -> None:
        """Lines 6-16 of Algorithm 1 for stage ``t`` (x_t = ``arm``, y_t = ``y``)."""
        i = self.chosen()
        sd = math.sqrt(max(float(self.models[i].posterior()[1][arm]), 0.0))
        self.count[i] += 1
        self.sum_y[i] += float(y)
        self.sum_bs[i] += float(beta) * sd
        self.stats.add(arm, y, eps)
        for j in self.active:
            self.models[j].add(arm, y, eps)
        self._eliminate(t)
        self._maybe_introduce(t)

    def lower_bound(self, i: int, t: int) -> float:
        """Line 10: ``L_t(theta) = mean of y over S^theta - sqrt(xi_t / |S^theta|)``."""
        s = self.settings
        x = xi(t, s.g(t), s.dim, self.noise_var, self.delta)
        return self.sum_y[i] / self.count[i] - math.sqrt(max(x, 0.0) / self.count[i])

    def _eliminate(self, t: int) -> None:
        """Lines 9-12: once every active candidate has been played, drop those with
        ``L_t(theta) + 2/|S| sum beta sigma < max_theta' L_t(theta')``."""
        if any(self.count[i] == 0 for i in self.active):
            return
        low = {i: self.lower_bound(i, t) for i in self.active}
        best = max(low.values())
        keep = [i for i in self.active if low[i] + 2.0 * self.sum_bs[i] / self.count[i] >= best]
        for i in self.active:
            if i not in keep:
                self.models[i] = None  # eliminated for good: free its model
        self.active = keep  # never empty: the argmax of L_t always stays

    def _maybe_introduce(self, t: int) -> None:
        """Lines 14-16: add q(l+1) when ``q(l+1) >= theta_L(t) = theta_0 / g(t)``.

        The printed line 14 reads ``q(l+1) <= theta_0/g(t)``, which would never add a
        candidate above the suspected lower bound theta_L(t) (with g(1) = t0 > e^{1/d} it would
        add none at all).  The text (Sec. 3: candidates down to theta_L(t), "q^{-1}(theta_L)"
        of them), the proof sketch of Thm 4.1 (the first theta <= theta* is added once
        theta_0/g(t) <= theta*) and the authors' code (``add_new_hyperparameters``:
        ``new_ls > theta_H / g(t)``) all use ">=", as here.  One candidate per stage (line 14
        is an ``if``).
        """
        s = self.settings
        # relative slack 1e-12: q(n) = theta_0/t0 exactly when t0 = e^{n/d} (growth.default_t0)
        if candidate(len(self.thetas), s.theta0, s.dim) >= s.theta0 / s.g(t) * (1.0 - 1e-12):
            self._introduce()

    def _introduce(self) -> None:
        theta = candidate(len(self.thetas), self.settings.theta0, self.settings.dim)
        model = fitted(self.factory, theta, self.stats)
        self.thetas.append(theta)
        self.models.append(model)
        self.active.append(len(self.thetas) - 1)
        self.count.append(0)
        self.sum_y.append(0.0)
        self.sum_bs.append(0.0)
