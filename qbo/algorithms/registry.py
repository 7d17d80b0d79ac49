"""Policy registry: ``make_policy(name, arms, **config)`` and replay-based ``restore_policy``."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from qbo.algorithms.base import PolicyBase
from qbo.algorithms.gp_ts import GPTS, GPTSConfig
from qbo.algorithms.gp_ucb import GPUCB, GPUCBConfig
from qbo.algorithms.kl_ucb import KLUCB, KLUCBConfig
from qbo.algorithms.linucb import LinUCB, LinUCBConfig, QLinUCB, QLinUCBConfig
from qbo.algorithms.q_gp_ucb_resume import QGPUCBResumable, QGPUCBResumableConfig
from qbo.algorithms.q_se import QSE, QSEConfig
from qbo.algorithms.q_ucb_halve import QUCBHalve, QUCBHalveConfig
from qbo.algorithms.thompson import Thompson, ThompsonConfig

__all__ = ["POLICIES", "POLICY_NAMES", "make_policy", "restore_policy"]

POLICIES: dict[str, tuple[type, type]] = {
    "q-gp-ucb": (QGPUCBResumable, QGPUCBResumableConfig),  # resume=false: exactly QGPUCB
    "gp-ucb": (GPUCB, GPUCBConfig),
    "q-linucb": (QLinUCB, QLinUCBConfig),
    "linucb": (LinUCB, LinUCBConfig),
    "q-ucb-halve": (QUCBHalve, QUCBHalveConfig),
    "q-se": (QSE, QSEConfig),
    "thompson": (Thompson, ThompsonConfig),
    "kl-ucb": (KLUCB, KLUCBConfig),
    "gp-ts": (GPTS, GPTSConfig),
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICIES)


def make_policy(name: str, arms: np.ndarray, **config: Any) -> PolicyBase:
    """Build policy ``name`` (one of ``POLICY_NAMES``) on ``arms`` (m x d) with config options.

    Unknown names and options raise a one-line ``ValueError`` naming them.
    """
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; expected one of {POLICY_NAMES}")
    cls, cfg_cls = POLICIES[name]
    valid = [f.name for f in fields(cfg_cls)]
    unknown = [k for k in config if k not in valid]
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for policy {name!r}; valid: {valid}")
    return cls(arms, cfg_cls(**config))


def restore_policy(state: dict[str, Any], arms: np.ndarray) -> PolicyBase:
    """Rebuild a policy from ``state_dict()`` by replaying its tells (exact, deterministic)."""
    policy = make_policy(state["name"], arms, **state["config"])
    if (policy.num_arms, policy.arms.shape[1]) != (state["num_arms"], state["dim"]):
        raise ValueError(
            f"arms shape {policy.arms.shape} does not match the checkpoint's "
            f"({state['num_arms']}, {state['dim']})"
        )
    policy.replay(state["history"])
    return policy
