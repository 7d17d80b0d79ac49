"""Build the oracle an oracle spec names (the grammar and value domain: ``qbo.oracle_specs``)."""

from __future__ import annotations

from qbo.oracle_specs import BernoulliSpec, DiscreteSpec, GaussianSpec, OracleSpec, QasmSpec, read_oracle_spec
from qbo.oracles.base import Oracle
from qbo.oracles.bernoulli import bernoulli
from qbo.oracles.circuit import from_circuit
from qbo.oracles.discrete import discrete
from qbo.oracles.gaussian import gaussian


def parse_oracle(spec: str) -> Oracle:
    """Build an oracle from its spec string; one-line ValueError on bad input."""
    return build_oracle(read_oracle_spec(spec))


def build_oracle(spec: OracleSpec) -> Oracle:
    """The oracle of a spec value read by ``read_oracle_spec``."""
    if isinstance(spec, BernoulliSpec):
        return bernoulli(spec.p)
    if isinstance(spec, GaussianSpec):
        return gaussian(spec.mean, spec.std, spec.qubits, spec.window)
    if isinstance(spec, DiscreteSpec):
        return discrete(spec.values, spec.probs)
    if isinstance(spec, QasmSpec):
        return from_circuit(spec.path, objective=spec.objective)
    raise TypeError(f"not an oracle spec: {type(spec).__name__}")
