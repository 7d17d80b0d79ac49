"""qbo.sampling: the exact fast path draws what ExactExecutor.run would, sample for sample."""

from __future__ import annotations

import numpy as np
import pytest

from qbo.execution.exact import ExactExecutor
from qbo.oracles import bernoulli, gaussian
from qbo.sampling import classical_samples


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
