"""``thompson``: Thompson sampling with independent arms (Thompson 1933; Agrawal & Goyal 2012).

Two conjugate models, per arm:

* ``prior="beta"`` (Bernoulli rewards): Beta(a0, b0) prior; a reward y, rescaled to
  [0, 1] by the window (``low``, ``high``), adds y to a and 1 - y to b (exact for 0/1
  rewards; for rewards in [0, 1] it is the fractional update).  Each round draws
  theta_i ~ Beta(a_i, b_i) and plays the argmax (Agrawal & Goyal 2012, Alg. 2).
* ``prior="gaussian"`` (Gaussian rewards with known noise variance ``noise``): prior
  N(``prior_mean``, ``prior_var``); after n_i rewards with sum S_i the posterior is
  N((prior_mean/prior_var + S_i/noise) / P_i, 1 / P_i), P_i = 1/prior_var + n_i/noise.

Randomness: one generator seeded with ``seed``, advanced once per round (``ask``); ``tell``
draws first when no ask was pending, so replaying tells (``restore_policy``) reproduces the
same stream.

``stepper()`` runs the same rounds as one compiled loop (``qbo.algorithms.compiled``): the
same draws in the same order (a vector ``rng.beta`` draws arm by arm), so the same arms.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

import numpy as np

from qbo.algorithms.base import PolicyBase, Query, argmax_lowest, check_float
from qbo.algorithms.compiled import RewardTable, draw_reward, jit

__all__ = ["RandomisedPolicy", "Thompson", "ThompsonConfig"]

PRIORS = ("beta", "gaussian")


class RandomisedPolicy(PolicyBase):
    """A policy whose ``ask`` draws from ``self.rng``; replay-safe (module docstring)."""

    def _init_rng(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def tell(self, query: Query, value: float, epsilon: float | None = None, **clock: Any) -> None:
        if self._pending is None:  # replay: draw what the original ask drew
            self.ask()
        super().tell(query, value, epsilon, **clock)


@dataclass(frozen=True)
class ThompsonConfig:
    """``prior``: "beta" (default) or "gaussian"; ``a0``, ``b0``: Beta prior; ``noise``,
    ``prior_mean``, ``prior_var``: Gaussian model; ``low``, ``high``: reward window (the Beta
    model rescales rewards from it to [0, 1]); ``seed``: the sampler's seed."""

    prior: str = "beta"
    a0: float = 1.0
    b0: float = 1.0
    noise: float = 0.25
    prior_mean: float = 0.5
    prior_var: float = 1.0
    low: float = 0.0
    high: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.prior not in PRIORS:
            raise ValueError(f"prior must be one of {PRIORS}, got {self.prior!r}")
        for name in ("a0", "b0", "noise", "prior_var"):
            check_float(name, getattr(self, name), low=0.0)
        check_float("prior_mean", self.prior_mean)
        check_float("low", self.low)
        check_float("high", self.high, low=float(self.low))
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")


class Thompson(RandomisedPolicy):
    """Independent-arm Thompson sampling; one classical sample per round."""

    name = "thompson"
    quantum = False

    def __init__(self, arms: np.ndarray, config: ThompsonConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else ThompsonConfig())
        m = self.num_arms
        self.n = np.zeros(m)
        self.total = np.zeros(m)  # sum of rewards (Gaussian) or of rescaled rewards (Beta)
        self._init_rng(self.config.seed)

    def posterior_mean(self) -> np.ndarray:
        cfg = self.config
        if cfg.prior == "beta":
            return (cfg.a0 + self.total) / (cfg.a0 + cfg.b0 + self.n)
        precision = 1.0 / cfg.prior_var + self.n / cfg.noise
        return (cfg.prior_mean / cfg.prior_var + self.total / cfg.noise) / precision

    def recommend(self) -> int:
        return argmax_lowest(self.posterior_mean())

    def _select(self) -> Query:
        cfg = self.config
        if cfg.prior == "beta":
            draw = self.rng.beta(cfg.a0 + self.total, cfg.b0 + self.n - self.total)
        else:
            precision = 1.0 / cfg.prior_var + self.n / cfg.noise
            draw = self.posterior_mean() + self.rng.standard_normal(self.num_arms) / np.sqrt(precision)
        return Query(argmax_lowest(draw), None, None)

    def _update(self, arm: int, value: float, eps: float) -> None:
        cfg = self.config
        if cfg.prior == "beta":
            value = min(1.0, max(0.0, (value - cfg.low) / (cfg.high - cfg.low)))
        self.n[arm] += 1
        self.total[arm] += value

    def stepper(self) -> ThompsonStepper:
        """This policy's rounds as one compiled loop (``qbo.algorithms.compiled``)."""
        return ThompsonStepper(self)


class ThompsonStepper:
    """``Thompson``'s ask / tell loop on its own arrays ``n`` and ``total`` (a ``Stepper``)."""

    def __init__(self, policy: Thompson) -> None:
        self.policy = policy
        cfg = policy.config
        self._beta = cfg.prior == "beta"
        self._params = np.array([cfg.a0, cfg.b0, cfg.low, cfg.high, cfg.prior_mean, cfg.prior_var, cfg.noise])

    def run(self, count: int, table: RewardTable, rng: np.random.Generator,
            arms: np.ndarray, values: np.ndarray) -> None:
        p = self.policy
        kernel = _beta_rounds if self._beta else _gaussian_rounds
        kernel(count, p.n, p.total, self._params, p.rng, table.p_first, table.first, table.second, rng, arms, values)

    def replay(self, arms: np.ndarray, values: np.ndarray) -> None:
        _tell_rounds(self._beta, self.policy.n, self.policy.total, self._params, arms, values)

    def statistics(self) -> dict[str, Any]:
        p = self.policy
        return {"n": p.n.tolist(), "total": p.total.tolist(), "rng": p.rng.bit_generator.state}

    def restore(self, state: dict[str, Any]) -> None:
        self.policy.rng.bit_generator.state = state["rng"]


@jit
def _tell(beta: bool, n: np.ndarray, total: np.ndarray, params: np.ndarray, arm: int, value: float) -> None:
    """``Thompson._update``."""
    if beta:
        value = min(1.0, max(0.0, (value - params[2]) / (params[3] - params[2])))
    n[arm] += 1
    total[arm] += value


@jit
def _tell_rounds(beta: bool, n: np.ndarray, total: np.ndarray, params: np.ndarray,
                 arms: np.ndarray, values: np.ndarray) -> None:
    for k in range(arms.shape[0]):
        _tell(beta, n, total, params, arms[k], values[k])


@jit
def _beta_rounds(count: int, n: np.ndarray, total: np.ndarray, params: np.ndarray, prng: np.random.Generator,
                 p_first: np.ndarray, first: np.ndarray, second: np.ndarray, rng: np.random.Generator,
                 arms: np.ndarray, values: np.ndarray) -> None:
    """Beta prior: theta_i ~ Beta(a0 + S_i, b0 + n_i - S_i), play the first argmax."""
    a0, b0 = params[0], params[1]
    for k in range(count):
        arm, best = 0, -np.inf
        for i in range(n.shape[0]):
            theta = prng.beta(a0 + total[i], b0 + n[i] - total[i])
            if theta > best:
                arm, best = i, theta
        y = draw_reward(rng, p_first[arm], first[arm], second[arm])
        _tell(True, n, total, params, arm, y)
        arms[k], values[k] = arm, y


@jit
def _gaussian_rounds(count: int, n: np.ndarray, total: np.ndarray, params: np.ndarray, prng: np.random.Generator,
                     p_first: np.ndarray, first: np.ndarray, second: np.ndarray, rng: np.random.Generator,
                     arms: np.ndarray, values: np.ndarray) -> None:
    """Gaussian prior: theta_i = mean_i + z_i / sqrt(P_i), play the first argmax."""
    mean0, var0, noise = params[4], params[5], params[6]
    for k in range(count):
        arm, best = 0, -np.inf
        for i in range(n.shape[0]):
            precision = 1.0 / var0 + n[i] / noise
            mean = (mean0 / var0 + total[i] / noise) / precision
            theta = mean + prng.standard_normal() / np.sqrt(precision)
            if theta > best:
                arm, best = i, theta
        y = draw_reward(rng, p_first[arm], first[arm], second[arm])
        _tell(False, n, total, params, arm, y)
        arms[k], values[k] = arm, y
