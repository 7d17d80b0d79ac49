"""Time-varying UCB policies with ask/tell (seed 000 Sec. 2.3 and 3; Dai et al. Alg. 1).

All share ``alpha_base(x, tau) = mu_n(x, tau) + beta_n sigma_n(x, tau)`` (seed Sec. 3, last
paragraph) on the posterior of ``ForgettingArmPosterior`` and differ only in the time at which it is scored
and in how the clock advances.  The seed's time-unaware baseline (eps = 0, a static GP) is the
library's ``gp-ucb`` (``qbo.algorithms.gp_ucb``, ``beta="bogunovic"`` on drifting problems).

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

beta_n (multiplier of sigma, ``qbo.algorithms.beta``): ``"bogunovic"`` ``sqrt(0.8 log(0.4 n))``
(clipped at 0), the choice of Bogunovic et al.'s experiments that the seed's Sec. 5 says it
reuses; ``"practical"`` ``1 + ln n`` (Dai et al. App. J); or a constant.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from qbo.algorithms.base import PolicyBase, Query, argmax_lowest, check_float, check_int_opt
from qbo.algorithms.beta import bogunovic, check_beta, practical
from qbo.algorithms.quadrature import lognormal_mean, lognormal_nodes
from qbo.gp.forgetting import ForgettingArmPosterior, check_forgetting
from qbo.gp.kernels import make_kernel

__all__ = ["CTV", "CTVFixed", "CTVSimple", "SPACE_KERNELS", "TVConfig", "TVGPUCB", "beta_multiplier", "gram_of",
           "ucb_at"]

Gram = Callable[[str, float, float], np.ndarray]

BETAS = ("bogunovic", "practical")
SPACE_KERNELS = ("se", "matern12", "matern32", "matern52")


def beta_multiplier(beta: str | float, n: int) -> float:
    """Multiplier of sigma at round ``n`` (1-based): a ``BETAS`` schedule or a constant."""
    if beta == "bogunovic":
        return bogunovic(n)
    if beta == "practical":
        return practical(n)
    return float(beta)


def gram_of(config: Any, arms: np.ndarray, gram: Gram | None) -> np.ndarray:
    """The space Gram matrix of ``config``'s kernel on ``arms``, from ``gram`` if given."""
    key = (config.kernel, float(config.lengthscale), float(config.outputscale))
    return gram(*key) if gram is not None else make_kernel(*key)(arms, arms)


def ucb_at(post: ForgettingArmPosterior, t: float | np.ndarray, beta: float) -> np.ndarray:
    """``alpha_base(x, tau_n + t) = mu_n(x, tau_n + t) + beta sigma_n(x, tau_n + t)`` (closed forms)."""
    mean, var = post.future(t)
    return mean + beta * np.sqrt(var)


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
        check_beta(self.beta, BETAS)
        check_int_opt("quadrature", self.quadrature)


class _TimeVaryingUCB(PolicyBase):
    """Shared machinery: the space-time posterior, the clock and the ask of seed Alg. 1 line 3.

    ``gram(kernel, lengthscale, outputscale)``, if given, supplies the space Gram matrix of the
    arms (a problem shares its own across policies and trials).
    """

    quantum = False
    clocked = True
    inputs: tuple[str, ...] = ("gram",)
    dense = False  # the posterior's form (``ForgettingArmPosterior``): square-root rows, or m x m

    def __init__(self, arms: np.ndarray, config: TVConfig | None = None, *,
                 gram: Gram | None = None) -> None:
        super().__init__(arms, config if config is not None else TVConfig())
        c = self.config
        K = gram_of(c, self.arms, gram)
        self.posterior = ForgettingArmPosterior(K, c.eps, c.noise, dense=self.dense)
        self.elapsed = 0.0

    def acquisition(self) -> tuple[np.ndarray, np.ndarray | float | None]:  # pragma: no cover
        """The acquisition at every arm and the horizon t it scored (module doc)."""
        raise NotImplementedError

    def _beta(self) -> float:
        return beta_multiplier(self.config.beta, self.t + 1)

    def _select(self) -> Query:
        """Seed Alg. 1 line 3: ``x_{n+1} = argmax alpha(x | D_n)`` (lowest index on ties)."""
        scores, horizon = self.acquisition()
        arm = argmax_lowest(scores)
        h = None if horizon is None else float(np.broadcast_to(horizon, scores.shape)[arm])
        return Query(arm, None, None, horizon=h)

    def _clock_step(self, elapsed: float) -> float:
        """How far the model's clock moves for a round that took ``elapsed``."""
        return elapsed

    def _update_clocked(self, arm: int, value: float, eps: float, elapsed: float, calls: int | None) -> None:
        """Seed Alg. 1 lines 4-6: advance the clock by t_{n+1}, then condition on y_{n+1}."""
        t = check_float("elapsed", elapsed, low=0.0)
        self.posterior.advance(self._clock_step(t))
        self.posterior.add(arm, value)
        self.elapsed += t

    def recommend(self) -> int:
        """Arm with the highest posterior mean now."""
        return argmax_lowest(self.posterior.mean)


class TVGPUCB(_TimeVaryingUCB):
    """``tv-gp-ucb`` (Bogunovic et al.): the clock is the round index, scored at n + 1.

    It needs no elapsed time, so it is not clocked: it runs on drifting and static problems
    alike (on a static one its default is eps = 0, GP-UCB with Bogunovic et al.'s beta; a
    user's eps > 0 forgets). Its posterior is the dense form, O(m^2) a round whatever the
    number of rounds, and its ``stepper()`` is the same rounds compiled, bit for bit
    (``qbo.algorithms.tv_gp_ucb_kernel``)."""

    name = "tv-gp-ucb"
    clocked = False
    dense = True

    def acquisition(self):
        return ucb_at(self.posterior, 1.0, self._beta()), 1.0

    def _update(self, arm: int, value: float, eps: float) -> None:
        """Seed Alg. 1 lines 4-6 with the round index as the clock: advance by 1, then condition."""
        self.posterior.advance(1.0)
        self.posterior.add(arm, value)

    def stepper(self) -> Any:
        """This policy's rounds as one compiled loop (``qbo.algorithms.tv_gp_ucb_kernel``), on
        a posterior that has seen nothing."""
        from qbo.algorithms.tv_gp_ucb_kernel import TVStepper  # numba is imported where it is used

        return TVStepper(self) if self.posterior.n == 0 else None


class CTVFixed(_TimeVaryingUCB):
    """``ctv-fixed``, seed Eq. (3): the known evaluation times ``eval_times`` (m) of the problem."""

    name = "ctv-fixed"
    inputs = ("gram", "eval_times")

    def __init__(self, arms: np.ndarray, config: TVConfig | None = None, *,
                 gram: Gram | None = None, eval_times: np.ndarray | None = None) -> None:
        super().__init__(arms, config, gram=gram)
        self.eval_times = _check_times(eval_times, self.num_arms)

    def acquisition(self):
        return ucb_at(self.posterior, self.eval_times, self._beta()), self.eval_times


class _LearnedTime(_TimeVaryingUCB):
    """A GP on ``g = log t`` fitted to the observed log-times (seed Sec. 3)."""

    def __init__(self, arms: np.ndarray, config: TVConfig | None = None, *,
                 gram: Gram | None = None) -> None:
        super().__init__(arms, config, gram=gram)
        c = self.config
        Kg = make_kernel("matern52", c.time_lengthscale, c.time_outputscale)(self.arms, self.arms) + c.time_bias
        self.time_model = ForgettingArmPosterior(Kg, 0.0, c.time_noise)

    def _update_clocked(self, arm: int, value: float, eps: float, elapsed: float, calls: int | None) -> None:
        super()._update_clocked(arm, value, eps, elapsed, calls)
        self.time_model.add(arm, math.log(elapsed))


class CTV(_LearnedTime):
    """``ctv``, seed Eq. (4): the UCB averaged over the log-normal time posterior (Gauss-Hermite)."""

    name = "ctv"

    def acquisition(self):
        mu_g, var_g = self.time_model.mean, self.time_model.var
        t_nodes, w = lognormal_nodes(mu_g, np.sqrt(var_g), self.config.quadrature)
        return ucb_at(self.posterior, t_nodes, self._beta()) @ w, t_nodes @ w


class CTVSimple(_LearnedTime):
    """``ctv-simple``, seed Eq. (5): scored at ``tau_n + exp(mu_g + (sigma_g^2 + sigma_noise^2)/2)``."""

    name = "ctv-simple"

    def acquisition(self):
        t_mean = lognormal_mean(self.time_model.mean, self.time_model.var + self.config.time_noise)
        return ucb_at(self.posterior, t_mean, self._beta()), t_mean


def _check_times(times: np.ndarray | None, m: int) -> np.ndarray:
    if times is None:
        raise ValueError("ctv-fixed needs the known evaluation times eval_times, got None")
    t = np.asarray(times, float).reshape(-1)
    if t.shape != (m,) or not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"eval_times must be {m} finite times > 0, got shape {t.shape}")
    return t
