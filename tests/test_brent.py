"""qbo.brent's root finder (the minimiser is tested with the MLE search, tests/test_mle_search.py):
it never leaves its bracket and ends within its tolerance of the root, on functions with a
known root, compiled or not."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.brent import PROPOSED, ROOT, STATE_SIZE, zero_next, zero_start, zero_told


def _zero(f, a: float, b: float, tol: float) -> tuple[float, int]:
    state, evals = np.empty(STATE_SIZE), 0
    zero_start(state, a, f(a), b, f(b), tol)
    while zero_next(state):
        u = state[PROPOSED]
        assert min(a, b) <= u <= max(a, b)  # never outside the bracket
        zero_told(state, f(u))
        evals += 1
        assert evals < 200
    return state[ROOT], evals


@settings(deadline=None)  # the first call compiles
@given(st.floats(-5.0, 5.0), st.floats(0.01, 3.0), st.floats(0.01, 3.0), st.sampled_from([1, 3, 5]),
       st.booleans())
def test_root_of_a_monotone_function_within_tolerance(root, left, right, power, downhill):
    """f(x) = +-(x - r)^p (odd p: a sign change at r; p = 5 is flat there) on a bracket around r,
    from either end: within tol + 4 ulp of r."""
    sign = -1.0 if downhill else 1.0
    f = lambda x: sign * (x - root) ** power  # noqa: E731
    a, b = (root - left, root + right) if not downhill else (root + right, root - left)
    found, _ = _zero(f, a, b, 1e-12)
    slack = 1e-12 + 4 * 2.220446049250313e-16 * abs(root)
    if power == 1:
        assert abs(found - root) <= slack
    else:  # flat at r: |f| below rounding within (ulp)^(1/p) of r, the root is found to that
        assert abs(found - root) <= max(slack, 2 * 1e-15 ** (1.0 / power) * (1 + abs(root)))


def test_root_of_smooth_functions_fast():
    """Superlinear steps: known roots to 1e-15 in few evaluations (bisection alone would take ~50)."""
    for f, a, b, root in [(lambda x: math.cos(x) - x, 0.0, 1.0, 0.7390851332151607),
                          (lambda x: math.exp(x) - 2.0, 0.0, 2.0, math.log(2.0)),
                          (lambda x: x ** 3 - 2.0 * x - 5.0, 2.0, 3.0, 2.0945514815423265)]:
        found, evals = _zero(f, a, b, 1e-15)
        assert abs(found - root) <= 1e-15 + 8 * 2.220446049250313e-16 * root
        assert evals <= 15


def test_an_end_that_is_a_root_is_returned():
    found, evals = _zero(lambda x: x - 1.0, 1.0, 3.0, 1e-12)
    assert found == 1.0 and evals == 0
