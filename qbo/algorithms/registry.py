"""The one policy registry: ``make_policy(name, arms, **config)`` and replay-based ``restore_policy``.

Every policy is registered once, under one name, as a ``PolicyEntry``: its ``PolicyBase``
subclass, its config dataclass (the options schema), a one-line summary (``qbo run --help``)
and its defaults on a problem (``PolicyEntry.defaults``, read off ``ProblemFacts``).
Problem-supplied constructor arguments (``PolicyBase.inputs``: e.g. the known evaluation times
of ``ctv-fixed``, or a cached Gram matrix) come in ``inputs``, apart from the config, and only
the ones a policy declares are passed on.

Defaults, following the Q-BO seed's App. J where it says (user options override all of them):

- the GP settings a problem's authors tuned (length scale, output scale, beta) are the
  problem's (``qbo.problems.registry.ProblemEntry.gp_defaults``);
- classical GP-UCB's and GP-TS's noise variance lambda is the variance bound of the problem
  actually run (``qbo.problems.noise``): std^2 for Gaussian rewards; Thompson sampling uses
  the known-variance Gaussian model for Gaussian rewards; KL-UCB and Thompson read rewards in
  the problem's window; Q-GP-UCB gets the budget T (for lambda = 1 + 2/T and m_bar) and the
  Lemma 1 noise case ('variance' for Gaussian rewards);
- on a drifting problem (Imamura et al. seed 000 Sec. 5) the time-varying policies forget at
  the generator's rate (eps = lambda) and assume its noise variance in a classical run, or
  ``(window width / 2)^2`` in a run with QMC stages; ``q-ctv-gp-ucb`` gets T and the
  stage-time model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

import numpy as np

from qbo.algorithms.base import PolicyBase
from qbo.algorithms.gp_ts import GPTS, GPTSConfig
from qbo.algorithms.gp_ucb import GPUCB, GPUCBConfig
from qbo.algorithms.kl_ucb import KLUCB, KLUCBConfig
from qbo.algorithms.linucb import LinUCB, LinUCBConfig, QLinUCB, QLinUCBConfig
from qbo.algorithms.q_ctv_gp_ucb import QCTVGPUCB, QCTVConfig
from qbo.algorithms.q_gp_ucb_resume import QGPUCBResumable, QGPUCBResumableConfig
from qbo.algorithms.q_se import QSE, QSEConfig
from qbo.algorithms.q_ucb_halve import QUCBHalve, QUCBHalveConfig
from qbo.algorithms.thompson import Thompson, ThompsonConfig
from qbo.algorithms.time_varying import CTV, TVGPUCB, CTVFixed, CTVSimple, TVConfig
from qbo.problems.base import Problem
from qbo.problems.drifting import TVProblem
from qbo.problems.noise import noise_variance_bound
from qbo.problems.registry import problem_entry

__all__ = ["POLICIES", "POLICY_NAMES", "PolicyEntry", "ProblemFacts", "is_quantum", "make_policy", "policy_entry",
           "restore_policy"]


@dataclass(frozen=True)
class ProblemFacts:
    """What a policy's defaults read off the problem it runs on."""

    problem: Problem | TVProblem
    budget: int
    staged: bool = False  # some policy of the run is quantum (a drifting problem then runs QMC stages)
    gp: Mapping[str, Any] = field(default_factory=dict)  # the problem's GP settings for this policy

    @property
    def drifting(self) -> bool:
        return isinstance(self.problem, TVProblem)

    @cached_property
    def gaussian(self) -> bool:
        """Gaussian rewards (an outcome register), else Bernoulli."""
        entry = problem_entry(self.problem.name)
        return (entry is not None and entry.gaussian) or self.problem.options.get("noise") == "gaussian"

    @property
    def std(self) -> float:
        entry = problem_entry(self.problem.name)
        return float(self.problem.options.get("std", entry.std if entry is not None else 0.1))

    @property
    def window(self) -> tuple[float, float]:
        return self.problem.shared_window or (0.0, 1.0)

    @property
    def noise(self) -> float:
        """The reward-variance bound a classical learner assumes (module docstring)."""
        if isinstance(self.problem, TVProblem):
            return (self.problem.stages.reward_range / 2.0) ** 2 if self.staged else self.problem.noise
        return self.std**2 if self.gaussian else noise_variance_bound(self.problem)


def _none(facts: ProblemFacts) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class PolicyEntry:
    """A registered policy: class, config dataclass (its options), summary and defaults."""

    policy: type[PolicyBase]
    config: type
    summary: str
    defaults: Callable[[ProblemFacts], dict[str, Any]] = _none
    lengthscale_modes: bool = False  # takes every length-scale mode (fixed, mle, lb, a-gp-ucb)

    @property
    def quantum(self) -> bool:
        """Stages run QMC (Alg. 1), else one classical sample per ask."""
        return bool(self.policy.quantum)

    @property
    def clocked(self) -> bool:
        """Time-varying: needs a drifting problem."""
        return bool(self.policy.clocked)

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self.config))

    def kind(self) -> str:
        return "quantum" if self.quantum else "classical"


def _q_gp_ucb(f: ProblemFacts) -> dict[str, Any]:
    return (dict(f.gp) | {"budget": f.budget, "reward_range": f.window[1] - f.window[0]}
            | ({"noise_case": "variance"} if not f.drifting and f.gaussian else {}))


def _gp_noise(f: ProblemFacts) -> dict[str, Any]:
    return dict(f.gp) | {"noise": f.noise}


def _static(rule: Callable[[ProblemFacts], dict[str, Any]]) -> Callable[[ProblemFacts], dict[str, Any]]:
    return lambda f: {} if f.drifting else rule(f)


def _budget(f: ProblemFacts) -> dict[str, Any]:
    return {"budget": f.budget}


def _halving(f: ProblemFacts) -> dict[str, Any]:
    return {"budget": f.budget, "reward_range": f.window[1] - f.window[0]}


def _window(f: ProblemFacts) -> dict[str, Any]:
    return {"low": f.window[0], "high": f.window[1]}


def _thompson(f: ProblemFacts) -> dict[str, Any]:
    return ({"prior": "gaussian", "noise": f.std**2} if f.gaussian else {}) | _window(f)


def _time_varying(f: ProblemFacts) -> dict[str, Any]:
    """A drifting problem's forgetting rate and noise. On a static one (``tv-gp-ucb`` only):
    nothing drifts, so nothing is forgotten (eps = 0), and the model is ``gp-ucb``'s (its SE
    kernel, the problem's GP settings, the classical noise bound); the beta stays the policy's."""
    if f.drifting:
        return {"eps": f.problem.lam, "noise": f.noise}
    return {"kernel": "se", "eps": 0.0} | dict(f.gp) | {"noise": f.noise}


def _q_ctv(f: ProblemFacts) -> dict[str, Any]:
    if not f.drifting:
        return {}
    st = f.problem.stages
    return {"eps": f.problem.lam, "budget": f.budget, "reward_range": st.reward_range, "overhead": st.overhead,
            "sec_per_call": st.sec_per_call}


_TV = "time-varying GP-UCB with non-constant evaluation time (Imamura et al., seed 000)"
POLICIES: dict[str, PolicyEntry] = {
    "q-gp-ucb": PolicyEntry(QGPUCBResumable, QGPUCBResumableConfig,  # resume=false: exactly QGPUCB
                            "Q-GP-UCB (Dai et al. 2023, Alg. 1)", _q_gp_ucb, lengthscale_modes=True),
    "gp-ucb": PolicyEntry(GPUCB, GPUCBConfig, "GP-UCB (Srinivas et al. 2010)", _gp_noise, lengthscale_modes=True),
    "q-linucb": PolicyEntry(QLinUCB, QLinUCBConfig, "Q-LinUCB (Dai et al. 2023, App. H)", _budget),
    "linucb": PolicyEntry(LinUCB, LinUCBConfig, "LinUCB / OFUL (Abbasi-Yadkori et al. 2011)"),
    "q-ucb-halve": PolicyEntry(QUCBHalve, QUCBHalveConfig, "per-arm UCB on resumed QMC (Wan et al. 2023)",
                               _static(_halving)),
    "q-se": PolicyEntry(QSE, QSEConfig, "successive elimination on resumed QMC", _static(_halving)),
    "thompson": PolicyEntry(Thompson, ThompsonConfig, "Thompson sampling, independent arms", _static(_thompson)),
    "kl-ucb": PolicyEntry(KLUCB, KLUCBConfig, "Bernoulli KL-UCB (Garivier & Cappe 2011)", _static(_window)),
    "gp-ts": PolicyEntry(GPTS, GPTSConfig, "GP Thompson sampling (Chowdhury & Gopalan 2017)", _static(_gp_noise)),
    "tv-gp-ucb": PolicyEntry(TVGPUCB, TVConfig, _TV + ", TV-GP-UCB", _time_varying),
    "ctv-fixed": PolicyEntry(CTVFixed, TVConfig, _TV + ", known evaluation times", _time_varying),
    "ctv": PolicyEntry(CTV, TVConfig, _TV + ", CTV-GP-UCB", _time_varying),
    "ctv-simple": PolicyEntry(CTVSimple, TVConfig, _TV + ", simplified CTV", _time_varying),
    "q-ctv-gp-ucb": PolicyEntry(QCTVGPUCB, QCTVConfig, "Q-GP-UCB in the space x time kernel", _q_ctv),
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICIES)


def policy_entry(name: str) -> PolicyEntry:
    """The entry of policy ``name``; one-line ValueError for an unknown name."""
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; expected one of {POLICY_NAMES}")
    return POLICIES[name]


def is_quantum(name: str) -> bool:
    """True for a policy whose stages run QMC (Alg. 1), False for one classical sample per ask."""
    return policy_entry(name).quantum


def make_policy(name: str, arms: np.ndarray, inputs: Mapping[str, Any] | None = None, **config: Any) -> PolicyBase:
    """Build policy ``name`` (one of ``POLICY_NAMES``) on ``arms`` (m x d) with config options.

    ``inputs``: problem-supplied constructor arguments; those the policy does not declare in
    ``inputs`` are ignored.  Unknown names and options raise a one-line ``ValueError``.
    """
    entry = policy_entry(name)
    cls, cfg_cls = entry.policy, entry.config
    valid = list(entry.options)
    unknown = [k for k in config if k not in valid]
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for policy {name!r}; valid: {valid}")
    extra = {k: v for k, v in (inputs or {}).items() if k in cls.inputs}
    return cls(arms, cfg_cls(**config), **extra)


def restore_policy(state: dict[str, Any], arms: np.ndarray, inputs: Mapping[str, Any] | None = None) -> PolicyBase:
    """Rebuild a policy from ``state_dict()`` by replaying its tells (exact, deterministic)."""
    policy = make_policy(state["name"], arms, inputs, **state["config"])
    if (policy.num_arms, policy.arms.shape[1]) != (state["num_arms"], state["dim"]):
        raise ValueError(
            f"arms shape {policy.arms.shape} does not match the checkpoint's "
            f"({state['num_arms']}, {state['dim']})"
        )
    policy.replay(state["history"])
    return policy
