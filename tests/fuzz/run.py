"""Throw the fuzz corpus (tests/fuzz/cases.py) at the `qbo` CLI and check the contract.

Each case runs in its own empty folder with a time limit. It passes when the command exits 2,
prints exactly one stderr line, prints no traceback, does not hang, and creates, changes or
deletes no file in its folder (the user calibration folder and crash logs are pointed inside
or beside it, so writes there count too).

    python tests/fuzz/run.py                      # every case, in-process (fast: imports once)
    python tests/fuzz/run.py --subprocess -j 2    # every case as its own `python -m qbo.cli`
    python tests/fuzz/run.py --only issue12 -k export --limit 60

In-process mode calls ``qbo.cli.app.main`` with sys.argv set, stdout/stderr captured and a
SIGALRM time limit; subprocess mode also catches output written below Python (C libraries).
Prints one line per failure and a summary; exits 1 if any case failed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fuzz.cases import RUN, Case, all_cases, needs_journals, tamper  # noqa: E402

SECRET_VARIABLES = ("QISKIT_IBM_TOKEN", "QISKIT_IBM_INSTANCE", "QISKIT_IBM_CHANNEL", "QISKIT_IBM_URL")


@dataclass
class Outcome:
    case: Case
    code: int | None
    stderr: str
    seconds: float
    changed: list[str]
    hung: bool

    @property
    def problems(self) -> list[str]:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        out = []
        if self.hung:
            out.append("hang")
        elif self.code != 2:
            out.append(f"exit {self.code}")
        if len(lines) != 1 and not self.hung:
            out.append(f"{len(lines)} stderr lines")
        if "Traceback" in self.stderr:
            out.append("traceback")
        if self.changed:
            out.append("files changed: " + ", ".join(self.changed[:3]))
        return out


_FINISHED: list[Path] = []


def prepare_run() -> Path:
    """A folder holding two small run folders to copy for the run-folder cases (built once per
    process): ``finished`` (merged: stages.jsonl, no journals) and ``unmerged`` (every unit
    journalled, not yet merged: the journals hold the records)."""
    if _FINISHED and (_FINISHED[0] / "finished" / "stages.jsonl").exists():
        return _FINISHED[0]
    base = Path(tempfile.mkdtemp(prefix="qbo-fuzz-run-"))
    _FINISHED[:] = [base]
    from qbo.experiments import journal
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import prepare, run_experiment, run_unit, units

    config = ExperimentConfig(budget=60, trials=1)
    run_experiment(config, base / "finished")
    flush, journal.FLUSH_EVERY_S = journal.FLUSH_EVERY_S, 3600.0  # no checkpoints: line numbers fixed
    try:
        prepare(config, base / "unmerged").release()
        for unit in units(config):
            run_unit(config, unit, base / "unmerged")
    finally:
        journal.FLUSH_EVERY_S = flush
    return base


def setup(case: Case, folder: Path, finished: Path) -> None:
    (folder / "usercal").mkdir()
    for name in case.folders:
        (folder / name).mkdir(parents=True, exist_ok=True)
    for name, data in case.files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for name in case.fifos:
        os.mkfifo(folder / name)
    if case.run is not None:
        shutil.copytree(finished / ("unmerged" if needs_journals(case.run) else "finished"), folder / RUN)
        tamper(folder / RUN, case.run)


def snapshot(folder: Path) -> dict[str, str]:
    state = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            state[rel] = "link"
        elif path.is_fifo():
            state[rel] = "fifo"
        elif path.is_dir():
            state[rel] = "dir"
        elif path.is_file():
            state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            state[rel] = "other"
    return state


def diff(before: dict[str, str], after: dict[str, str]) -> list[str]:
    keys = sorted(set(before) | set(after))
    return [("+" if k not in before else "-" if k not in after else "~") + k for k in keys if before.get(k) != after.get(k)]


class _Timeout(KeyboardInterrupt):
    pass


def run_inprocess(case: Case, folder: Path, limit: float) -> tuple[int | None, str, bool]:
    from qbo.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    hung = False

    def alarm(*_):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    cwd, argv = os.getcwd(), sys.argv
    code: int | None = None
    try:
        os.chdir(folder)
        sys.argv = ["qbo", *case.argv]
        signal.setitimer(signal.ITIMER_REAL, limit)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except _Timeout:
        hung = True
    except BaseException as exc:  # noqa: BLE001 - anything escaping main() is a failure
        import traceback

        err.write("Traceback (escaped main)\n" + "".join(traceback.format_exception(exc)))
        code = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(cwd)
        sys.argv = argv
    if err.getvalue().count("\n") and code == 130 and "interrupted" in err.getvalue():
        hung = True
    return code, err.getvalue(), hung


def run_subprocess(case: Case, folder: Path, limit: float, env: dict[str, str]) -> tuple[int | None, str, bool]:
    try:
        proc = subprocess.run([sys.executable, "-m", "qbo.cli", *case.argv], cwd=folder, env=env,
                              capture_output=True, timeout=limit, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        return None, (exc.stderr or b"").decode(errors="replace"), True
    return proc.returncode, proc.stderr.decode(errors="replace"), False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subprocess", action="store_true", help="run each case as its own process")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="parallel cases (subprocess mode)")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--only", help="only cases with this tag (e.g. issue12)")
    parser.add_argument("-k", help="only cases whose name contains this")
    parser.add_argument("--first", type=int, help="only the first N selected cases")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    results = run_cases(select(all_cases(), args.only, args.k, args.first), subprocess_mode=args.subprocess,
                        jobs=args.jobs, limit=args.limit, verbose=args.verbose)
    return report(results)


def select(cases: list[Case], only: str | None = None, k: str | None = None, first: int | None = None) -> list[Case]:
    cases = [c for c in cases if (not only or only in c.tags) and (not k or k in c.name)]
    return cases[:first] if first else cases


def run_cases(cases: list[Case], subprocess_mode: bool = False, jobs: int = 1, limit: float = 60.0,
              verbose: bool = False) -> list[Outcome]:
    base = Path(tempfile.mkdtemp(prefix="qbo-fuzz-"))
    saved = {k: os.environ.pop(k) for k in SECRET_VARIABLES if k in os.environ}
    try:
        finished = prepare_run() if any(c.run is not None for c in cases) else base
        env = {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES} | {
            "PYTHONPATH": str(ROOT), "QBO_LOG_DIR": str(base / "logs")}

        def one(pair: tuple[int, Case]) -> Outcome:
            n, case = pair
            folder = base / f"case{n:04d}"
            folder.mkdir()
            setup(case, folder, finished)
            before = snapshot(folder)
            started = time.monotonic()
            if subprocess_mode:
                code, err, hung = run_subprocess(case, folder, limit, env | {"QBO_CALIBRATIONS_DIR": str(folder / "usercal")})
            else:
                os.environ["QBO_CALIBRATIONS_DIR"] = str(folder / "usercal")
                os.environ["QBO_LOG_DIR"] = str(base / "logs")
                code, err, hung = run_inprocess(case, folder, limit)
            outcome = Outcome(case, code, err, time.monotonic() - started, diff(before, snapshot(folder)), hung)
            if verbose or outcome.problems:
                status = "FAIL " + "; ".join(outcome.problems) if outcome.problems else "ok"
                print(f"[{n:4d}] {status:40.40s} {outcome.seconds:6.2f}s  {case.name[:60]}  | {err.strip()[:160]!r}",
                      flush=True)
            shutil.rmtree(folder, ignore_errors=True)
            return outcome

        pairs = list(enumerate(cases))
        if subprocess_mode and jobs > 1:
            with ThreadPoolExecutor(jobs) as pool:
                return list(pool.map(one, pairs))
        return [one(p) for p in pairs]
    finally:
        os.environ.update(saved)
        shutil.rmtree(base, ignore_errors=True)


def report(results: list[Outcome]) -> int:
    failed = [r for r in results if r.problems]
    kinds: dict[str, int] = {}
    for r in failed:
        for p in r.problems:
            kinds[p.split(":")[0]] = kinds.get(p.split(":")[0], 0) + 1
    commands: dict[str, int] = {}
    for r in results:
        key = " ".join(a for a in r.case.argv[:2] if not a.startswith("-") and a not in (RUN,))[:24] or "-"
        key = r.case.argv[0] if r.case.argv and r.case.argv[0] not in ("circuits", "calibrations", "jobs") else key.split(" ")[0] + " " + (r.case.argv[1] if len(r.case.argv) > 1 else "")
        commands[key] = commands.get(key, 0) + 1
    total = sum(r.seconds for r in results)
    slowest = max(results, key=lambda r: r.seconds) if results else None
    print(f"fuzz: {len(results)} cases, {len(results) - len(failed)} pass, {len(failed)} fail"
          + (f" ({', '.join(f'{k}: {v}' for k, v in sorted(kinds.items()))})" if kinds else ""))
    print("cases per command: " + ", ".join(f"{k.strip()}: {v}" for k, v in sorted(commands.items())))
    if slowest:
        print(f"time: {total:.1f} s in cases; slowest {slowest.seconds:.1f} s ({slowest.case.name[:60]})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
