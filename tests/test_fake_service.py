"""Crash safety, recalibration, job ends, caps and the cost plan against a fake IBM service.

The service double (tests/support/fake_service.py) has the semantics local mode lacks: job
tags looked up newest first across several matches and instances, status strings, delayed
indexing of new jobs, cancellation, max-time and not-found ends, ``IBMRuntimeError`` with
its status code in the text, Batch/Session expiry and recalibration. qbo reaches it through
the real ``IBMConnection``; every test checks how many jobs the *service* ran per request.
"""

import json
import logging
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
import pytest
from typer.testing import CliRunner

from qbo.execution import ibm, make_executor, runtime
from qbo.execution.jobs import JobJournal, Limits, RetryPolicy, duplicate_submissions, fingerprint, write_settings
from qbo.execution.runtime import CapReached, HardwareError, RuntimeExecutor
from qbo.execution.transpile import choose_layout
from qbo.experiments import runner
from qbo.experiments.config import ExperimentConfig
from qbo.grover import power_circuit
from qbo.oracles import bernoulli
from tests.support.fake_service import INSTANCE, OTHER_INSTANCE, FakeMode, FakeService, fake_ibm
from tests.support.faults import FaultPlan, FaultyConnection, SimulatedCrash, pin_as_submit_does

CONFIG = ExperimentConfig(algorithms=("q-gp-ucb", "gp-ucb"), budget=600, trials=1, target="ibm:ibm_test")
FILES = ("stages.jsonl", "summary.csv", "config.toml")


def invoke(*args, **kwargs):
    from qbo.cli.app import app

    return CliRunner().invoke(app, [str(a) for a in args], **kwargs)


def journal(run_dir):
    return JobJournal.in_run_dir(run_dir).read()


def files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in FILES}


def use(monkeypatch, conn):
    monkeypatch.setattr(runtime, "connect", lambda kind: conn)


def once_each(service: FakeService, run_dir: Path) -> int:
    """Every logical request of the run has exactly 1 + (journalled resubmissions) jobs on the
    service, and the service ran nothing else; returns the number of requests."""
    entries = journal(run_dir)
    requests = {e["fingerprint"] for e in entries if e["fingerprint"] is not None}  # not a session's lines
    resubmits = Counter(e["fingerprint"] for e in entries if e["event"] == "resubmit")
    on_service = Counter(service.all_tags())
    assert set(on_service) == requests, "the service ran a job that is not one of the run's requests"
    assert {fp: on_service[fp] for fp in requests} == {fp: 1 + resubmits[fp] for fp in requests}
    return len(requests)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """CONFIG without faults on a service of its own: the reference files and job count."""
    folder = tmp_path_factory.mktemp("clean") / "run"
    conn = fake_ibm()
    with pytest.MonkeyPatch.context() as mp:
        use(mp, conn)
        runner.run_experiment(CONFIG, folder)
    return folder, len(conn.submitted)


# ------------------------------------------------------------------ the double itself


def test_the_double_lists_tagged_jobs_newest_first_after_an_index_delay_per_instance():
    service = FakeService(index_delay=5.0)
    backend = service.backend("ibm_test")
    options = type("O", (), {})()
    options.environment = type("E", (), {"job_tags": ["t"]})()
    options.max_execution_time = 60
    from qiskit import transpile

    pubs = [(transpile(power_circuit(bernoulli(0.3), 0), target=backend.target), None, 10)]
    first = service.submit(FakeMode(service, "job", backend, None), pubs, options)
    service.sleep(1)
    second = service.submit(FakeMode(service, "job", backend, None), pubs, options)
    assert service.jobs(job_tags=["t"]) == [] and service.job(first.job_id()).status() == "QUEUED"
    service.sleep(5)
    assert [j.job_id() for j in service.jobs(job_tags=["t"], backend_name="ibm_test")] == [second.job_id(), first.job_id()]
    assert service.jobs(job_tags=["t"], instance=OTHER_INSTANCE) == [] and service.jobs(job_tags=["u"]) == []
    service.cancel(second.job_id())
    assert second.status() == "CANCELLED" and first.status() == "DONE"


# ------------------------------------------------------------------ the four required cases


def test_resume_after_a_recalibration_reuses_the_pinned_layout_and_submits_each_request_once(tmp_path, monkeypatch, clean):
    service = FakeService(store=tmp_path / "server")
    conn = fake_ibm(tmp_path / "server")
    out = tmp_path / "run"
    use(monkeypatch, FaultyConnection(conn, FaultPlan(crash_on_submit=9)))
    with pytest.raises(SimulatedCrash):
        runner.run_experiment(CONFIG, out)
    pinned = json.loads((out / "transpiled" / "layout.json").read_text())
    qpy_files = sorted(p.name for p in (out / "transpiled").glob("*.qpy"))
    service.recalibrate()  # the next day: readout errors moved
    fresh = fake_ibm(tmp_path / "server")
    moved = choose_layout(fresh.backend("ibm_test").target, 1)
    assert moved != pinned["1"]  # a fresh transpile would now put the circuits elsewhere
    use(monkeypatch, fresh)
    runner.resume_experiment(out)
    assert json.loads((out / "transpiled" / "layout.json").read_text()) == pinned
    assert set(qpy_files) <= {p.name for p in (out / "transpiled").glob("*.qpy")}
    assert files(out) == files(clean[0])
    assert once_each(service, out) == clean[1] == len(service.submitted)
    assert any(e.get("via") == "tag" for e in journal(out))  # the job created before the crash was found


def test_a_503_on_submit_is_retried_and_each_request_is_submitted_once(tmp_path, monkeypatch, clean):
    conn = fake_ibm(fail_submit={0: 503, 4: 503, 5: 502})
    use(monkeypatch, conn)
    runner.run_experiment(CONFIG, tmp_path / "run")
    assert files(tmp_path / "run") == files(clean[0])
    assert once_each(conn.fake, tmp_path / "run") == clean[1] == len(conn.submitted)
    events = [e["event"] for e in journal(tmp_path / "run")]
    assert events.count("intent") == clean[1] + 3 and events.count("submitted") == clean[1]


@pytest.mark.parametrize("end, rule", [("CANCELLED", "cancelled"), ("MAXTIME", "maxtime")])
def test_a_cancelled_or_max_time_job_is_journalled_stops_the_run_and_resubmits_only_by_rule(
        tmp_path, monkeypatch, clean, end, rule):
    conn = fake_ibm(end={3: end})
    use(monkeypatch, conn)
    out = tmp_path / "run"
    with pytest.raises(HardwareError, match=f"ended as {rule}.*--resubmit {rule}"):
        runner.run_experiment(CONFIG, out)
    ended = [e for e in journal(out) if e["event"] == rule]
    assert len(ended) == 1 and ended[0]["job_id"] == conn.submitted[3]
    with pytest.raises(HardwareError, match=f"ended as {rule}"):  # a plain resume does not resubmit
        runner.resume_experiment(out)
    assert len(conn.submitted) == 4
    write_settings(out, "job", RetryPolicy(resubmit=("failed", "lost", rule)))  # --resubmit RULE
    runner.resume_experiment(out)
    resubmits = [e for e in journal(out) if e["event"] == "resubmit"]
    assert [e["rule"] for e in resubmits] == [rule] and resubmits[0]["fingerprint"] == ended[0]["fingerprint"]
    assert files(out) == files(clean[0])
    assert once_each(conn.fake, out) == clean[1] and len(conn.submitted) == clean[1] + 1


def test_a_tag_lookup_with_several_matches_uses_the_finished_one_and_journals_the_rest(tmp_path):
    """An unsure request whose tag matches a cancelled job, a finished one, a pending one and
    one in another instance: the finished job is used, nothing is submitted."""
    conn = fake_ibm()
    service = conn.fake
    circuits = [power_circuit(bernoulli(0.3), 2)]
    ex = RuntimeExecutor(conn, "ibm_test", "ibm:ibm_test", seed=5, journal=JobJournal.in_run_dir(tmp_path))
    seed = int(np.random.default_rng(5).integers(2**62))
    fp = fingerprint("ibm:ibm_test", circuits, 100, seed, ex.options_id)
    sampler = conn.sampler(conn.mode("job", ex.backend, None))
    sampler.options.environment.job_tags = [fp]
    pubs = [(ex.compiled(circuits[0]), None, 100)]
    cancelled = sampler.run(pubs)
    service.cancel(cancelled.job_id())
    done = sampler.run(pubs)
    service.sleep(10)
    pending = sampler.run(pubs)
    service.switch_instance(OTHER_INSTANCE)
    elsewhere = sampler.run(pubs)
    service.switch_instance(INSTANCE)
    service.sleep(10)  # all indexed
    JobJournal.in_run_dir(tmp_path).append("intent", fingerprint=fp, job_id=None, attempt=1)
    before = len(service.submitted)
    (counts,) = ex.run(circuits, [100])
    assert len(service.submitted) == before == 4 and sum(counts.values()) == 100
    entries = journal(tmp_path)
    used = next(e for e in entries if e["event"] == "submitted" and e.get("matches"))
    assert used["matches"] == 3 and used["job_id"] in (done.job_id(), pending.job_id())
    assert elsewhere.job_id() not in {e["job_id"] for e in entries}  # other instance: not listed
    assert any(e["event"] == "cancelled" and e["job_id"] == cancelled.job_id() for e in entries)
    assert [e["event"] for e in entries if e["event"] == "duplicate"] == ["duplicate"]


# ------------------------------------------------------------------ more service semantics


@pytest.mark.slow
def test_a_job_the_service_no_longer_knows_is_journalled_not_found(tmp_path, monkeypatch):
    conn = fake_ibm(forget={2})
    use(monkeypatch, conn)
    with pytest.raises(HardwareError, match="ended as notfound"):
        runner.run_experiment(CONFIG, tmp_path / "run")
    assert [e["event"] for e in journal(tmp_path / "run")][-1] == "notfound"


@pytest.mark.slow
def test_an_expired_batch_is_reopened_and_journalled(tmp_path, monkeypatch, clean):
    conn = fake_ibm()
    use(monkeypatch, conn)
    out = tmp_path / "run"
    write_settings(out, "batch", RetryPolicy(), Limits(max_time=30))
    runner.run_experiment(CONFIG, out)
    reopened = [e for e in journal(out) if e["event"] == "session"]
    assert reopened and all(e["reason"] == "expired" and e["action"] == "reopened" for e in reopened)
    assert len(conn._primitives.opened) == 1 + len(reopened)
    assert files(out) == files(clean[0]) and once_each(conn.fake, out) == clean[1]


@pytest.mark.slow
def test_caps_stop_before_submitting_and_a_raised_cap_resumes(tmp_path, monkeypatch, clean):
    conn = fake_ibm()
    use(monkeypatch, conn)
    out = tmp_path / "run"
    write_settings(out, "job", RetryPolicy(), Limits(max_jobs=5))
    with pytest.raises(CapReached, match="5 of --max-jobs 5"):
        runner.run_experiment(CONFIG, out)
    assert len(conn.submitted) == 5
    write_settings(out, "job", RetryPolicy(), Limits(max_qpu_seconds=11.0))  # 5 jobs of ~2.1 s done
    with pytest.raises(CapReached, match="max-qpu-seconds 11"):
        runner.resume_experiment(out)
    assert len(conn.submitted) == 5
    write_settings(out, "job", RetryPolicy(), Limits(max_jobs=1000))
    runner.resume_experiment(out)
    assert files(out) == files(clean[0]) and once_each(conn.fake, out) == clean[1]
    usage = {j: r["usage"] for j, r in conn.fake._load()["jobs"].items()}
    billed = [e for e in journal(out) if e.get("qpu_s") is not None]  # IBM's usage, once it was computed
    assert billed and all(e["qpu_s"] == usage[e["job_id"]] for e in billed)


@pytest.mark.slow
def test_every_job_carries_max_execution_time(tmp_path, monkeypatch):
    conn = fake_ibm()
    use(monkeypatch, conn)
    out = tmp_path / "run"
    write_settings(out, "job", RetryPolicy(), Limits(max_execution_time=123))
    runner.run_experiment(CONFIG, out)
    state = conn.fake._load()
    assert {r["max_execution_time"] for r in state["jobs"].values()} == {123}


def test_a_resume_from_another_instance_is_refused_and_the_run_folder_holds_no_crn(tmp_path, monkeypatch):
    conn = fake_ibm(tmp_path / "server")
    use(monkeypatch, FaultyConnection(conn, FaultPlan(crash=4)))
    out = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        runner.run_experiment(CONFIG, out)
    other = fake_ibm(tmp_path / "server", instance=OTHER_INSTANCE)
    use(monkeypatch, other)
    with pytest.raises(ValueError, match="another IBM instance"):
        runner.resume_experiment(out)
    texts = [p.read_bytes() for p in out.rglob("*") if p.is_file()]
    assert not [t for t in texts if b"crn:" in t]
    assert json.loads((out / "execution.json").read_text())["instance"].startswith("sha256:")


def test_classical_learners_never_touch_the_device(tmp_path, monkeypatch):
    conn = fake_ibm()
    use(monkeypatch, conn)
    runner.run_experiment(CONFIG.with_overrides(algorithms=("gp-ucb",)), tmp_path / "run")
    assert conn.submitted == [] and not (tmp_path / "run" / "jobs.jsonl").exists()


def test_ibm_targets_never_run_without_a_journal(tmp_path, monkeypatch):
    use(monkeypatch, fake_ibm())
    with pytest.raises(ValueError, match="needs a run folder"):
        make_executor("ibm:ibm_test")
    result = invoke("run", "--target", "ibm:ibm_test", "--out", tmp_path / "r")
    assert result.exit_code == 2 and "qbo submit" in result.stderr and not (tmp_path / "r").exists()


def test_service_warnings_and_logs_go_to_the_run_log_redacted(tmp_path, monkeypatch, capfd):
    conn = fake_ibm()
    use(monkeypatch, conn)
    out = tmp_path / "run"
    make_executor("ibm:ibm_test", seed=1, run_dir=out)
    logging.getLogger("qiskit_ibm_runtime").warning("Instance %s selected for %s", INSTANCE, "ibm_test")
    with runtime.quiet():
        import warnings

        warnings.warn(f"deprecated thing for {INSTANCE}", DeprecationWarning)
    captured = capfd.readouterr()
    assert "crn:" not in captured.err and "selected" not in captured.err and "deprecated" not in captured.err
    log = (out / "qbo.log").read_text()
    assert "selected" in log and "deprecated thing" in log and "crn:" not in log


# ------------------------------------------------------------------ the CLI: plan, confirmation, caps


def toml(tmp_path, config=CONFIG) -> Path:
    path = tmp_path / "cfg.toml"
    path.write_text(config.to_toml())
    return path


def test_submit_prints_the_plan_and_submits_nothing_unconfirmed(tmp_path, monkeypatch):
    conn = fake_ibm()
    use(monkeypatch, conn)
    out = tmp_path / "run"
    result = invoke("submit", toml(tmp_path), "--backend", "ibm:ibm_test", "--out", out, input="n\n")
    assert result.exit_code == 1 and "not confirmed" in result.stderr
    assert "cost plan for ibm:ibm_test" in result.stdout and "gp-ucb: classical" in result.stdout
    assert conn.submitted == [] and not out.exists()
    q_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("q-gp-ucb:"))
    planned_jobs = int(q_line.split()[1].replace(",", ""))
    ran = invoke("submit", toml(tmp_path), "--backend", "ibm:ibm_test", "--out", out, "--yes")
    assert ran.exit_code == 0, ran.output
    assert planned_jobs == len(conn.submitted)  # replayed with the run's seeds: the plan is exact
    assert "spent: " in ran.stdout and f"{planned_jobs} jobs of cap none" in ran.stdout


def test_submit_stops_at_the_cap_with_one_line_and_status_shows_spending(tmp_path, monkeypatch):
    conn = fake_ibm()
    use(monkeypatch, conn)
    out = tmp_path / "run"
    result = invoke("submit", toml(tmp_path), "--backend", "ibm:ibm_test", "--out", out, "--yes", "--max-jobs", "3")
    lines = [line for line in result.stderr.splitlines() if line.strip() and "oracle calls" not in line]
    assert result.exit_code == 1 and len(lines) == 1 and "cap reached" in lines[0], result.output
    assert len(conn.submitted) == 3
    status = invoke("jobs", "status", out)
    assert status.exit_code == 0 and "spent: 3 jobs of cap 3" in status.stdout
    resumed = invoke("jobs", "resume", out, "--max-jobs", "500")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((out / "execution.json").read_text())["limits"]["max_jobs"] == 500


def planned_jobs(stdout: str) -> int:
    q_line = next(line for line in stdout.splitlines() if line.strip().startswith("q-gp-ucb:"))
    return int(q_line.split()[1].replace(",", ""))


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_the_plan_replays_the_run_on_the_test_service_and_counts_its_jobs_exactly(tmp_path, monkeypatch, seed):
    """Issue 25 item 3: several trials, several seeds; an ideal-device plan missed by up to 3%."""
    budget, trials = (800, 2) if seed == 0 else (1500, 3)  # the fast case smaller; the slow ones as issue 25 ran them
    config = ExperimentConfig(algorithms=("q-gp-ucb",), budget=budget, trials=trials, target="ibm:ibm_test", seed=seed)
    conn = fake_ibm()
    use(monkeypatch, conn)
    out = tmp_path / "run"
    ran = invoke("submit", toml(tmp_path, config), "--backend", "ibm:ibm_test", "--out", out, "--yes")
    assert ran.exit_code == 0, ran.output
    assert "replayed with the run's seeds" in ran.stdout and "exact:" in ran.stdout
    assert planned_jobs(ran.stdout) == len(conn.submitted) > 0


def test_a_real_device_plan_is_labelled_an_estimate_with_its_spread(tmp_path, monkeypatch):
    conn = fake_ibm()
    monkeypatch.setattr(type(conn), "replica", lambda self: None)  # as IBMConnection: outcomes unknown
    use(monkeypatch, conn)
    result = invoke("submit", toml(tmp_path), "--backend", "ibm:ibm_test", "--out", tmp_path / "run", input="n\n")
    assert "simulated on an ideal device" in result.stdout and "an estimate, not a bound" in result.stdout
    upper = next(line for line in result.stdout.splitlines() if line.strip().startswith("up to"))
    assert int(upper.split()[2].replace(",", "")) >= planned_jobs(result.stdout)


@pytest.mark.slow
def test_the_plan_replays_a_local_fake_backend_run_exactly(tmp_path, monkeypatch):
    config = ExperimentConfig(algorithms=("q-gp-ucb",), budget=600, trials=2, target="fake:FakeManilaV2")
    out = tmp_path / "run"
    ran = invoke("submit", toml(tmp_path, config), "--backend", "fake:FakeManilaV2", "--out", out, "--yes")
    assert ran.exit_code == 0, ran.output
    submitted = [line for line in journal(out) if line["event"] == "submitted"]
    assert "exact:" in ran.stdout and planned_jobs(ran.stdout) == len(submitted) > 0


@pytest.mark.slow
def test_the_default_experiment_plan_needs_few_jobs_per_quantum_stage_and_none_classical(tmp_path):
    config = ExperimentConfig(budget=2000)  # the default experiment, shorter: the plan replays a noisy trial
    result = invoke("submit", toml(tmp_path, config), "--backend", "fake:FakeBrisbane",
                    "--out", tmp_path / "run", "--plan-trials", "1", input="n\n")
    q_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("q-gp-ucb:"))
    per_stage = float(q_line.split("(")[1].split()[0])
    assert per_stage <= 3.0 and "gp-ucb: classical" in result.stdout and "0 jobs" in result.stdout


# ------------------------------------------------------------------ kill -9 at random moments


KILL_CONFIG = ExperimentConfig(algorithms=("q-gp-ucb",), budget=3000, trials=6, target="ibm:ibm_test")


@pytest.mark.slow
def test_kill_9_at_20_random_moments_then_resume_gives_identical_results_and_one_job_per_request(tmp_path, monkeypatch):
    """Each kill lands a random 0-0.25 s after the journal grew (so mid-run, not during start-up)."""
    reference = fake_ibm()
    use(monkeypatch, reference)
    pin_as_submit_does(tmp_path / "clean", reference, KILL_CONFIG.target)  # the runs below go through qbo submit
    runner.run_experiment(KILL_CONFIG, tmp_path / "clean")
    server, out = tmp_path / "server", tmp_path / "run"
    FakeService(store=server)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from typer.testing import CliRunner
        from qbo.cli.app import app
        from qbo.execution import runtime
        from tests.support.fake_service import fake_ibm
        conn = fake_ibm({str(server)!r})
        runtime.connect = lambda kind: conn
        result = CliRunner().invoke(app, sys.argv[1:])
        sys.stdout.write(result.output)
        sys.exit(result.exit_code)
    """)
    cfg = toml(tmp_path, KILL_CONFIG)
    rng = random.Random(11)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    kills = 0
    while kills < 20:
        started = (out / "config.toml").exists()
        args = (["jobs", "resume", str(out)] if started else
                ["submit", str(cfg), "--backend", "ibm:ibm_test", "--out", str(out), "--yes", "--mode", "batch"])
        lines = len((out / "jobs.jsonl").read_bytes().splitlines()) if (out / "jobs.jsonl").exists() else 0
        proc = subprocess.Popen([sys.executable, "-c", script, *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if (out / "jobs.jsonl").exists() and len((out / "jobs.jsonl").read_bytes().splitlines()) > lines:
                break
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 0.25))
        if proc.poll() is not None:
            break  # the run finished before this kill
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    final = subprocess.run([sys.executable, "-c", script, "jobs", "resume", str(out)], env=env,
                           capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stdout + final.stderr
    assert kills == 20
    assert files(out) == files(tmp_path / "clean")
    assert duplicate_submissions(journal(out)) == []
    service = FakeService(store=server)
    assert once_each(service, out) == len(reference.submitted) == len(service.submitted)


# ------------------------------------------------------------------ parsers and credentials


@given(st.integers(100, 599), st.sampled_from(["Client", "Server"]), st.text(max_size=40))
def test_the_status_code_inside_an_ibm_runtime_error_is_found_and_classified(code, kind, noise):
    from qiskit_ibm_runtime.exceptions import IBMRuntimeError

    from qbo.execution.jobs import http_status, transient_kind

    exc = IBMRuntimeError(f"Failed to run program: '{code} {kind} Error: Bad for url: https://x/jobs'. {noise}")
    assert http_status(exc) == code
    if code == 429 or code >= 500:
        assert transient_kind(exc) == "network"
    elif "session" not in noise.lower():
        assert transient_kind(exc) is None


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=40, max_size=60))
def test_redaction_removes_crns_and_token_like_strings_but_keeps_fingerprints(secret):
    fp = "0123456789abcdef" * 4
    text = runtime.redact(f"instance {INSTANCE} key {secret} tag {fp} job d12345")
    assert "crn:" not in text and secret not in text and fp in text and "d12345" in text


def test_qiskit_ibm_instance_is_honoured_with_a_saved_account(monkeypatch):
    import qiskit_ibm_runtime

    made = []
    monkeypatch.delenv("QISKIT_IBM_TOKEN", raising=False)
    monkeypatch.setenv("QISKIT_IBM_INSTANCE", INSTANCE)
    monkeypatch.setattr(ibm, "saved_account_exists", lambda: True)
    monkeypatch.setattr(qiskit_ibm_runtime, "QiskitRuntimeService", lambda **kw: made.append(kw) or "service")
    assert runtime.ibm_service() == "service" and made == [{"instance": INSTANCE}]


def test_estimate_on_an_ibm_target_is_refused_in_one_line(monkeypatch):
    use(monkeypatch, fake_ibm())
    result = invoke("estimate", "--oracle", "bernoulli:0.3", "--epsilon", "0.1", "--target", "ibm:ibm_test")
    assert result.exit_code == 2 and "run folder" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_upgrading_qbo_mid_run_keeps_the_recorded_version_in_fingerprints(tmp_path, monkeypatch, clean):
    from qbo.execution import jobs

    conn = fake_ibm()
    use(monkeypatch, FaultyConnection(conn, FaultPlan(crash=5)))
    out = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        runner.run_experiment(CONFIG, out)
    recorded = json.loads((out / "execution.json").read_text())["qbo_version"]
    monkeypatch.setattr(jobs, "qbo_version", lambda: recorded + ".post1")  # a newer qbo resumes
    use(monkeypatch, conn)
    runner.resume_experiment(out)
    assert json.loads((out / "execution.json").read_text())["qbo_version"] == recorded
    assert files(out) == files(clean[0]) and once_each(conn.fake, out) == clean[1]
