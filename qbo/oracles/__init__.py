"""Quantum reward oracles: state preparations A with P(objective = 1) = E[y] in [0, 1]."""

from qbo.oracles.accepted import as_oracle
from qbo.oracles.base import Oracle
from qbo.oracles.bernoulli import bernoulli
from qbo.oracles.circuit import from_circuit, load_qasm3
from qbo.oracles.discrete import discrete
from qbo.oracles.gaussian import default_window, gaussian
from qbo.oracles.spec import parse_oracle

__all__ = [
    "Oracle", "as_oracle", "bernoulli", "default_window", "discrete", "from_circuit", "gaussian",
    "load_qasm3", "parse_oracle",
]
