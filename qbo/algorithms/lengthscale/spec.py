"""The ``lengthscale`` option of the GP policies: a number or a mode string.

Accepted values (Ziomek, Adachi & Osborne, "Bayesian Optimisation with Unknown
Hyperparameters: Regret Bounds Logarithmically Closer to Optimal", NeurIPS 2024):

* a float ``V`` or ``"fixed:V"`` -- a fixed length scale (the policies' old behaviour);
* ``"mle"`` / ``"mle:V"`` -- marginal-likelihood refit of the length scale (the paper's MLE
  baseline, Sec. 5); ``V`` is used until two distinct arms have been observed;
  ``"mle+outputscale"`` / ``"mle+outputscale:V"`` also fits the output scale;
* ``"lb"`` / ``"lb:THETA0"`` -- LB-GP-UCB, Algorithm 1, with initial (upper) length scale
  ``theta_0``;
* ``"a-gp-ucb"`` / ``"a-gp-ucb:THETA0"`` -- A-GP-UCB (Berkenkamp et al., JMLR 2019),
  ``theta_t = theta_0 / g(t)``.

``THETA0`` defaults to ``DEFAULT_THETA0`` = 1.0, the width of the normalised input domain
[0, 1]^d, an upper bound on any length scale the data can resolve (the paper assumes
``theta_0 >= theta*``, Sec. 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_THETA0", "LENGTHSCALE_MODES", "LengthscaleSpec", "parse_lengthscale"]

LENGTHSCALE_MODES: tuple[str, ...] = ("fixed", "mle", "mle+outputscale", "lb", "a-gp-ucb")
DEFAULT_THETA0 = 1.0
_FORMS = "a number > 0, 'fixed:V', 'mle[:V]', 'mle+outputscale[:V]', 'lb[:THETA0]' or 'a-gp-ucb[:THETA0]'"


@dataclass(frozen=True)
class LengthscaleSpec:
    """A parsed ``lengthscale`` option: ``mode`` in ``LENGTHSCALE_MODES`` and ``value``
    (the fixed length scale, MLE's initial one, or theta_0 for ``lb`` / ``a-gp-ucb``)."""

    mode: str
    value: float

    @property
    def adaptive(self) -> bool:
        """True for every mode except ``fixed``."""
        return self.mode != "fixed"

    @property
    def fit_outputscale(self) -> bool:
        """True for ``mle+outputscale``."""
        return self.mode == "mle+outputscale"


def _positive(text: Any, original: Any) -> float:
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"lengthscale must be {_FORMS}, got {original!r}") from None
    if isinstance(text, bool) or not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"lengthscale must be > 0, got {original!r}")
    return v


def parse_lengthscale(value: Any) -> LengthscaleSpec:
    """Parse a ``lengthscale`` option; a one-line ``ValueError`` naming the value if bad."""
    if not isinstance(value, str):
        return LengthscaleSpec("fixed", _positive(value, value))
    text = value.strip().lower()
    try:
        return LengthscaleSpec("fixed", _positive(float(text), value))
    except ValueError:
        pass
    mode, sep, rest = text.partition(":")
    if mode not in LENGTHSCALE_MODES:
        raise ValueError(f"lengthscale must be {_FORMS}, got {value!r}")
    if mode == "fixed" and not sep:
        raise ValueError(f"lengthscale 'fixed' needs a value, 'fixed:V', got {value!r}")
    if not sep:
        return LengthscaleSpec(mode, DEFAULT_THETA0 if mode in ("lb", "a-gp-ucb") else 0.2)
    return LengthscaleSpec(mode, _positive(rest, value))
