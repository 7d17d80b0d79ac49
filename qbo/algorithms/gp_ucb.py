"""Q-GP-UCB (Dai et al., "Quantum Bayesian Optimization", NeurIPS 2023, Alg. 1) and classical
GP-UCB (Srinivas et al., ICML 2010, Alg. 1) as ask/tell policies over a finite arm set.

Conventions.  Dai et al. multiply sigma by ``beta_s`` directly (Alg. 1 line 2); Srinivas et al.
multiply by ``beta_t^{1/2}`` (Eq. (6)).  In this module ``beta`` always denotes the **multiplier
of sigma**, except for ``gp-ucb``'s ``"theorem1"`` schedule, which computes Srinivas' beta_t and
uses ``sqrt(beta_t / beta_scale)``.

Length scales.  Both policies take ``lengthscale`` as a number or a mode string (``"mle"``,
``"lb"``, ``"a-gp-ucb"``, ...; ``qbo.algorithms.lengthscale.spec``).  The policy's ``surrogate``
(``qbo.algorithms.lengthscale.surrogates``) picks the model of each stage; ``policy.model`` is that
model.  In ``q-gp-ucb`` every model is the weighted posterior (per-point noise variance
``lambda eps_s^2``), so LB-GP-UCB's base learners, A-GP-UCB's and MLE's refits all use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from qbo.algorithms.base import PolicyBase, Query, argmax_lowest, check_float, check_int_opt
from qbo.algorithms.beta import bogunovic, check_beta, practical, theorem1, theory
from qbo.algorithms.gp_ucb_steps import SurrogateStepper
from qbo.algorithms.models import NOISE_CASES, GPModelConfig, build_surrogate
from qbo.algorithms.lengthscale.surrogates import BalancedSurrogate, FixedSurrogate, MLESurrogate, ScheduleSurrogate
from qbo.algorithms.staged import StagedPolicy, resolve_alpha
from qbo.gp.arms import ArmPosterior, ArmStack
from qbo.gp.cholesky import CholeskyArmPosterior
from qbo.gp.features import FeatureArmModel

__all__ = ["GPUCB", "GPUCBConfig", "GPUCBLockstep", "QGPUCB", "QGPUCBConfig"]


class _SurrogatePolicy(PolicyBase):
    """What GP-UCB and Q-GP-UCB share: the surrogate of the next round and its read-outs.

    ``surrogate`` (``qbo.algorithms.models.build_surrogate``) picks the model of each round:
    one fixed length scale, a schedule (A-GP-UCB), an MLE refit or LB-GP-UCB's balancing.
    """

    surrogate: Any

    @property
    def model(self):
        """The model of the next round (the one ``ask`` uses), chosen by ``surrogate``."""
        return self.surrogate.select(self.t + 1)

    @property
    def lengthscale(self) -> float:
        """Length scale of the next round's model."""
        return self.surrogate.lengthscale(self.t + 1)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """(posterior mean, posterior variance) at every arm: Dai et al. Eq. (3) for weighted
        observations, Srinivas et al. Eqs. (1)-(2) when every weight is 1."""
        return self.model.posterior()

    def recommend(self) -> int:
        """Arm with the highest posterior mean (lowest index on ties)."""
        return argmax_lowest(self.posterior()[0])

    @property
    def information_gain(self) -> float:
        """(Weighted) information gain 1/2 log det(I + K~/lambda) so far (Dai et al. Sec. 5.1,
        Srinivas et al. Eq. (3))."""
        return self.model.information_gain


@dataclass(frozen=True)
class QGPUCBConfig(GPModelConfig):
    """Configuration of ``q-gp-ucb`` (Dai et al. Alg. 1).

    ``budget``: T, the oracle-query budget (used for the lambda and m_bar defaults only; the
    runner applies the stopping rule of line 5).  ``delta`` in (0, 2/e] (Sec. 4.2).  ``lam``:
    None -> ``1 + 2/T`` (Thm 3) if ``budget`` is given, else 1.0.  ``beta``: ``"practical"``
    ``1 + ln s`` (App. J, default), ``"theory"`` ``B + sqrt(2(gamma~_{s-1} + 1 + ln(2/delta)))``
    (Sec. 4.2 / Thm 3), or a constant multiplier.  ``m_bar``: None -> ``default_m_bar`` (needs
    ``budget``), with ``noise_case`` "bounded" (Lemma 1a) or "variance" (Lemma 1b).  ``eps_min``:
    floor on eps_s; below it the policy reports ``exhausted``.
    """

    budget: int | None = None
    delta: float = 0.1
    lam: float | None = None
    beta: str | float = "practical"
    B: float = 1.0
    m_bar: int | None = None
    noise_case: str = "bounded"
    eps_min: float = 1e-6

    def __post_init__(self) -> None:
        self._validate_model()
        check_int_opt("budget", self.budget)
        check_float("delta", self.delta, low=0.0, high=2.0 / math.e)
        if self.lam is not None:
            check_float("lam", self.lam, low=0.0)
        check_beta(self.beta, ("practical", "theory"))
        check_float("B", self.B, low=0.0, low_open=False)
        check_int_opt("m_bar", self.m_bar)
        if self.noise_case not in NOISE_CASES:
            raise ValueError(f"noise_case must be one of {NOISE_CASES}, got {self.noise_case!r}")
        check_float("eps_min", self.eps_min, low=0.0)

    @property
    def lam_value(self) -> float:
        """Resolved lambda: ``lam``, else ``1 + 2/T`` (Dai et al. Thm 3), else 1.0."""
        if self.lam is not None:
            return float(self.lam)
        return 1.0 + 2.0 / self.budget if self.budget is not None else 1.0


class QGPUCB(_SurrogatePolicy, StagedPolicy):
    """Q-GP-UCB, Dai et al. 2023 Alg. 1; one ``ask`` / ``tell`` pair per stage s.

    ``ask`` (lines 2-3, 6): ``x_s = argmax mu~_{s-1} + beta_s sigma~_{s-1}`` (lowest index on
    ties), ``eps_s = max(sigma~_{s-1}(x_s)/sqrt(lam), eps_min)``, ``alpha = delta/(2 m_bar)``.
    ``tell`` (line 7): weighted-posterior update with weight ``1/eps^2``.  The runner computes
    N_{eps_s} and applies the stopping rule (lines 4-5).  ``exhausted`` is True when the raw
    eps_s < ``eps_min``: for sigma~ = 0 the paper's N_eps is infinite and Alg. 1 stops; a runner
    that wants to keep spending budget may continue at ``eps_min``.
    """

    name = "q-gp-ucb"

    def __init__(self, arms: np.ndarray, config: QGPUCBConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else QGPUCBConfig())
        self.lam = self.config.lam_value
        # sigma_N^2 for LB's xi_t: the stage noise lambda eps_s^2 <= k(x, x) = outputscale,
        # since eps_s = sigma~_{s-1}(x_s)/sqrt(lambda) (Dai et al. Alg. 1 line 3)
        self.surrogate = build_surrogate(self.config, self.arms, self.lam,
                                         float(self.config.outputscale), self.config.delta)
        self.m_bar, self.alpha = resolve_alpha(
            self.config.delta, self.config.budget, self.config.m_bar, self.model.feature_dim,
            self.model.max_feature_norm_sq, self.lam, self.config.noise_case)

    def beta(self, s: int) -> float:
        """UCB multiplier beta_s of stage ``s`` (1-based), Dai et al. Alg. 1 line 2."""
        b, cfg = self.config.beta, self.config
        if b == "practical":
            return practical(s)
        if b == "theory":
            return theory(self.model.information_gain, cfg.B, cfg.delta)
        return float(b)

    def _select(self) -> Query:
        score, sd = self.model.ucb(self.beta(self.t + 1))
        return self._stage_query(score, sd / math.sqrt(self.lam))

    def _update(self, arm: int, value: float, eps: float) -> None:
        s = self.t + 1
        self.surrogate.tell(s, arm, value, eps, self.beta(s))


@dataclass(frozen=True)
class GPUCBConfig(GPModelConfig):
    """Configuration of classical ``gp-ucb`` (Srinivas et al. 2010).

    ``noise``: observation-noise variance, used as lambda in Eq. (1) (default 0.25, the
    Bernoulli maximum; use sigma^2 for Gaussian noise).  ``beta``: ``"theorem1"`` (default)
    ``beta_t = 2 ln(m t^2 pi^2/(6 delta))`` (Thm 1) with multiplier ``sqrt(beta_t/beta_scale)``;
    ``"practical"`` multiplier ``1 + ln t`` (Dai et al. App. J); ``"bogunovic"``
    ``sqrt(0.8 ln(0.4 t))`` (the time-varying seed's choice, ``qbo.algorithms.beta``); or a constant multiplier of
    sigma (Dai et al. found sqrt(2) best on synthetic, 1 on AutoML).  ``beta_scale``: Srinivas
    Sec. 6 "scaled beta_t down by a factor 5"; it is ambiguous whether beta_t or beta_t^{1/2} was
    divided; we divide beta_t (the literal reading), so ``beta_scale=5`` shrinks the multiplier
    by sqrt(5); pass 25 for the other reading.  ``delta`` in (0, 1).
    """

    noise: float = 0.25
    delta: float = 0.1
    beta: str | float = "theorem1"
    beta_scale: float = 1.0

    def __post_init__(self) -> None:
        self._validate_model()
        check_float("noise", self.noise, low=0.0)
        check_float("delta", self.delta, low=0.0, high=1.0, high_open=True)
        check_beta(self.beta, ("theorem1", "practical", "bogunovic"))
        check_float("beta_scale", self.beta_scale, low=0.0)


class GPUCB(_SurrogatePolicy):
    """GP-UCB, Srinivas et al. 2010 Alg. 1: one classical sample per ``ask`` (epsilon=None).

    ``x_t = argmax mu_{t-1} + beta_t^{1/2} sigma_{t-1}`` (Eq. 6, lowest index on ties), with the
    posterior of Eq. (1)-(2) (``ArmPosterior`` with eps = 1 and lambda = ``noise``).
    """

    name = "gp-ucb"
    quantum = False

    def __init__(self, arms: np.ndarray, config: GPUCBConfig | None = None) -> None:
        super().__init__(arms, config if config is not None else GPUCBConfig())
        self.lam = float(self.config.noise)
        self.surrogate = build_surrogate(self.config, self.arms, self.lam, self.lam, self.config.delta)
        self._beta_at: tuple[int | None, float] = (None, 0.0)  # (round, beta) of the last call

    def beta(self, t: int) -> float:
        """Multiplier of sigma at round ``t`` (1-based); see ``GPUCBConfig``. The last value
        is kept: ask and tell of one round both need it."""
        if t == self._beta_at[0]:
            return self._beta_at[1]
        b, cfg = self.config.beta, self.config
        if not isinstance(b, str):
            value = float(b)
        elif b == "theorem1":
            value = theorem1(t, self.num_arms, cfg.delta, cfg.beta_scale)
        elif b == "practical":
            value = practical(t)
        else:
            value = bogunovic(t)
        self._beta_at = (t, value)
        return value

    def _select(self) -> Query:
        t = len(self._history) + 1
        score, _ = self.surrogate.select(t).ucb(self.beta(t))
        return self._sample_query(argmax_lowest(score))

    def _update(self, arm: int, value: float, eps: float) -> None:
        t = len(self._history) + 1
        self.surrogate.tell(t, arm, value, 1.0, self.beta(t))

    def stepper(self) -> Any:
        """This policy's rounds as one loop: compiled with a fixed length scale on the rank-one
        ``ArmPosterior`` (``qbo.algorithms.gp_ucb_kernel``), on the Cholesky posterior before
        its first observation (``qbo.algorithms.gp_ucb_cholesky``) or on random Fourier
        features (``qbo.algorithms.feature_kernel``); A-GP-UCB's schedule
        (``qbo.algorithms.gp_ucb_schedule``) and LB-GP-UCB on rank-one posteriors
        (``qbo.algorithms.gp_ucb_balanced``) and the MLE refits (``qbo.algorithms.gp_ucb_mle``)
        before their first observation; stepped in Python on any other surrogate (LB-GP-UCB on
        other posteriors: ``qbo.algorithms.gp_ucb_steps``)."""
        model = self.surrogate.model if type(self.surrogate) is FixedSurrogate else None
        if type(model) is ArmPosterior:
            from qbo.algorithms.gp_ucb_kernel import GPUCBStepper  # numba is imported where it is used

            return GPUCBStepper(self)
        if type(model) is CholeskyArmPosterior and model.n == 0:
            from qbo.algorithms.gp_ucb_cholesky import CholeskyStepper

            return CholeskyStepper(self)
        if type(model) is FeatureArmModel:
            from qbo.algorithms.feature_kernel import FeatureStepper

            return FeatureStepper(self, model, model.Phi, linear=False)
        if type(self.surrogate) is ScheduleSurrogate and self.surrogate.stats.n == 0:
            from qbo.algorithms.gp_ucb_schedule import ScheduleStepper

            return ScheduleStepper(self)
        if (type(self.surrogate) is BalancedSurrogate and self.surrogate.stats.n == 0
                and type(self.surrogate.models[0]) is ArmPosterior):
            from qbo.algorithms.gp_ucb_balanced import BalancedStepper

            return BalancedStepper(self)
        if type(self.surrogate) is MLESurrogate and self.surrogate.stats.n == 0:
            from qbo.algorithms.gp_ucb_mle import MLEStepper

            return MLEStepper(self)
        return SurrogateStepper(self)


class GPUCBLockstep:
    """Several ``gp-ucb`` policies (one per trial) asked and told together: ``ask`` returns
    every policy's next arm, ``tell`` gives each its sample, and their posteriors move as one
    ``qbo.gp.ArmStack``.  Every policy picks and records exactly what its own ``ask`` / ``tell``
    would (bit for bit), so a lockstep of B trials is B runs of Srinivas et al. Alg. 1 at a
    fraction of the numpy overhead of one call per sample.

    Build with ``GPUCBLockstep.of(policies)``: None unless the policies are distinct ``GPUCB`` s
    with a fixed length scale on the rank-one ``ArmPosterior``, all of one size, at one round
    and with no ask pending.
    """

    def __init__(self, policies: list[GPUCB]) -> None:
        self.policies = list(policies)
        self.stack = ArmStack([policy.surrogate.model for policy in policies])
        # beta_t depends on the config, t and m alone: one schedule serves policies of one config
        self._one_beta = all(policy.config == policies[0].config for policy in policies)

    @staticmethod
    def nbytes(num_arms: int) -> int:
        """Memory one policy adds to a lockstep (its share of the stacked posterior)."""
        return ArmStack.nbytes(1, num_arms)

    @classmethod
    def of(cls, policies: list[Any]) -> GPUCBLockstep | None:
        """A lockstep of ``policies``, or None where one of them cannot join (class docstring)."""
        if not policies or any(type(p) is not GPUCB or type(p.surrogate) is not FixedSurrogate
                               or type(p.surrogate.model) is not ArmPosterior or p._pending is not None
                               for p in policies):
            return None
        if len({(p.num_arms, p.t) for p in policies}) != 1 or len({id(p) for p in policies}) != len(policies):
            return None
        return cls(policies)

    def ask(self) -> list[int]:
        """Every policy's next arm (``GPUCB.ask``: Srinivas et al. Eq. (6), lowest index on ties)."""
        t = self.policies[0].t + 1
        if self._one_beta:
            beta: float | np.ndarray = self.policies[0].beta(t)
        else:
            beta = np.array([policy.beta(t) for policy in self.policies])[:, None]
        return self.stack.ucb(beta).argmax(axis=1).tolist()

    def tell(self, arms: list[int], values: list[float]) -> None:
        """Tell policy b its sample ``values[b]`` of arm ``arms[b]`` (``GPUCB.tell``)."""
        self.stack.add(arms, values)
        for policy, arm, value in zip(self.policies, arms, values):
            policy._told(arm, policy._sample_query(arm), float(value), None)
