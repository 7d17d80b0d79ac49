"""A snapshot as qiskit sees it: a Target for transpiling, an Aer noise model and simulator.

Faulty qubits and gates (``qbo.noise.schema``) are left out of all three: a faulty qubit
has no instructions (not even a measurement), so no layout or route can use it.
"""

from __future__ import annotations

from typing import Iterable

from qbo.noise.schema import Snapshot

__all__ = ["snapshot_target", "noise_model", "aer_backend", "coupling_map"]


def coupling_map(snapshot: Snapshot):
    """The coupling map as a :class:`qiskit.transpiler.CouplingMap` (isolated qubits kept)."""
    from qiskit.transpiler import CouplingMap

    cm = CouplingMap([list(e) for e in snapshot.coupling_map])
    for q in range(snapshot.num_qubits):
        if q not in cm.physical_qubits:
            cm.add_physical_qubit(q)
    return cm


def snapshot_target(snapshot: Snapshot, qubits: Iterable[int] | None = None):
    """A :class:`qiskit.transpiler.Target` with the snapshot's qubit properties, gate
    errors/durations and measurement errors/durations, without faulty qubits and gates.
    With ``qubits``, only instructions acting within that set are kept (numbering unchanged)."""
    from qiskit.circuit import Delay, Measure, Parameter
    from qiskit.circuit.library import get_standard_gate_name_mapping
    from qiskit.providers import QubitProperties
    from qiskit.transpiler import InstructionProperties, Target

    mapping = get_standard_gate_name_mapping()
    target = Target(
        description=f"qbo calibration snapshot {snapshot.name}",
        num_qubits=snapshot.num_qubits,
        dt=snapshot.dt,
        qubit_properties=[QubitProperties(t1=q.t1, t2=q.t2) for q in snapshot.qubits],
    )
    keep = snapshot.check_qubits(qubits)
    working = [i for i, q in enumerate(snapshot.qubits) if not q.faulty and (keep is None or i in keep)]
    by_name: dict[str, dict] = {}
    for g in snapshot.gates:
        if g.faulty or (keep is not None and not keep.issuperset(g.qubits)):
            continue
        by_name.setdefault(g.gate, {})[g.qubits] = InstructionProperties(duration=g.duration, error=g.error)
    for name in dict.fromkeys(list(snapshot.basis_gates) + list(by_name)):
        props = by_name.get(name)
        if props is None:
            continue  # basis gate without calibration data: not available
        target.add_instruction(mapping[name], props, name=name)
    target.add_instruction(
        Measure(),
        {(i,): InstructionProperties(duration=snapshot.qubits[i].readout_length, error=snapshot.qubits[i].readout_error)
         for i in working},
    )
    target.add_instruction(Delay(Parameter("t")), {(i,): None for i in working})
    return target


def noise_model(
    snapshot: Snapshot, *, qubits: Iterable[int] | None = None, readout_error: bool = True,
    thermal_relaxation: bool = True,
):
    """An Aer :class:`~qiskit_aer.noise.NoiseModel` of the snapshot.

    Same construction as ``NoiseModel.from_backend``: for every working (gate, qubits) a
    thermal-relaxation error from T1/T2 over the gate duration, composed with a
    depolarizing error whose strength makes the total average gate infidelity equal the
    reported gate error (errors above the physical maximum are truncated by Aer). Readout
    errors use the asymmetric ``prob_meas1_prep0``/``prob_meas0_prep1`` when present,
    otherwise the symmetric ``readout_error``. Delays are noiseless; qubit temperature is 0.

    ``qubits`` restricts the model to instructions acting only on those physical qubits
    (and their readout): with the circuit's layout fixed, the same simulation results without
    building the full model of a 100+ qubit device.
    """
    from qiskit_aer.noise import NoiseModel, ReadoutError
    from qiskit_aer.noise.device import basic_device_gate_errors

    keep = snapshot.check_qubits(qubits)
    target = snapshot_target(snapshot, qubits=keep)
    ops = [n for n in target.operation_names if n not in ("measure", "delay")]
    nm = NoiseModel(basis_gates=ops)
    for name, qargs, error in basic_device_gate_errors(
        target=target, gate_error=True, thermal_relaxation=thermal_relaxation
    ):
        nm.add_quantum_error(error, name, list(qargs), warnings=False)
    if readout_error:
        for i, q in enumerate(snapshot.qubits):
            if q.faulty or (keep is not None and i not in keep):
                continue
            p01 = q.prob_meas1_prep0 if q.prob_meas1_prep0 is not None else q.readout_error
            p10 = q.prob_meas0_prep1 if q.prob_meas0_prep1 is not None else q.readout_error
            if p01 == 0 and p10 == 0:
                continue
            nm.add_readout_error(ReadoutError([[1 - p01, p01], [p10, 1 - p10]]), [i])
    return nm


def aer_backend(snapshot: Snapshot, *, noise_qubits: Iterable[int] | None = None, **options):
    """A noisy :class:`~qiskit_aer.AerSimulator` whose target is :func:`snapshot_target`
    and whose noise model is :func:`noise_model` (restricted to ``noise_qubits``; pass the
    fixed layout to make construction fast). Extra ``options`` go to ``AerSimulator``
    (e.g. ``seed_simulator``, ``method``, ``device``)."""
    from qiskit_aer import AerSimulator

    if "noise_model" not in options:
        options["noise_model"] = noise_model(snapshot, qubits=noise_qubits)
    return AerSimulator(target=snapshot_target(snapshot), **options)
