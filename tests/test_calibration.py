"""Tests for qbo.noise (schema, store, export, aer_model): schema round trip, validation, persistence, noise."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from qbo.noise import store as cal
from qbo.noise.aer_model import aer_backend, noise_model, snapshot_target
from qbo.noise import (
    SCHEMA,
    Snapshot,
    export_from_fake,
    list_snapshots,
    load_snapshot,
    save_snapshot,
)

SHIPPED = ["fake_brisbane", "fake_sherbrooke", "fake_torino", "fake_fez"]
PROCESSORS = {
    "fake_brisbane": "Eagle r3",
    "fake_sherbrooke": "Eagle r3",
    "fake_torino": "Heron r1",
    "fake_fez": "Heron r2",
}


@pytest.fixture(scope="module")
def snapshots() -> dict[str, Snapshot]:
    return {name: load_snapshot(name) for name in SHIPPED}


@pytest.fixture(autouse=True)
def _default_dir(monkeypatch):
    monkeypatch.delenv(cal.ENV_DIR, raising=False)


def _single_line_value_error(excinfo, *needles: str) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg, msg
    for n in needles:
        assert n in msg, (n, msg)
    return msg


# ---------------------------------------------------------------- shipped data


def test_shipped_snapshots_listed():
    assert set(SHIPPED) <= set(list_snapshots())


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_snapshot_loads_and_validates(snapshots, name):
    s = snapshots[name]
    assert s.name == name
    assert s.processor == PROCESSORS[name]
    assert s.source.startswith("qiskit_ibm_runtime.fake_provider.Fake")
    assert len(s.qubits) == s.num_qubits > 100
    assert s.coupling_map and all(0 <= a < s.num_qubits for e in s.coupling_map for a in e)
    for q in s.qubits:
        assert q.t1 > 0 and 0 < q.t2 <= 2 * q.t1
        assert 0 <= q.readout_error <= 1
    two_q = {"ecr", "cz"} & set(s.basis_gates)
    assert len(two_q) == 1
    assert {g.qubits for g in s.gates if g.gate in two_q} == set(s.coupling_map)
    # file on disk re-validates strictly and equals the loaded object
    path = cal.shipped_dir() / f"{name}.json"
    assert Snapshot.from_json(json.loads(path.read_text())) == s
    assert load_snapshot(str(path)) == s
    assert load_snapshot("Fake" + name.split("_", 1)[1].capitalize()) == s


def test_export_matches_shipped_file():
    # the shipped file's source (top-level calibrations/, installed as package data) is
    # exactly what export_from_fake produces
    source = Path(__file__).resolve().parents[1] / "calibrations" / "fake_torino.json"
    assert export_from_fake("FakeTorino") == load_snapshot(str(source))


def test_round_trip_to_from_json(snapshots):
    for s in snapshots.values():
        d = s.to_json()
        assert d["schema"] == SCHEMA
        d2 = json.loads(json.dumps(d))
        assert Snapshot.from_json(d2) == s
        assert Snapshot.from_json(d2).to_json() == d


def test_t2_clipped_with_note(snapshots):
    s = snapshots["fake_torino"]
    assert any("qubit 86" in n and "2*T1" in n for n in s.notes)
    assert s.qubits[86].t2 == pytest.approx(2 * s.qubits[86].t1)
    d = s.to_json()
    d["qubits"][3]["t2"] = 3 * d["qubits"][3]["t1"]
    d["notes"] = []
    with pytest.warns(UserWarning, match="qubit 3"):
        s2 = Snapshot.from_json(d)
    assert s2.qubits[3].t2 == 2 * s2.qubits[3].t1
    assert len(s2.notes) == 1


# ---------------------------------------------------------------- validation


def _small(snapshots) -> dict:
    return snapshots["fake_brisbane"].to_json()


def test_negative_t1_rejected(snapshots):
    d = _small(snapshots)
    d["qubits"][3]["t1"] = -5.0
    with pytest.raises(ValueError) as ei:
        Snapshot.from_json(d, label="x.json")
    msg = _single_line_value_error(ei, "x.json", "qubits[3].t1", "-5.0", "> 0 seconds")
    assert msg == "calibration 'x.json': qubits[3].t1 must be > 0 seconds, got -5.0"


def test_error_above_one_rejected(snapshots):
    d = _small(snapshots)
    d["gates"][7]["error"] = 1.5
    with pytest.raises(ValueError) as ei:
        Snapshot.from_json(d)
    _single_line_value_error(ei, "gates[7].error", "1.5", "[0, 1]")


@pytest.mark.parametrize(
    "mutate, needles",
    [
        (lambda d: d.update(schema="qbo.noise.snapshot/0"), ["schema", "qbo.noise.snapshot/0"]),
        (lambda d: d.pop("gates"), ["missing required key gates"]),
        (lambda d: d.update(extra=1), ["unknown key extra"]),
        (lambda d: d["qubits"][0].update(readout_error=-0.1), ["qubits[0].readout_error", "-0.1"]),
        (lambda d: d["qubits"][1].update(t2=float("nan")), ["qubits[1].t2", "nan"]),
        (lambda d: d["qubits"][1].update(t1="1e-4"), ["qubits[1].t1", "'1e-4'"]),
        (lambda d: d["coupling_map"].append([0, 999]), ["coupling_map[", "999", "[0, 126]"]),
        (lambda d: d["gates"][0].update(qubits=[0, 127]), ["gates[0].qubits[1]", "127"]),
        (lambda d: d["gates"][0].update(gate="bogus"), ["gates[0].gate", "'bogus'"]),
        (lambda d: d["gates"].append(dict(d["gates"][0])), ["duplicates"]),
        (lambda d: d.update(num_qubits=True), ["num_qubits", "True"]),
        (lambda d: d.update(timestamp="yesterday"), ["timestamp", "'yesterday'"]),
        (lambda d: d["gates"][5].update(duration=-1e-9), ["gates[5].duration", "-1e-09"]),
    ],
)
def test_invalid_fields_rejected(snapshots, mutate, needles):
    d = _small(snapshots)
    mutate(d)
    with pytest.raises(ValueError) as ei:
        Snapshot.from_json(d, label="bad.json")
    _single_line_value_error(ei, "bad.json", *needles)


def test_bad_json_file_rejected(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('{"schema": "qbo.calibration/1",\n "name": oops}\n')
    with pytest.raises(ValueError) as ei:
        load_snapshot(str(p))
    _single_line_value_error(ei, "broken.json", "invalid JSON", "line 2")


def test_unknown_snapshot_name(tmp_path, monkeypatch):
    monkeypatch.setenv(cal.ENV_DIR, str(tmp_path))
    with pytest.raises(ValueError) as ei:
        load_snapshot("nope")
    _single_line_value_error(ei, "'nope'")


def test_unknown_fake_name():
    with pytest.raises(ValueError) as ei:
        export_from_fake("FakeNowhere")
    _single_line_value_error(ei, "'FakeNowhere'", "FakeBrisbane")


# ---------------------------------------------------------------- persistence


def test_atomic_save_and_env_override(snapshots, tmp_path, monkeypatch):
    s = snapshots["fake_sherbrooke"]
    out = save_snapshot(s, tmp_path / "mine.json")
    assert sorted(os.listdir(tmp_path)) == ["mine.json"]  # no temp files left
    save_snapshot(s, out)  # overwrite in place
    assert sorted(os.listdir(tmp_path)) == ["mine.json"]
    monkeypatch.setenv(cal.ENV_DIR, str(tmp_path))
    assert list_snapshots() == sorted(["mine", "fake_brisbane", "fake_fez", "fake_sherbrooke", "fake_torino"])
    assert load_snapshot("mine") == s  # user snapshots are found beside the shipped ones
    assert cal.calibrations_dir() == tmp_path and cal.shipped_dir() != tmp_path


def test_failed_save_leaves_no_temp_files(snapshots, tmp_path, monkeypatch):
    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(cal.os, "replace", boom)
    with pytest.raises(OSError):
        save_snapshot(snapshots["fake_brisbane"], tmp_path / "x.json")
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- qiskit / Aer


def _stress_qubits(s: Snapshot) -> list[int]:
    """Qubits touching the worst working two-qubit gate, worst readout, shortest T1 (faulty
    qubits and gates are kept out of the noise model, so they are not candidates)."""
    two_q = [g for g in s.gates if len(g.qubits) == 2 and not g.faulty]
    worst = max(two_q, key=lambda g: g.error or 0.0)
    working = [i for i in range(s.num_qubits) if not s.qubits[i].faulty]
    ro = max(working, key=lambda i: s.qubits[i].readout_error)
    t1 = min(working, key=lambda i: s.qubits[i].t1)
    return sorted({*worst.qubits, ro, t1})


@pytest.mark.parametrize("name", SHIPPED)
def test_noise_model_builds(snapshots, name):
    s = snapshots[name]
    qs = _stress_qubits(s)
    nm = noise_model(s, qubits=qs)
    assert set(s.basis_gates) - {"rz"} <= set(nm.noise_instructions)
    assert sorted(q for (q,) in nm._local_readout_errors) == qs
    ro = nm._local_readout_errors[(qs[0],)].probabilities
    q0 = s.qubits[qs[0]]
    assert ro[0][1] == pytest.approx(q0.prob_meas1_prep0)
    assert ro[1][0] == pytest.approx(q0.prob_meas0_prep1)
    tgt = snapshot_target(s)
    assert tgt.num_qubits == s.num_qubits
    assert set(s.basis_gates) <= set(tgt.operation_names)


@pytest.mark.slow
def test_full_noise_model_matches_restricted(snapshots):
    from qiskit.quantum_info import SuperOp
    import numpy as np

    s = snapshots["fake_brisbane"]
    full = noise_model(s)
    assert len(full._local_readout_errors) == s.num_qubits
    qs = _stress_qubits(s)
    part = noise_model(s, qubits=qs)
    for inst, by_q in part._local_quantum_errors.items():
        for qargs, err in by_q.items():
            a = SuperOp(err.to_quantumchannel()).data
            b = SuperOp(full._local_quantum_errors[inst][qargs].to_quantumchannel()).data
            assert np.allclose(a, b)


def test_transpile_with_fixed_layout(snapshots):
    from qiskit import QuantumCircuit, transpile

    s = snapshots["fake_torino"]
    a, b = s.coupling_map[0]
    backend = aer_backend(s, noise_qubits=[a, b], seed_simulator=7)
    qc = QuantumCircuit(2)
    qc.h(0)
    qc.cx(0, 1)
    qc.measure_all()
    tq = transpile(qc, backend=backend, initial_layout=[a, b], optimization_level=1,
                   seed_transpiler=7)
    assert tq.layout.initial_index_layout()[:2] == [a, b]
    assert set(tq.count_ops()) <= set(s.basis_gates) | {"measure", "barrier"}
    counts = backend.run(tq, shots=2000).result().get_counts()
    assert counts.get("00", 0) + counts.get("11", 0) > 1500


@pytest.mark.parametrize("name", SHIPPED)
def test_noisy_deviation_grows_with_depth(snapshots, name):
    """P(1) of ry(2θ)·(X·X)^k drifts away from the ideal sin²θ as k grows."""
    from qiskit import QuantumCircuit, transpile

    s = snapshots[name]
    q = min(range(s.num_qubits), key=lambda i: s.qubits[i].readout_error)
    backend = aer_backend(s, noise_qubits=[q], seed_simulator=1234, method="density_matrix")
    theta, shots, k_large = math.pi / 3, 10_000, 1500
    ideal = math.sin(theta) ** 2

    def circuit(k: int) -> QuantumCircuit:
        qc = QuantumCircuit(1, 1)
        qc.ry(2 * theta, 0)
        for _ in range(k):
            qc.barrier()
            qc.x(0)
            qc.x(0)
        qc.barrier()
        qc.measure(0, 0)
        return qc

    circs = transpile([circuit(0), circuit(k_large)], backend=backend,
                      initial_layout=[q], optimization_level=0)
    assert circs[1].count_ops()["x"] == 2 * k_large
    res = backend.run(circs, shots=shots).result()
    p = [res.get_counts(i).get("1", 0) / shots for i in range(2)]
    dev = [abs(pi - ideal) for pi in p]
    sigma = math.sqrt(sum(pi * (1 - pi) for pi in p) / shots)
    assert dev[1] - dev[0] > 5 * sigma, (name, q, p, ideal, sigma)


# ---------------------------------------------------------------- faulty qubits and gates


@pytest.fixture(scope="module")
def kingston() -> Snapshot:
    """FakeKingston reports qubit 146 without T1/T2 and several gates with error 1."""
    return export_from_fake("FakeKingston")


@pytest.mark.slow
def test_faulty_backend_exports_with_marks(kingston, tmp_path):
    assert 146 in kingston.faulty_qubits
    q = kingston.qubits[146]
    assert q.faulty and q.t1 is None and q.t2 is None
    assert any("qubit 146 marked faulty" in n for n in kingston.notes)
    # every gate on a faulty qubit is faulty, every error-1 gate is faulty, nothing else
    for g in kingston.gates:
        on_faulty = any(kingston.qubits[i].faulty for i in g.qubits)
        assert g.faulty == (on_faulty or (g.error is not None and g.error >= 1.0)), g
    path = save_snapshot(kingston, tmp_path / "k.json")
    assert load_snapshot(str(path)) == kingston
    assert Snapshot.from_json(kingston.to_json()) == kingston


@pytest.fixture(scope="module")
def broken(snapshots) -> Snapshot:
    """fake_torino with its best-read-out qubit faulty (no T1) and one more link broken."""
    from qbo.noise.layout import choose_layout

    raw = snapshots["fake_torino"].to_json()
    best = choose_layout(snapshot_target(snapshots["fake_torino"]), 1)[0]
    raw["qubits"][best].update(t1=None, faulty=True)
    raw["gates"][next(i for i, g in enumerate(raw["gates"]) if len(g["qubits"]) == 2 and best not in g["qubits"]
                      and not g.get("faulty"))]["faulty"] = True
    return Snapshot.from_json(raw, label="broken")


def test_faulty_entries_never_reach_target_layout_or_noise_model(broken):
    from qbo.noise.layout import choose_layout

    kingston = broken
    target = snapshot_target(kingston)
    bad = set(kingston.faulty_qubits)
    used = {q for name in target.operation_names for qargs in (target[name] or {}) if qargs for q in qargs}
    assert not used & bad
    broken = {(g.gate, g.qubits) for g in kingston.faulty_gates}
    assert not any((name, qargs) in broken for name in target.operation_names for qargs in (target[name] or {}))
    for width in (1, 3, 7):
        assert not set(choose_layout(target, width)) & bad
    assert all(g.faulty for g in kingston.gates if set(g.qubits) & bad)
    model = noise_model(kingston, qubits=choose_layout(target, 3) + sorted(bad))
    assert not {q for q in model.noise_qubits} & bad
    assert Snapshot.from_json(kingston.to_json()) == kingston


def test_null_values_need_the_faulty_mark(broken, snapshots):
    raw = broken.to_json()
    (i,) = set(broken.faulty_qubits) - set(snapshots["fake_torino"].faulty_qubits)  # the one made here
    del raw["qubits"][i]["faulty"]
    with pytest.raises(ValueError) as excinfo:
        Snapshot.from_json(raw, label="k.json")
    _single_line_value_error(excinfo, f"qubits[{i}].t1", "> 0 seconds", "None")
    raw["qubits"][i]["faulty"] = "yes"
    with pytest.raises(ValueError) as excinfo:
        Snapshot.from_json(raw, label="k.json")
    _single_line_value_error(excinfo, f"qubits[{i}].faulty", "true or false")


@pytest.mark.slow
def test_cli_exports_and_shows_a_faulty_backend(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from qbo.cli.app import app

    monkeypatch.setenv(cal.ENV_DIR, str(tmp_path))
    runner = CliRunner()
    exported = runner.invoke(app, ["calibrations", "export", "--from-fake", "FakeKingston"])
    assert exported.exit_code == 0, exported.output
    shown = runner.invoke(app, ["calibrations", "show", "fake_kingston"])
    assert shown.exit_code == 0, shown.output
    assert "faulty qubits [96, 112, 113, 131, 146]" in shown.output
    assert "qubit 146 marked faulty: T1=None, T2=None" in shown.output
