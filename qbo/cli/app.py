"""The `qbo` command. Thin: parse, call the library, print. Heavy imports stay inside commands."""

from __future__ import annotations

import typer

from qbo.cli.calibration_commands import calibrations_app
from qbo.cli.depth_commands import calibrations_depth
from qbo.cli.errors import fail, one_line
from qbo.cli.hardware_commands import backends, jobs_app, pull, submit
from qbo.cli.qmc_commands import circuits_app, estimate
from qbo.cli.run_commands import RunCommand, export, plot, run

app = typer.Typer(
    rich_markup_mode=None,  # plain help: rich would cost ~0.3 s of imports on every --help (bench/startup.py)
    help="qbo: quantum-first Bayesian optimisation with honest oracle-call accounting.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command(cls=RunCommand)(run)
app.command()(plot)
app.command()(export)
app.command()(estimate)
app.add_typer(circuits_app, name="circuits")
app.add_typer(calibrations_app, name="calibrations")
app.command()(submit)
app.command()(backends)
app.add_typer(jobs_app, name="jobs")
calibrations_app.command("pull")(pull)
calibrations_app.command("depth")(calibrations_depth)


def entry() -> None:
    """The ``qbo`` command: ``main`` from the first line to the process's end, so an interrupt
    during interpreter teardown (after the work is complete) cannot kill it without a word."""
    import sys

    from qbo.files import Interrupted, interruptible

    try:
        with interruptible(final=True):
            main()
    except Interrupted as exc:
        typer.echo(exc.note, err=True)
        sys.exit(exc.exit_code)


def main() -> None:
    """Entry point: usage errors, like every other bad input, print one line and exit 2;
    anything that escapes a command's own boundary goes through the same one (qbo.cli.errors)."""
    import sys

    from qbo.files import Interrupted, interruptible

    try:
        with interruptible():  # SIGINT/SIGTERM: Interrupted, never inside a journal or file write
            code = app(standalone_mode=False)
    except Interrupted as exc:  # what was written is complete (`qbo run` says how to resume)
        typer.echo(exc.note, err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        if not _is_usage_error(exc):
            try:
                fail(exc)
            except typer.Exit as done:
                sys.exit(done.exit_code)
        message = exc.format_message().strip().splitlines()  # type: ignore[attr-defined]
        if message:  # empty when the help text itself was the answer (no arguments given)
            typer.echo(f"error: {one_line(message[0])} (see --help)", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def _is_usage_error(exc: Exception) -> bool:
    """A bad option or argument (click's UsageError, also as vendored by typer)."""
    return getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message")
