"""`qbo calibrations list | show | export`."""

from __future__ import annotations

import json
import math
from typing import Annotated

import typer

from qbo.cli.errors import one_line_errors

calibrations_app = typer.Typer(help="Device calibration snapshots.", no_args_is_help=True, rich_markup_mode=None)


@calibrations_app.command("list")
@one_line_errors
def list_() -> None:
    """List the shipped snapshots."""
    from qbo.noise import list_snapshots, load_snapshot

    for name in list_snapshots():
        s = load_snapshot(name)
        typer.echo(f"{name:20s} {s.processor or '?':10s} {s.num_qubits:4d} qubits  {s.timestamp}  {s.source}")


@calibrations_app.command("show")
@one_line_errors
def show(name: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Summarise one snapshot (median T1, T2, readout and gate errors)."""
    import numpy as np

    from qbo.limits import check_name
    from qbo.noise import load_snapshot

    s = load_snapshot(check_name(name, "calibration name", path_ok=True))
    if as_json:
        typer.echo(json.dumps(s.to_json()))
        return
    med = lambda xs: float(np.median([x for x in xs if x is not None])) if any(x is not None for x in xs) else float("nan")  # noqa: E731
    working = [q for q in s.qubits if not q.faulty]
    typer.echo(f"{s.name}: {s.processor} {s.num_qubits} qubits, basis {', '.join(s.basis_gates)}, from {s.source} at {s.timestamp}")
    typer.echo(f"median T1 {med([q.t1 for q in working]) * 1e6:.1f} us, T2 {med([q.t2 for q in working]) * 1e6:.1f} us, readout error {med([q.readout_error for q in working]):.4f}")
    for gate in sorted({g.gate for g in s.gates}):
        ok = [g for g in s.gates if g.gate == gate and not g.faulty]
        bad = sum(g.gate == gate and g.faulty for g in s.gates)
        errs, durs = [g.error for g in ok], [g.duration for g in ok]
        faulty = f", {bad} faulty" if bad else ""
        error, duration = med(errs), med(durs)
        error_text = "not reported" if math.isnan(error) else f"{error:.2e}"
        duration_text = "not reported" if math.isnan(duration) else f"{duration * 1e9:.0f} ns"
        typer.echo(f"  {gate:8s} median error {error_text}, median duration {duration_text} ({len(ok)} entries{faulty})")
    if s.faulty_qubits or s.faulty_gates:
        typer.echo(f"faulty qubits {list(s.faulty_qubits) or 'none'}, faulty gates {len(s.faulty_gates)}: "
                   "left out of layouts, routing and the noise model")
        for note in s.notes:
            if "faulty" in note:
                typer.echo(f"  {note}")
    else:
        typer.echo("faulty qubits none, faulty gates none")


@calibrations_app.command("export")
@one_line_errors
def export(from_fake: Annotated[str, typer.Option("--from-fake", help="Fake backend class, e.g. FakeBrisbane.")]) -> None:
    """Export a snapshot from a qiskit-ibm-runtime fake backend.

    Writes NAME.json into $QBO_CALIBRATIONS_DIR if set, else into the user data directory
    (e.g. ~/.local/share/qbo/calibrations); never into the installed package.
    """
    from qbo.limits import check_name
    from qbo.noise import calibrations_dir, export_from_fake, save_snapshot

    check_name(from_fake, "--from-fake")

    snapshot = export_from_fake(from_fake)
    path = save_snapshot(snapshot, calibrations_dir() / f"{snapshot.name}.json")
    typer.echo(f"wrote {path}")
