"""`qbo run`, `qbo plot` and `qbo export`."""

from __future__ import annotations

import gc
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated, NamedTuple, Optional

import typer
from typer.core import TyperCommand

from qbo.cli.errors import interrupted_cause, one_line_errors

LENGTHSCALE_HELP = (
    "Length scale of every GP policy: fixed:VALUE | mle | lb[:THETA0] (LB-GP-UCB, Ziomek et al.) "
    "| a-gp-ucb[:THETA0] (Berkenkamp et al.)."
)
ACCOUNTING_HELP = (
    "honest (default): every shot of Q^k A costs 2k+1 oracle calls. reference: the Q-BO "
    "authors' count (shots*k, a formula when k=0), which UNDERCOUNTS oracle calls."
)


@one_line_errors
def run(
    config: Annotated[Optional[Path], typer.Argument(help="Experiment TOML (see qbo.experiments.config).")] = None,
    problem: Annotated[Optional[str], typer.Option(help="A registered problem (listed by --help).")] = None,
    algorithms: Annotated[Optional[str], typer.Option(help="Comma-separated registered policies (listed by --help).")] = None,
    budget: Annotated[Optional[int], typer.Option(help="Budget T in oracle calls.")] = None,
    trials: Annotated[Optional[int], typer.Option(help="Independent trials.")] = None,
    target: Annotated[Optional[str], typer.Option(help="exact | aer | aer:CALIBRATION | fake:BACKEND")] = None,
    seed: Annotated[Optional[int], typer.Option(help="Base seed.")] = None,
    estimator: Annotated[Optional[str], typer.Option(help="QMC method of quantum policies (listed by --help).")] = None,
    accounting: Annotated[Optional[str], typer.Option(help=ACCOUNTING_HELP)] = None,
    lengthscale: Annotated[Optional[str], typer.Option(help=LENGTHSCALE_HELP)] = None,
    mitigation: Annotated[Optional[str], typer.Option(help="none | rem | zne | zne+rem (device-model targets).")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Output folder (default: a fresh folder under runs/).")] = None,
    resume: Annotated[Optional[Path], typer.Option(help="Continue the killed run in this folder.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Run even if the predicted work exceeds the limits in docs/limits.md.")] = False,
    workers: Annotated[Optional[int], typer.Option(help="Run units in parallel on N local Dask workers (docs/scale-out.md).")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="Run units on the Dask cluster at tcp://HOST:PORT (docs/scale-out.md).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output (stderr).")] = False,
    progress_every: Annotated[float, typer.Option(help="Seconds between progress lines when stderr is not a terminal (a terminal shows a bar with the time left).")] = 10.0,
) -> None:
    """Run a BO experiment; with no arguments, the Q-BO seed's synthetic Bernoulli experiment."""
    from qbo.cli.quick_checks import check_run_options
    from qbo.files import Interrupted

    started = time.perf_counter()
    algs = tuple(a.strip() for a in algorithms.split(",") if a.strip()) if algorithms is not None else None
    check_run_options(problem=problem, algorithms=algs, budget=budget, trials=trials, target=target, seed=seed,
                      estimator=estimator, accounting=accounting, mitigation=mitigation, workers=workers)
    folder = resume if resume is not None else out or fresh_folder()
    try:
        from qbo.cli.progress import check_every
        from qbo.experiments.summary import format_table, summarise

        show = _Show(quiet, check_every(progress_every))
        cfg, records = _run(config, problem, algorithms, budget, trials, target, seed, estimator, accounting,
                            lengthscale, mitigation, folder, resume is not None, yes, workers, scheduler, show)
        typer.echo(format_table(summarise(records, cfg)))
        if cfg.accounting == "reference":
            typer.echo("note: reference accounting UNDERCOUNTS oracle calls; use honest accounting for conclusions")
        typer.echo(f"wrote {folder}/stages.jsonl, summary.csv, regret.png in {time.perf_counter() - started:.1f} s")
    except (Exception, Interrupted) as exc:  # interrupted: the journals are cut back to their last commit, the lock released
        interrupt = None if isinstance(exc, typer.Exit) else interrupted_cause(exc)
        if interrupt is None:
            raise
        interrupt.note = interrupted_line(folder)  # qbo.cli.app prints it; also while the last lines print
        if interrupt is exc:
            raise
        raise interrupt from None


def interrupted_line(folder: Path) -> str:
    """The one line an interrupted run prints: how to resume it, or that nothing was claimed."""
    if (folder / "run.json").exists():
        return f"interrupted; resume with: qbo run --resume {folder}"
    return "interrupted before the run folder was claimed; nothing to resume: run the command again"


def _run(config, problem, algorithms, budget, trials, target, seed, estimator, accounting, lengthscale, mitigation,
         folder, resume, yes, workers, scheduler, show):
    """(config, records) of the run into ``folder``, fresh or resumed."""
    from qbo.experiments.config import ExperimentConfig, load_config
    from qbo.experiments.folder import open_run_folder
    from qbo.limits import check_stages

    if resume:
        cfg = open_run_folder(folder)  # verified against run.json; the run takes the folder's lock
        _no_device(cfg.target)
        return cfg, _execute(cfg, folder, workers, scheduler, show)
    base = load_config(config) if config is not None else ExperimentConfig()
    algs = tuple(a.strip() for a in algorithms.split(",") if a.strip()) if algorithms else None
    cfg = base.with_overrides(
        problem=problem, algorithms=algs, budget=budget, trials=trials, target=target,
        seed=seed, estimator=estimator, accounting=accounting, mitigation=mitigation,
    )
    if lengthscale is not None:
        cfg = cfg.with_lengthscale(lengthscale)
    _no_device(cfg.target)
    check_stages(cfg.trials, len(cfg.algorithms), cfg.budget, yes)  # predicted work, before any file
    return cfg, _execute(cfg, folder, workers, scheduler, show)


def registry_help() -> dict[str, str]:
    """The help of ``qbo run --problem`` and ``--algorithms``, generated from the registries."""
    from qbo.algorithms import POLICIES
    from qbo.experiments.config import ESTIMATORS, MITIGATIONS
    from qbo.problems.registry import ALL_PROBLEMS, problem_entry

    problems = []
    for name in ALL_PROBLEMS:
        entry = problem_entry(name)
        problems.append(f"{name} ({entry.summary}{'; drifting' if entry.drifting else ''})")
    policies = [f"{name} ({entry.kind()}{', drifting problems only' if entry.clocked else ''}: {entry.summary})"
                for name, entry in POLICIES.items()]
    return {"problem": "One of: " + "; ".join(problems) + "; or package.module:factory, your own (docs/runs.md).",
            "algorithms": "Comma-separated, of: " + "; ".join(policies) + ".",
            "estimator": "QMC method of quantum policies: " + " | ".join(ESTIMATORS),
            "mitigation": " | ".join(MITIGATIONS) + " (device-model targets)."}


class RunCommand(TyperCommand):
    """`qbo run`, whose --problem and --algorithms help is generated from the registries when
    help is shown (importing them on every start would slow every command)."""

    def format_help(self, ctx, formatter) -> None:  # type: ignore[no-untyped-def]
        texts = registry_help()
        for param in self.params:
            if param.name in texts:
                param.help = texts[param.name]
        super().format_help(ctx, formatter)


@one_line_errors
def plot(
    run_dir: Annotated[Path, typer.Argument(help="A qbo run folder.")],
    logx: Annotated[bool, typer.Option("--logx", help="Logarithmic x-axis (oracle calls or rounds).")] = False,
    fmt: Annotated[Optional[str], typer.Option("--format", help="png | svg | pdf (default: from --out's suffix, else png).")] = None,
    dpi: Annotated[int, typer.Option(help="Resolution in dots per inch (PNG pixels; SVG and PDF scale).")] = 120,
    out: Annotated[Optional[Path], typer.Option(help="File to write (default: RUN_DIR/regret.FORMAT).")] = None,
) -> None:
    """Draw a finished run's regret figure from its stages.jsonl, for publication: a line style
    and marker per policy (legible in grayscale), a title naming problem, target, estimator and
    mitigation. Without options it redraws RUN_DIR/regret.png in that style."""
    from qbo.experiments.figure import Style, figure_format  # numpy, not yet matplotlib
    from qbo.files import check_writable
    from qbo.limits import DPI_MAX, DPI_MIN, check_int

    fmt = figure_format(fmt, out)
    check_int(dpi, "dpi", DPI_MIN, DPI_MAX, "DPI_MAX")
    target = out if out is not None else run_dir / f"regret.{fmt}"
    stages = run_dir / "stages.jsonl"
    if not stages.exists():
        raise ValueError(f"'{run_dir}' has no stages.jsonl; is the run finished?")
    check_writable(target)

    # Heavy (the run's config pulls in qbo's algorithms; matplotlib), once the options are checked.
    from qbo.experiments.config import load_config
    from qbo.experiments.plot import write_figure
    from qbo.experiments.schema import read_stage_records

    if (run_dir / "run.json").exists():  # a run folder: its stages.jsonl must be the one the run finished with
        from qbo.experiments.folder import finished, verify_finished, verify_run_folder

        config = load_config(run_dir / "config.toml")
        verify_run_folder(run_dir, config)
        if finished(run_dir) is not None:
            verify_finished(run_dir, config)
    records = read_stage_records(stages)
    write_figure(records, load_config(run_dir / "config.toml"), target, Style(fmt, dpi, logx, marked=True))
    typer.echo(f"wrote {target}")


@one_line_errors
def export(
    run_dir: Annotated[Path, typer.Argument(help="A finished qbo run folder.")],
    out: Annotated[Optional[Path], typer.Option(help="Parquet file to write (default: RUN_DIR/stages.parquet).")] = None,
) -> None:
    """Write a finished run's stage records as Parquet (typed columns, for pandas, polars or
    DuckDB); stages.jsonl stays the record. Needs pyarrow (pip install pyarrow, or qbo's
    'parquet' extra)."""
    try:
        from qbo.experiments.export import export_parquet
    except ImportError:
        raise ValueError("qbo export needs pyarrow: pip install 'qbo[parquet]'") from None
    if out is not None:
        _not_a_record(run_dir, out)
    typer.echo(f"wrote {export_parquet(run_dir, out)}")


def _not_a_record(run_dir: Path, out: Path) -> None:
    """Refuse an output path that would replace one of the run folder's own files."""
    folder, target = run_dir.resolve(), out.resolve()
    if target.parent == folder and target.name != "stages.parquet" and target.exists() or \
            folder in target.parents and target.parent != folder:
        raise ValueError(f"--out '{out}' would replace a file of the run folder '{run_dir}'; "
                         "choose a path outside it (or RUN_DIR/stages.parquet)")


def _execute(cfg, folder: Path, workers: int | None, scheduler: str | None, show: "_Show"):
    """Run (or resume) in this process, or fanned out on Dask when --workers/--scheduler is given."""
    from qbo.cli.progress import RunProgress

    units = cfg.trials * len(cfg.algorithms)
    if workers is None and scheduler is None:
        from qbo.experiments.runner import run_experiment

        # the modules and config are loaded for good: the collector need not rescan them on
        # each of the run's stages (bench/speed.py measures it; docs/scale-out.md)
        gc.freeze()
        with RunProgress(units, cfg.budget, every=show.every, quiet=show.quiet) as report:
            return run_experiment(cfg, folder, report)
    from qbo.experiments.fanout import run_fanned_out

    with RunProgress(units, cfg.budget, by_unit=True, every=show.every, quiet=show.quiet) as report:
        return run_fanned_out(cfg, folder, workers=1 if workers is None else workers, scheduler=scheduler, on_unit=report)


class _Show(NamedTuple):
    """What progress `qbo run` shows (qbo.cli.progress)."""

    quiet: bool
    every: float


def _no_device(target: str) -> None:
    """Paid hardware goes through `qbo submit` (cost plan, caps, confirmation), never `qbo run`."""
    from qbo.execution import parse_target

    if parse_target(target).is_ibm:
        raise ValueError(f"--target {target}: ibm: targets run with `qbo submit CONFIG --backend {target}` "
                         "(cost plan, caps and confirmation), or `qbo jobs resume RUN_DIR`")


def fresh_folder(prefix: str = "") -> Path:
    """A new folder name under runs/: PREFIX + the time, with -2, -3, ... if taken."""
    stamp = prefix + datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = Path("runs") / stamp
    n = 1
    while folder.exists():
        n += 1
        folder = Path("runs") / f"{stamp}-{n}"
    return folder
