"""Export a calibration snapshot from a qiskit backend: a live IBM one or a fake one.

Real calibration data has holes: qubits without T1/T2, readout no better than a coin, gates
with error 1 (IBM's mark for a broken gate), instructions qiskit does not know. They are
exported, not refused: such qubits and gates are marked faulty (``qbo.noise.schema``) with
one note per reason, unknown instructions are skipped with a note, and everything else is
validated strictly.

Faulty qubit: T1 or T2 missing or <= 0, readout error missing or >= 0.5, reported faulty or
not operational by the backend, or a single-qubit gate on it is faulty. Faulty gate: error
>= 1, reported faulty by the backend, or touching a faulty qubit.
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime, timezone
from typing import Mapping

from qbo.noise.schema import NON_GATE_OPS, SCHEMA, Snapshot, clip_t2

__all__ = ["export_from_fake", "snapshot_from_backend"]

# Target operations that are not recorded (control flow, measurement, delay).
_SKIP_OPS = ("measure", "delay", "if_else", "while_loop", "for_loop", "switch_case", "barrier", "box")
READOUT_FAULTY = 0.5  # a readout error at or above this carries no information
GATE_FAULTY = 1.0  # IBM reports broken gates with error 1


def _fake_backend_classes() -> dict[str, type]:
    from qiskit_ibm_runtime import fake_provider
    from qiskit_ibm_runtime.fake_provider.fake_backend import FakeBackendV2

    out = {}
    for attr in dir(fake_provider):
        obj = getattr(fake_provider, attr)
        if attr.startswith("Fake") and isinstance(obj, type) and issubclass(obj, FakeBackendV2) \
                and obj is not FakeBackendV2:
            out[attr] = obj
    return out


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _processor_family(backend) -> str | None:
    try:
        pt = getattr(backend.configuration(), "processor_type", None)
    except Exception:  # pragma: no cover - defensive
        pt = None
    if isinstance(pt, Mapping) and pt.get("family"):
        rev = pt.get("revision")
        return f"{pt['family']} r{rev}" if rev not in (None, "") else str(pt["family"])
    return None


def export_from_fake(name: str) -> Snapshot:
    """Snapshot of ``qiskit_ibm_runtime.fake_provider.<name>`` (e.g.
    ``"FakeBrisbane"``; ``"fake_brisbane"`` also accepted)."""
    classes = _fake_backend_classes()
    cls = classes.get(name) or {_norm(k): v for k, v in classes.items()}.get(_norm(str(name)))
    if cls is None:
        close = difflib.get_close_matches(str(name), list(classes), n=3, cutoff=0.75)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ValueError(
            f"unknown fake backend {str(name)!r}{hint}: expected a qiskit_ibm_runtime.fake_provider "
            f"BackendV2 class name such as FakeBrisbane, FakeSherbrooke, FakeTorino, FakeFez "
            f"({len(classes)} available)"
        )
    return snapshot_from_backend(cls(), source=f"qiskit_ibm_runtime.fake_provider.{cls.__name__}")


def snapshot_from_backend(backend, source: str) -> Snapshot:
    """Snapshot of any qiskit ``BackendV2`` (a live IBM backend, a fake one, ...).

    Reads the backend's ``target`` (gate errors and durations, readout errors, T1/T2) and,
    when it has them, ``properties()`` (asymmetric readout errors, calibration time) and
    ``configuration().basis_gates``. ``source`` records where it came from, e.g.
    ``ibm:ibm_torino``; :func:`export_from_fake` uses it for the fake backends.
    """
    target = backend.target
    try:
        props = backend.properties()
    except Exception:  # backends without properties (or a failing call) still have a target
        props = None
    stamp = getattr(props, "last_update_date", None) if props is not None else None
    if isinstance(stamp, datetime):
        timestamp = stamp.isoformat()
    elif isinstance(stamp, str) and stamp:
        timestamp = stamp
    else:
        timestamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    from qiskit.circuit.library import get_standard_gate_name_mapping

    known = get_standard_gate_name_mapping()
    measure = target["measure"] if "measure" in target.operation_names else {}
    notes: list[str] = []
    qubits = [_qubit_record(target, props, measure, i, notes) for i in range(target.num_qubits)]
    unknown = sorted(op for op in target.operation_names
                     if op not in _SKIP_OPS and op not in known and op not in NON_GATE_OPS)
    if unknown:
        notes.append(f"skipped instructions qiskit does not know as standard gates: {', '.join(unknown)}")
    gates = [
        {"gate": op, "qubits": list(qargs), "error": ip.error, "duration": ip.duration}
        for op in sorted(target.operation_names) if op not in _SKIP_OPS and op not in unknown
        for qargs, ip in sorted((target[op] or {}).items(), key=lambda kv: kv[0] or ())
        if qargs is not None and ip is not None
    ]
    _mark_faulty(qubits, gates, props, notes)
    try:
        basis = list(backend.configuration().basis_gates)
    except Exception:
        basis = [g for g in target.operation_names if g not in _SKIP_OPS + NON_GATE_OPS and g not in unknown]
    edges = sorted({tuple(g["qubits"]) for g in gates if len(g["qubits"]) == 2 and g["gate"] not in NON_GATE_OPS})
    raw = {
        "schema": SCHEMA, "name": backend.name, "source": source, "timestamp": timestamp,
        "processor": _processor_family(backend), "num_qubits": target.num_qubits, "dt": target.dt,
        "basis_gates": basis, "coupling_map": [list(e) for e in edges], "qubits": qubits,
        "gates": gates, "notes": notes,
    }
    return Snapshot.from_json(raw, label=f"snapshot of {backend.name}")


def _qubit_record(target, props, measure, i: int, notes: list[str]) -> dict:
    qp = target.qubit_properties[i] if target.qubit_properties else None
    t1, t2 = getattr(qp, "t1", None), getattr(qp, "t2", None)
    mp = measure.get((i,)) if measure else None
    extra: dict = {}
    if props is not None:
        try:
            qprops = props.qubit_property(i)
        except Exception:
            qprops = {}
        for key in ("prob_meas0_prep1", "prob_meas1_prep0"):
            if key in qprops:
                extra[key] = float(qprops[key][0])
        if t1 is None and "T1" in qprops:
            t1 = float(qprops["T1"][0])
        if t2 is None and "T2" in qprops:
            t2 = float(qprops["T2"][0])
    if t1 is not None and t2 is not None and t1 > 0 and t2 > 0:
        t2, note = clip_t2(i, t1, t2)
        if note:
            notes.append(note)
    return {
        "qubit": i, "t1": t1, "t2": t2, "readout_error": getattr(mp, "error", None),
        "prob_meas0_prep1": extra.get("prob_meas0_prep1"), "prob_meas1_prep0": extra.get("prob_meas1_prep0"),
        "readout_length": getattr(mp, "duration", None),
    }


def _positive(v) -> bool:
    return isinstance(v, (int, float)) and v > 0


def _reported_faulty(props) -> tuple[set[int], set[tuple[str, tuple[int, ...]]]]:
    """Qubits and gates the backend's properties call faulty (empty without properties)."""
    qubits: set[int] = set()
    gates: set[tuple[str, tuple[int, ...]]] = set()
    if props is None:
        return qubits, gates
    try:
        qubits = {int(q) for q in props.faulty_qubits()}
        gates = {(g.gate, tuple(int(q) for q in g.qubits)) for g in props.faulty_gates()}
    except Exception:  # properties without these queries report nothing faulty
        pass
    return qubits, gates


def _mark_faulty(qubits: list[dict], gates: list[dict], props, notes: list[str]) -> None:
    """Set ``faulty`` on qubit and gate records (module docstring) and note why."""
    reported_q, reported_g = _reported_faulty(props)
    reasons: dict[int, str] = {}
    for q in qubits:
        i = q["qubit"]
        if not (_positive(q["t1"]) and _positive(q["t2"])):
            reasons[i] = f"T1={q['t1']}, T2={q['t2']}"
        elif q["readout_error"] is None or q["readout_error"] >= READOUT_FAULTY:
            reasons[i] = f"readout error {q['readout_error']}"
        elif i in reported_q:
            reasons[i] = "reported faulty by the backend"
    bad_gates: list[dict] = []
    single: dict[int, list[str]] = {}
    for g in gates:
        key = (g["gate"], tuple(g["qubits"]))
        if (g["error"] is not None and g["error"] >= GATE_FAULTY) or key in reported_g:
            bad_gates.append(g)
            if len(g["qubits"]) == 1 and g["gate"] not in NON_GATE_OPS:
                single.setdefault(g["qubits"][0], []).append(g["gate"])
    for i, names in single.items():
        reasons.setdefault(i, "faulty single-qubit gates " + ", ".join(sorted(names)))
    for i, why in sorted(reasons.items()):
        qubits[i]["faulty"] = True
        notes.append(f"qubit {i} marked faulty: {why}")
        for key in ("t1", "t2"):
            if not _positive(qubits[i][key]):
                qubits[i][key] = None
        ro = qubits[i]["readout_error"]
        if ro is not None and not 0.0 <= ro <= 1.0:
            qubits[i]["readout_error"] = None
    for g in gates:
        if g in bad_gates or any(q in reasons for q in g["qubits"]):
            g["faulty"] = True
    pairs = sorted({tuple(sorted(g["qubits"])) for g in bad_gates if len(g["qubits"]) == 2
                    and not any(q in reasons for q in g["qubits"])})
    if pairs:
        notes.append("faulty two-qubit links: " + ", ".join(f"{a}-{b}" for a, b in pairs))
