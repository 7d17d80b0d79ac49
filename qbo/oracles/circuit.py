"""User-supplied state preparation A, from a circuit or an OpenQASM 3 file."""

from __future__ import annotations

import contextlib
import io
import stat
from pathlib import Path

from qiskit import QuantumCircuit, qasm3
from qiskit.quantum_info import Statevector

from qbo.errors import BadFile, BadInput
from qbo.limits import QASM_MAX_BYTES, QASM_MAX_QUBITS
from qbo.oracles.base import Oracle

EXACT_MEAN_MAX_QUBITS = 16


def load_qasm3(path: str | Path) -> QuantumCircuit:
    """Read an OpenQASM 3 file; one-line ``BadFile`` when it cannot be read or parsed, or
    uses what an oracle cannot: control flow, unbound parameters (``input float``), more than
    ``QASM_MAX_QUBITS`` qubits, more than ``QASM_MAX_BYTES`` bytes (qbo.limits)."""
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise BadFile(f"QASM file '{path}' is not a regular file")
        if info.st_size > QASM_MAX_BYTES:
            raise BadFile(f"QASM file '{path}' is {info.st_size} bytes, more than {QASM_MAX_BYTES} (limit QASM_MAX_BYTES)")
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise BadFile(f"cannot read QASM file '{path}': {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadFile(f"QASM file '{path}' is not UTF-8 text") from None
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the parser prints syntax errors itself
            circuit = qasm3.loads(text)
    except RecursionError:
        raise BadFile(f"QASM file '{path}' is nested too deeply to parse") from None
    except Exception as exc:  # the importer raises several unrelated types
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        raise BadFile(f"cannot parse QASM file '{path}' as OpenQASM 3: {first}") from None
    check_oracle_circuit(circuit, f"QASM file '{path}'")
    return circuit


def check_oracle_circuit(circuit: QuantumCircuit, source: str) -> None:
    """Refuse control flow, unbound parameters and more than QASM_MAX_QUBITS qubits."""
    from qiskit.circuit import ControlFlowOp

    if circuit.num_qubits == 0:
        raise BadFile(f"{source} declares no qubits")
    if circuit.num_qubits > QASM_MAX_QUBITS:
        raise BadFile(f"{source} has {circuit.num_qubits} qubits, more than {QASM_MAX_QUBITS} (limit QASM_MAX_QUBITS)")
    if circuit.parameters:
        names = ", ".join(sorted(p.name for p in circuit.parameters)[:3])
        raise BadFile(f"{source} has unbound parameters ({names}); bind them to numbers first")
    for inst in circuit.data:
        if isinstance(inst.operation, ControlFlowOp):
            raise BadFile(f"{source} uses control flow ('{inst.operation.name}'); an oracle must be a plain gate sequence")


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
    else:
        check_oracle_circuit(circuit, f"circuit '{circuit.name}'")
    prepared = circuit.remove_final_measurements(inplace=False)
    prepared = _drop_clbits(prepared)
    if not 0 <= objective < prepared.num_qubits:
        raise BadInput(f"objective qubit must be in [0, {prepared.num_qubits - 1}], got {objective}")
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
