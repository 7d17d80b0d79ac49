"""The `qbo` command. Thin: parse, call the library, print. Heavy imports stay inside commands."""

from __future__ import annotations

import typer

from qbo.cli.calibration_commands import calibrations_app
from qbo.cli.depth_commands import calibrations_depth
from qbo.cli.hardware_commands import backends, jobs_app, pull, submit
from qbo.cli.qmc_commands import circuits_app, estimate
from qbo.cli.run_commands import plot, run

app = typer.Typer(
    help="qbo: quantum-first Bayesian optimisation with honest oracle-call accounting.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command()(run)
app.command()(plot)
app.command()(estimate)
app.add_typer(circuits_app, name="circuits")
app.add_typer(calibrations_app, name="calibrations")
app.command()(submit)
app.command()(backends)
app.add_typer(jobs_app, name="jobs")
calibrations_app.command("pull")(pull)
calibrations_app.command("depth")(calibrations_depth)


def main() -> None:
    app()
