"""``q-ctv-gp-ucb``: Q-GP-UCB (Dai et al. 2023, Alg. 1) on a drifting reward.

The weighted posterior of Dai et al. Eq. (3) (observation s weighted ``1/eps_s^2``, i.e. noise
variance ``lambda eps_s^2``) is taken inside the product kernel k_space x k_time of seed 000
Eq. (2) (``ForgettingArmPosterior``).  Per stage s:

* line 2 (acquisition, CTV-fixed form of seed Eq. (3)): the stage's evaluation time is known
  through the estimator's cost model, ``t_s(x) = overhead + sec_per_call * N(eps_s(x))`` with
  ``eps_s(x) = sigma~_{s-1}(x) / sqrt(lambda)`` (line 6) and N the expected oracle calls of the
  QMC estimator (honest: shots (2k+1)).  The stage's oracle calls are spread over
  [tau, tau + t_s], so the UCB is scored at the stage's midpoint ``tau + t_s(x)/2`` (the average
  of the closed-form mean a(u) mu over the stage is a(t/2) mu to first order).
* line 6: ``eps_s = max(sigma~_{s-1}(x_s) / sqrt(lambda), eps_min)``, ``alpha = delta / (2 m_bar)``.
* line 7 (``tell``): the estimate is conditioned at the stage's start time (the runner builds
  the stage's oracle from f at that time), then the clock advances by the stage's elapsed time:
  its oracle calls times ``sec_per_call`` plus ``overhead`` (or the measured wall/queue time).
  With ``clock="measured"`` the seconds per call are re-estimated from the elapsed times told.

``eps = 0`` and ``time_aware=False`` give Dai et al.'s time-unaware Q-GP-UCB (``q-gp-ucb``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from qbo.algorithms.base import argmax_lowest, check_float, check_int_opt
from qbo.algorithms.models import default_m_bar
from qbo.gp.kernels import make_kernel
from qbo.qmc import make_estimator
from qbo.timevarying.kernels import check_forgetting
from qbo.timevarying.policies import SPACE_KERNELS, TVQuery, ucb_at
from qbo.gp.forgetting import ForgettingArmPosterior

__all__ = ["QUANTUM_TV_POLICIES", "QCTVConfig", "QCTVGPUCB", "stage_cost_model"]

QUANTUM_TV_POLICIES = ("q-ctv-gp-ucb", "q-gp-ucb")
ESTIMATORS = ("iae", "mc", "auto")


@dataclass(frozen=True)
class QCTVConfig:
    """Options of ``q-ctv-gp-ucb`` (names as in ``qbo.algorithms.QGPUCBConfig`` where shared).

    ``eps``: forgetting rate per second; ``budget`` T (oracle calls) for ``lam = 1 + 2/T`` and
    m_bar (Dai et al. Thm 3, Alg. 1 line 6); ``beta`` "practical" = 1 + ln s (App. J) or a
    constant; ``sec_per_call``, ``overhead``: the stage-time model (seconds); ``reward_range``:
    hi - lo of the oracles' window, to turn eps into the amplitude-scale eps of the cost model.
    """

    kernel: str = "se"
    lengthscale: float = 0.2
    outputscale: float = 1.0
    eps: float = 0.01
    time_aware: bool = True
    budget: int | None = None
    lam: float | None = None
    delta: float = 0.1
    beta: str | float = "practical"
    m_bar: int | None = None
    eps_min: float = 1e-3
    sec_per_call: float = 1e-3
    overhead: float = 0.0
    reward_range: float = 1.0
    estimator: str = "iae"

    def __post_init__(self) -> None:
        if self.kernel not in SPACE_KERNELS:
            raise ValueError(f"kernel must be one of {SPACE_KERNELS}, got {self.kernel!r}")
        for name in ("lengthscale", "outputscale", "eps_min", "sec_per_call", "reward_range"):
            check_float(name, getattr(self, name), low=0.0)
        check_float("overhead", self.overhead, low=0.0, low_open=False)
        check_float("delta", self.delta, low=0.0, high=2.0 / math.e)
        check_forgetting(self.eps)
        check_int_opt("budget", self.budget)
        check_int_opt("m_bar", self.m_bar)
        if self.lam is not None:
            check_float("lam", self.lam, low=0.0)
        if not (self.beta == "practical" or (not isinstance(self.beta, str) and check_float("beta", self.beta, low=0.0, low_open=False) >= 0)):
            raise ValueError(f"beta must be 'practical' or a float >= 0, got {self.beta!r}")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}, got {self.estimator!r}")

    @property
    def lam_value(self) -> float:
        """``lam``, else ``1 + 2/T`` (Dai et al. Thm 3), else 1."""
        if self.lam is not None:
            return float(self.lam)
        return 1.0 + 2.0 / self.budget if self.budget is not None else 1.0


def stage_cost_model(estimator: str, alpha: float, points: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """``(log eps_unit grid, log expected calls)`` of the estimator's own cost model, for interp."""
    grid = np.geomspace(1e-4, 0.5, points)
    calls = [make_estimator(estimator, float(e), alpha).expected_calls(float(e)) for e in grid]
    return np.log(grid), np.log(np.maximum(calls, 1.0))


class QCTVGPUCB:
    """Q-GP-UCB on a drifting reward with stage-time-aware acquisition (module doc)."""

    quantum = True

    def __init__(self, name: str, arms: np.ndarray, config: QCTVConfig | None = None, *,
                 kernel_matrix: np.ndarray | None = None) -> None:
        if name not in QUANTUM_TV_POLICIES:
            raise ValueError(f"unknown quantum time-varying policy {name!r}; expected one of {QUANTUM_TV_POLICIES}")
        cfg = config or QCTVConfig()
        if name == "q-gp-ucb":
            cfg = QCTVConfig(**(asdict(cfg) | {"eps": 0.0, "time_aware": False}))
        self.name, self.config, self.arms = name, cfg, np.asarray(arms, float)
        K = kernel_matrix if kernel_matrix is not None else \
            make_kernel(cfg.kernel, cfg.lengthscale, cfg.outputscale)(self.arms, self.arms)
        self.lam = cfg.lam_value
        self.posterior = ForgettingArmPosterior(K, cfg.eps, self.lam)
        self.m_bar = cfg.m_bar or (default_m_bar(cfg.budget, K.shape[0], float(np.max(np.diag(K))), self.lam)
                                   if cfg.budget else 1000)
        self.alpha = cfg.delta / (2.0 * self.m_bar)
        self._cost = stage_cost_model(cfg.estimator, self.alpha)
        self.sec_per_call = cfg.sec_per_call
        self.t, self.calls, self.elapsed = 0, 0, 0.0
        self._pending: TVQuery | None = None

    def predicted_time(self, eps: np.ndarray) -> np.ndarray:
        """Stage time ``overhead + sec_per_call * N(eps / reward_range)`` (seconds) per arm."""
        log_e = np.log(np.clip(eps / self.config.reward_range, 1e-4, 0.5))
        return self.config.overhead + self.sec_per_call * np.exp(np.interp(log_e, *self._cost))

    def ask(self) -> TVQuery:
        """Alg. 1 lines 2 and 6 with the time-aware score (module doc); cached until ``tell``."""
        if self._pending is None:
            eps = np.maximum(np.sqrt(self.posterior.var) / math.sqrt(self.lam), self.config.eps_min)
            beta = 1.0 + math.log(self.t + 1) if self.config.beta == "practical" else float(self.config.beta)
            horizon = self.predicted_time(eps) if self.config.time_aware else np.zeros_like(eps)
            arm = argmax_lowest(ucb_at(self.posterior, 0.5 * horizon, beta))
            self._pending = TVQuery(arm, float(eps[arm]), self.alpha, float(horizon[arm]))
        return self._pending

    def tell(self, query: TVQuery, value: float, elapsed: float, epsilon: float | None = None,
             calls: int | None = None) -> None:
        """Line 7: condition on the stage's estimate (weight 1/eps^2) at its start, then advance."""
        e = check_float("epsilon", query.epsilon if epsilon is None else epsilon, low=0.0)
        t = check_float("elapsed", elapsed, low=0.0, low_open=False)
        self.posterior.add(int(query.arm), check_float("value", value), e)
        self.posterior.advance(t)
        self.t += 1
        self.elapsed += t
        if calls:
            self.calls += int(calls)
            self.sec_per_call = max((self.elapsed - self.t * self.config.overhead) / self.calls, 1e-12)
        self._pending = None

    def recommend(self) -> int:
        return argmax_lowest(self.posterior.mean)

    def state_dict(self) -> dict:
        return {"name": self.name, "config": asdict(self.config), "stages": self.t}
