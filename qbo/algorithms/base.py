"""Common ask/tell types for bandit / BO policies over a finite arm set.

A policy never touches an oracle.  The experiment runner loop is

    q = policy.ask()                        # Query(arm, epsilon, alpha, horizon)
    value = measure(arms[q.arm], q)         # QMC estimate (quantum) or one sample (classical)
    policy.tell(q, value, epsilon=eps_used, elapsed=t, calls=n)

``epsilon`` defaults to ``q.epsilon``.  ``elapsed`` (the stage's duration on the run's clock)
and ``calls`` (its honest oracle calls) matter only to *clocked* policies, the time-varying
ones of Imamura et al. (seed 000); every other policy ignores them.

Checkpointing is by **replay**: every policy is a deterministic function of its config and
the sequence of ``tell`` calls (``ask`` is side-effect free and idempotent; RFF features are
seeded from the config).  ``state_dict()`` returns ``{"name", "config", "num_arms", "dim",
"history"}`` (JSON-able), and ``qbo.algorithms.restore_policy(state, arms)`` rebuilds the policy
and replays the history, which reproduces the state exactly.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from qbo.gp.kernels import as_points

__all__ = ["Query", "Policy", "PolicyBase", "check_float", "check_int_opt", "argmax_lowest"]


@dataclass(frozen=True)
class Query:
    """One stage / round of a policy.

    ``arm``: index into the arms array.  ``epsilon``: target QMC half-width in reward units, or
    None for one classical sample.  ``alpha``: QMC failure probability for this stage (None for
    classical queries).  ``resume``: for resumable policies, the arm's
    ``qbo.qmc.resumable.ArmState`` (an ``LRState`` or a ``ResumableState``); the stage loop refines it to ``epsilon`` and tells
    the policy the query with ``resume`` replaced by the refined state (None: a fresh QMC).
    ``horizon``: the evaluation time a time-aware acquisition assumed (seed 000 Eqs. (3)-(5));
    None where it assumed none.
    """

    arm: int
    epsilon: float | None
    alpha: float | None
    resume: Any = None
    horizon: float | None = None


@runtime_checkable
class Policy(Protocol):
    """Ask/tell policy; deterministic given its config and the history of tells."""

    name: str

    def ask(self) -> Query: ...

    def tell(self, query: Query, value: float, epsilon: float | None = None, *,
             elapsed: float | None = None, calls: int | None = None) -> None: ...

    def state_dict(self) -> dict: ...


def check_float(
    name: str, value: Any, *, low: float | None = None, high: float | None = None,
    low_open: bool = True, high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float inside the given bounds, else a one-line ValueError.

    A Python float skips the conversion (policies check one value per classical sample)."""
    if type(value) is float:
        v = value
    else:
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(v) or isinstance(value, bool):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name} must be {'<' if high_open else '<='} {high}, got {value!r}")
    return v


def check_int_opt(name: str, value: Any, low: int = 1) -> int | None:
    """``None`` or an integer ``>= low``, else a one-line ValueError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low} or None, got {value!r}")
    return int(value)


def argmax_lowest(scores: np.ndarray) -> int:
    """Index of the maximum, ties broken by the lowest index (deterministic)."""
    return int(scores.argmax() if isinstance(scores, np.ndarray) else np.argmax(scores))


def _plain(x: Any) -> Any:
    """numpy scalars -> Python scalars, so that ``state_dict`` is JSON-able."""
    return x.item() if isinstance(x, np.generic) else x


class PolicyBase:
    """History bookkeeping, tell validation and ``state_dict`` shared by all policies.

    Subclasses set ``name``, ``config`` (a frozen dataclass), ``quantum`` and implement
    ``_select() -> Query`` (pure) and ``_update(arm, value, eps)``; a *clocked* policy
    (``clocked = True``, the time-varying ones) implements ``_update_clocked(arm, value, eps,
    elapsed, calls)`` instead and needs ``elapsed`` on every tell.  ``inputs`` names the
    keyword arguments the constructor takes from the problem (not from the config), e.g. the
    known evaluation times of ``ctv-fixed``.
    """

    name: str = ""
    quantum: bool = False
    clocked: bool = False
    resumes: bool = False  # asks with Query.resume: continues per-arm QMC states (qbo.qmc.resumable)
    inputs: tuple[str, ...] = ()

    def __init__(self, arms: np.ndarray, config: Any) -> None:
        self.arms = as_points(arms, "arms").copy()
        self.config = config
        self._history: list[dict[str, Any]] = []
        self._pending: Query | None = None
        self._sample_queries: dict[int, Query] = {}

    @property
    def num_arms(self) -> int:
        """Number of arms m."""
        return self.arms.shape[0]

    @property
    def t(self) -> int:
        """Number of tells so far (stages for quantum policies, samples for classical ones)."""
        return len(self._history)

    def ask(self) -> Query:
        """Next query; side-effect free and cached until the next ``tell``."""
        if self._pending is None:
            self._pending = self._select()
        return self._pending

    def tell(self, query: Query, value: float, epsilon: float | None = None, *,
             elapsed: float | None = None, calls: int | None = None) -> None:
        """Record ``value`` for ``query``; weight ``1/epsilon^2`` (default ``query.epsilon``).

        ``elapsed`` / ``calls``: the stage's duration and honest oracle calls (clocked
        policies only; the others ignore them)."""
        arm = self._check_arm(query.arm)
        v = check_float("value", value)
        eps = self._used_eps(query, epsilon)
        if self.clocked:
            if elapsed is None:
                raise ValueError(f"{self.name} is time-varying: tell needs the stage's elapsed time, got None")
            self._update_clocked(arm, v, eps, check_float("elapsed", elapsed, low=0.0, low_open=False), calls)
            self._told(arm, query, v, epsilon, {"elapsed": float(elapsed), "calls": None if calls is None else int(calls)})
        else:
            self._update(arm, v, eps)
            self._told(arm, query, v, epsilon)

    def _told(self, arm: int, query: Query, value: float, epsilon: float | None,
              clocked: dict[str, Any] | None = None) -> None:
        """The history entry of a tell whose update is done (``tell``; a lockstep of several
        policies updates their models together, then records each tell here)."""
        q_eps, q_alpha = query.epsilon, query.alpha
        entry = {"arm": arm, "epsilon": None if q_eps is None else float(q_eps),
                 "alpha": None if q_alpha is None else float(q_alpha), "value": value,
                 "used_epsilon": None if epsilon is None else float(epsilon)}
        if clocked is not None:
            entry |= clocked
        self._history.append(entry)
        self._pending = None

    def _sample_query(self, arm: int) -> Query:
        """``Query(arm, None, None)``, one classical sample of ``arm`` (frozen: one per arm)."""
        query = self._sample_queries.get(arm)
        if query is None:
            query = self._sample_queries[arm] = Query(arm, None, None)
        return query

    def _used_eps(self, query: Query, epsilon: float | None) -> float:
        if not self.quantum:
            bad = epsilon if epsilon is not None else query.epsilon
            if bad is not None:
                raise ValueError(f"{self.name} is classical: epsilon must be None, got {bad!r}")
            return 1.0
        e = query.epsilon if epsilon is None else epsilon
        if e is None:
            raise ValueError(f"{self.name} needs an epsilon to weight the observation, got None")
        return check_float("epsilon", e, low=0.0)

    def _check_arm(self, arm: Any) -> int:
        if type(arm) is int and 0 <= arm < self.arms.shape[0]:
            return arm
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)):
            raise ValueError(f"query.arm must be an integer index, got {arm!r}")
        if not 0 <= int(arm) < self.num_arms:
            raise ValueError(f"query.arm must be in [0, {self.num_arms}), got {arm!r}")
        return int(arm)

    def state_dict(self) -> dict:
        """JSON-able state for checkpoints; restore with ``restore_policy`` (replays tells)."""
        return {
            "name": self.name,
            "config": {k: _plain(v) for k, v in asdict(self.config).items()},
            "num_arms": self.num_arms,
            "dim": self.arms.shape[1],
            "history": [dict(h) for h in self._history],
        }

    def stepper(self) -> Any:
        """This policy's rounds as one compiled loop (a ``qbo.algorithms.compiled.Stepper``),
        or None where it has none (the default)."""
        return None

    def replay(self, history: list[dict[str, Any]]) -> None:
        """Re-apply a recorded list of tells (from ``state_dict()["history"]``)."""
        for h in history:
            q = Query(int(h["arm"]), h["epsilon"], h["alpha"])
            self.tell(q, h["value"], h.get("used_epsilon"), elapsed=h.get("elapsed"), calls=h.get("calls"))

    # subclass hooks --------------------------------------------------------
    def _select(self) -> Query:  # pragma: no cover - abstract
        raise NotImplementedError

    def _update(self, arm: int, value: float, eps: float) -> None:  # pragma: no cover
        raise NotImplementedError

    def _update_clocked(self, arm: int, value: float, eps: float, elapsed: float,
                        calls: int | None) -> None:  # pragma: no cover - clocked policies
        raise NotImplementedError
