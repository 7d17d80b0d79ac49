"""One runner for every problem: per-unit entry point, order independence, stages assembled,
hardware settings in the config, one registry."""

from __future__ import annotations

import json

import pytest

from qbo.algorithms import POLICIES, POLICY_NAMES, is_quantum
from qbo.execution import runtime
from qbo.execution.jobs import JobJournal
from qbo.experiments.config import ExperimentConfig, load_config
from qbo.experiments.runner import merge, prepare, run_experiment, run_unit, units
from qbo.execution.runtime import LocalConnection
from tests.support.faults import ExactConnection

SMALL = ExperimentConfig(budget=300, trials=2)
FILES = ("stages.jsonl", "summary.csv", "regret.png", "config.toml")


def files(folder):
    return {name: (folder / name).read_bytes() for name in FILES}


def test_units_in_any_order_then_merge_equal_a_plain_run(tmp_path):
    run_experiment(SMALL, tmp_path / "plain")
    out = tmp_path / "fanned"
    prepare(SMALL, out).release()  # claimed, as run_fanned_out does
    for unit in reversed(units(SMALL)):  # as a worker pool might finish them
        run_unit(SMALL, unit, out)
    journals = {p.name: p.read_bytes() for p in (out / "units").glob("*.jsonl")}
    assert sorted(journals) == sorted(f"{u.key}.jsonl" for u in units(SMALL))
    merge(SMALL, out)
    assert files(out) == files(tmp_path / "plain")
    # stages.jsonl is the journals' stage lines, byte for byte, in the config's unit order
    copied = b"".join(line for u in units(SMALL) for line in journals[f"{u.key}.jsonl"].splitlines(keepends=True)
                      if line.startswith(b'{"trial":'))
    assert (out / "stages.jsonl").read_bytes() == copied


def test_a_run_without_figure_writes_the_same_records_and_no_png(tmp_path):
    with_figure = run_experiment(SMALL, tmp_path / "plain")
    without = run_experiment(SMALL, tmp_path / "bare", figure=False)
    assert without == with_figure
    assert not (tmp_path / "bare" / "regret.png").exists()
    for name in ("stages.jsonl", "summary.csv", "config.toml"):
        assert (tmp_path / "bare" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    merge(SMALL, tmp_path / "bare")  # a later merge of the finished run draws it
    assert (tmp_path / "bare" / "regret.png").read_bytes() == (tmp_path / "plain" / "regret.png").read_bytes()


def test_merge_refuses_an_unfinished_unit(tmp_path):
    prepare(SMALL, tmp_path).release()
    run_unit(SMALL, units(SMALL)[0], tmp_path)
    with pytest.raises(ValueError, match="trial000-gp-ucb of .* is not finished"):
        merge(SMALL, tmp_path)
    assert not (tmp_path / "stages.jsonl").exists() and (tmp_path / "units").is_dir()


def test_a_finished_run_holds_each_stage_record_once(tmp_path):
    records = run_experiment(SMALL, tmp_path)
    assert not (tmp_path / "units").exists()  # the journals are gone: stages.jsonl holds the records
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "calls", "config.toml", "regret.png", "run.json",
                                                          "stages.jsonl", "summary.csv"]
    lines = (tmp_path / "stages.jsonl").read_text().splitlines()
    assert len(lines) == len(records) and json.loads(lines[0]) == records[0] and "rng" not in records[0]
    assert list(records[0])[:2] == ["trial", "algorithm"] and list(records[0])[-2:] == ["seq", "chain"]
    assert all(r["seq"] == r["stage"] for r in records if "calls_sha256" not in r)  # compact units: checkpoints
    marker = json.loads((tmp_path / "run.json").read_text())
    assert marker["finished"]["records"] == len(records)
    before = files(tmp_path)
    again = run_experiment(SMALL, tmp_path)  # a finished folder: stages.jsonl verified, nothing re-run
    assert again == records and files(tmp_path) == before


def test_one_registry_one_name_per_policy():
    assert len(POLICY_NAMES) == len(set(POLICY_NAMES)) == len(POLICIES)
    assert {n for n in POLICY_NAMES if is_quantum(n)} == {"q-gp-ucb", "q-linucb", "q-ctv-gp-ucb", "q-ucb-halve", "q-se"}
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        is_quantum("nope")


@pytest.mark.parametrize("table, fragment", [
    ({"mode": "turbo"}, "hardware mode must be one of job, batch, session, got 'turbo'"),
    ({"retries": 3}, "hardware has unknown key 'retries'"),
])
def test_bad_hardware_table_is_one_line(table, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        ExperimentConfig(hardware=table)
    assert "\n" not in str(info.value)


def test_hardware_table_round_trips_and_is_left_out_when_empty(tmp_path):
    assert "hardware" not in SMALL.to_toml()
    cfg = SMALL.with_overrides(hardware={"mode": "batch", "timeout_s": 60.0})
    (tmp_path / "c.toml").write_text(cfg.to_toml())
    assert load_config(tmp_path / "c.toml") == cfg and cfg != SMALL


@pytest.mark.slow
def test_the_configs_hardware_mode_reaches_the_device(tmp_path, monkeypatch):
    conn = ExactConnection(store=tmp_path / "server")
    monkeypatch.setattr(runtime, "connect", lambda kind: conn if kind == "ibm" else LocalConnection())
    cfg = ExperimentConfig(algorithms=("q-gp-ucb",), budget=400, trials=1, target="ibm:ibm_test",
                           hardware={"mode": "session", "base_delay": 0.001, "max_delay": 0.001})
    run_experiment(cfg, tmp_path / "run")
    submitted = [e for e in JobJournal.in_run_dir(tmp_path / "run").read() if e["event"] == "submitted"]
    assert submitted and {e["mode"] for e in submitted} == {"session"}


def test_every_problem_has_one_registry():
    from qbo.problems import ALL_PROBLEMS, TVProblem, is_drifting, make_problem

    assert "tv-synthetic" in ALL_PROBLEMS and is_drifting("tv-synthetic") and not is_drifting("linear")
    assert {"berkenkamp-gaussian", "michalewicz-bernoulli"} <= set(ALL_PROBLEMS)
    p = make_problem("tv-synthetic", grid_size=3, sec_per_call=0.5, window=[-2, 2])
    assert isinstance(p, TVProblem) and p.num_arms == 9 and p.stages.reward_range == 4.0
    with pytest.raises(ValueError, match="clock must be one of calls, wall, got 'sundial'"):
        make_problem("tv-synthetic", grid_size=3, clock="sundial")


@pytest.mark.parametrize("algorithm, options, fragment", [
    ("q-ucb-halve", {"target": "aer:fake_torino"}, "no calibration-aware bias pad"),
    ("q-se", {"target": "aer:fake_torino", "mitigation": "rem"}, "without mitigation"),
    ("q-gp-ucb", {"target": "aer:fake_torino", "algorithm_options": {"q-gp-ucb": {"resume": True}}}, "bias pad"),
])
def test_resumed_qmc_on_a_device_model_is_refused_before_a_folder_is_claimed(tmp_path, algorithm, options, fragment):
    """Resumed QMC has no bias pad (issue 9): on a device model its intervals would not cover."""
    config = ExperimentConfig(algorithms=(algorithm,), budget=500, trials=1, **options)
    with pytest.raises(ValueError, match=fragment):
        prepare(config, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_stage_lines_parse_the_same_with_orjson_and_its_json_fallback():
    """merge parses with orjson; lines it refuses (NaN, big integers) fall back to json."""
    from qbo.experiments.journal import parse_lines as _records

    lines = [b'{"a":0.1,"b":[1,2],"c":null}', b'{"a":1e-300,"b":-0.0,"c":"x"}']
    assert _records(lines) == [json.loads(line) for line in lines]
    odd = lines + [b'{"a":NaN,"b":123456789012345678901234567890}']
    parsed = _records(odd)
    assert parsed[:2] == [json.loads(line) for line in lines]
    assert parsed[2]["a"] != parsed[2]["a"] and parsed[2]["b"] == 123456789012345678901234567890
    assert _records([]) == []


def test_qbo_run_accepts_every_estimator_qbo_estimate_does(tmp_path):
    """Issue 26 item 7: the config's estimators are qbo.qmc.METHODS; an mlae run's QMC stages
    are MLAE's, charged its honest calls."""
    from qbo.qmc import METHODS

    assert set(METHODS) >= {"iae", "mlae", "mc", "auto"}
    for method in METHODS:
        ExperimentConfig(estimator=method)
    records = run_experiment(ExperimentConfig(estimator="mlae", algorithms=("q-gp-ucb",), budget=800, trials=1),
                             tmp_path / "mlae")
    qmc = [r for r in records if r["method"] not in ("exploit", "sample")]
    assert qmc and all(r["method"] == "mlae" and r["oracle_calls"] == r["honest_calls"] > 0 for r in qmc[:-1])
    with pytest.raises(ValueError, match="mitigation 'rem' with estimator 'mlae'"):
        ExperimentConfig(estimator="mlae", mitigation="rem")
    with pytest.raises(ValueError, match=r"needs estimator 'auto' \(then IAE\), 'iae' or 'mlae'"):
        ExperimentConfig(estimator="mc", mitigation="zne")
