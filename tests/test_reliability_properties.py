"""Property tests for issue 12's contract: parsers and validators either accept or raise the
documented one-line error, never anything else; journals never yield damaged data."""

from __future__ import annotations

import hashlib
import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from qbo.cli.errors import is_expected
from qbo.errors import BadFile, QboError
from qbo.experiments.config import ExperimentConfig
from qbo.experiments.journal import UnitJournal
from qbo.experiments.config import check_config_data
from qbo.oracles import parse_oracle

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers(-10**30, 10**30).map(str),
    st.sampled_from(["", "x", "1e400", "-0", "0.5", "1", "nan", "inf", "1_0", " 2 "]),
)
keys = st.sampled_from(["mean", "std", "qubits", "lo", "hi", "values", "probs", "objective", "p", "", "="])


@st.composite
def oracle_specs(draw):
    kind = draw(st.sampled_from(["bernoulli", "gaussian", "discrete", "qasm", "nope", ""]))
    if kind == "bernoulli":
        return f"bernoulli:{draw(numbers)}"
    if kind == "qasm":
        return f"qasm:{draw(st.sampled_from(['none.qasm', '/', '']))},objective={draw(numbers)}"
    items = draw(st.lists(st.tuples(keys, st.one_of(numbers, st.lists(numbers, max_size=3).map("|".join))), max_size=5))
    return f"{kind}:" + ",".join(f"{k}={v}" for k, v in items)


@FAST
@given(oracle_specs())
def test_oracle_specs_parse_or_raise_one_line_errors(spec):
    try:
        oracle = parse_oracle(spec)
    except ValueError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert oracle.mean is None or 0.0 <= (oracle.mean - oracle.low) / max(oracle.high - oracle.low, 1e-300) <= 1.0 + 1e-9


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.text(max_size=30), st.sampled_from(["exact", "aer:", "exact:x", ":", "aer:x/y", "aer:../../etc"])))
def test_targets_build_or_raise_expected_errors(target):
    from qbo.execution import make_executor

    if target.split(":")[0] in ("fake", "ibm"):
        return  # those reach qiskit-ibm-runtime (tested in test_hardware with fakes)
    try:
        make_executor(target, 0)
    except Exception as exc:  # noqa: BLE001
        assert is_expected(exc), repr(exc)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=12,
)
config_keys = st.sampled_from(["problem", "algorithms", "budget", "trials", "target", "seed", "estimator", "accounting",
                               "leftover", "mitigation", "weights", "problem_options", "algorithm_options", "bogus"])


@FAST
@given(st.dictionaries(config_keys, json_values, max_size=5))
@example({"algorithms": ""})  # a string where a list belongs: refused as bad input (found by hypothesis)
@example({"estimator": "0"})  # a value outside its choices (found by hypothesis)
@example({"target": "0"})  # an unknown target (found by hypothesis)
def test_configs_are_accepted_or_refused_with_bad_input(data):
    data = {k: v for k, v in data.items() if v is not None}  # TOML has no null
    try:
        check_config_data(data)
    except QboError as exc:
        assert "\n" not in str(exc)
        return
    try:
        config = ExperimentConfig(**data)
    except ValueError as exc:
        assert "\n" not in str(exc)
        return
    assert 1 <= config.budget <= 10**12 and 1 <= config.trials <= 10**5


def _journal(tmp_path, n):
    """A finished journal of n stages with a checkpoint after every stage (a commit each)."""
    at = {"stage": 0}
    journal = UnitJournal(tmp_path / "trial000-x.jsonl", "a" * 64, flush_every_s=0.0, fields={"trial": 0, "algorithm": "x"},
                          state=lambda: {"rng": {"s": at["stage"]}})
    journal.read()
    records = [{"stage": s, "cum_calls": s, "estimate": s / 7} for s in range(1, n + 1)]
    for r in records:
        at["stage"] = r["stage"]
        journal.append(r)
    journal.finish()
    return journal.path, [{"trial": 0, "algorithm": "x"} | r | {"seq": r["stage"]} for r in records]


def _chained(lines):
    """The lines of the hash chain (not checkpoints)."""
    return [line for line in lines if not line.startswith(b'{"checkpoint":')]


@st.composite
def damage(draw):
    kind = draw(st.sampled_from(["delete", "duplicate", "swap", "flip", "truncate", "insert"]))
    return kind, draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6)), draw(st.integers(1, 255))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 12), damage())
def test_damaged_journals_are_refused_or_yield_a_prefix(tmp_path_factory, n, how):
    tmp_path = tmp_path_factory.mktemp("j")
    path, records = _journal(tmp_path, n)
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    kind, a, b, byte = how
    i, j = a % len(lines), b % len(lines)
    if kind == "delete":
        lines.pop(i)
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "insert":
        lines.insert(i, json.dumps({"seq": i, "stage": i, "cum_calls": 0, "rng": {}, "chain": "0" * 16}).encode() + b"\n")
    damaged = b"".join(lines)
    if kind == "flip":
        at = a % len(data)
        damaged = data[:at] + bytes([data[at] ^ byte]) + data[at + 1:]
    if kind == "truncate":
        damaged = data[: a % (len(data) + 1)]
    path.write_bytes(damaged)
    try:
        replay = UnitJournal(path, "a" * 64).read()
    except BadFile as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return
    got = [{k: v for k, v in r.items() if k != "chain"} for r in replay.records]
    assert got == records[: len(got)]  # never a damaged or reordered record
    assert replay.state == ({"rng": {"s": len(got)}} if got else None)  # the state after the last of them
    if replay.done:
        assert [json.loads(line)["stage"] for line in UnitJournal(path, "a" * 64).stage_lines()] == [r["stage"] for r in records]
    whole = damaged[: damaged.rfind(b"\n") + 1].splitlines(keepends=True)
    original = data.splitlines(keepends=True)
    # accepted only if it is what an earlier kill could have left, give or take a checkpoint
    # (a checkpoint is resumable state, never a record: one missing or repeated changes nothing)
    assert _chained(original)[: len(_chained(whole))] == _chained(whole) and set(whole) <= set(original)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 9), st.integers(0, 9), st.lists(st.booleans(), max_size=20), st.booleans())
def test_the_scan_a_writer_keeps_is_the_walk_of_its_bytes(tmp_path_factory, before, after, commits, torn):
    """A journal that finishes registers its scan for merge (no chain walk of bytes it just
    wrote): it must equal the walk of the file, for a fresh unit and for one resumed after a
    close with stage lines no checkpoint covered (dropped) and, with ``torn``, a partial line."""
    from qbo.experiments import journal as journal_module

    path = tmp_path_factory.mktemp("j") / "trial000-x.jsonl"
    at = {"stage": 0}
    flushes = iter(commits)

    def write(n: int) -> UnitJournal:
        journal = UnitJournal(path, "a" * 64, flush_every_s=3600, fields={"trial": 0, "algorithm": "x"},
                              state=lambda: {"rng": {"s": at["stage"]}})
        replay = journal.read()
        at["stage"] = replay.records[-1]["stage"] if replay.records else 0
        for _ in range(n):
            at["stage"] += 1
            journal.append({"stage": at["stage"], "estimate": at["stage"] / 7})
            if next(flushes, False):
                journal.commit()
        return journal

    first = write(before)
    first.close()  # a kill: uncommitted stage lines are dropped
    if torn:
        with open(path, "ab") as handle:
            handle.write(b'{"trial":0,"algorithm":"x","stage":')
    journal_module.forget_scans()
    second = write(after)
    second.finish()
    kept = [(key, scan) for key, (scan, _) in journal_module._SCANS.items() if scan.done]
    assert len(kept) == 1
    (unit, config, digest), scan = kept[0]
    data = path.read_bytes()
    assert (unit, config, digest) == (path.stem, "a" * 64, hashlib.sha256(data).digest())  # found by merge
    assert scan == second._walk(data)
