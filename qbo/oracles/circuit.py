"""User-supplied state preparation A, from a circuit or an OpenQASM 3 file."""

from __future__ import annotations

from pathlib import Path

from qiskit import QuantumCircuit, qasm3
from qiskit.quantum_info import Statevector

from qbo.oracles.base import Oracle

EXACT_MEAN_MAX_QUBITS = 16


def load_qasm3(path: str | Path) -> QuantumCircuit:
    """Read an OpenQASM 3 file; one-line ValueError when it cannot be read or parsed."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"cannot read QASM file '{path}': {exc.strerror or exc}") from None
    try:
        return qasm3.loads(text)
    except Exception as exc:  # the importer raises several unrelated types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"cannot parse QASM file '{path}' as OpenQASM 3: {first}") from None


def from_circuit(
    circuit: QuantumCircuit | str | Path,
    objective: int = 0,
    window: tuple[float, float] = (0.0, 1.0),
) -> Oracle:
    """Wrap a user circuit (or QASM 3 path) as an oracle; final measurements are dropped.

    The exact mean is computed from the statevector for circuits of at most 16 qubits.
    """
    spec = ""
    if not isinstance(circuit, QuantumCircuit):
        spec = f"qasm:{Path(circuit).resolve()}"
        circuit = load_qasm3(circuit)
    prepared = circuit.remove_final_measurements(inplace=False)
    prepared = _drop_clbits(prepared)
    if not 0 <= objective < prepared.num_qubits:
        raise ValueError(f"objective qubit must be in [0, {prepared.num_qubits - 1}], got {objective}")
    mean = None
    if prepared.num_qubits <= EXACT_MEAN_MAX_QUBITS:
        a = float(Statevector(prepared).probabilities([objective])[1])
        mean = window[0] + (window[1] - window[0]) * a
    return Oracle(prepared, objective, low=window[0], high=window[1], mean=mean, spec=spec)


def _drop_clbits(circuit: QuantumCircuit) -> QuantumCircuit:
    if not circuit.num_clbits:
        return circuit
    if any(inst.clbits for inst in circuit.data):
        raise ValueError("state preparation must not use classical bits except final measurements")
    bare = QuantumCircuit(*circuit.qregs, name=circuit.name)
    for inst in circuit.data:
        bare.append(inst.operation, inst.qubits)
    return bare
