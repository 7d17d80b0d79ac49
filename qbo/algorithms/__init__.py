"""Ask/tell bandit and BO policies over a finite arm set (pure numpy, no oracles).

* ``q-gp-ucb``: Dai et al., "Quantum Bayesian Optimization" (NeurIPS 2023), Alg. 1.
* ``gp-ucb``: Srinivas et al. (ICML 2010), Alg. 1.
* ``q-linucb``: Dai et al. Sec. 5.6 / App. H (improved Q-LinUCB of Wan et al. 2023).
* ``linucb``: OFUL, Abbasi-Yadkori et al. (2011).
* ``tv-gp-ucb``, ``ctv-fixed``, ``ctv``, ``ctv-simple``: time-varying GP bandits with
  non-constant evaluation time (Imamura et al., seed 000; ``time_varying``).
* ``q-ctv-gp-ucb``: Q-GP-UCB inside the space x time kernel (``q_ctv_gp_ucb``).

The length-scale strategies of the GP policies (fixed, MLE, A-GP-UCB, LB-GP-UCB) are in
``qbo.algorithms.lengthscale``; every UCB multiplier schedule is in ``qbo.algorithms.beta``;
Alg. 1's ask (lines 2-3, 6), shared by the quantum policies, in ``qbo.algorithms.staged``.

Build with ``make_policy(name, arms, **config)``; checkpoint with ``state_dict()`` and restore
with ``restore_policy(state, arms)``, which replays the recorded tells (policies are
deterministic given config + tells).
"""

from qbo.algorithms.base import Policy, PolicyBase, Query
from qbo.algorithms.gp_ucb import GPUCB, QGPUCB, GPUCBConfig, QGPUCBConfig
from qbo.algorithms.linucb import LinUCB, LinUCBConfig, QLinUCB, QLinUCBConfig
from qbo.algorithms.models import GPModelConfig
from qbo.algorithms.q_ctv_gp_ucb import QCTVGPUCB, QCTVConfig
from qbo.algorithms.registry import POLICIES, POLICY_NAMES, is_quantum, make_policy, restore_policy
from qbo.algorithms.staged import StagedPolicy, default_m_bar
from qbo.algorithms.time_varying import CTV, TVGPUCB, CTVFixed, CTVSimple, TVConfig

__all__ = [
    "CTV",
    "CTVFixed",
    "CTVSimple",
    "QCTVConfig",
    "QCTVGPUCB",
    "StagedPolicy",
    "TVConfig",
    "TVGPUCB",
    "is_quantum",
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
