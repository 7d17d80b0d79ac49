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
