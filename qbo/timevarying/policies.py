"""Time-varying UCB policies with ask/tell (seed 000 Sec. 2.3 and 3; Dai et al. Alg. 1).

All share ``alpha_base(x, tau) = mu_n(x, tau) + beta_n sigma_n(x, tau)`` (seed Sec. 3, last
paragraph) on the posterior of ``ForgettingArmPosterior`` and differ only in the time at which it is scored
and in how the clock advances:

* ``gp-ucb``     time-unaware: eps = 0 (static GP, Srinivas et al.), scored at tau_n.
* ``tv-gp-ucb``  Bogunovic et al. (seed Sec. 2.3): the clock is the round index, tau_n = n,
                 scored at ``n + 1`` (``alpha_UCBfixed``), whatever the real elapsed time.
* ``ctv-fixed``  seed Eq. (3): known evaluation time t(x), scored at ``tau_n + t(x)``.
* ``ctv``        seed Eq. (4): ``int alpha_base(x, tau_n + t) Lambda(t | mu_n^g, (sigma_n^g)^2) dt``
                 with g = log t a GP (Matern-5/2) fitted to the observed log-times; Gauss-Hermite
                 quadrature as in App. A Lemma 6.
* ``ctv-simple`` seed Eq. (5): scored at ``tau_n + t~``, ``t~ = exp(mu_n^g + ((sigma_n^g)^2 + sigma_g^2)/2)``.

Note on the seed: Eq. (4) (and Lemma 6) integrate over the latent-g posterior variance only,
Eq. (5) adds the log-time noise sigma_g^2; we follow each equation literally.

The clock of every time-aware policy is the measured elapsed time (seed Alg. 1 line 4:
``t_{n+1} = tau_{n+1} - tau_n`` is observed), so ``tell`` takes ``elapsed``.

beta_n (multiplier of sigma): ``"bogunovic"`` ``sqrt(0.8 log(0.4 n))`` (clipped at 0), the
choice of Bogunovic et al.'s experiments that the seed's Sec. 5 says it reuses; ``"practical"``
``1 + ln n`` (Dai et al. App. J); or a constant.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from qbo.algorithms.base import argmax_lowest, check_float, check_int_opt
from qbo.gp.kernels import make_kernel
from qbo.timevarying.kernels import check_forgetting
from qbo.gp.forgetting import ForgettingArmPosterior
from qbo.timevarying.quadrature import lognormal_mean, lognormal_nodes

__all__ = ["CLASSICAL_TV_POLICIES", "TVConfig", "TVPolicy", "TVQuery", "beta_multiplier", "ucb_at"]

CLASSICAL_TV_POLICIES = ("gp-ucb", "tv-gp-ucb", "ctv-fixed", "ctv", "ctv-simple")
BETAS = ("bogunovic", "practical")
SPACE_KERNELS = ("se", "matern12", "matern32", "matern52")


@dataclass(frozen=True)
class TVQuery:
    """One round: ``arm``; ``epsilon`` / ``alpha`` for QMC stages (None: one classical sample);
    ``horizon``: the evaluation time the acquisition assumed (None where it assumed none)."""

    arm: int
    epsilon: float | None = None
    alpha: float | None = None
    horizon: float | None = None


def beta_multiplier(beta: str | float, n: int) -> float:
    """Multiplier of sigma at round ``n`` (1-based); see the module docstring."""
    if beta == "bogunovic":
        return math.sqrt(max(0.8 * math.log(0.4 * n), 0.0))
    if beta == "practical":
        return 1.0 + math.log(n)
    return float(beta)


def ucb_at(post: ForgettingArmPosterior, t: float | np.ndarray, beta: float) -> np.ndarray:
    """``alpha_base(x, tau_n + t) = mu_n(x, tau_n + t) + beta sigma_n(x, tau_n + t)`` (closed forms)."""
    mean, var = post.future(t)
    return mean + beta * np.sqrt(var)


def check_beta(beta: Any) -> str | float:
    """A schedule in ``BETAS`` or a constant multiplier >= 0."""
    if isinstance(beta, str):
        if beta not in BETAS:
            raise ValueError(f"beta must be one of {BETAS} or a float >= 0, got {beta!r}")
        return beta
    return check_float("beta", beta, low=0.0, low_open=False)


@dataclass(frozen=True)
class TVConfig:
    """Options of the classical time-varying policies (defaults: seed Sec. 5).

    Space model: ``kernel`` (Matern-5/2, seed Sec. 5), ``lengthscale`` 0.2, ``outputscale`` 1,
    ``noise`` sigma^2 = 0.01, forgetting ``eps`` = 0.01 per unit time (= the generator's lambda).
    Time model of ctv / ctv-simple: ``g = log t ~ GP(0, time_outputscale Matern52(time_lengthscale)
    + time_bias)`` (the constant ``time_bias`` variance stands for the unknown mean function
    mu of Sec. 3), log-time noise variance ``time_noise`` (sigma_g^2), ``quadrature`` nodes.
    """

    kernel: str = "matern52"
    lengthscale: float = 0.2
    outputscale: float = 1.0
    noise: float = 0.01
    eps: float = 0.01
    beta: str | float = "bogunovic"
    time_lengthscale: float = 0.2
    time_outputscale: float = 1.0
    time_bias: float = 4.0
    time_noise: float = 0.01
    quadrature: int = 20

    def __post_init__(self) -> None:
        if self.kernel not in SPACE_KERNELS:
            raise ValueError(f"kernel must be one of {SPACE_KERNELS}, got {self.kernel!r}")
        for name in ("lengthscale", "outputscale", "noise", "time_lengthscale", "time_outputscale", "time_noise"):
            check_float(name, getattr(self, name), low=0.0)
        check_float("time_bias", self.time_bias, low=0.0, low_open=False)
        check_forgetting(self.eps)
        check_beta(self.beta)
        check_int_opt("quadrature", self.quadrature)


class TVPolicy:
    """``gp-ucb`` / ``tv-gp-ucb`` / ``ctv-fixed`` / ``ctv`` / ``ctv-simple`` on m fixed arms.

    ``kernel_matrix`` (m x m) reuses a precomputed space Gram matrix (must match the config);
    ``eval_times`` (m) are the known t(x), required by ``ctv-fixed`` only.
    """

    quantum = False

    def __init__(self, name: str, arms: np.ndarray, config: TVConfig | None = None, *,
                 kernel_matrix: np.ndarray | None = None, eval_times: np.ndarray | None = None) -> None:
        if name not in CLASSICAL_TV_POLICIES:
            raise ValueError(f"unknown time-varying policy {name!r}; expected one of {CLASSICAL_TV_POLICIES}")
        self.name, self.config = name, config or TVConfig()
        self.arms = np.asarray(arms, float)
        K = kernel_matrix if kernel_matrix is not None else \
            make_kernel(self.config.kernel, self.config.lengthscale, self.config.outputscale)(self.arms, self.arms)
        eps = 0.0 if name == "gp-ucb" else self.config.eps
        self.posterior = ForgettingArmPosterior(K, eps, self.config.noise)
        self.eval_times = _check_times(eval_times, self.arms.shape[0]) if name == "ctv-fixed" else None
        self.time_model = self._time_model() if name in ("ctv", "ctv-simple") else None
        self.t = 0
        self.elapsed = 0.0
        self._pending: TVQuery | None = None

    def _time_model(self) -> ForgettingArmPosterior:
        c = self.config
        Kg = make_kernel("matern52", c.time_lengthscale, c.time_outputscale)(self.arms, self.arms) + c.time_bias
        return ForgettingArmPosterior(Kg, 0.0, c.time_noise)

    @property
    def num_arms(self) -> int:
        return self.arms.shape[0]

    def ask(self) -> TVQuery:
        """Seed Alg. 1 line 3: ``x_{n+1} = argmax alpha(x | D_n)`` (lowest index on ties); cached."""
        if self._pending is None:
            scores, horizon = self.acquisition()
            arm = argmax_lowest(scores)
            h = None if horizon is None else float(np.broadcast_to(horizon, scores.shape)[arm])
            self._pending = TVQuery(arm, None, None, h)
        return self._pending

    def acquisition(self) -> tuple[np.ndarray, np.ndarray | float | None]:
        """The policy's acquisition at every arm and the horizon t it scored (see module doc)."""
        beta = beta_multiplier(self.config.beta, self.t + 1)
        if self.name == "gp-ucb":
            return ucb_at(self.posterior, 0.0, beta), None
        if self.name == "tv-gp-ucb":
            return ucb_at(self.posterior, 1.0, beta), 1.0
        if self.name == "ctv-fixed":
            return ucb_at(self.posterior, self.eval_times, beta), self.eval_times
        mu_g, var_g = self.time_model.mean, self.time_model.var
        if self.name == "ctv-simple":
            t_mean = lognormal_mean(mu_g, var_g + self.config.time_noise)
            return ucb_at(self.posterior, t_mean, beta), t_mean
        t_nodes, w = lognormal_nodes(mu_g, np.sqrt(var_g), self.config.quadrature)
        return ucb_at(self.posterior, t_nodes, beta) @ w, t_nodes @ w

    def tell(self, query: TVQuery, value: float, elapsed: float) -> None:
        """Seed Alg. 1 lines 4-6: advance the clock by t_{n+1}, then condition on y_{n+1}."""
        arm = int(query.arm)
        t = check_float("elapsed", elapsed, low=0.0)
        v = check_float("value", value)
        self.posterior.advance(1.0 if self.name == "tv-gp-ucb" else t)
        self.posterior.add(arm, v)
        if self.time_model is not None:
            self.time_model.add(arm, math.log(t))
        self.t += 1
        self.elapsed += t
        self._pending = None

    def recommend(self) -> int:
        """Arm with the highest posterior mean now."""
        return argmax_lowest(self.posterior.mean)

    def state_dict(self) -> dict:
        return {"name": self.name, "config": asdict(self.config), "rounds": self.t}


def _check_times(times: np.ndarray | None, m: int) -> np.ndarray:
    if times is None:
        raise ValueError("ctv-fixed needs the known evaluation times eval_times, got None")
    t = np.asarray(times, float).reshape(-1)
    if t.shape != (m,) or not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"eval_times must be {m} finite times > 0, got shape {t.shape}")
    return t
