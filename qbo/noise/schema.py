"""Calibration snapshot schema: the immutable record of one device and its validation.

A :class:`Snapshot` holds one device's calibration (T1/T2, readout and gate errors, gate
durations, coupling map) in SI units; the JSON schema is in ``calibrations/README.md``. A
validation failure is one ``ValueError`` line naming the file, field, value and what was
expected, e.g. ``calibration 'x.json': qubits[3].t1 must be > 0 seconds, got -5.0``.

Faulty entries (``"faulty": true``: a qubit without T1/T2 or usable readout, a gate with
IBM's error 1, and every gate on a faulty qubit) stay in the record, so ``calibrations
show`` can name them, but are left out of the qiskit Target and the Aer noise model
(``qbo.noise.aer_model``), so layouts and routing never use them. Other qubits are
validated strictly.

Aer's ``thermal_relaxation_error`` needs T2 <= 2 T1; published IBM calibrations sometimes
break it, so such T2 are clipped to 2 T1 on export or load, with a line in
:attr:`Snapshot.notes` (and a ``UserWarning`` when a loaded file still needed it).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Mapping

__all__ = ["SCHEMA", "QubitCalibration", "GateCalibration", "Snapshot", "clip_t2", "NON_GATE_OPS"]

SCHEMA = "qbo.calibration/1"

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
    "readout_length", "faulty",
)
_QUBIT_REQUIRED = ("t1", "t2", "readout_error")
_GATE_KEYS = ("gate", "qubits", "error", "duration", "faulty")
_GATE_REQUIRED = ("gate", "qubits")
# Instructions that are not unitary gates but may carry a duration (and hence
# thermal relaxation noise).
NON_GATE_OPS = ("reset",)


@dataclass(frozen=True)
class QubitCalibration:
    """Per-qubit calibration. Times in seconds, errors as probabilities."""

    t1: float | None
    t2: float | None
    readout_error: float | None
    prob_meas0_prep1: float | None = None
    prob_meas1_prep0: float | None = None
    readout_length: float | None = None
    faulty: bool = False


@dataclass(frozen=True)
class GateCalibration:
    """One (gate, qubits) entry: average gate error in [0, 1] and duration in seconds."""

    gate: str
    qubits: tuple[int, ...]
    error: float | None
    duration: float | None
    faulty: bool = False


@dataclass(frozen=True)
class Snapshot:
    """Immutable calibration snapshot of one device. Build with
    ``qbo.noise.export``, :meth:`from_json` or ``qbo.noise.store.load_snapshot``."""

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
                    **({"faulty": True} if q.faulty else {}),
                }
                for i, q in enumerate(self.qubits)
            ],
            "gates": [
                {"gate": g.gate, "qubits": list(g.qubits), "error": g.error, "duration": g.duration,
                 **({"faulty": True} if g.faulty else {})}
                for g in self.gates
            ],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any], *, label: str | None = None) -> "Snapshot":
        """Validate ``d`` and build a snapshot. ``label`` names the origin in
        error messages (defaults to ``d['name']``)."""
        return _parse(d, label)

    # --------------------------------------------------------------- queries
    @property
    def faulty_qubits(self) -> tuple[int, ...]:
        """Indices of the qubits marked faulty (never laid out or simulated)."""
        return tuple(i for i, q in enumerate(self.qubits) if q.faulty)

    @property
    def faulty_gates(self) -> tuple[GateCalibration, ...]:
        """Gate entries marked faulty (left out of the Target and the noise model)."""
        return tuple(g for g in self.gates if g.faulty)

    def qubit(self, index: int) -> QubitCalibration:
        return self.qubits[index]

    def gate(self, name: str, qubits: Iterable[int]) -> GateCalibration | None:
        key = (name, tuple(qubits))
        for g in self.gates:
            if (g.gate, g.qubits) == key:
                return g
        return None

    def check_qubits(self, qubits: Iterable[int] | None) -> frozenset[int] | None:
        """``qubits`` as a set after checking every index (None stays None)."""
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


def clip_t2(index: int, t1: float, t2: float) -> tuple[float, str | None]:
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
        faulty = q.get("faulty", False)
        if not isinstance(faulty, bool):
            _raise(ctx.fail(f"{f}.faulty", "true or false", faulty))
        if faulty:  # a faulty qubit may lack values; the ones it has must still be sane
            t1 = None if q["t1"] is None else _positive(ctx, f"{f}.t1", q["t1"])
            t2 = None if q["t2"] is None else _positive(ctx, f"{f}.t2", q["t2"])
            readout = _prob(ctx, f"{f}.readout_error", q["readout_error"], optional=True)
        else:
            t1 = _positive(ctx, f"{f}.t1", q["t1"])
            t2 = _positive(ctx, f"{f}.t2", q["t2"])
            readout = _prob(ctx, f"{f}.readout_error", q["readout_error"])
        if t1 is not None and t2 is not None:
            t2, note = clip_t2(i, t1, t2)
            if note:
                warnings.warn(f"calibration {ctx.label!r}: {note}", UserWarning, stacklevel=3)
                notes.append(note)
        qubits.append(
            QubitCalibration(
                t1=t1,
                t2=t2,
                readout_error=readout,
                prob_meas0_prep1=_prob(ctx, f"{f}.prob_meas0_prep1", q.get("prob_meas0_prep1"), optional=True),
                prob_meas1_prep0=_prob(ctx, f"{f}.prob_meas1_prep0", q.get("prob_meas1_prep0"), optional=True),
                readout_length=_duration(ctx, f"{f}.readout_length", q.get("readout_length")),
                faulty=faulty,
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
        width = 1 if name in NON_GATE_OPS else known[name].num_qubits
        if not isinstance(qs, list) or len(qs) != width:
            _raise(ctx.fail(f"{f}.qubits", f"a list of {width} qubit index(es) for {name!r}", qs))
        qt = tuple(qubit_index(f"{f}.qubits[{j}]", v) for j, v in enumerate(qs))
        if len(set(qt)) != len(qt):
            _raise(ctx.fail(f"{f}.qubits", "distinct qubits", qs))
        if (name, qt) in seen:
            _raise(ctx.msg(f"{f} duplicates an earlier entry for {name} on {list(qt)}"))
        seen.add((name, qt))
        flagged = g.get("faulty", False)
        if not isinstance(flagged, bool):
            _raise(ctx.fail(f"{f}.faulty", "true or false", flagged))
        gates.append(
            GateCalibration(
                gate=name,
                qubits=qt,
                error=_prob(ctx, f"{f}.error", g.get("error"), optional=True),
                duration=_duration(ctx, f"{f}.duration", g.get("duration")),
                faulty=flagged or any(qubits[j].faulty for j in qt),
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
