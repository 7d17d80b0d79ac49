"""Parse oracle specs such as ``bernoulli:0.3`` or ``gaussian:mean=0.4,std=0.2``.

Forms:
    bernoulli:P
    gaussian:mean=M,std=S[,qubits=N][,lo=L,hi=H]
    discrete:values=V1|V2|...,probs=P1|P2|...
    qasm:PATH[,objective=Q]
"""

from __future__ import annotations

import math

from qbo.errors import BadInput
from qbo.oracles.base import Oracle
from qbo.oracles.bernoulli import bernoulli
from qbo.oracles.circuit import from_circuit
from qbo.oracles.discrete import discrete
from qbo.oracles.gaussian import gaussian

KINDS = ("bernoulli", "gaussian", "discrete", "qasm")


def parse_oracle(spec: str) -> Oracle:
    """Build an oracle from its spec string; one-line ValueError on bad input."""
    kind, sep, body = spec.partition(":")
    if not sep or kind not in KINDS:
        raise ValueError(f"oracle spec must start with one of {', '.join(k + ':' for k in KINDS)} got '{spec}'")
    if kind == "bernoulli":
        return bernoulli(_number(body, "bernoulli p"))
    if kind == "qasm":
        path, _, rest = body.partition(",")
        opts = _options(rest, {"objective"}) if rest else {}
        return from_circuit(path, objective=_integer(opts.get("objective", "0"), "objective"))
    opts = _options(body, {"mean", "std", "qubits", "lo", "hi"} if kind == "gaussian" else {"values", "probs"})
    if kind == "gaussian":
        return _gaussian(opts)
    return discrete(_numbers(opts.get("values"), "values"), _numbers(opts.get("probs"), "probs"))


def _gaussian(opts: dict[str, str]) -> Oracle:
    if "mean" not in opts or "std" not in opts:
        raise ValueError(f"gaussian spec needs mean= and std=, got {sorted(opts)}")
    window = None
    if "lo" in opts or "hi" in opts:
        window = (_number(opts.get("lo"), "lo"), _number(opts.get("hi"), "hi"))
    qubits = _integer(opts.get("qubits", "6"), "qubits")
    return gaussian(_number(opts["mean"], "mean"), _number(opts["std"], "std"), qubits, window)


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
