"""Ask/tell bandit and BO policies over a finite arm set (pure numpy, no oracles).

* ``q-gp-ucb``: Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), Alg. 1.
* ``gp-ucb``: Srinivas et al. (ICML 2010), Alg. 1.
* ``q-linucb``: Dai et al. Sec. 5.6 / App. H (improved Q-LinUCB of Wan et al. 2023).
* ``linucb``: OFUL, Abbasi-Yadkori et al. (2011).

Build with ``make_policy(name, arms, **config)``; checkpoint with ``state_dict()`` and restore
with ``restore_policy(state, arms)``, which replays the recorded tells (policies are
deterministic given config + tells).
"""

from qbo.algorithms.base import Policy, PolicyBase, Query
from qbo.algorithms.gp_ucb import GPUCB, QGPUCB, GPUCBConfig, QGPUCBConfig
from qbo.algorithms.linucb import LinUCB, LinUCBConfig, QLinUCB, QLinUCBConfig
from qbo.algorithms.models import GPModelConfig, default_m_bar
from qbo.algorithms.registry import POLICIES, POLICY_NAMES, make_policy, restore_policy

__all__ = [
    "GPUCB",
    "POLICIES",
    "POLICY_NAMES",
    "QGPUCB",
    "GPModelConfig",
    "GPUCBConfig",
    "LinUCB",
    "LinUCBConfig",
    "Policy",
    "PolicyBase",
    "QGPUCBConfig",
    "QLinUCB",
    "QLinUCBConfig",
    "Query",
    "default_m_bar",
    "make_policy",
    "restore_policy",
]
