"""A user's own problem for `qbo run` (docs/runs.md, "Your own problem").

`experiment.toml` beside this file names it as ``problem = "my_problem:make"``. qbo calls
``make(seed=SEED, **problem_options)`` once per trial and expects the arm features (m x d in
[0, 1]^d) and one oracle per arm. These oracles are black boxes: a two-qubit circuit whose
objective qubit's P(1) is the reward, with no exact mean given (``mean=None``), so the run
reports rewards and the best arm found instead of regret. Give ``Oracle(..., mean=m)`` (or
use ``qbo.oracles.bernoulli(p)``) and the same run reports regret.
"""

import math

import numpy as np
from qiskit import QuantumCircuit

from qbo.oracles.base import Oracle


def make(seed: int, arms: int = 16):
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, arms)
    peak = rng.uniform(0.3, 0.7)  # where the good settings are, drawn per trial
    oracles = []
    for i, xi in enumerate(x):
        circuit = QuantumCircuit(2, name="A")
        circuit.ry(math.pi * (0.2 + 0.6 * math.exp(-((xi - peak) ** 2) / 0.02)), 0)
        circuit.ry(math.pi * xi / 4, 1)
        circuit.cx(1, 0)  # the objective qubit's P(1) mixes both rotations: not given to qbo
        oracles.append(Oracle(circuit, objective=0, spec=f"my_problem:{seed}:{i}"))
    return x[:, None], oracles
