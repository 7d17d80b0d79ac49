"""The one target parser (qbo.execution.targets.parse_target): round trips and clean refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.execution import Target, parse_target

NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,30}", fullmatch=True)
VALID = st.one_of(
    st.just("exact"), st.just("aer"),
    NAMES.map(lambda n: f"aer:{n}"), NAMES.map(lambda n: f"fake:{n}"), NAMES.map(lambda n: f"ibm:{n}"),
)


@given(VALID)
def test_valid_targets_round_trip(text):
    target = parse_target(text)
    assert str(target) == text
    assert parse_target(str(target)) == target
    assert target.is_device == (target.kind in ("fake", "ibm"))


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=120), st.integers(), st.none(), st.lists(st.text(max_size=3))))
def test_anything_else_is_a_target_or_one_line_value_error(value):
    try:
        target = parse_target(value)
    except ValueError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) < 300
        assert "expected" in message
    else:
        assert isinstance(target, Target) and str(target) == value


@pytest.mark.parametrize("text", ["aer:", "ibm:", "fake:", "ibm", "fake", "exact:x", "AER", "ibm:a b", "ibm:" + "x" * 101])
def test_known_bad_targets_are_refused(text):
    with pytest.raises(ValueError):
        parse_target(text)


def test_snapshot_of_each_kind():
    assert parse_target("exact").snapshot() is None
    assert parse_target("aer").snapshot() is None
    assert parse_target("aer:fake_torino").snapshot().name == "fake_torino"


FACTS = {  # target -> (is_noiseless, has_device_model, is_device, is_ibm, has a snapshot)
    "exact": (True, False, False, False, False),
    "aer": (True, False, False, False, False),
    "aer:fake_torino": (False, True, False, False, True),
    "fake:FakeManilaV2": (False, True, True, False, True),
    "ibm:ibm_torino": (False, True, True, True, False),
}


@pytest.mark.parametrize("text", list(FACTS))
def test_every_target_question_is_a_property(text):
    target = parse_target(text)
    facts = (target.is_noiseless, target.has_device_model, target.is_device, target.is_ibm,
             target.device_model is not None)
    assert facts == FACTS[text]
    assert (target.snapshot() is None) == (target.device_model is None)


@given(VALID)
def test_a_target_is_its_string_and_survives_pickle_and_json(text):
    import json
    import pickle

    target = parse_target(text)
    assert target == text and hash(target) == hash(text) and parse_target(target) is target
    assert pickle.loads(pickle.dumps(target)) == target and type(pickle.loads(pickle.dumps(target))) is Target
    assert json.loads(json.dumps({"target": target})) == {"target": text}
    assert Target(target.kind, target.name) == target


def test_the_device_model_is_built_once_per_snapshot_file(tmp_path, monkeypatch):
    import os
    import shutil

    from qbo import caches
    from qbo.noise import model, shipped_dir

    reads = []
    real = model.load_snapshot
    monkeypatch.setattr(model, "load_snapshot", lambda path: reads.append(path) or real(path))
    caches.clear("qbo.noise.model")
    path = tmp_path / "mine.json"
    shutil.copy(shipped_dir() / "fake_torino.json", path)
    first = parse_target(f"aer:{path}").device_model
    assert first is parse_target(f"aer:{path}").device_model and first.snapshot is parse_target(f"aer:{path}").snapshot()
    assert len(reads) == 1 and caches.sizes("qbo.noise.model")["qbo.noise.model.device_model"] == 1
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # an edited file is read again
    assert parse_target(f"aer:{path}").device_model is not first and len(reads) == 2
    assert "qbo.noise.model.device_model" in caches.clear("qbo.noise.model")
    assert caches.sizes("qbo.noise.model") == {"qbo.noise.model.device_model": 0, "qbo.noise.model.fake_device_model": 0}


def test_the_device_model_answers_layout_and_faulty_parts():
    model = parse_target("aer:fake_torino").device_model
    assert model.name == "fake_torino" and model.faulty_qubits == model.snapshot.faulty_qubits
    layout = model.layout(3)
    assert len(set(layout)) == 3 and not set(layout) & set(model.faulty_qubits)
    assert model.compiler() is model.compiler()


@pytest.mark.parametrize("label, promised", [
    ("exact", True), ("aer", True), (Target("aer"), True), ("aer:fake_torino", False), ("fake:FakeManilaV2", False),
    ("ibm:ibm_torino", False), ("a test double", False),
])
def test_an_estimate_without_a_device_model_promises_eps_only_on_noiseless_targets(label, promised):
    from qbo.qmc.base import without_device_model
    from qbo.qmc.result import Estimate, Round

    est = Estimate(0.3, 0.25, 0.35, 0.05, 0.05, (Round(k=0, shots=10, ones=3),), 0.0, "mc", str(label))
    out = without_device_model(est, label)
    assert out.reached_epsilon == promised and (out == est) == promised
    if not promised:
        known = label != "a test double"
        assert ("carries device noise" in out.note) == known
        assert ("noise is unknown to qbo and no calibration-aware depth caps apply" in out.note) != known
