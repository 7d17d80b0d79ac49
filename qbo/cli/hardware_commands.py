"""`qbo submit`, `qbo jobs list|status|resume`, `qbo backends`, `qbo calibrations pull`.

Hardware-in-the-loop runs (issue 4, item 5). Every error is one line on stderr with no
traceback: bad input exits 2; a device failure that survived every retry exits 1. No
message of an exception raised by the service is ever printed (it may quote credentials):
only its type name.

``--timeout S`` (submit, jobs resume, jobs status, backends) is a deadline for the whole
command: connecting, transpiling, the cost plan, every job wait. Past it the command prints one
line ("timed out after S s", with "; resume with: qbo jobs resume DIR" once a run folder
exists) and exits ``qbo.files.TIMED_OUT_EXIT`` (124); the journals stay resumable, since the
timer, like SIGINT, never interrupts a journal write (``qbo.files.deadline``). Default: none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from qbo.cli.errors import interrupted_cause, one_line_errors
from qbo.cli.run_commands import fresh_folder
from qbo.files import deadline, time_left


jobs_app = typer.Typer(help="The job journal of a hardware run folder.", no_args_is_help=True, rich_markup_mode=None)

MODE_HELP = "job (one job per request), batch, or session (dedicated device time between requests)"
BACKEND_HELP = "ibm:NAME (a real device), or fake:NAME for a local dry run in qiskit-ibm-runtime local mode"
DISCOVERY_TIMEOUT_S = 20.0  # the IBM look-up of `qbo backends` never waits longer (nor past --timeout)
DEADLINE_HELP = ("Deadline for the whole command, in seconds (connecting, transpiling, job waits): past it, one line "
                 "and exit 124, the run folder left resumable. Default: none.")
TIMEOUT_MARGIN_S = 0.25  # `qbo backends` stops waiting for IBM this long before its --timeout, to list what it has


def _deadline(timeout: Optional[float]) -> AbstractContextManager[None]:
    """``qbo.files.deadline`` for a validated --timeout (bad values: one line, exit 2, before anything runs)."""
    from qbo.limits import check_timeout

    return deadline(None if timeout is None else check_timeout(timeout, "--timeout"))


def parse_device(backend: str) -> tuple[str, str]:
    """``ibm:NAME`` or ``fake:NAME`` -> (kind, name); one-line ValueError otherwise."""
    from qbo.execution import parse_target

    try:
        target = parse_target(backend)
    except ValueError:
        target = None
    if target is None or not target.is_device:
        raise ValueError(f"--backend must be ibm:NAME (or fake:NAME for a local dry run), got {backend[:80]!r}")
    return target.kind, str(target.name)


# ------------------------------------------------------------------ submit

RESUBMIT_HELP = ("job ends that may be submitted again, comma-separated: failed, lost, cancelled, maxtime, "
                 "notfound (each resubmission is journalled with its rule)")


@one_line_errors
def submit(
    config: Annotated[Path, typer.Argument(help="Experiment TOML (see qbo.experiments.config).")],
    backend: Annotated[str, typer.Option(help=BACKEND_HELP)],
    mode: Annotated[str, typer.Option(help=MODE_HELP)] = "job",
    out: Annotated[Optional[Path], typer.Option(help="Run folder (default: a fresh folder under runs/).")] = None,
    timeout: Annotated[Optional[float], typer.Option(help=DEADLINE_HELP)] = None,
    job_timeout: Annotated[float, typer.Option(help="Seconds to wait on one job before retrying the wait (what --timeout meant before issue 25).")] = 3600.0,
    attempts: Annotated[int, typer.Option(help="Failures in a row (transient errors, timeouts) before giving up.")] = 5,
    max_jobs: Annotated[Optional[int], typer.Option(help="Hard cap: jobs this run may submit (checked before each).")] = None,
    max_qpu_seconds: Annotated[Optional[float], typer.Option(help="Hard cap: QPU seconds (measured + predicted pending), checked before each job.")] = None,
    max_execution_time: Annotated[int, typer.Option(help="max_execution_time of every job, in QPU seconds.")] = 300,
    max_time: Annotated[int, typer.Option(help="max_time of the Batch or Session, in seconds (an expired one is reopened, journalled).")] = 8 * 3600,
    resubmit: Annotated[str, typer.Option(help=RESUBMIT_HELP)] = "failed,lost",
    plan_trials: Annotated[Optional[int], typer.Option(help="Trials simulated for the cost plan (scaled to all trials; default: qbo.experiments.cost_plan.PLAN_TRIALS).")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Submit without asking to confirm the cost plan.")] = False,
) -> None:
    """Start a hardware-in-the-loop BO run: print the cost plan, confirm, then submit; every job
    is journalled in RUN_DIR/jobs.jsonl and the caps are checked before each submission."""
    with _deadline(timeout):
        _submit(config, backend, mode, out, job_timeout, attempts, max_jobs, max_qpu_seconds, max_execution_time,
                max_time, resubmit, plan_trials, yes)


def _submit(config: Path, backend: str, mode: str, out: Optional[Path], job_timeout: float, attempts: int,
            max_jobs: Optional[int], max_qpu_seconds: Optional[float], max_execution_time: int, max_time: int,
            resubmit: str, plan_trials: Optional[int], yes: bool) -> None:
    from qbo.execution import runtime
    from qbo.execution.jobs import Limits, RetryPolicy, check_mode, write_settings
    from qbo.experiments.assembly import check_experiment
    from qbo.experiments.config import load_config
    from qbo.experiments.cost_plan import cost_plan
    from qbo.experiments.folder import check_claimable, pin_calibration
    from qbo.limits import check_timeout

    kind, name = parse_device(backend)
    check_mode(mode)
    check_timeout(job_timeout, "--job-timeout")
    retry = RetryPolicy(max_attempts=attempts, timeout_s=job_timeout, resubmit=_rules(resubmit))
    limits = Limits(max_jobs, max_qpu_seconds, max_execution_time, max_time)
    if plan_trials is not None and plan_trials < 1:
        raise ValueError(f"--plan-trials must be >= 1, got {plan_trials}")
    cfg = load_config(config).with_overrides(target=f"{kind}:{name}")
    connection = runtime.connect(kind)
    device = connection.backend(name)  # credentials and backend name, before a folder exists
    check_experiment(cfg)  # problem, policies and mitigation, before a folder exists
    folder = out or fresh_folder("submit-")
    check_claimable(folder, cfg)  # a file, a foreign folder or another experiment's run folder: before the plan
    calibration = _calibration(kind, name, device, folder)
    for line in plan_lines(cost_plan(cfg, device, plan_trials, calibration, connection.replica(), mode), cfg, mode, limits, device, calibration):
        typer.echo(line)
    if not yes and not _confirmed():
        typer.echo("not submitted: the plan was not confirmed (--yes confirms it)", err=True)
        raise typer.Exit(code=1)
    write_settings(folder, mode, retry, limits)
    if calibration is not None:  # the run's device model, for every unit and resume: the one the plan used
        pinned = pin_calibration(folder, calibration, cfg.target)
        if pinned is None or pinned.to_json() != calibration.to_json():
            raise ValueError(f"'{folder}' was pinned to another calibration while the plan was shown; "
                             "submit again to see the plan for it, or use a fresh --out")
    _run(folder, lambda report: _run_experiment(cfg, folder, report))


def _calibration(kind: str, name: str, device: Any, folder: Path) -> Any:
    """The device model of an ``ibm:`` run: what a claimed run folder pinned (None: it has
    none, and keeps none), a pin left before the claim, else the backend's calibration now
    (``snapshot_from_backend``); None for ``fake:``, whose model is the fake backend's own."""
    from qbo.experiments.folder import MARKER, pinned_calibration
    from qbo.noise import snapshot_from_backend

    if kind != "ibm":
        return None
    pinned = pinned_calibration(folder, f"{kind}:{name}") if folder.is_dir() else None
    if pinned is not None or (folder / MARKER).exists():
        return pinned
    return snapshot_from_backend(device, source=f"{kind}:{name}")


def _confirmed() -> bool:
    try:
        return bool(typer.confirm("Submit these jobs?", default=False))
    except (typer.Abort, EOFError):
        return False


def _rules(text: str) -> tuple[str, ...]:
    from qbo.execution.jobs import RESUBMIT_RULES

    rules = tuple(r.strip() for r in text.split(",") if r.strip())
    bad = [r for r in rules if r not in RESUBMIT_RULES]
    if bad:
        raise ValueError(f"--resubmit: unknown job end '{bad[0]}', expected some of {', '.join(RESUBMIT_RULES)}")
    return rules


def plan_lines(plan: dict[str, Any], cfg: Any, mode: str, limits: Any, device: Any, calibration: Any = None) -> list[str]:
    """The cost plan as printed before anything is submitted."""
    from qbo.execution import parse_target
    from qbo.execution.cost import JOB_OVERHEAD_S, rep_delay_s
    from qbo.experiments.cost_plan import PLAN_RESEEDS, TALLIES

    lines = [f"cost plan for {cfg.target} ({mode} mode), {cfg.trials} trials x {len(cfg.algorithms)} algorithms, budget {cfg.budget}:"]
    if plan["tv"]:
        lines.append("  time-varying problem: no job prediction (jobs still stop at the caps)")
    else:
        how = ("replayed with the run's seeds on a simulator that answers as the target will"
               if plan["kind"] == "replay" else "simulated on an ideal device")
        scaled = plan["simulated"] < plan["trials"]
        lines[0] += (f" {how} for {plan['simulated']} of {plan['trials']} trials"
                     + (f", scaled x{plan['trials'] / plan['simulated']:g}" if scaled else ""))
        if plan["kind"] == "replay" and not scaled:
            lines.append("  exact: the run submits these jobs unless a job fails or a cap stops it")
        else:
            lines.append("  an estimate, not a bound: the outcomes decide how many rounds each estimate takes")
    total = dict.fromkeys(TALLIES, 0.0)
    for name, entry in plan["algorithms"].items():
        if not entry["quantum"]:
            lines.append(f"  {name}: classical, samples the problem's reward model: 0 jobs")
            continue
        per_stage = entry["jobs"] / entry["stages"] if entry["stages"] else 0.0
        lines.append(f"  {name}: {entry['jobs']:,.0f} jobs, {entry['circuits']:,.0f} circuits, {entry['shots']:,.0f} shots, "
                     f"{entry['stages']:,.0f} quantum stages ({per_stage:.1f} jobs per stage), ~{entry['qpu_s']:,.0f} QPU s")
        if plan["kind"] == "ideal":
            lines.append(f"    up to {entry['jobs_upper']:,.0f} jobs: the most over {PLAN_RESEEDS + 1} sampling seeds on an "
                         "ideal device (a spread, not a bound)")
        for key in total:
            total[key] += entry[key]
    if not plan["tv"]:
        lines.append(f"  total: {total['jobs']:,.0f} jobs, {total['circuits']:,.0f} circuits, {total['shots']:,.0f} shots, "
                     f"~{total['qpu_s']:,.0f} QPU s predicted ({JOB_OVERHEAD_S:g} s per job + shots x (rep delay "
                     f"{rep_delay_s(device) * 1e6:.0f} us + circuit duration))")
    if calibration is not None:
        lines.append(f"  device model: the calibration of {calibration.source} from {calibration.timestamp}, pinned in "
                     "calibration.json: every QMC stage is depth-capped and bias-padded by it, and says when its eps "
                     "is out of reach")
    queue = _queue_depth(device) if parse_target(cfg.target).is_ibm else None  # fake: no queue
    if queue is not None:
        lines.append(f"  queue: {queue} jobs pending on {getattr(device, 'name', '?')} now")
    caps = (f"--max-jobs {limits.max_jobs if limits.max_jobs is not None else 'none'}, "
            f"--max-qpu-seconds {limits.max_qpu_seconds if limits.max_qpu_seconds is not None else 'none'}")
    time_limits = f"max_execution_time {limits.max_execution_time} s per job"
    if mode != "job":
        time_limits += f", {mode} max_time {limits.max_time} s"
    lines.append(f"  caps: {caps}; {time_limits}")
    return lines


def _queue_depth(device: Any) -> int | None:
    try:
        return int(device.status().pending_jobs)
    except Exception:  # fake backends and test doubles have no queue
        return None


@jobs_app.command("resume")
@one_line_errors
def resume(
    run_dir: Annotated[Path, typer.Argument(help="A hardware run folder.")],
    mode: Annotated[Optional[str], typer.Option(help="Change the mode: " + MODE_HELP)] = None,
    max_jobs: Annotated[Optional[int], typer.Option(help="Change the cap on jobs (recorded in the run folder).")] = None,
    max_qpu_seconds: Annotated[Optional[float], typer.Option(help="Change the cap on QPU seconds.")] = None,
    resubmit: Annotated[Optional[str], typer.Option(help="Change the rule: " + RESUBMIT_HELP)] = None,
    timeout: Annotated[Optional[float], typer.Option(help=DEADLINE_HELP)] = None,
) -> None:
    """Continue a run: journalled counts are reused and pending jobs re-attached, never re-submitted."""
    with _deadline(timeout):
        _resume(run_dir, mode, max_jobs, max_qpu_seconds, resubmit)


def _resume(run_dir: Path, mode: Optional[str], max_jobs: Optional[int], max_qpu_seconds: Optional[float],
            resubmit: Optional[str]) -> None:
    import dataclasses

    from qbo.execution.jobs import check_mode, read_instance, read_limits, read_settings, write_settings
    from qbo.experiments.runner import resume_experiment

    _check_run_dir(run_dir)
    saved_mode, retry = read_settings(run_dir)
    limits = read_limits(run_dir)
    if max_jobs is not None:
        limits = dataclasses.replace(limits, max_jobs=max_jobs)
    if max_qpu_seconds is not None:
        limits = dataclasses.replace(limits, max_qpu_seconds=max_qpu_seconds)
    if resubmit is not None:
        retry = dataclasses.replace(retry, resubmit=_rules(resubmit))
    if (mode, max_jobs, max_qpu_seconds, resubmit) != (None, None, None, None):
        from qbo.experiments.folder import lock_run_folder, open_run_folder

        new_mode = check_mode(mode or saved_mode)  # bad input is refused before the folder is touched
        open_run_folder(run_dir)  # verified (read-only) before anything in it changes
        with lock_run_folder(run_dir):  # and not while another process runs it
            write_settings(run_dir, new_mode, retry, limits, instance=read_instance(run_dir))
    _run(run_dir, lambda report: resume_experiment(run_dir, report))


def _run_experiment(cfg, folder: Path, report):
    from qbo.experiments.runner import run_experiment

    return run_experiment(cfg, folder, report)


def _run(folder: Path, go: Callable[[Any], list[dict[str, Any]]]) -> None:
    from qbo.execution.jobs import JobJournal
    from qbo.experiments.config import load_config
    from qbo.experiments.summary import format_table, summarise

    from qbo.files import Interrupted

    try:
        records = go(_Progress())
    except (Exception, Interrupted) as exc:  # journals cut back to their last commit, the lock released
        interrupt = None if isinstance(exc, typer.Exit) else interrupted_cause(exc)
        if interrupt is None:
            raise
        if (folder / "run.json").exists():  # "interrupted" or "timed out after S s"; qbo.cli.app prints it
            interrupt.note = f"{interrupt.note}; resume with: qbo jobs resume {folder}"
        if interrupt is exc:
            raise
        raise interrupt from None
    cfg = load_config(folder / "config.toml")
    typer.echo(format_table(summarise(records, cfg)))
    jobs = JobJournal.in_run_dir(folder).jobs()
    typer.echo(f"wrote {folder}/stages.jsonl, summary.csv, regret.png; {len(jobs)} jobs in {folder}/jobs.jsonl")
    typer.echo(spent_line(folder))


class _Progress:
    """One line on stderr whenever a unit moves on by a tenth of its budget."""

    def __init__(self) -> None:
        self._shown: dict[str, int] = {}

    def __call__(self, unit: str, calls: int, budget: int) -> None:
        tenth = 10 * calls // max(budget, 1)
        if self._shown.get(unit) != tenth:
            self._shown[unit] = tenth
            typer.echo(f"{unit}: {calls}/{budget} oracle calls", err=True)


# ------------------------------------------------------------------ jobs list | status


@jobs_app.command("list")
@one_line_errors
def list_jobs(run_dir: Annotated[Path, typer.Argument(help="A hardware run folder.")]) -> None:
    """List the journalled jobs with their last journalled status."""
    for job in _journal_jobs(run_dir):
        typer.echo(_job_line(job, job["status"]))


@jobs_app.command("status")
@one_line_errors
def status(
    run_dir: Annotated[Path, typer.Argument(help="A hardware run folder.")],
    timeout: Annotated[Optional[float], typer.Option(help=DEADLINE_HELP)] = None,
) -> None:
    """Like list, but asks the service about jobs that are not finished in the journal."""
    with _deadline(timeout):
        _status(run_dir)


def _status(run_dir: Path) -> None:
    from qbo.execution import runtime
    from qbo.execution import parse_target
    from qbo.execution.jobs import PENDING
    from qbo.experiments.config import load_config

    jobs = _journal_jobs(run_dir)
    kind = parse_target(load_config(run_dir / "config.toml").target).kind
    connection = runtime.connect(kind) if any(j["status"] in PENDING for j in jobs) else None
    for job in jobs:
        state = job["status"]
        if state in PENDING and connection is not None:
            state = f"{state} in journal; service: {_service_status(connection, job['job_id'])}"
        typer.echo(_job_line(job, state))
    typer.echo(spent_line(run_dir))


def spent_line(run_dir: Path) -> str:
    """Jobs and QPU seconds spent against the run's caps: IBM's billed usage, and for jobs IBM
    has not billed yet (done or not) what the caps count for them (``jobs.spent``)."""
    from qbo.execution import parse_target
    from qbo.execution.jobs import JobJournal, read_limits, spent, unbilled
    from qbo.experiments.config import load_config

    entries = JobJournal.in_run_dir(run_dir).read()
    jobs, seconds = spent(entries)
    waiting = unbilled(entries)
    limits = read_limits(run_dir)
    cap_s = f"{limits.max_qpu_seconds:g}" if limits.max_qpu_seconds is not None else "none"
    cap_j = f"{limits.max_jobs}" if limits.max_jobs is not None else "none"
    head = f"spent: {jobs} jobs of cap {cap_j}; {seconds:.1f} QPU s"
    if parse_target(load_config(run_dir / "config.toml").target).kind == "fake":
        return f"{head} predicted (local mode: nothing is billed) of cap {cap_s}"
    charged = sum(waiting.values())
    billed = sum(float(e["qpu_s"]) for e in entries if e.get("qpu_s") is not None)
    detail = f"{billed:.1f} billed by IBM, {charged:.1f} predicted for {len(waiting)} jobs IBM has not billed yet"
    if seconds > billed + charged + 1e-9:
        detail = f"session wall time; the jobs: {detail}"
    return f"{head} ({detail}) of cap {cap_s}"


def _service_status(connection: Any, job_id: str) -> str:
    try:
        raw = connection.job(job_id).status()
    except LookupError:
        return "lost (a local job ends with its process; resume runs it again)"
    except Exception as exc:
        return f"unknown ({type(exc).__name__})"
    return str(getattr(raw, "name", raw))


def _journal_jobs(run_dir: Path) -> list[dict[str, Any]]:
    from qbo.execution.jobs import JobJournal

    _check_run_dir(run_dir)
    jobs = JobJournal.in_run_dir(run_dir).jobs()
    if not jobs:
        typer.echo(f"no jobs journalled in {run_dir}")
    return jobs


def _job_line(job: dict[str, Any], state: str) -> str:
    size = f"{job.get('circuits', '?')}x{job.get('shots', '?')} shots"
    return (f"{job['job_id']}  {job.get('backend', '?')}  {job.get('mode', '?'):7s}  {size:16s}  "
            f"attempt {job.get('attempt', '?')}  {job.get('time', '?')}  {job['fingerprint'][:12]}  {state}")


def _check_run_dir(run_dir: Path) -> None:
    if not (run_dir / "config.toml").is_file():
        raise ValueError(f"'{run_dir}' is not a qbo run folder: no config.toml")


# ------------------------------------------------------------------ backends


@one_line_errors
def backends(
    timeout: Annotated[Optional[float], typer.Option(help=DEADLINE_HELP + " The IBM look-up waits at most "
                                                      f"{DISCOVERY_TIMEOUT_S:g} s, and stops in time to list the rest.")] = None,
) -> None:
    """List the targets: exact, aer, aer:CALIBRATION, fake:BACKEND and reachable ibm:BACKEND."""
    with _deadline(timeout):
        _backends()


def _backends() -> None:
    from qbo.execution.runtime import fake_backend_names
    from qbo.noise import list_snapshots

    typer.echo("exact")
    typer.echo("aer")
    for name in list_snapshots():
        typer.echo(f"aer:{name}")
    for name in fake_backend_names():
        typer.echo(f"fake:{name}")
    left = time_left()
    for line in _ibm_lines(DISCOVERY_TIMEOUT_S if left is None else min(DISCOVERY_TIMEOUT_S, max(0.0, left - TIMEOUT_MARGIN_S))):
        typer.echo(line)


def _ibm_lines(timeout: float) -> list[str]:
    """``ibm:NAME`` lines, or one line saying why none is reachable (never hangs)."""
    from qbo.execution import runtime

    if not runtime.credentials_available():
        return [f"# ibm: none reachable (no credentials: {runtime.CREDENTIALS_HELP})"]
    found: dict[str, Any] = {}

    def discover() -> None:
        try:
            found["names"] = runtime.connect("ibm").backends()
        except Exception as exc:  # type name only (the client's message may quote credentials), or qbo's own line
            from qbo.errors import QboError

            found["error"] = str(exc) if isinstance(exc, QboError) else type(exc).__name__

    worker = threading.Thread(target=discover, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return [f"# ibm: none reachable (no answer within {timeout:.3g} s)"]
    if "error" in found:
        return [f"# ibm: none reachable ({found['error']})"]
    return [f"ibm:{name}" for name in found["names"]] or ["# ibm: no operational backends on this account"]


# ------------------------------------------------------------------ calibrations pull


@one_line_errors
def pull(
    backend: Annotated[str, typer.Option(help=BACKEND_HELP)],
    out: Annotated[Optional[Path], typer.Option(help="File to write (default: <backend>.json in $QBO_CALIBRATIONS_DIR or the user data directory).")] = None,
) -> None:
    """Save a calibration snapshot of a live backend.

    Writes BACKEND.json into $QBO_CALIBRATIONS_DIR if set, else into the user data directory
    (e.g. ~/.local/share/qbo/calibrations), unless --out names a file.
    """
    from qbo.noise import calibrations_dir, save_snapshot, snapshot_from_backend
    from qbo.execution import runtime

    kind, name = parse_device(backend)
    device = runtime.connect(kind).backend(name)
    snapshot = snapshot_from_backend(device, source=f"{kind}:{name}")
    path = save_snapshot(snapshot, out or calibrations_dir() / f"{snapshot.name}.json")
    typer.echo(f"wrote {path}")


# ------------------------------------------------------------------ helpers
