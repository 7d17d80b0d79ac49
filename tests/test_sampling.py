"""qbo.sampling: the exact fast path draws what ExactExecutor.run would, sample for sample."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.execution.exact import ExactExecutor
from qbo.oracles import bernoulli, gaussian
from qbo.sampling import classical_sampler, classical_samples


class _General(ExactExecutor):
    """A subclass: takes the general (counts) path."""


def test_fast_path_equals_general_path():
    oracles = [bernoulli(a) for a in (0.0, 0.03, 0.5, 0.77, 1.0)] + [gaussian(0.3, 0.4, qubits=3)]
    fast, general = ExactExecutor(seed=5), _General(seed=5)
    for i in range(400):
        oracle = oracles[i % len(oracles)]
        shots = 1 if i % 7 else 13
        assert np.array_equal(classical_samples(fast, oracle, shots), classical_samples(general, oracle, shots))
    assert fast.rng.bit_generator.state == general.rng.bit_generator.state


def test_fast_path_checks_shots():
    with pytest.raises(ValueError, match="shots"):
        classical_samples(ExactExecutor(seed=0), bernoulli(0.5), 0)


def test_sampler_draws_what_classical_samples_draws():
    """``classical_sampler`` (one bound draw per stage; a binomial for two outcomes) gives the
    values and the generator states of ``classical_samples(executor, oracle, 1)``."""
    oracles = [bernoulli(a) for a in (0.0, 0.03, 0.5, 0.77, 1.0)] + [gaussian(0.3, 0.4, qubits=3)]
    for executor_type in (ExactExecutor, _General):
        bound, plain = executor_type(seed=11), executor_type(seed=11)
        draws = [classical_sampler(bound, oracle) for oracle in oracles]
        for i in range(600):
            k = (7 * i) % len(oracles)
            assert draws[k]() == float(classical_samples(plain, oracles[k], 1)[0])
            assert bound.rng.bit_generator.state == plain.rng.bit_generator.state
