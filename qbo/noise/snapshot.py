"""Device calibration snapshots: export, validate, persist and simulate.

A :class:`Snapshot` is an immutable, self-contained record of one device's
calibration (T1/T2, readout and gate errors, gate durations, coupling map).
It is exported from a ``qiskit_ibm_runtime`` fake backend (which carries a
frozen copy of real IBM calibration data), stored as JSON under
``calibrations/`` and turned back into

* a qiskit :class:`~qiskit.transpiler.Target` (for layout-fixed transpilation),
* a qiskit-aer :class:`~qiskit_aer.noise.NoiseModel`, and
* a noisy :class:`~qiskit_aer.AerSimulator` backend.

All quantities are SI: seconds for times, probabilities in ``[0, 1]`` for
errors.  The JSON schema is documented in ``calibrations/README.md``.

Every validation failure raises :class:`ValueError` with a single-line
message naming the file (or source), the offending field, the bad value and
what was expected, e.g.::

    calibration 'x.json': qubits[3].t1 must be > 0 seconds, got -5.0

Physicality rule: Aer's ``thermal_relaxation_error`` requires ``T2 <= 2*T1``.
Values violating it (which do occur in published IBM calibrations) are
clipped to ``2*T1`` when a snapshot is exported or loaded, and a human
readable line is appended to :attr:`Snapshot.notes`; loading a file that
still needs clipping additionally emits a :class:`UserWarning`.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping

import platformdirs

from qbo.files import write_text_atomic

__all__ = [
    "SCHEMA",
    "QubitCalibration",
    "GateCalibration",
    "Snapshot",
    "export_from_fake",
    "snapshot_from_backend",
    "load_snapshot",
    "save_snapshot",
    "list_snapshots",
    "calibrations_dir",
    "shipped_dir",
]

SCHEMA = "qbo.calibration/1"
ENV_DIR = "QBO_CALIBRATIONS_DIR"

_TOP_KEYS = (
    "schema", "name", "source", "timestamp", "processor", "num_qubits", "dt",
    "basis_gates", "coupling_map", "qubits", "gates", "notes",
)
_TOP_REQUIRED = (
    "schema", "name", "source", "timestamp", "num_qubits", "basis_gates",
    "coupling_map", "qubits", "gates",
)
_QUBIT_KEYS = (
    "qubit", "t1", "t2", "readout_error", "prob_meas0_prep1", "prob_meas1_prep0",
    "readout_length",
)
_QUBIT_REQUIRED = ("t1", "t2", "readout_error")
_GATE_KEYS = ("gate", "qubits", "error", "duration")
_GATE_REQUIRED = ("gate", "qubits")
# Instructions that are not unitary gates but may carry a duration (and hence
# thermal relaxation noise).
_NON_GATE_OPS = ("reset",)
# Target operations that are not recorded (control flow, measurement, delay).
_SKIP_OPS = ("measure", "delay", "if_else", "while_loop", "for_loop", "switch_case",
             "barrier", "box")


@dataclass(frozen=True)
class QubitCalibration:
    """Per-qubit calibration. Times in seconds, errors as probabilities."""

    t1: float
    t2: float
    readout_error: float
    prob_meas0_prep1: float | None = None
    prob_meas1_prep0: float | None = None
    readout_length: float | None = None


@dataclass(frozen=True)
class GateCalibration:
    """One (gate, qubits) entry: average gate error in [0, 1] and duration in seconds."""

    gate: str
    qubits: tuple[int, ...]
    error: float | None
    duration: float | None


@dataclass(frozen=True)
class Snapshot:
    """Immutable calibration snapshot of one device. Build with
    :func:`export_from_fake`, :meth:`from_json` or :func:`load_snapshot`."""

    name: str
    source: str
    timestamp: str
    processor: str | None
    num_qubits: int
    dt: float | None
    basis_gates: tuple[str, ...]
    coupling_map: tuple[tuple[int, int], ...]
    qubits: tuple[QubitCalibration, ...]
    gates: tuple[GateCalibration, ...]
    notes: tuple[str, ...] = ()

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        """Plain-JSON dict (schema ``qbo.calibration/1``)."""
        return {
            "schema": SCHEMA,
            "name": self.name,
            "source": self.source,
            "timestamp": self.timestamp,
            "processor": self.processor,
            "num_qubits": self.num_qubits,
            "dt": self.dt,
            "basis_gates": list(self.basis_gates),
            "coupling_map": [list(e) for e in self.coupling_map],
            "qubits": [
                {
                    "qubit": i,
                    "t1": q.t1,
                    "t2": q.t2,
                    "readout_error": q.readout_error,
                    "prob_meas0_prep1": q.prob_meas0_prep1,
                    "prob_meas1_prep0": q.prob_meas1_prep0,
                    "readout_length": q.readout_length,
                }
                for i, q in enumerate(self.qubits)
            ],
            "gates": [
                {"gate": g.gate, "qubits": list(g.qubits), "error": g.error, "duration": g.duration}
                for g in self.gates
            ],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any], *, label: str | None = None) -> "Snapshot":
        """Validate ``d`` and build a snapshot. ``label`` names the origin in
        error messages (defaults to ``d['name']``)."""
        return _parse(d, label)

    # ------------------------------------------------------- qiskit / Aer
    def qubit(self, index: int) -> QubitCalibration:
        return self.qubits[index]

    def gate(self, name: str, qubits: Iterable[int]) -> GateCalibration | None:
        key = (name, tuple(qubits))
        for g in self.gates:
            if (g.gate, g.qubits) == key:
                return g
        return None

    def coupling_map_obj(self):
        """The coupling map as a :class:`qiskit.transpiler.CouplingMap`."""
        from qiskit.transpiler import CouplingMap

        cm = CouplingMap([list(e) for e in self.coupling_map])
        for q in range(self.num_qubits):  # keep isolated qubits
            if q not in cm.physical_qubits:
                cm.add_physical_qubit(q)
        return cm

    def _qubit_set(self, qubits: Iterable[int] | None) -> frozenset[int] | None:
        if qubits is None:
            return None
        keep = frozenset(qubits)
        bad = sorted(q for q in keep if not (_is_int(q) and 0 <= q < self.num_qubits))
        if bad:
            raise ValueError(
                f"calibration {self.name!r}: qubits must be indices in [0, {self.num_qubits - 1}], "
                f"got {_clean(bad)}"
            )
        return keep

    def target(self, qubits: Iterable[int] | None = None):
        """A :class:`qiskit.transpiler.Target` with this snapshot's qubit
        properties, gate errors/durations and measurement errors/durations.
        With ``qubits``, only instructions acting within that set are kept
        (qubit numbering is unchanged)."""
        from qiskit.circuit import Delay, Measure, Parameter
        from qiskit.circuit.library import get_standard_gate_name_mapping
        from qiskit.providers import QubitProperties
        from qiskit.transpiler import InstructionProperties, Target

        mapping = get_standard_gate_name_mapping()
        target = Target(
            description=f"qbo calibration snapshot {self.name}",
            num_qubits=self.num_qubits,
            dt=self.dt,
            qubit_properties=[QubitProperties(t1=q.t1, t2=q.t2) for q in self.qubits],
        )
        keep = self._qubit_set(qubits)
        by_name: dict[str, dict] = {}
        for g in self.gates:
            if keep is not None and not keep.issuperset(g.qubits):
                continue
            by_name.setdefault(g.gate, {})[g.qubits] = InstructionProperties(
                duration=g.duration, error=g.error
            )
        for name in dict.fromkeys(list(self.basis_gates) + list(by_name)):
            props = by_name.get(name)
            if props is None:
                continue  # basis gate without calibration data: not available
            target.add_instruction(mapping[name], props, name=name)
        target.add_instruction(
            Measure(),
            {
                (i,): InstructionProperties(duration=q.readout_length, error=q.readout_error)
                for i, q in enumerate(self.qubits)
                if keep is None or i in keep
            },
        )
        target.add_instruction(
            Delay(Parameter("t")),
            {(i,): None for i in range(self.num_qubits) if keep is None or i in keep},
        )
        return target

    def noise_model(
        self,
        *,
        qubits: Iterable[int] | None = None,
        readout_error: bool = True,
        thermal_relaxation: bool = True,
    ):
        """Build an Aer :class:`~qiskit_aer.noise.NoiseModel`.

        Same construction as ``NoiseModel.from_backend``: for every
        (gate, qubits) a thermal-relaxation error from T1/T2 over the gate
        duration, composed with a depolarizing error whose strength makes the
        total average gate infidelity equal the reported gate error (errors
        above the physical maximum are truncated by Aer).  Readout errors use
        the asymmetric ``prob_meas1_prep0``/``prob_meas0_prep1`` when present,
        otherwise the symmetric ``readout_error``.  Delays are noiseless; qubit
        temperature is 0 (no thermal excited population).

        ``qubits`` restricts the model to instructions acting only on those
        physical qubits (and their readout).  Building the full model of a
        100+ qubit device takes seconds; when the circuit's layout is fixed,
        passing it here gives the same simulation results in milliseconds.
        """
        from qiskit_aer.noise import NoiseModel, ReadoutError
        from qiskit_aer.noise.device import basic_device_gate_errors

        keep = self._qubit_set(qubits)
        target = self.target(qubits=keep)
        ops = [n for n in target.operation_names if n not in ("measure", "delay")]
        nm = NoiseModel(basis_gates=ops)
        for name, qargs, error in basic_device_gate_errors(
            target=target, gate_error=True, thermal_relaxation=thermal_relaxation
        ):
            nm.add_quantum_error(error, name, list(qargs), warnings=False)
        if readout_error:
            for i, q in enumerate(self.qubits):
                if keep is not None and i not in keep:
                    continue
                p01 = q.prob_meas1_prep0 if q.prob_meas1_prep0 is not None else q.readout_error
                p10 = q.prob_meas0_prep1 if q.prob_meas0_prep1 is not None else q.readout_error
                if p01 == 0 and p10 == 0:
                    continue
                nm.add_readout_error(ReadoutError([[1 - p01, p01], [p10, 1 - p10]]), [i])
        return nm

    def to_backend(self, *, noise_qubits: Iterable[int] | None = None, **options):
        """A noisy :class:`~qiskit_aer.AerSimulator` whose target is the full
        :meth:`target` (so ``transpile(circ, backend=...)`` respects the
        coupling map, basis gates and error rates) and whose noise model is
        :meth:`noise_model` (restricted to ``noise_qubits`` if given; pass the
        fixed ``initial_layout`` to make construction fast).  Extra
        ``options`` go to ``AerSimulator`` (e.g. ``seed_simulator``)."""
        from qiskit_aer import AerSimulator

        if "noise_model" not in options:
            options["noise_model"] = self.noise_model(qubits=noise_qubits)
        return AerSimulator(target=self.target(), **options)


# --------------------------------------------------------------------------
# validation / parsing


def _clean(v: Any, limit: int = 60) -> str:
    s = repr(v)
    s = s.replace("\n", " ").replace("\r", " ")
    return s if len(s) <= limit else s[: limit - 3] + "..."


class _Ctx:
    def __init__(self, label: str):
        self.label = label

    def fail(self, field: str, expected: str, got: Any) -> ValueError:
        return ValueError(
            f"calibration {self.label!r}: {field} must be {expected}, got {_clean(got)}"
        )

    def msg(self, text: str) -> ValueError:
        return ValueError(f"calibration {self.label!r}: {text}".replace("\n", " "))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _prob(ctx: _Ctx, field: str, v: Any, *, optional: bool = False) -> float | None:
    if v is None and optional:
        return None
    if not _is_num(v) or not 0.0 <= v <= 1.0:
        return _raise(ctx.fail(field, "a probability in [0, 1]" + (" or null" if optional else ""), v))
    return float(v)


def _positive(ctx: _Ctx, field: str, v: Any, unit: str = "seconds") -> float:
    if not _is_num(v) or not v > 0:
        _raise(ctx.fail(field, f"> 0 {unit}", v))
    return float(v)


def _duration(ctx: _Ctx, field: str, v: Any) -> float | None:
    if v is None:
        return None
    if not _is_num(v) or v < 0:
        _raise(ctx.fail(field, ">= 0 seconds or null", v))
    return float(v)


def _raise(exc: Exception):
    raise exc


def _check_keys(ctx: _Ctx, where: str, d: Any, allowed: tuple, required: tuple) -> None:
    if not isinstance(d, Mapping):
        _raise(ctx.fail(where or "top level", "a JSON object", type(d).__name__))
    prefix = f"{where}." if where else ""
    for k in required:
        if k not in d:
            _raise(ctx.msg(f"missing required key {prefix}{k}"))
    for k in d:
        if k not in allowed:
            _raise(ctx.msg(f"unknown key {prefix}{k!s} (allowed: {', '.join(allowed)})"))


def _clip_t2(index: int, t1: float, t2: float) -> tuple[float, str | None]:
    if t2 <= 2.0 * t1:
        return t2, None
    return 2.0 * t1, (
        f"qubit {index}: T2={t2!r} s clipped to 2*T1={2.0 * t1!r} s "
        "(Aer thermal relaxation requires T2 <= 2*T1)"
    )


def _parse(d: Mapping[str, Any], label: str | None) -> Snapshot:
    from qiskit.circuit.library import get_standard_gate_name_mapping

    if label is None:
        label = d.get("name") if isinstance(d, Mapping) and isinstance(d.get("name"), str) else "<dict>"
    ctx = _Ctx(str(label))
    _check_keys(ctx, "", d, _TOP_KEYS, _TOP_REQUIRED)

    if d["schema"] != SCHEMA:
        _raise(ctx.fail("schema", repr(SCHEMA), d["schema"]))
    for k in ("name", "source", "timestamp"):
        if not isinstance(d[k], str) or not d[k].strip():
            _raise(ctx.fail(k, "a non-empty string", d[k]))
    try:
        datetime.fromisoformat(d["timestamp"])
    except ValueError:
        _raise(ctx.fail("timestamp", "an ISO 8601 date-time", d["timestamp"]))
    processor = d.get("processor")
    if processor is not None and not isinstance(processor, str):
        _raise(ctx.fail("processor", "a string or null", processor))

    n = d["num_qubits"]
    if not _is_int(n) or n < 1:
        _raise(ctx.fail("num_qubits", "a positive integer", n))
    dt = d.get("dt")
    if dt is not None:
        dt = _positive(ctx, "dt", dt)

    known = get_standard_gate_name_mapping()
    bg = d["basis_gates"]
    if not isinstance(bg, list) or not bg:
        _raise(ctx.fail("basis_gates", "a non-empty list of gate names", bg))
    for i, g in enumerate(bg):
        if not isinstance(g, str) or g not in known or g in ("measure", "delay"):
            _raise(ctx.fail(f"basis_gates[{i}]", "a qiskit standard gate name", g))
    if len(set(bg)) != len(bg):
        _raise(ctx.fail("basis_gates", "a list without duplicates", bg))

    def qubit_index(field: str, v: Any) -> int:
        if not _is_int(v) or not 0 <= v < n:
            _raise(ctx.fail(field, f"a qubit index in [0, {n - 1}]", v))
        return v

    cm_raw = d["coupling_map"]
    if not isinstance(cm_raw, list):
        _raise(ctx.fail("coupling_map", "a list of [control, target] pairs", cm_raw))
    cm: list[tuple[int, int]] = []
    for i, e in enumerate(cm_raw):
        if not isinstance(e, list) or len(e) != 2:
            _raise(ctx.fail(f"coupling_map[{i}]", "a pair [a, b]", e))
        a = qubit_index(f"coupling_map[{i}][0]", e[0])
        b = qubit_index(f"coupling_map[{i}][1]", e[1])
        if a == b:
            _raise(ctx.fail(f"coupling_map[{i}]", "two distinct qubits", e))
        cm.append((a, b))
    if len(set(cm)) != len(cm):
        _raise(ctx.msg("coupling_map contains duplicate edges"))

    qs_raw = d["qubits"]
    if not isinstance(qs_raw, list) or len(qs_raw) != n:
        got = len(qs_raw) if isinstance(qs_raw, list) else qs_raw
        _raise(ctx.fail("qubits", f"a list of num_qubits={n} entries", got))
    notes = list(d.get("notes") or [])
    if not isinstance(d.get("notes", []), list) or not all(isinstance(s, str) for s in notes):
        _raise(ctx.fail("notes", "a list of strings", d.get("notes")))
    qubits: list[QubitCalibration] = []
    for i, q in enumerate(qs_raw):
        f = f"qubits[{i}]"
        _check_keys(ctx, f, q, _QUBIT_KEYS, _QUBIT_REQUIRED)
        if "qubit" in q and q["qubit"] != i:
            _raise(ctx.fail(f"{f}.qubit", f"equal to its position {i}", q["qubit"]))
        t1 = _positive(ctx, f"{f}.t1", q["t1"])
        t2 = _positive(ctx, f"{f}.t2", q["t2"])
        t2, note = _clip_t2(i, t1, t2)
        if note:
            warnings.warn(f"calibration {ctx.label!r}: {note}", UserWarning, stacklevel=3)
            notes.append(note)
        qubits.append(
            QubitCalibration(
                t1=t1,
                t2=t2,
                readout_error=_prob(ctx, f"{f}.readout_error", q["readout_error"]),
                prob_meas0_prep1=_prob(ctx, f"{f}.prob_meas0_prep1", q.get("prob_meas0_prep1"), optional=True),
                prob_meas1_prep0=_prob(ctx, f"{f}.prob_meas1_prep0", q.get("prob_meas1_prep0"), optional=True),
                readout_length=_duration(ctx, f"{f}.readout_length", q.get("readout_length")),
            )
        )

    gs_raw = d["gates"]
    if not isinstance(gs_raw, list):
        _raise(ctx.fail("gates", "a list of gate entries", gs_raw))
    gates: list[GateCalibration] = []
    seen: set = set()
    for i, g in enumerate(gs_raw):
        f = f"gates[{i}]"
        _check_keys(ctx, f, g, _GATE_KEYS, _GATE_REQUIRED)
        name = g["gate"]
        if not isinstance(name, str) or name not in known or name in ("measure", "delay"):
            _raise(ctx.fail(f"{f}.gate", "a qiskit standard gate name or 'reset'", name))
        qs = g["qubits"]
        width = 1 if name in _NON_GATE_OPS else known[name].num_qubits
        if not isinstance(qs, list) or len(qs) != width:
            _raise(ctx.fail(f"{f}.qubits", f"a list of {width} qubit index(es) for {name!r}", qs))
        qt = tuple(qubit_index(f"{f}.qubits[{j}]", v) for j, v in enumerate(qs))
        if len(set(qt)) != len(qt):
            _raise(ctx.fail(f"{f}.qubits", "distinct qubits", qs))
        if (name, qt) in seen:
            _raise(ctx.msg(f"{f} duplicates an earlier entry for {name} on {list(qt)}"))
        seen.add((name, qt))
        gates.append(
            GateCalibration(
                gate=name,
                qubits=qt,
                error=_prob(ctx, f"{f}.error", g.get("error"), optional=True),
                duration=_duration(ctx, f"{f}.duration", g.get("duration")),
            )
        )
    return Snapshot(
        name=d["name"],
        source=d["source"],
        timestamp=d["timestamp"],
        processor=processor,
        num_qubits=n,
        dt=dt,
        basis_gates=tuple(bg),
        coupling_map=tuple(cm),
        qubits=tuple(qubits),
        gates=tuple(gates),
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------
# export from qiskit-ibm-runtime fake backends


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
    measure = target["measure"] if "measure" in target.operation_names else {}
    notes: list[str] = []
    qubits = [_qubit_record(target, props, measure, i, notes) for i in range(target.num_qubits)]
    gates = [
        {"gate": op, "qubits": list(qargs), "error": ip.error, "duration": ip.duration}
        for op in sorted(target.operation_names) if op not in _SKIP_OPS
        for qargs, ip in sorted((target[op] or {}).items(), key=lambda kv: kv[0] or ())
        if qargs is not None and ip is not None
    ]
    try:
        basis = list(backend.configuration().basis_gates)
    except Exception:
        basis = [g for g in target.operation_names if g not in _SKIP_OPS + _NON_GATE_OPS]
    edges = sorted({tuple(g["qubits"]) for g in gates if len(g["qubits"]) == 2 and g["gate"] not in _NON_GATE_OPS})
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
        t2, note = _clip_t2(i, t1, t2)
        if note:
            notes.append(note)
    return {
        "qubit": i, "t1": t1, "t2": t2, "readout_error": getattr(mp, "error", None),
        "prob_meas0_prep1": extra.get("prob_meas0_prep1"), "prob_meas1_prep0": extra.get("prob_meas1_prep0"),
        "readout_length": getattr(mp, "duration", None),
    }


# --------------------------------------------------------------------------
# persistence


def calibrations_dir() -> Path:
    """Where pulled and exported snapshots are written: ``$QBO_CALIBRATIONS_DIR`` if set, else
    the user's data directory (platformdirs, e.g. ``~/.local/share/qbo/calibrations``). Never
    the installed package."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env).expanduser()
    return platformdirs.user_data_path("qbo") / "calibrations"


def shipped_dir() -> Path:
    """The snapshots shipped with qbo (package data ``qbo.noise.calibrations``, whose source is
    the repository's top-level ``calibrations/``), read through importlib.resources."""
    return Path(str(resources.files("qbo.noise.calibrations")))


def _search_path() -> tuple[Path, ...]:
    """User snapshots first (a pulled snapshot may shadow a shipped one of the same name)."""
    return (calibrations_dir(), shipped_dir())


def list_snapshots() -> list[str]:
    """Names (file stems) of the ``*.json`` snapshots, user and shipped, sorted."""
    names: set[str] = set()
    for d in _search_path():
        if d.is_dir():
            names.update(p.stem for p in d.glob("*.json") if not p.name.startswith("."))
    return sorted(names)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _resolve(name_or_path: str | os.PathLike) -> Path:
    s = os.fspath(name_or_path)
    p = Path(s).expanduser()
    looks_like_path = s.endswith(".json") or os.sep in s or (os.altsep and os.altsep in s)
    if looks_like_path or p.is_file():
        return p
    for d in _search_path():
        for cand in (s, _snake(s)):
            f = d / f"{cand}.json"
            if f.is_file():
                return f
    avail = list_snapshots()
    raise ValueError(
        f"unknown calibration snapshot {s[:80]!r}: no such snapshot in {calibrations_dir()} or the "
        f"shipped set (available: {', '.join(avail) if avail else 'none'})"
    )


def load_snapshot(name_or_path: str | os.PathLike) -> Snapshot:
    """Load and validate a snapshot by name (``calibrations/<name>.json``;
    ``FakeBrisbane`` resolves to ``fake_brisbane``) or by file path."""
    path = _resolve(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"calibration {str(path)!r}: cannot read file ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"calibration {str(path)!r}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    return Snapshot.from_json(data, label=path.name)


def _dumps(d: dict) -> str:
    """Readable JSON: one top-level key per line, one list item per line."""
    lines = ["{"]
    items = list(d.items())
    for k, (key, val) in enumerate(items):
        tail = "," if k < len(items) - 1 else ""
        if isinstance(val, list) and val and isinstance(val[0], (dict, list)):
            lines.append(f" {json.dumps(key)}: [")
            for j, item in enumerate(val):
                lines.append("  " + json.dumps(item, separators=(", ", ": ")) + ("," if j < len(val) - 1 else ""))
            lines.append(" ]" + tail)
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(val)}{tail}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_snapshot(snapshot: Snapshot, path: str | os.PathLike) -> Path:
    """Atomically write ``snapshot`` as JSON to ``path`` (``qbo.files.write_text_atomic``).
    Returns the path written."""
    path = Path(path).expanduser()
    data = snapshot.to_json()
    Snapshot.from_json(data, label=path.name)  # never write an invalid file
    write_text_atomic(path, _dumps(data))
    return path
