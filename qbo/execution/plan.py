"""A cost plan: what a hardware run would submit, counted on a dry run.

Where the target's outcomes can be known in advance (local mode on a fake backend, the
test service: their sampling is seeded by the request), :class:`ReplayExecutor` *replays
the run*: the run's own executor, with the run's seeds, on a replica of the connection
(``Connection.replica``) that reaches no device, counting every submission. Its count is
the run's, as long as no job fails and no cap stops it.

:class:`PlanExecutor` stands in for a :class:`~qbo.execution.runtime.RuntimeExecutor`
during a dry run of the experiment: it answers every request with exact samples of the
*logical* circuits (no device noise, so the adaptive estimators take the rounds they take
on an ideal device) and counts what the hardware path would submit, with the same rule:
one job per distinct shot count of each ``run`` call (``runtime.by_shots``). Each job's
QPU seconds are predicted with :mod:`qbo.execution.cost` from the circuits transpiled for
the real backend (the scheduled
duration of ``Q^k A`` is measured on the first arm seen at each circuit width and power k:
arms differ only in rotation angles). Classical learners sample the reward model on hardware
(``classical_source``), so they add no jobs here either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from qiskit import QuantumCircuit

from qbo.execution.base import Counts, check_shots
from qbo.execution.cost import circuit_seconds, job_seconds, rep_delay_s
from qbo.execution.exact import ExactExecutor
from qbo.execution.connection import Connection
from qbo.execution.runtime import RuntimeExecutor, by_shots
from qbo.execution.transpile import TranspileCache
from qbo.grover import cache_key


@dataclass
class Tally:
    """What a (part of a) run submits: jobs, circuits, shots and predicted QPU seconds."""

    jobs: int = 0
    circuits: int = 0
    shots: int = 0
    qpu_seconds: float = 0.0
    per_job_seconds: list[float] = field(default_factory=list)

    def add(self, circuits: int, shots: int, seconds: float) -> None:
        self.jobs += 1
        self.circuits += circuits
        self.shots += shots
        self.qpu_seconds += seconds
        self.per_job_seconds.append(seconds)


class PlanExecutor:
    """Counts the jobs of a hardware run while answering exactly (see the module docstring)."""

    hardware = True

    def __init__(self, backend: Any, target: str, seed: int | None = None) -> None:
        self.target = target
        self.backend = backend
        self._exact = ExactExecutor(seed)
        self._transpile = TranspileCache(backend.target, 1, 0)
        self._rep_delay = rep_delay_s(backend)
        self._durations: dict[tuple[int, int], float] = {}
        self.tally = Tally()

    @property
    def rng(self) -> np.random.Generator:
        return self._exact.rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._exact.rng = value

    @property
    def classical_source(self) -> ExactExecutor:
        return self._exact

    def duration(self, circuit: QuantumCircuit) -> float:
        """Predicted scheduled seconds of one shot of ``circuit`` on the backend: measured on
        the first circuit of its width and Grover power (arms differ only in rotation angles)."""
        key = cache_key(circuit)
        shape = (circuit.num_qubits, -1 if key is None else key[1])
        if shape not in self._durations:
            self._durations[shape] = circuit_seconds(self._transpile(circuit), self.backend.target)
        return self._durations[shape]

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        for n, index in by_shots(shots).items():
            self.rng.integers(2**62)  # the request seed a RuntimeExecutor draws
            durations = [self.duration(circuits[i]) for i in index]
            self.tally.add(len(index), n * len(index), job_seconds(durations, n, self._rep_delay))
        return self._exact.run(circuits, shots)


class ReplayExecutor(RuntimeExecutor):
    """The run's executor on a replica connection (see the module docstring): same seed, hence
    the same request seeds, transpiled circuits and counts; every submission is tallied with
    the hardware path's QPU-seconds prediction. Nothing is journalled."""

    def __init__(self, replica: Connection, backend_name: str, target: str, mode: str,
                 seed: int | np.random.Generator) -> None:
        super().__init__(replica, backend_name, target, mode=mode, seed=seed)
        self.tally = Tally()

    def _submit(self, compiled: Sequence[QuantumCircuit], shots: int, seed: int, fp: str) -> Any:
        self.tally.add(len(compiled), shots * len(compiled), self._predict(compiled, shots))
        return super()._submit(compiled, shots, seed, fp)
