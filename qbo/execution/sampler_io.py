"""What one Sampler job takes and gives back.

The client-side Sampler needs equal shots within one job, so a request with several shot
counts is one job per distinct count (``by_shots``: also the cost plan's job rule). A job's
result is one pub result per circuit, each with one classical register; its counts are
checked against what was asked (``checked``), never read from metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qbo.errors import HardwareError  # also a result that does not answer its request
from qbo.execution.base import Counts


def by_shots(shots: Sequence[int]) -> dict[int, list[int]]:
    """Indices of the circuits of each distinct shot count: one job each."""
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(shots):
        groups.setdefault(n, []).append(i)
    return groups


def counts_of(pub_result: Any, shots: int) -> Counts:
    """Counts of the (single) classical register of one pub result."""
    data = pub_result.data
    names = list(data.keys()) if hasattr(data, "keys") else list(vars(data))
    if len(names) != 1:
        raise HardwareError(f"expected one classical register in the result, got {len(names)}")
    bits = getattr(data, names[0])
    if bits.num_shots != shots:
        raise HardwareError(f"asked for {shots} shots, backend returned {bits.num_shots}")
    return {str(k): int(v) for k, v in bits.get_counts().items()}


def checked(counts: Sequence[Counts], circuits: int, shots: int) -> list[Counts]:
    """Check one Counts per circuit, each summing to ``shots``."""
    if len(counts) != circuits:
        raise HardwareError(f"asked for {circuits} results, got {len(counts)}")
    for c in counts:
        if sum(c.values()) != shots:
            raise HardwareError(f"asked for {shots} shots, got {sum(c.values())}")
    return [dict(c) for c in counts]


