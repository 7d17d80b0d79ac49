"""The one policy registry: ``make_policy(name, arms, **config)`` and replay-based ``restore_policy``.

Every policy is registered once, under one name, as a ``PolicyBase`` subclass and its config
dataclass.  Problem-supplied constructor arguments (``PolicyBase.inputs``: e.g. the known
evaluation times of ``ctv-fixed``, or a cached Gram matrix) come in ``inputs``, apart from
the config, and only the ones a policy declares are passed on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
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

__all__ = ["POLICIES", "POLICY_NAMES", "is_quantum", "make_policy", "restore_policy"]

POLICIES: dict[str, tuple[type[PolicyBase], type]] = {
    "q-gp-ucb": (QGPUCBResumable, QGPUCBResumableConfig),  # resume=false: exactly QGPUCB
    "gp-ucb": (GPUCB, GPUCBConfig),
    "q-linucb": (QLinUCB, QLinUCBConfig),
    "linucb": (LinUCB, LinUCBConfig),
    "q-ucb-halve": (QUCBHalve, QUCBHalveConfig),
    "q-se": (QSE, QSEConfig),
    "thompson": (Thompson, ThompsonConfig),
    "kl-ucb": (KLUCB, KLUCBConfig),
    "gp-ts": (GPTS, GPTSConfig),
    "tv-gp-ucb": (TVGPUCB, TVConfig),
    "ctv-fixed": (CTVFixed, TVConfig),
    "ctv": (CTV, TVConfig),
    "ctv-simple": (CTVSimple, TVConfig),
    "q-ctv-gp-ucb": (QCTVGPUCB, QCTVConfig),
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICIES)


def _entry(name: str) -> tuple[type[PolicyBase], type]:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; expected one of {POLICY_NAMES}")
    return POLICIES[name]


def is_quantum(name: str) -> bool:
    """True for a policy whose stages run QMC (Alg. 1), False for one classical sample per ask."""
    return bool(_entry(name)[0].quantum)


def make_policy(name: str, arms: np.ndarray, inputs: Mapping[str, Any] | None = None, **config: Any) -> PolicyBase:
    """Build policy ``name`` (one of ``POLICY_NAMES``) on ``arms`` (m x d) with config options.

    ``inputs``: problem-supplied constructor arguments; those the policy does not declare in
    ``inputs`` are ignored.  Unknown names and options raise a one-line ``ValueError``.
    """
    cls, cfg_cls = _entry(name)
    valid = [f.name for f in fields(cfg_cls)]
    unknown = [k for k in config if k not in valid]
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for policy {name!r}; valid: {valid}")
    extra = {k: v for k, v in (inputs or {}).items() if k in getattr(cls, "inputs", ())}
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
