"""What an estimator accepts as its problem, as Qiskit users hold it.

* a qbo :class:`~qbo.oracles.base.Oracle` (``from_circuit``, ``bernoulli``, ``gaussian``, ...);
* a bare ``QuantumCircuit`` A with ``objective=q``: P(qubit q = 1) is the amplitude
  (``from_circuit(circuit, objective=q)``);
* a qiskit-algorithms ``EstimationProblem`` (duck-typed: qiskit-algorithms stays optional) with
  one objective qubit, the default good state ("1") and grover operator, and an affine
  ``post_processing`` ``x -> low + (high - low) x``, which becomes the oracle's reward window.

Anything else is refused with one line naming these forms.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from qiskit import QuantumCircuit

from qbo.errors import BadInput
from qbo.oracles.base import Oracle
from qbo.oracles.circuit import from_circuit

ORACLE_FORMS = ("a qbo Oracle (e.g. from_circuit(qc, objective=q)), a QuantumCircuit with objective=q, "
                "or a qiskit-algorithms EstimationProblem")


@runtime_checkable
class EstimationProblemLike(Protocol):
    """The part of qiskit-algorithms' ``EstimationProblem`` that qbo reads."""

    @property
    def state_preparation(self) -> QuantumCircuit | None: ...

    @property
    def objective_qubits(self) -> Sequence[int]: ...

    @property
    def post_processing(self) -> Callable[[float], float]: ...

    @property
    def is_good_state(self) -> Callable[[str], bool]: ...

    @property
    def grover_operator(self) -> QuantumCircuit | None: ...


def as_oracle(problem: object, objective: int | None = None) -> Oracle:
    """The oracle ``problem`` stands for (module docstring); one-line ``BadInput`` otherwise.

    ``objective`` is needed with a bare circuit, and refused with any other form (an oracle and
    an EstimationProblem name their objective qubit themselves)."""
    if isinstance(problem, QuantumCircuit):
        if objective is None:
            raise BadInput("a bare QuantumCircuit needs objective=QUBIT: the qubit whose P(1) is estimated")
        if isinstance(objective, bool) or not isinstance(objective, int):
            raise BadInput(f"objective must be a qubit index (int), got {objective!r}"[:200])
        return from_circuit(problem, objective=objective)
    if objective is not None:
        raise BadInput(f"objective={objective!r} goes with a bare QuantumCircuit only; "
                       f"got {type(problem).__name__}, which names its own objective qubit"[:300])
    if isinstance(problem, Oracle):
        return problem
    if isinstance(problem, EstimationProblemLike):
        return _from_estimation_problem(problem)
    raise BadInput(f"cannot estimate a {type(problem).__name__}: expected {ORACLE_FORMS}")


def _from_estimation_problem(problem: EstimationProblemLike) -> Oracle:
    """A, the objective qubit and the reward window of an ``EstimationProblem``."""
    circuit = problem.state_preparation
    if not isinstance(circuit, QuantumCircuit):
        raise BadInput("EstimationProblem has no state_preparation circuit")
    qubits = list(problem.objective_qubits)
    if len(qubits) != 1:
        raise BadInput(f"EstimationProblem must have one objective qubit, got {qubits}"[:200])
    good = problem.is_good_state
    if not (good("1") and not good("0")):
        raise BadInput("EstimationProblem's is_good_state must mark '1' good and '0' bad (the default)")
    # The default grover_operator is rebuilt on every read (through a class Qiskit deprecates,
    # hence the filter); a user-set one is the same object every time.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        own_grover = problem.grover_operator is problem.grover_operator
    if own_grover:
        raise BadInput("EstimationProblem sets its own grover_operator; qbo builds Q from A "
                       "(qbo.grover), so leave grover_operator unset")
    window = _affine_window(problem.post_processing)
    return from_circuit(circuit, objective=qubits[0], window=window)


def _affine_window(post: Callable[[float], Any]) -> tuple[float, float]:
    """(f(0), f(1)) for an increasing affine ``f``; BadInput for any other post-processing."""
    try:
        values = [float(post(x)) for x in (0.0, 0.25, 0.5, 1.0)]
    except Exception as exc:  # a user's function: any failure means it is not a number map
        raise BadInput(f"EstimationProblem's post_processing failed on a float: {type(exc).__name__}") from None
    low, quarter, half, high = values
    affine = all(math.isclose(v, low + (high - low) * x, rel_tol=1e-9, abs_tol=1e-12)
                 for v, x in ((quarter, 0.25), (half, 0.5)))
    if not (all(math.isfinite(v) for v in values) and affine and high > low):
        raise BadInput("EstimationProblem's post_processing must be increasing and affine "
                       "(x -> low + (high - low) x); estimate the amplitude and map it yourself")
    return low, high
