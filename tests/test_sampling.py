"""qbo.sampling: the exact fast path draws what ExactExecutor.run would, draw for draw."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.execution.exact import ExactExecutor
from qbo.oracles import bernoulli, gaussian
from qbo.sampling import classical_samples, multinomial_one


class _General(ExactExecutor):
    """A subclass: takes the general (counts) path."""


probabilities = st.lists(
    st.one_of(st.just(0.0), st.floats(1e-12, 1.0), st.floats(0.49, 0.51)), min_size=2, max_size=8
).filter(lambda p: sum(p) > 0)


@settings(max_examples=300, deadline=None)
@given(probabilities, st.integers(0, 2**63 - 1))
def test_multinomial_one_matches_numpy_draw_for_draw(p, seed):
    pvals = np.array(p) / sum(p)
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(20):
        assert multinomial_one(ours, tuple(float(x) for x in pvals)) == int(np.argmax(theirs.multinomial(1, pvals)))
    assert ours.bit_generator.state == theirs.bit_generator.state


def test_fast_path_equals_general_path():
    oracles = [bernoulli(a) for a in (0.0, 0.03, 0.5, 0.77, 1.0)] + [gaussian(0.3, 0.4, qubits=3)]
    fast, general = ExactExecutor(seed=5), _General(seed=5)
    for i in range(400):
        oracle = oracles[i % len(oracles)]
        shots = 1 if i % 7 else 13
        assert np.array_equal(classical_samples(fast, oracle, shots), classical_samples(general, oracle, shots))
    assert fast.rng.bit_generator.state == general.rng.bit_generator.state
