"""qbo's weight-bounded LRU (``qbo.caches.lru_by_weight``) and the power-circuit cache it bounds.

A run to 1e7 calls asks for Grover powers in the thousands; with a count-bounded cache of
4,096 circuits a Dask worker of the frontier grid grew past 11 GB and was killed (issue 23).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from qbo import caches
from qbo.grover import CACHED_INSTRUCTIONS, power_circuit
from qbo.oracles import bernoulli


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=60), st.integers(1, 60))
def test_results_are_the_function_s_and_the_weight_held_stays_bounded(keys, limit):
    calls: list[int] = []

    def square(x: int) -> tuple[int, ...]:
        calls.append(x)
        return (x * x,) * x  # weight x

    cached = caches.lru_by_weight(limit, len)(square)
    cache = caches._REGISTRY[f"{square.__module__}.{square.__qualname__}"]
    cache.cache_clear()
    for x in keys:
        assert cached(x) == square(x)
        assert cache.held <= limit
        assert cache.held == sum(w for _, w in cache._entries.values())
    distinct_light = [x for x in dict.fromkeys(keys) if x <= limit]
    if sum(distinct_light) <= limit:  # everything fits: each light key computed once by the cache
        assert all(calls.count(x) == keys.count(x) + 1 for x in distinct_light)


def test_the_power_circuit_cache_weighs_circuits_by_their_instructions():
    """The bound is the property above; here: the real cache is the weighted one, its budget
    CACHED_INSTRUCTIONS, each circuit weighing its instructions (so k = 1000 weighs ~1000x k = 0)."""
    oracle = bernoulli(0.3)
    caches.clear("qbo.grover.power_circuit")
    cache = caches._REGISTRY["qbo.grover.power_circuit"]
    assert cache.max_weight == CACHED_INSTRUCTIONS
    circuits = [power_circuit(oracle, k) for k in (0, 10, 1000)]
    assert cache.held == sum(len(c.data) for c in circuits) and len(circuits[2].data) > 900 * len(circuits[0].data)
    assert power_circuit(oracle, 1000) is circuits[2]
    caches.clear("qbo.grover.power_circuit")
