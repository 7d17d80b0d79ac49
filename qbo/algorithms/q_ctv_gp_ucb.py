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

``eps = 0`` and ``time_aware=False`` give Dai et al.'s time-unaware Q-GP-UCB, which the library
registers once, as ``q-gp-ucb`` (``qbo.algorithms.gp_ucb``).  Lines 2-3 and 6 are
``qbo.algorithms.staged``'s, shared with Q-GP-UCB and Q-LinUCB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qbo.algorithms.base import Query, argmax_lowest, check_float, check_int_opt
from qbo.algorithms.beta import check_beta, practical
from qbo.algorithms.staged import StagedPolicy, resolve_alpha
from qbo.algorithms.time_varying import SPACE_KERNELS, Gram, gram_of, ucb_at
from qbo.gp.forgetting import ForgettingArmPosterior, check_forgetting
from qbo.qmc import make_estimator

__all__ = ["QCTVConfig", "QCTVGPUCB", "stage_cost_model"]

ESTIMATORS = ("iae", "mc", "auto")


@dataclass(frozen=True)
class QCTVConfig:
    """Options of ``q-ctv-gp-ucb`` (names as in ``qbo.algorithms.QGPUCBConfig`` where shared).

    ``eps``: forgetting rate per second; ``budget`` T (oracle calls) for ``lam = 1 + 2/T`` and
    m_bar (Dai et al. Thm 3, Alg. 1 line 6; one of the two is required); ``beta`` "practical" =
    1 + ln s (App. J) or a constant; ``sec_per_call``, ``overhead``: the stage-time model
    (seconds); ``reward_range``: hi - lo of the oracles' window, to turn eps into the
    amplitude-scale eps of the cost model; ``eps_min``: floor on eps_s (``exhausted`` below it).
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
    estimator: str = "auto"

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
        check_beta(self.beta, ("practical",))
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


class QCTVGPUCB(StagedPolicy):
    """Q-GP-UCB on a drifting reward with stage-time-aware acquisition (module doc)."""

    name = "q-ctv-gp-ucb"
    clocked = True
    inputs = ("gram",)

    def __init__(self, arms: np.ndarray, config: QCTVConfig | None = None, *,
                 gram: Gram | None = None) -> None:
        super().__init__(arms, config if config is not None else QCTVConfig())
        cfg = self.config
        K = gram_of(cfg, self.arms, gram)
        self.lam = cfg.lam_value
        self.posterior = ForgettingArmPosterior(K, cfg.eps, self.lam)
        self.m_bar, self.alpha = resolve_alpha(cfg.delta, cfg.budget, cfg.m_bar, K.shape[0],
                                               float(np.max(np.diag(K))), self.lam)
        self._cost = stage_cost_model(cfg.estimator, self.alpha)
        self.sec_per_call = cfg.sec_per_call
        self.calls, self.elapsed = 0, 0.0

    def predicted_time(self, eps: np.ndarray) -> np.ndarray:
        """Stage time ``overhead + sec_per_call * N(eps / reward_range)`` (seconds) per arm."""
        log_e = np.log(np.clip(eps / self.config.reward_range, 1e-4, 0.5))
        return self.config.overhead + self.sec_per_call * np.exp(np.interp(log_e, *self._cost))

    def _select(self) -> Query:
        """Alg. 1 lines 2 and 6 with the time-aware score (module doc)."""
        raw = np.sqrt(self.posterior.var) / math.sqrt(self.lam)
        eps = np.maximum(raw, self.config.eps_min)
        s = self.t + 1
        beta = practical(s) if self.config.beta == "practical" else float(self.config.beta)
        horizon = self.predicted_time(eps) if self.config.time_aware else np.zeros_like(eps)
        query = self._stage_query(ucb_at(self.posterior, 0.5 * horizon, beta), raw)
        return Query(query.arm, query.epsilon, query.alpha, horizon=float(horizon[query.arm]))

    def _update_clocked(self, arm: int, value: float, eps: float, elapsed: float, calls: int | None) -> None:
        """Line 7: condition on the stage's estimate (weight 1/eps^2) at its start, then advance."""
        self.posterior.add(arm, value, eps)  # noise variance lambda eps^2 (Eq. (3))
        self.posterior.advance(elapsed)
        self.elapsed += elapsed
        if calls:
            self.calls += int(calls)
            stages = self.t + 1  # this one included: the history grows after the update
            self.sec_per_call = max((self.elapsed - stages * self.config.overhead) / self.calls, 1e-12)

    def recommend(self) -> int:
        return argmax_lowest(self.posterior.mean)
