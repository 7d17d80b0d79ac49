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

    def stepper(self) -> Any:
        """This policy's rounds as one compiled loop (``qbo.algorithms.thompson_kernel``)."""
        from qbo.algorithms.thompson_kernel import ThompsonStepper  # numba is imported where it is used

        return ThompsonStepper(self)
