"""The IBM path, offline: journal, resume without re-submission, retries, faults, tokens, CLI.

Most tests run ``RuntimeExecutor`` against ``ExactConnection`` (exact results, a job store
that re-attaches like ``QiskitRuntimeService.job``), so they exercise all of qbo's hardware
code except the qiskit-ibm-runtime call itself, in milliseconds per job. One test goes end
to end through ``executor_sampler.Sampler`` in local mode on FakeBrisbane (~3 s a job).
"""

import json
import logging
import os
import socket
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qbo.execution import connection, make_executor, runtime
from tests.support.faults import (
    CRASH_EXIT, ExactConnection, FaultPlan, FaultyConnection, SimulatedCrash, pin_as_submit_does,
)
from qbo.execution.jobs import (
    JobJournal, RetryPolicy, circuit_text, duplicate_submissions, fingerprint, transient_kind, write_settings,
)
from qbo.execution.runtime import HardwareError, LocalConnection, RuntimeExecutor
from qbo.experiments import runner
from qbo.experiments.config import ExperimentConfig
from qbo.grover import power_circuit
from qbo.oracles import bernoulli, discrete

CONFIG = ExperimentConfig(algorithms=("q-gp-ucb",), budget=1500, trials=1, target="ibm:ibm_test")  # ~28 jobs
SHORT = CONFIG.with_overrides(budget=400)  # a few jobs: for checks that hold at any size (no fault plan)
FAST = RetryPolicy(max_attempts=4, timeout_s=60, base_delay=0.001, max_delay=0.001)
FILES = ("stages.jsonl", "summary.csv", "config.toml")
TOKEN = "qbo-test-token-7f3a9c1e5d"


# ------------------------------------------------------------------ helpers


def circuits(*ks, oracle=None):
    return [power_circuit(oracle or bernoulli(0.3), k) for k in ks]


def executor(connection, run_dir=None, seed=1, retry=FAST, mode="job"):
    journal = JobJournal.in_run_dir(run_dir) if run_dir is not None else None
    return RuntimeExecutor(connection, "ibm_test", "ibm:ibm_test", mode=mode, seed=seed, journal=journal, retry=retry)


def submissions(run_dir):
    return [e for e in JobJournal.in_run_dir(run_dir).read() if e["event"] == "submitted"]


def events(run_dir):
    return [e["event"] for e in JobJournal.in_run_dir(run_dir).read()]


def once_per_fingerprint(conn: ExactConnection, run_dir) -> list[str]:
    """Check the service holds exactly one job per journalled fingerprint; return them."""
    tags = conn.all_tags()
    fps = {e["fingerprint"] for e in JobJournal.in_run_dir(run_dir).read()}
    assert sorted(tags) == sorted(fps), "the service ran a request twice, or one was never tagged"
    return tags


def files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in FILES}


@pytest.fixture
def ibm(monkeypatch, tmp_path):
    """``ibm:ibm_test`` served by an ExactConnection whose job store lives in tmp_path/server."""
    conn = ExactConnection(store=tmp_path / "server")
    monkeypatch.setattr(runtime, "connect", lambda kind: conn if kind == "ibm" else LocalConnection())
    return conn


def invoke(*args, **kwargs):
    """The installed ``qbo`` app, exactly as cli/app.py wires it."""
    from qbo.cli.app import app

    return CliRunner().invoke(app, [str(a) for a in args], **kwargs)


def one_line_exit(result, code, fragment):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], result.stderr


@pytest.fixture
def no_credentials(monkeypatch, tmp_path):
    from qiskit_ibm_runtime.accounts import management

    for var in ("QISKIT_IBM_TOKEN", "QISKIT_IBM_INSTANCE", "QISKIT_IBM_CHANNEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(management, "_DEFAULT_ACCOUNT_CONFIG_JSON_FILE", str(tmp_path / "no-account.json"))


@pytest.fixture
def offline(monkeypatch):
    """No network at all, whatever the machine running the tests can reach."""

    def refuse(*args, **kwargs):
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def toml_config(tmp_path, config=CONFIG) -> Path:
    path = tmp_path / "cfg.toml"
    path.write_text(config.to_toml())
    return path


# ------------------------------------------------------------------ fingerprints and the journal


def test_fingerprint_is_the_logical_request_not_the_transpiled_circuit():
    """Oracle, power, shots, seed, backend, sampler options and qbo version name a request;
    the transpiled circuit (which follows the day's layout) and names do not."""
    from qiskit.transpiler import CouplingMap
    from qiskit import transpile

    a = power_circuit(bernoulli(0.3), 2)
    renamed = a.copy(name="other")
    assert circuit_text(a) == circuit_text(renamed)
    base = fingerprint("ibm:x", [a], 100, 7, {"o": 1}, "1.0")
    assert base == fingerprint("ibm:x", [renamed], 100, 7, {"o": 1}, "1.0")
    line = CouplingMap.from_line(5)
    day1 = transpile(a, coupling_map=line, basis_gates=["rz", "sx", "cx"], initial_layout=[0], seed_transpiler=1)
    day2 = transpile(a, coupling_map=line, basis_gates=["rz", "sx", "cx"], initial_layout=[3], seed_transpiler=1)
    assert circuit_text(day1) != circuit_text(day2)
    assert fingerprint("ibm:x", [day1], 100, 7, {"o": 1}, "1.0") == fingerprint("ibm:x", [day2], 100, 7, {"o": 1}, "1.0") == base
    for other in (fingerprint("ibm:y", [a], 100, 7, {"o": 1}, "1.0"), fingerprint("ibm:x", [a], 101, 7, {"o": 1}, "1.0"),
                  fingerprint("ibm:x", [a], 100, 8, {"o": 1}, "1.0"),
                  fingerprint("ibm:x", [power_circuit(bernoulli(0.31), 2)], 100, 7, {"o": 1}, "1.0"),
                  fingerprint("ibm:x", [power_circuit(bernoulli(0.3), 3)], 100, 7, {"o": 1}, "1.0"),
                  fingerprint("ibm:x", [a], 100, 7, {"o": 2}, "1.0"), fingerprint("ibm:x", [a], 100, 7, {"o": 1}, "1.1")):
        assert other != base


def test_journal_survives_a_torn_line(tmp_path):
    journal = JobJournal(tmp_path / "jobs.jsonl")
    journal.append("submitted", fingerprint="f1", job_id="j1")
    with open(journal.path, "ab") as handle:
        handle.write(b'{"event": "done", "fingerprint": "f1", "coun')  # a kill in mid-write
    again = JobJournal(journal.path)  # a new process
    again.append("submitted", fingerprint="f2", job_id="j2")
    events = [(e["event"], e["fingerprint"]) for e in JobJournal(journal.path).read()]
    assert events == [("submitted", "f1"), ("submitted", "f2")]
    assert JobJournal(journal.path).known("f1").pending == "j1"


@pytest.mark.parametrize(
    "exc, kind",
    [
        ("RuntimeJobTimeoutError('t')", "wait"),
        ("TimeoutError()", "wait"),
        ("RuntimeJobFailureError('x')", "failed"),
        ("RuntimeJobMaxTimeoutError('x')", "maxtime"),
        ("RuntimeJobNotFound('x')", "notfound"),
        ("RequestsApiError('x', status_code=503)", "network"),
        ("_service_error(503)", "network"),
        ("_service_error(502)", "network"),
        ("_service_error(429)", "network"),
        ("_service_error(400)", None),
        ("_service_error(404)", None),
        ("IBMRuntimeError(\"Failed to run program: HTTPSConnectionPool(host='x'): Max retries exceeded\")", "network"),
        ("IBMRuntimeError(\"Failed to run program: '400 Client Error: Session abc is closed.'\")", "expired"),
        ("IBMRuntimeError('Failed to run program: invalid input')", None),
        ("RequestsApiError('x', status_code=429)", "network"),
        ("RequestsApiError('x', status_code=403)", None),
        ("ConnectionError()", "network"),
        ("IBMNotAuthorizedError('x')", None),
        ("RuntimeInvalidStateError('cancelled')", "cancelled"),
        ("ValueError('x')", None),
    ],
)
def test_which_errors_are_transient(exc, kind):
    from qiskit_ibm_runtime.api.exceptions import RequestsApiError  # noqa: F401
    from qiskit_ibm_runtime.exceptions import (  # noqa: F401
        IBMNotAuthorizedError, IBMRuntimeError, RuntimeInvalidStateError, RuntimeJobFailureError,
        RuntimeJobMaxTimeoutError, RuntimeJobNotFound, RuntimeJobTimeoutError,
    )

    from tests.support.fake_service import _service_error  # noqa: F401

    assert transient_kind(eval(exc)) == kind


def test_backoff_is_exponential_and_capped():
    policy = RetryPolicy(base_delay=2, factor=2, max_delay=10)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 5)] == [2, 4, 8, 10, 10]


# ------------------------------------------------------------------ the executor


def test_exact_sampler_matches_the_logical_probabilities():
    """The offline stand-in simulates the transpiled circuit exactly (a check of the double)."""
    import math

    oracle = discrete([0.2, 0.9], [0.4, 0.6])
    theta = math.asin(math.sqrt(oracle.amplitude))
    (counts,) = executor(ExactConnection()).run(circuits(3, oracle=oracle), [20000])
    assert abs(counts.get("1", 0) / 20000 - math.sin(7 * theta) ** 2) < 0.015


def test_mixed_shots_become_one_job_per_shot_count(tmp_path):
    conn = ExactConnection()
    out = executor(conn, tmp_path).run(circuits(0, 1, 2), [100, 50, 100])
    assert [sum(c.values()) for c in out] == [100, 50, 100]
    assert sorted(e["shots"] for e in submissions(tmp_path)) == [50, 100] and len(conn.submitted) == 2


def test_transient_errors_and_timeouts_are_retried_with_the_same_results(tmp_path):
    clean = executor(ExactConnection()).run(circuits(0, 1), [200, 200]) + executor(ExactConnection()).run(circuits(2), [300])
    plan = FaultPlan(transient={0, 1}, timeout={2, 3})
    faulty = FaultyConnection(ExactConnection(), plan)
    delays = []

    def sleep(seconds):  # the service's clock moves with every sleep
        delays.append(seconds)
        faulty.sleep(seconds)

    retry = RetryPolicy(max_attempts=3, base_delay=1, factor=2, poll_s=0.5, poll_max_s=4, index_wait_s=7)
    ex = RuntimeExecutor(faulty, "ibm_test", "ibm:ibm_test", seed=1, journal=JobJournal.in_run_dir(tmp_path),
                         retry=retry, sleep=sleep)
    got = ex.run(circuits(0, 1), [200, 200])
    ex.rng = __import__("numpy").random.default_rng(1)
    got += ex.run(circuits(2), [300])
    assert got == clean
    # 503, index wait, look-up (none), 503, index wait, look-up (none), submit; then polls 0.5, 1, 2, 4 ...
    assert delays[:4] == [1, 7, 2, 7] and delays[4:8] == [0.5, 1, 2, 4] and max(delays[4:]) == 4
    entries = JobJournal.in_run_dir(tmp_path).read()
    assert [e["event"] for e in entries] == [
        "intent", "intent", "intent", "submitted", "timeout", "done", "intent", "submitted", "timeout", "done",
    ]  # each 503 came before the job existed, so each retry looked it up by tag (found nothing) first
    assert duplicate_submissions(entries) == [] and faulty.calls == 4 and faulty.finds == 2


def test_a_failed_job_is_resubmitted_and_journalled(tmp_path):
    conn = ExactConnection()
    executor(FaultyConnection(conn, FaultPlan(failed={0})), tmp_path).run(circuits(1), [100])
    entries = JobJournal.in_run_dir(tmp_path).read()
    assert [e["event"] for e in entries] == ["intent", "submitted", "failed", "resubmit", "intent", "submitted", "done"]
    assert entries[2]["error"] == "RuntimeJobFailureError" and entries[5]["attempt"] == 2 == entries[4]["attempt"]
    assert entries[3]["rule"] == "failed"  # the rule that allowed the resubmission is journalled
    assert duplicate_submissions(entries) == []  # a re-submission after a failure is not a duplicate


def test_giving_up_leaves_the_job_pending_and_resume_reattaches(tmp_path):
    conn = ExactConnection()
    plan = FaultPlan(timeout={0})
    with pytest.raises(HardwareError, match="still pending.*qbo jobs resume"):
        executor(FaultyConnection(conn, plan), tmp_path, retry=RetryPolicy(max_attempts=1, base_delay=0)).run(circuits(2), [100])
    (job,) = conn.submitted
    again = executor(conn, tmp_path).run(circuits(2), [100])  # a new process, no faults
    assert conn.submitted == [job]  # re-attached, not re-submitted
    assert again == executor(ExactConnection()).run(circuits(2), [100])
    assert events(tmp_path) == ["intent", "submitted", "timeout", "done"]


def test_a_non_transient_error_is_one_line_and_not_retried(tmp_path):
    conn = ExactConnection()
    sampler = conn.sampler

    def refusing(mode):
        made = sampler(mode)

        def run(pubs, **kw):
            from qiskit_ibm_runtime.exceptions import IBMNotAuthorizedError

            raise IBMNotAuthorizedError(f"401 for token {TOKEN}")

        made.run = run
        return made

    conn.sampler = refusing
    with pytest.raises(HardwareError) as info:
        executor(conn, tmp_path).run(circuits(0), [10])
    assert "IBMNotAuthorizedError" in str(info.value) and TOKEN not in str(info.value)
    assert "\n" not in str(info.value) and submissions(tmp_path) == [] and events(tmp_path) == ["intent"]


# ------------------------------------------------------------------ no double submission


def test_crash_after_the_service_accepted_the_job_then_resume_reattaches_by_tag(tmp_path):
    """The window between the service accepting a job and the ``submitted`` line."""
    conn = ExactConnection()
    with pytest.raises(SimulatedCrash):
        executor(FaultyConnection(conn, FaultPlan(crash_on_submit=0)), tmp_path).run(circuits(2), [100])
    assert events(tmp_path) == ["intent"] and len(conn.submitted) == 1  # the service has it, the journal not
    listed = JobJournal.in_run_dir(tmp_path).jobs()
    assert [(j["job_id"], j["status"]) for j in listed] == [("-", "unsure")]  # `qbo jobs list` shows it
    resumed = FaultyConnection(conn, FaultPlan())
    again = executor(resumed, tmp_path).run(circuits(2), [100])  # a new process
    assert again == executor(ExactConnection()).run(circuits(2), [100])
    assert resumed.calls == 0 and resumed.finds == 1 and len(conn.submitted) == 1  # re-attached, not re-submitted
    entries = JobJournal.in_run_dir(tmp_path).read()
    assert [e["event"] for e in entries] == ["intent", "submitted", "done"]
    assert entries[1]["via"] == "tag" and entries[1]["job_id"] == conn.submitted[0] and entries[1]["attempt"] == 1
    assert [j["status"] for j in JobJournal.in_run_dir(tmp_path).jobs()] == ["done"]
    assert duplicate_submissions(entries) == [] and len(once_per_fingerprint(conn, tmp_path)) == 1


def test_a_lost_reply_on_submit_is_looked_up_not_resubmitted(tmp_path):
    """``requests.Timeout`` from the submit call itself, after the job was created server-side."""
    conn = ExactConnection()
    faulty = FaultyConnection(conn, FaultPlan(ambiguous={0}))
    got = executor(faulty, tmp_path).run(circuits(1, 3), [100, 100])
    assert got == executor(ExactConnection()).run(circuits(1, 3), [100, 100])
    assert faulty.calls == 1 and faulty.finds == 1 and len(conn.submitted) == 1
    entries = JobJournal.in_run_dir(tmp_path).read()
    assert [e["event"] for e in entries] == ["intent", "submitted", "done"] and entries[1]["via"] == "tag"
    assert duplicate_submissions(entries) == [] and len(once_per_fingerprint(conn, tmp_path)) == 1


def test_a_failing_lookup_is_retried_never_skipped(tmp_path):
    """After a lost reply, a submission waits for a look-up that answered; then the job is found."""
    from qiskit_ibm_runtime.api.exceptions import RequestsApiError

    conn = ExactConnection()
    find_jobs, failures = conn.find_jobs, [2]

    def flaky(tag, backend):
        if failures[0]:
            failures[0] -= 1
            raise RequestsApiError("injected", status_code=502)
        return find_jobs(tag, backend)

    conn.find_jobs = flaky
    faulty = FaultyConnection(conn, FaultPlan(ambiguous={0}))
    executor(faulty, tmp_path).run(circuits(2), [50])
    assert faulty.calls == 1 and faulty.finds == 3 and len(conn.submitted) == 1
    assert events(tmp_path) == ["intent", "submitted", "done"]


def test_a_job_that_failed_is_not_reattached_by_its_tag(tmp_path):
    """The tag lookup skips jobs journalled failed: a failed job is re-run, not re-used."""
    conn = ExactConnection()
    faulty = FaultyConnection(conn, FaultPlan(failed={0}, ambiguous={1}))
    executor(faulty, tmp_path).run(circuits(1), [100])
    entries = JobJournal.in_run_dir(tmp_path).read()
    assert [e["event"] for e in entries] == ["intent", "submitted", "failed", "resubmit", "intent", "submitted", "done"]
    failed, found = entries[1]["job_id"], entries[5]
    assert found["via"] == "tag" and found["job_id"] != failed and faulty.calls == 2 and len(conn.submitted) == 2
    assert duplicate_submissions(entries) == []


def test_an_unsure_submission_at_give_up_says_resume_looks_it_up(tmp_path):
    conn = ExactConnection()
    retry = RetryPolicy(max_attempts=1, base_delay=0)
    with pytest.raises(HardwareError, match="may have reached the service.*looks it up by its tag"):
        executor(FaultyConnection(conn, FaultPlan(ambiguous={0})), tmp_path, retry=retry).run(circuits(1), [100])
    executor(conn, tmp_path).run(circuits(1), [100])  # resume
    assert len(conn.submitted) == 1 and events(tmp_path) == ["intent", "submitted", "done"]


def test_local_connection_finds_nothing_and_ibm_looks_up_every_match_by_tag_backend_and_instance():
    """Local jobs die with their process (re-running is correct there); the service is asked
    with QiskitRuntimeService.jobs' own keywords, newest first, in the backend's instance."""
    import inspect
    from types import SimpleNamespace

    from qiskit_ibm_runtime import QiskitRuntimeService

    assert LocalConnection().find_jobs("f" * 64, object()) == []
    calls = []

    class Service:
        def jobs(self, **kwargs):
            inspect.signature(QiskitRuntimeService.jobs).bind(None, **kwargs)  # real keywords only
            calls.append(kwargs)
            return ["newest", "older"] if kwargs["job_tags"] == ["fp1"] else []

    conn = runtime.IBMConnection(Service())
    backend = SimpleNamespace(name="ibm_test", _instance="crn:v1:x")
    assert conn.find_jobs("fp1", backend) == ["newest", "older"] and conn.find_jobs("fp2", backend) == []
    assert calls[0]["backend_name"] == "ibm_test" and calls[0]["descending"] is True and calls[0]["limit"] >= 2
    assert calls[0]["instance"] == "crn:v1:x"


def test_the_sampler_tags_each_job_with_its_fingerprint():
    """The real executor_sampler.Sampler carries the tag in options.environment.job_tags."""
    ex = RuntimeExecutor(LocalConnection(), "FakeManilaV2", "fake:FakeManilaV2", seed=1)
    assert ex._sampler is None  # nothing is opened before the first submission
    ex._open_mode()
    calls = []
    ex._sampler.run = lambda pubs: calls.append(list(ex._sampler.options.environment.job_tags)) or 1 / 0
    with pytest.raises(HardwareError):
        ex.run(circuits(0), [10])
    import numpy as np

    seed = int(np.random.default_rng(1).integers(2**62))  # the request's seed drawn by run()
    assert calls == [[fingerprint("fake:FakeManilaV2", circuits(0), 10, seed, ex.options_id)]]


# ------------------------------------------------------------------ crash and resume


def clean_run(tmp_path) -> tuple[Path, int]:
    """CONFIG run without faults on a service of its own (identical requests share a tag, so
    a shared service would let a resumed run re-attach to this run's jobs), pinned as
    ``qbo submit`` pins it."""
    conn = ExactConnection()
    pin_as_submit_does(tmp_path / "clean", conn, CONFIG.target)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runtime, "connect", lambda kind: conn)
        runner.run_experiment(CONFIG, tmp_path / "clean")
    return tmp_path / "clean", len(conn.submitted)


@pytest.mark.parametrize("crash", [{"crash": 15}, pytest.param({"crash_on_submit": 15}, marks=pytest.mark.slow)],
                         ids=["waiting", "before-journal"])
def test_crash_mid_run_then_resume_gives_identical_results_without_resubmission(tmp_path, ibm, crash):
    clean, clean_jobs = clean_run(tmp_path)
    crashed = tmp_path / "crashed"
    write_settings(crashed, "batch", FAST)
    pin_as_submit_does(crashed, ibm, CONFIG.target)
    plan = FaultPlan(transient={3}, ambiguous={8}, timeout={5}, **crash)
    faulty = FaultyConnection(ibm, plan)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runtime, "connect", lambda kind: faulty)
        with pytest.raises(SimulatedCrash):
            runner.run_experiment(CONFIG, crashed)
    assert not (crashed / "stages.jsonl").exists()
    last = ibm.submitted[-1]  # the job the crash interrupted: journalled or not
    assert (submissions(crashed)[-1]["job_id"] == last) == ("crash" in crash)
    runner.resume_experiment(crashed)
    assert files(crashed) == files(clean)
    entries = JobJournal.in_run_dir(crashed).read()
    assert duplicate_submissions(entries) == []
    fps = [e["fingerprint"] for e in entries if e["event"] == "submitted"]
    assert len(fps) == len(set(fps)) == clean_jobs  # every request submitted exactly once
    assert len(ibm.submitted) == len(set(ibm.submitted)) == clean_jobs
    assert len(once_per_fingerprint(ibm, crashed)) == clean_jobs
    assert any(e["event"] == "done" and e["job_id"] == last for e in entries)  # re-attached after the crash
    assert {e["mode"] for e in entries if e["event"] == "submitted"} == {"batch"}


@pytest.mark.parametrize("crash, journalled", [("crash", 13), ("crash_on_submit", 12)])
@pytest.mark.slow
def test_hard_crash_in_a_subprocess_then_cli_resume(tmp_path, ibm, crash, journalled):
    """os._exit while waiting on a job, or right after the service accepted it: nothing of the
    process survives except its files and the service's jobs."""
    clean, clean_jobs = clean_run(tmp_path)
    out = tmp_path / "run"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_hardware as t
        from qbo.execution import runtime
        from tests.support.faults import ExactConnection, FaultPlan, FaultyConnection
        plan = FaultPlan({crash}=12, hard=True)
        conn = FaultyConnection(ExactConnection(store={str(tmp_path / "server")!r}), plan)
        runtime.connect = lambda kind: conn
        result = t.invoke("submit", {str(toml_config(tmp_path))!r}, "--backend", "ibm:ibm_test", "--out", {str(out)!r}, "--yes")
        print(result.output)
        sys.exit(result.exit_code)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == CRASH_EXIT, proc.stdout + proc.stderr
    assert len(submissions(out)) == journalled and events(out).count("intent") == 13
    resumed = invoke("jobs", "resume", out)
    assert resumed.exit_code == 0, resumed.output
    assert files(out) == files(clean)
    assert duplicate_submissions(JobJournal.in_run_dir(out).read()) == []
    assert len(once_per_fingerprint(ibm, out)) == clean_jobs  # the service ran each request once


@pytest.mark.slow
def test_kill_9_between_intent_and_submitted_then_jobs_resume_finds_the_job_by_its_tag(tmp_path, ibm):
    """SIGKILL right after the service accepted request 12, before its ``submitted`` line: the
    journal ends in that request's ``intent``; ``qbo jobs resume`` (after the service has
    indexed the job) finds it by its tag and uses it: the service never runs it twice."""
    clean, clean_jobs = clean_run(tmp_path)
    out = tmp_path / "run"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_hardware as t
        from qbo.execution import runtime
        from tests.support.faults import ExactConnection, FaultPlan, FaultyConnection
        conn = FaultyConnection(ExactConnection(store={str(tmp_path / "server")!r}), FaultPlan(crash_on_submit=12, kill=True))
        runtime.connect = lambda kind: conn
        result = t.invoke("submit", {str(toml_config(tmp_path))!r}, "--backend", "ibm:ibm_test", "--out", {str(out)!r}, "--yes")
        sys.exit(result.exit_code)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    entries = JobJournal.in_run_dir(out).read()
    last = entries[-1]
    assert last["event"] == "intent" and len(submissions(out)) == 12
    assert ibm.fake.jobs_tagged(last["fingerprint"]) == 1  # the service has the job; the journal has no id for it
    resumed = invoke("jobs", "resume", out)
    assert resumed.exit_code == 0, resumed.output
    found = [e for e in JobJournal.in_run_dir(out).read() if e["fingerprint"] == last["fingerprint"]]
    assert [e["event"] for e in found] == ["intent", "submitted", "done"] and found[1]["via"] == "tag"
    assert ibm.fake.jobs_tagged(last["fingerprint"]) == 1  # not resubmitted
    assert files(out) == files(clean) and len(once_per_fingerprint(ibm, out)) == clean_jobs


@pytest.mark.slow
def test_local_mode_end_to_end_on_fake_brisbane(tmp_path):
    """executor_sampler.Sampler in local mode: a transient error, real timeouts, a crash, a resume.

    A local job dies with its process, so the crashed request is journalled 'lost' and run
    again; the finished one is reused from the journal.
    """
    # waits of 0.01 s: shorter than any local job (a 1-2 qubit layout simulates in tens of ms)
    retry = RetryPolicy(max_attempts=2000, timeout_s=0.01, base_delay=0, poll_s=0.005, poll_max_s=0.01)
    conn = FaultyConnection(LocalConnection(), FaultPlan(transient={0}, crash=2))

    def local(connection):
        return RuntimeExecutor(connection, "FakeBrisbane", "fake:FakeBrisbane", mode="batch", seed=3,
                               journal=JobJournal.in_run_dir(tmp_path), retry=retry)

    ex = local(conn)
    (first,) = ex.run(circuits(1), [200])
    assert sum(first.values()) == 200 and first.get("1", 0) > 100  # sin^2(3 theta) = 0.97 at a = 0.3
    with pytest.raises(SimulatedCrash):
        ex.run(circuits(2), [100])
    resumed = local(LocalConnection())
    assert resumed.run(circuits(1), [200]) == [first]  # journalled counts, nothing submitted
    (second,) = resumed.run(circuits(2), [100])
    assert sum(second.values()) == 100
    entries = JobJournal.in_run_dir(tmp_path).read()
    events = [e["event"] for e in entries]
    assert events.count("submitted") == 3 and events.count("lost") == 1 and events.count("done") == 2
    assert events.count("resubmit") == 1  # rule "lost": a local job cannot outlive its process
    assert "timeout" in events  # each 0.01 s wait ran out and was retried
    assert duplicate_submissions(entries) == []
    resumed.close()


# ------------------------------------------------------------------ tokens


def test_a_token_never_reaches_any_output(tmp_path, ibm, monkeypatch, caplog, offline):
    monkeypatch.setenv("QISKIT_IBM_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    cfg = toml_config(tmp_path, SHORT)
    results = [
        invoke("submit", cfg, "--backend", "ibm:ibm_test", "--mode", "session", "--out", tmp_path / "run", "--yes"),
        invoke("jobs", "list", tmp_path / "run"),
        invoke("jobs", "status", tmp_path / "run"),
    ]
    assert all(r.exit_code == 0 for r in results), [r.output for r in results]
    monkeypatch.setattr(runtime, "connect", lambda kind: runtime.IBMConnection())  # the real service, offline
    failed = [
        invoke("submit", cfg, "--backend", "ibm:ibm_test", "--out", tmp_path / "real", "--yes"),
        invoke("calibrations", "pull", "--backend", "ibm:ibm_test", "--out", tmp_path / "snap.json"),
        invoke("backends", "--timeout", "30"),
    ]
    one_line_exit(failed[0], 2, "cannot reach IBM Quantum: the network or its DNS is unreachable")
    one_line_exit(failed[1], 2, "cannot reach IBM Quantum: the network or its DNS is unreachable")
    assert failed[2].exit_code == 0 and "# ibm: none reachable" in failed[2].stdout
    texts = [r.stdout + r.stderr for r in results + failed] + [caplog.text]
    texts += [p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert len(texts) > 10 and not [t for t in texts if TOKEN in t]


# ------------------------------------------------------------------ the CLI


def test_submit_and_jobs_list_status_resume(tmp_path, ibm):
    """An ibm: run pins the backend's calibration as its device model (issue 9): every QMC
    stage is capped and padded by it (method iae+pad, not the noiseless iae)."""
    from qbo.experiments.folder import pinned_calibration
    from qbo.noise import snapshot_from_backend

    out = tmp_path / "run"
    result = invoke("submit", toml_config(tmp_path, SHORT), "--backend", "ibm:ibm_test", "--mode", "batch", "--out", out, "--yes")
    assert result.exit_code == 0, result.output
    assert "jobs in" in result.stdout and (out / "stages.jsonl").exists()
    assert "device model: the calibration of ibm:ibm_test" in result.stdout
    pinned = pinned_calibration(out).to_json()
    assert pinned == snapshot_from_backend(ibm.backend("ibm_test"), source="ibm:ibm_test").to_json() | {
        "timestamp": pinned["timestamp"]}
    methods = {json.loads(line)["method"] for line in (out / "stages.jsonl").read_text().splitlines()}
    assert methods <= {"iae+pad", "exploit"} and "iae+pad" in methods, methods
    n = len(submissions(out))
    listed = invoke("jobs", "list", out)
    assert listed.exit_code == 0 and len(listed.stdout.splitlines()) == n and "done" in listed.stdout
    assert invoke("jobs", "status", out).exit_code == 0
    again = invoke("jobs", "resume", out)  # a finished run: nothing is submitted
    assert again.exit_code == 0, again.output
    assert len(submissions(out)) == n


def test_a_pinned_calibration_is_kept_and_guarded_by_run_json(tmp_path):
    """Pinned before the claim, recorded in run.json by it: a later pin keeps the first, and
    an edited, deleted or foreign pin, or one added after the claim, is refused."""
    from qbo.errors import BadFile, BadInput
    from qbo.experiments.folder import CALIBRATION, claim_run_folder, pin_calibration, pinned_calibration
    from qbo.noise import export_from_fake

    torino, fez = export_from_fake("FakeTorino"), export_from_fake("FakeFez")
    mine, config = torino.source, ExperimentConfig(budget=100, trials=1)
    folder, bare = tmp_path / "run", tmp_path / "bare"
    folder.mkdir()
    assert pinned_calibration(folder, mine) is None
    pin_calibration(folder, torino, mine)
    assert pin_calibration(folder, fez, mine).to_json() == torino.to_json()  # never re-pinned
    with pytest.raises(BadInput, match="but the run targets"):
        pinned_calibration(folder, fez.source)
    claim_run_folder(folder, config).release()
    assert "calibration_sha256" in json.loads((folder / "run.json").read_text())
    path, kept = folder / CALIBRATION, (folder / CALIBRATION).read_text()
    body = json.loads(kept)
    body["snapshot"]["qubits"][0]["t1"] *= 2  # a better qubit 0, same sha256
    path.write_text(json.dumps(body))
    with pytest.raises(BadFile, match="was changed after it was pinned"):
        pinned_calibration(folder, mine)
    path.unlink()
    with pytest.raises(BadFile, match="is missing"):
        pinned_calibration(folder, mine)
    path.write_text(kept)
    assert pinned_calibration(folder, mine).to_json() == torino.to_json()
    claim_run_folder(bare, config).release()  # claimed without a pin: it keeps none
    assert pin_calibration(bare, torino, mine) is None and not (bare / CALIBRATION).exists()
    (bare / CALIBRATION).write_text(kept)
    with pytest.raises(BadFile, match="was added after the run started"):
        pinned_calibration(bare, mine)


def test_backends_lists_every_kind_of_target_offline(no_credentials):
    result = invoke("backends")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for expected in ("exact", "aer", "aer:fake_brisbane", "fake:FakeBrisbane", "fake:FakeTorino"):
        assert expected in lines
    assert lines[-1].startswith("# ibm: none reachable (no credentials")


def test_calibrations_pull_saves_a_snapshot(tmp_path):
    from qbo.noise import export_from_fake, load_snapshot

    path = tmp_path / "torino.json"
    result = invoke("calibrations", "pull", "--backend", "fake:FakeTorino", "--out", path)
    assert result.exit_code == 0, result.output
    pulled, exported = load_snapshot(path).to_json(), export_from_fake("FakeTorino").to_json()
    assert pulled.pop("source") == "fake:FakeTorino"
    exported.pop("source")
    assert pulled == exported


def test_bad_calibration_json_is_one_line_exit_2(tmp_path):
    from qbo.cli.app import app

    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "qbo.calibration/1", ')
    one_line_exit(CliRunner().invoke(app, ["estimate", "--target", f"aer:{bad}"]), 2, "invalid JSON")
    one_line_exit(CliRunner().invoke(app, ["calibrations", "show", str(bad)]), 2, "invalid JSON")


@pytest.mark.parametrize(
    "backend, fragment",
    [("fake:FakeNowhere", "FakeNowhere"), ("ibm:ibm_nowhere", "ibm_nowhere"), ("mars", "'mars'"), ("ibm:", "'ibm:'")],
)
def test_unknown_backend_is_one_line_exit_2(tmp_path, ibm, backend, fragment):
    one_line_exit(invoke("submit", toml_config(tmp_path), "--backend", backend, "--out", tmp_path / "r"), 2, fragment)
    assert not (tmp_path / "r").exists()


def test_missing_credentials_is_one_line_exit_2(tmp_path, no_credentials, offline):
    cfg = toml_config(tmp_path)
    one_line_exit(invoke("submit", cfg, "--backend", "ibm:ibm_torino", "--out", tmp_path / "r"), 2, "no IBM Quantum credentials")
    one_line_exit(invoke("calibrations", "pull", "--backend", "ibm:ibm_torino"), 2, "no IBM Quantum credentials")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--mode", "turbo"], "'turbo'"),
        (["--timeout", "0"], "timeout"),
        (["--attempts", "0"], "max_attempts"),
        (["--max-jobs", "0"], "max-jobs"),
        (["--max-qpu-seconds", "-1"], "max-qpu-seconds"),
        (["--resubmit", "failed,bogus"], "'bogus'"),
    ],
)
def test_bad_submit_options_are_one_line_exit_2(tmp_path, ibm, args, fragment):
    one_line_exit(invoke("submit", toml_config(tmp_path), "--backend", "ibm:ibm_test", *args), 2, fragment)


def test_jobs_on_a_non_run_folder_is_one_line_exit_2(tmp_path):
    for command in ("list", "status", "resume"):
        one_line_exit(invoke("jobs", command, tmp_path), 2, "not a qbo run folder")


# ------------------------------------------------------------------ wiring (behaviour, not source text)


def test_runner_journals_hardware_jobs_in_the_run_folder(tmp_path, ibm):
    """run_experiment hands its folder to make_executor: jobs.jsonl lands there, and the
    folder's execution.json (mode) is honoured."""
    out = tmp_path / "run"
    write_settings(out, "session", FAST)
    runner.run_experiment(SHORT, out)
    entries = submissions(out)
    assert entries and {e["mode"] for e in entries} == {"session"}
    assert sorted(e["job_id"] for e in entries) == sorted(ibm.submitted)


def test_app_registers_the_hardware_commands(tmp_path):
    """Every hardware command answers through the installed app (not 'No such command')."""
    for args in (["submit", "--help"], ["backends", "--help"], ["jobs", "list", "--help"],
                 ["jobs", "status", "--help"], ["jobs", "resume", "--help"], ["calibrations", "pull", "--help"]):
        result = invoke(*args)
        assert result.exit_code == 0 and "Usage:" in result.stdout, (args, result.output)


@pytest.mark.slow  # two FakeTorino simulators and runs (~2.4 s); the fast tests run fake targets too
@pytest.mark.parametrize("mode", ["job", "batch"])
def test_local_mode_builds_each_fake_backends_simulator_once_with_the_same_counts(monkeypatch, mode):
    """qiskit-ibm-runtime's local executor builds AerSimulator.from_backend for every job unless
    handed one; LocalConnection hands it one per backend and process (FakeTorino: about 7 s a
    job saved). The counts are those of the fake backend handed over directly."""
    from qiskit_aer import AerSimulator

    built = []
    original = AerSimulator.from_backend.__func__
    monkeypatch.setattr(AerSimulator, "from_backend",
                        classmethod(lambda cls, backend, **kw: built.append(backend.name) or original(cls, backend, **kw)))
    monkeypatch.setattr(connection, "_SIMULATORS", {})
    cached = RuntimeExecutor(LocalConnection(), "FakeManilaV2", "fake:FakeManilaV2", seed=5, mode=mode)
    counts = [cached.run(circuits(k), [200])[0] for k in (0, 1, 2)]
    cached.close()
    assert built == ["fake_manila"]  # once, not once per job

    class Direct(LocalConnection):  # the fake backend itself as the Sampler's mode
        def mode(self, kind, backend, max_time=None):
            return runtime._mode(kind, backend, max_time)

        def sampler(self, mode):
            return runtime._sampler(mode)

    direct = RuntimeExecutor(Direct(), "FakeManilaV2", "fake:FakeManilaV2", seed=5, mode=mode)
    assert [direct.run(circuits(k), [200])[0] for k in (0, 1, 2)] == counts
    direct.close()
