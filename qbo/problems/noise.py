"""The reward-variance bound a problem declares, for classical learners' noise settings.

GP-UCB's lambda (Srinivas et al. Eq. (1)), GP-TS's and Gaussian Thompson sampling's noise
variance must bound the variance of the rewards the learner actually sees. For arms whose
reward reads the objective qubit (two values, ``low`` or ``high``: Bernoulli rewards), the
variance of arm i is (high - low)^2 a_i (1 - a_i), a_i its amplitude; over the range
[a_min, a_max] of the arms' amplitudes it is at most

    (high - low)^2 max_{a in [a_min, a_max]} a (1 - a)
      = (high - low)^2 (1/4 if a_min <= 1/2 <= a_max, else the larger endpoint value).

So arms squeezed into [0.99, 1] have variance <= 0.0099, not the Bernoulli worst case 1/4
(which applies when some arm's mean is unknown).
For outcome-register oracles (discretised Gaussian rewards) the bound is ``std^2`` of the
problem's noise option (the encoded variance is within discretisation error of it).
"""

from __future__ import annotations

import numpy as np

from qbo.problems.base import Problem

__all__ = ["bernoulli_variance_bound", "noise_variance_bound"]


def bernoulli_variance_bound(a_min: float, a_max: float) -> float:
    """max a (1 - a) over [a_min, a_max] (a subset of [0, 1])."""
    if not 0.0 <= a_min <= a_max <= 1.0:
        raise ValueError(f"need 0 <= a_min <= a_max <= 1, got [{a_min}, {a_max}]")
    if a_min <= 0.5 <= a_max:
        return 0.25
    return max(a_min * (1 - a_min), a_max * (1 - a_max))


def noise_variance_bound(problem: Problem, std: float | None = None) -> float:
    """The variance bound of ``problem``'s rewards (module docstring); ``std`` for
    outcome-register oracles (default: the problem's ``std`` option)."""
    if all(o.outcomes is None for o in problem.oracles):
        bound = 0.0
        for window in {(o.low, o.high) for o in problem.oracles}:
            arms = [o for o in problem.oracles if (o.low, o.high) == window]
            if any(o.mean is None for o in arms):  # unknown means: the worst case of the window
                a_min, a_max = 0.0, 1.0
            else:
                units = np.array([o.to_unit(o.mean) for o in arms], dtype=float)
                a_min, a_max = float(np.clip(units.min(), 0, 1)), float(np.clip(units.max(), 0, 1))
            bound = max(bound, (window[1] - window[0]) ** 2 * bernoulli_variance_bound(a_min, a_max))
        return bound
    s = std if std is not None else problem.options.get("std")
    if s is None:
        raise ValueError(f"problem {problem.name!r} has outcome-register rewards but no std to bound their variance")
    return float(s) ** 2
