"""Oracle specs (``bernoulli:0.3``, ``gaussian:mean=0.4,std=0.2``, ...) and the value domain
of the built-in oracles, checked without Qiskit.

Forms:
    bernoulli:P
    gaussian:mean=M,std=S[,qubits=N][,lo=L,hi=H]
    discrete:values=V1|V2|...,probs=P1|P2|...
    qasm:PATH[,objective=Q]

``read_oracle_spec`` checks the grammar and every value's domain and returns one of the spec
values below; ``qbo.oracles.parse_oracle`` builds the oracle a spec names. The builders
(``qbo.oracles.bernoulli``, ``gaussian``, ``discrete``) check their arguments with the same
functions, so a bad value is refused by one check, before Qiskit is imported: the CLI answers
a bad ``--oracle`` in a fraction of a second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from qbo.errors import BadInput

KINDS = ("bernoulli", "gaussian", "discrete", "qasm")
GAUSSIAN_QUBITS = (1, 12)  # qubits of a Gaussian oracle's outcome register, inclusive


def check_probability(name: str, value: float) -> float:
    """``value`` as a float in [0, 1]; one-line ValueError otherwise."""
    value = float(value)
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value}")
    return value


def default_window(std: float) -> tuple[float, float]:
    """Window shared by all arms whose mean lies in [0, 1]: (-4 std, 1 + 4 std)."""
    return (-4.0 * std, 1.0 + 4.0 * std)


def check_gaussian(
    mean: float, std: float, qubits: int, window: tuple[float, float] | None,
) -> tuple[float, float, int, tuple[float, float]]:
    """(mean, std, qubits, window) of a Gaussian oracle, the window defaulted; ValueError if out
    of domain: std finite > 0, mean finite, qubits an int in GAUSSIAN_QUBITS, mean inside the window."""
    mean, std = float(mean), float(std)
    if not (math.isfinite(std) and std > 0):
        raise ValueError(f"std must be a finite number > 0, got {std}")
    if not math.isfinite(mean):
        raise ValueError(f"mean must be finite, got {mean}")
    low_q, high_q = GAUSSIAN_QUBITS
    if not (isinstance(qubits, int) and low_q <= qubits <= high_q):
        raise ValueError(f"qubits must be an integer in [{low_q}, {high_q}], got {qubits}")
    lo, hi = window if window is not None else default_window(std)
    if not lo < mean < hi:
        raise ValueError(f"window ({lo}, {hi}) must contain the mean, got {mean}")
    return mean, std, qubits, (lo, hi)


def check_discrete(
    values: Sequence[float], probs: Sequence[float], window: tuple[float, float] | None,
) -> tuple[list[float], list[float], tuple[float, float]]:
    """(values, probs, window) of a discrete oracle as float lists, the window defaulted to
    (min(0, min values), max(1, max values)); ValueError if out of domain."""
    v = [float(x) for x in values]
    p = [float(x) for x in probs]
    if not v or len(v) != len(p):
        raise ValueError(f"values and probs must be non-empty and equally long, got {len(v)} and {len(p)}")
    if not all(math.isfinite(x) for x in v + p):
        raise ValueError("values and probs must be finite numbers")
    if any(x < 0 for x in p):
        raise ValueError(f"probs must be >= 0, got {p}")
    total = math.fsum(p)
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"probs must sum to 1, got sum {total:.6g}")
    low, high = window if window is not None else (min(0.0, min(v)), max(1.0, max(v)))
    if min(v) < low - 1e-12 or max(v) > high + 1e-12:
        raise ValueError(f"window ({low}, {high}) must contain every value, got range [{min(v)}, {max(v)}]")
    return v, p, (float(low), float(high))



@dataclass(frozen=True)
class BernoulliSpec:
    p: float


@dataclass(frozen=True)
class GaussianSpec:
    mean: float
    std: float
    qubits: int
    window: tuple[float, float] | None  # None: the default window, as the builder derives it


@dataclass(frozen=True)
class DiscreteSpec:
    values: tuple[float, ...]
    probs: tuple[float, ...]


@dataclass(frozen=True)
class QasmSpec:
    path: str
    objective: int


OracleSpec = Union[BernoulliSpec, GaussianSpec, DiscreteSpec, QasmSpec]


def read_oracle_spec(spec: str) -> OracleSpec:
    """The spec value ``spec`` names, its values in domain; one-line ValueError otherwise."""
    kind, sep, body = spec.partition(":")
    if not sep or kind not in KINDS:
        raise ValueError(f"oracle spec must start with one of {', '.join(k + ':' for k in KINDS)} got '{spec}'")
    if kind == "bernoulli":
        return BernoulliSpec(check_probability("p", _number(body, "bernoulli p")))
    if kind == "qasm":
        path, _, rest = body.partition(",")
        opts = _options(rest, {"objective"}) if rest else {}
        return QasmSpec(path, _integer(opts.get("objective", "0"), "objective"))
    opts = _options(body, {"mean", "std", "qubits", "lo", "hi"} if kind == "gaussian" else {"values", "probs"})
    if kind == "gaussian":
        return _gaussian(opts)
    values, probs = _numbers(opts.get("values"), "values"), _numbers(opts.get("probs"), "probs")
    check_discrete(values, probs, None)
    return DiscreteSpec(tuple(values), tuple(probs))


def _gaussian(opts: dict[str, str]) -> GaussianSpec:
    if "mean" not in opts or "std" not in opts:
        raise ValueError(f"gaussian spec needs mean= and std=, got {sorted(opts)}")
    window = None
    if "lo" in opts or "hi" in opts:
        window = (_number(opts.get("lo"), "lo"), _number(opts.get("hi"), "hi"))
    qubits = _integer(opts.get("qubits", "6"), "qubits")
    mean, std = _number(opts["mean"], "mean"), _number(opts["std"], "std")
    check_gaussian(mean, std, qubits, window)
    return GaussianSpec(mean, std, qubits, window)


def _options(body: str, allowed: set[str]) -> dict[str, str]:
    opts: dict[str, str] = {}
    for item in filter(None, body.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in allowed:
            raise ValueError(f"unknown oracle option '{item}', expected key=value with key in {sorted(allowed)}")
        opts[key.strip()] = value.strip()
    return opts


def _number(text: str | None, name: str) -> float:
    """A finite number (``nan``, ``inf`` and overflowing literals are refused)."""
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BadInput(f"{name} must be a number, got '{str(text)[:60]}'") from None
    if not math.isfinite(value):
        raise BadInput(f"{name} must be a finite number, got '{str(text)[:60]}'")
    return value


def _integer(text: str | None, name: str) -> int:
    """A whole number written as such (``3``, not ``3.5``, ``inf`` or ``1e400``)."""
    try:
        return int(str(text).strip())
    except ValueError:
        raise BadInput(f"{name} must be an integer, got '{str(text)[:60]}'") from None


def _numbers(text: str | None, name: str) -> list[float]:
    if not text:
        raise ValueError(f"discrete spec needs {name}=V1|V2|..., got nothing")
    return [_number(t, name) for t in text.split("|")]
