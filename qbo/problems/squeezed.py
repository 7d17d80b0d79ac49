"""The synthetic Bernoulli problem with every mean squeezed into a narrow band.

``synthetic-bernoulli-centred``: f' = 1/2 + spread (f - 1/2), so the means lie in
[1/2 - spread/2, 1/2 + spread/2] and every gap shrinks by the factor ``spread``; f is the
paper's synthetic draw (``qbo.problems.synthetic``, min 0 and max 1 over the arms). Rewards
are Bernoulli with variance close to the maximum 1/4: small gaps *and* high variance, the
regime where classical learners need ~ var / gap^2 samples per arm and QMC ~ 1 / gap calls.

``synthetic-bernoulli-top``: f' = 1 - spread (1 - f), means in [1 - spread, 1], the
placement of the earlier frontier benchmark. Near 1 the Bernoulli variance is at most
spread (1 - spread), so classical learners configured with that bound need far fewer
samples; QMC is also cheaper there (the amplitude's slope in theta vanishes at 1).

At spread 1 both maps are the identity and both problems are f itself, bit for bit.
"""

from __future__ import annotations

from qbo.oracles import bernoulli
from qbo.problems.base import Problem
from qbo.problems.rewards import check_positive
from qbo.problems.synthetic import synthetic_function

__all__ = ["PLACEMENTS", "squeezed"]

PLACEMENTS = ("centred", "top")


def squeezed(
    placement: str = "centred", spread: float = 0.01, seed: int = 0, num_arms: int = 20, lengthscale: float = 0.1
) -> Problem:
    """Synthetic Bernoulli arms with means in a band of width ``spread`` (module docstring)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    spread = check_positive("spread", spread)
    if spread > 1:
        raise ValueError(f"spread must be in (0, 1], got {spread!r}")
    x, f = synthetic_function(seed, num_arms, lengthscale)
    if spread == 1.0:  # both maps are the identity: f itself, so the two placements are one problem bit for bit
        g = f
    else:
        g = 0.5 + spread * (f - 0.5) if placement == "centred" else 1.0 - spread * (1.0 - f)
    params = {"seed": seed, "num_arms": num_arms, "lengthscale": float(lengthscale), "spread": spread}
    return Problem.from_oracles(f"synthetic-bernoulli-{placement}", x[:, None], [bernoulli(float(v)) for v in g], params)
