"""Predicted QPU time of a Sampler job from the backend's timing data.

A job's QPU time is modelled as a fixed per-job overhead plus, for every shot of every
circuit, the backend's repetition delay and the circuit's scheduled duration
(``QuantumCircuit.estimate_duration`` on the backend's target, i.e. its instruction
durations). ``JOB_OVERHEAD_S`` is an assumption, not a published figure: IBM bills a few
seconds of set-up per job; the run folder journals each finished job's measured usage
(``job.usage()``) next to this prediction so the two can be compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qiskit import QuantumCircuit

JOB_OVERHEAD_S = 2.0  # assumed QPU seconds of set-up per job
DEFAULT_REP_DELAY_S = 250e-6  # when the backend does not say (IBM's usual default)


def rep_delay_s(backend: Any) -> float:
    """The backend's default repetition delay in seconds."""
    try:
        value = backend.configuration().default_rep_delay
    except Exception:  # BackendV2 without a configuration, or a test double
        value = getattr(backend, "default_rep_delay", None)
    return float(value) if value else DEFAULT_REP_DELAY_S


def circuit_seconds(circuit: QuantumCircuit, target: Any) -> float:
    """Scheduled duration of a transpiled circuit on ``target`` (0 when durations are unknown)."""
    try:
        return float(circuit.estimate_duration(target, unit="s"))
    except Exception:  # a target without instruction durations
        return 0.0


def job_seconds(durations: Sequence[float], shots: int, rep_delay: float) -> float:
    """Predicted QPU seconds of one job: overhead + shots * sum(rep delay + duration)."""
    return JOB_OVERHEAD_S + int(shots) * sum(rep_delay + d for d in durations)
