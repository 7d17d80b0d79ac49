"""Finite-arm benchmark problems: a set of inputs (arms), each with a quantum reward oracle.

A :class:`Problem` is an immutable value: ``arms`` are the inputs a GP sees (m x d, in
[0, 1]^d), ``oracle(i)`` is the state preparation A of arm i, and ``means[i]`` is the exact
mean reward that this oracle encodes (``oracle.mean``, reward units). Regret is therefore
exact for what the circuit encodes: for a discretised Gaussian it is taken against the
discretised mean, not against the continuous f(x) the oracle approximates.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qbo.oracles.base import Oracle

ARM_TOL = 1e-12


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=float, copy=True)
    array.setflags(write=False)
    return array


def _as_arms(arms: Any) -> np.ndarray:
    """m x d float array in [0, 1]^d; a 1-D array is read as m arms of dimension 1."""
    try:
        a = np.array(arms, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"arms must be a numeric m x d array, got {type(arms).__name__}") from None
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"arms must be a non-empty m x d array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"arms must be finite, got non-finite values in rows {np.unique(np.nonzero(~np.isfinite(a))[0]).tolist()}")
    if a.min() < -ARM_TOL or a.max() > 1 + ARM_TOL:
        raise ValueError(f"arms must be normalised to [0, 1]^d, got range [{a.min()}, {a.max()}]")
    a = np.clip(a, 0.0, 1.0)
    _, first, counts = np.unique(a, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        row = int(first[np.argmax(counts > 1)])
        raise ValueError(f"arms must be distinct, got row {row} ({a[row].tolist()}) {int(counts.max())} times")
    return a


@dataclass(frozen=True, eq=False)
class Problem:
    """A finite-arm problem: m arms in [0, 1]^d, one oracle per arm.

    Construct with :meth:`from_oracles` or :meth:`from_factory` (or directly as
    ``Problem(name, arms, oracles)``); ``means`` is derived from the oracles.

    Attributes:
        name: a short label, e.g. ``"synthetic-gaussian"``.
        arms: read-only m x d array, the inputs the GP sees, normalised to [0, 1]^d.
        oracles: the m oracles, arm i's at position i.
        params: the options that built the problem, as sorted (key, value) pairs; for the
            built-in problems ``make_problem(p.name, **p.options)`` rebuilds ``p``. Not part of
            equality.
        means: read-only (m,) array, ``oracles[i].mean`` in reward units (derived); NaN where
            an oracle's exact mean is unknown (a user's black box): then ``known_means`` is
            False and regret, ``best`` and ``gaps`` are refused (runs report rewards instead).

    Problems are immutable and hashable: two problems are equal when their names, arms and
    oracle keys agree. ``copy.copy``/``copy.deepcopy`` return the object itself.
    """

    name: str
    arms: np.ndarray
    oracles: tuple[Oracle, ...]
    params: tuple[tuple[str, Any], ...] = ()
    means: np.ndarray = field(init=False)
    _hash: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"problem name must be a non-empty string, got {self.name!r}")
        arms = _readonly(_as_arms(self.arms))
        oracles = tuple(self.oracles)
        if len(oracles) != arms.shape[0]:
            raise ValueError(f"need one oracle per arm: {arms.shape[0]} arms, got {len(oracles)} oracles")
        means = np.empty(len(oracles))
        for i, oracle in enumerate(oracles):
            if not isinstance(oracle, Oracle):
                raise ValueError(f"oracle {i} must be an Oracle, got {type(oracle).__name__}")
            if oracle.mean is not None and not math.isfinite(oracle.mean):
                raise ValueError(f"oracle {i} ({oracle.key}) has a mean that is not finite: {oracle.mean}")
            means[i] = math.nan if oracle.mean is None else oracle.mean
        object.__setattr__(self, "arms", arms)
        object.__setattr__(self, "oracles", oracles)
        object.__setattr__(self, "params", tuple(sorted((str(k), v) for k, v in dict(self.params).items())))
        object.__setattr__(self, "means", _readonly(means))
        key = (self.name, arms.shape, arms.tobytes(), tuple(o.key for o in oracles))
        object.__setattr__(self, "_hash", hash(key))

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def from_oracles(
        cls, name: str, arms: Any, oracles: Sequence[Oracle], params: dict[str, Any] | None = None
    ) -> Problem:
        """A problem from explicit oracles, ``oracles[i]`` for ``arms[i]``."""
        if isinstance(oracles, Oracle) or not isinstance(oracles, Sequence):
            raise ValueError(f"oracles must be a sequence of Oracle, got {type(oracles).__name__}")
        return cls(name, arms, tuple(oracles), tuple((params or {}).items()))

    @classmethod
    def from_factory(
        cls,
        name: str,
        arms: Any,
        factory: Callable[[np.ndarray], Oracle],
        params: dict[str, Any] | None = None,
    ) -> Problem:
        """A problem whose arm i has oracle ``factory(arms[i])`` (called once per arm, eagerly:
        the means come from the oracles). ``factory`` receives a read-only row of length d."""
        if not callable(factory):
            raise ValueError(f"factory must be callable, got {type(factory).__name__}")
        a = _readonly(_as_arms(arms))
        return cls(name, a, tuple(factory(row) for row in a), tuple((params or {}).items()))

    # -- access -------------------------------------------------------------------------------

    def oracle(self, i: int) -> Oracle:
        """The oracle of arm i (the same object on every call)."""
        return self.oracles[self._index(i)]

    def regret(self, i: int) -> float:
        """Simple regret of arm i: ``best - means[i]`` (reward units, >= 0)."""
        return float(self.best - self.means[self._index(i)])

    @property
    def known_means(self) -> bool:
        """True when every arm's exact mean is known (regret is defined)."""
        return bool(np.isfinite(self.means).all())

    def _known(self) -> None:
        if not self.known_means:
            raise ValueError(f"problem {self.name!r}: exact means unknown, so regret is undefined")

    @property
    def num_arms(self) -> int:
        return int(self.arms.shape[0])

    @property
    def dim(self) -> int:
        return int(self.arms.shape[1])

    @property
    def best(self) -> float:
        """The largest mean reward."""
        self._known()
        return float(self.means.max())

    @property
    def best_arm(self) -> int:
        """The lowest index among the arms with the largest mean."""
        self._known()
        return int(np.argmax(self.means))

    @property
    def gaps(self) -> np.ndarray:
        """``best - means`` for every arm (read-only)."""
        return _readonly(self.best - self.means)

    @property
    def shared_window(self) -> tuple[float, float] | None:
        """The reward window (low, high) if every arm's oracle uses the same one, else None."""
        windows = {(o.low, o.high) for o in self.oracles}
        return windows.pop() if len(windows) == 1 else None

    @property
    def options(self) -> dict[str, Any]:
        """``params`` as a dict."""
        return dict(self.params)

    def _index(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < self.num_arms:
            raise ValueError(f"arm index must be an integer in [0, {self.num_arms - 1}], got {i!r}")
        return int(i)

    # -- value semantics ----------------------------------------------------------------------

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return (
            self._hash == other._hash
            and self.name == other.name
            and self.arms.shape == other.arms.shape
            and bool(np.array_equal(self.arms, other.arms))
            and all(a.key == b.key for a, b in zip(self.oracles, other.oracles))
        )

    def __copy__(self) -> Problem:
        return self

    def __deepcopy__(self, memo: dict) -> Problem:
        return self

    def __reduce__(self):
        # Rebuild through the constructor so the arrays come back read-only.
        return (type(self), (self.name, np.array(self.arms), self.oracles, self.params))

    def __repr__(self) -> str:
        if not self.known_means:
            return f"Problem({self.name!r}, arms={self.num_arms}x{self.dim}, means unknown, window={self.shared_window})"
        return (
            f"Problem({self.name!r}, arms={self.num_arms}x{self.dim}, best={self.best:.6g} "
            f"at arm {self.best_arm}, window={self.shared_window})"
        )
