"""`qbo calibrations depth NAME --oracle SPEC`: the predicted noise of each Grover power."""

from __future__ import annotations

from typing import Annotated

import typer

from qbo.cli.errors import one_line_errors


@one_line_errors
def calibrations_depth(
    name: Annotated[str, typer.Argument(help="Calibration snapshot, e.g. fake_torino.")],
    oracle: Annotated[str, typer.Option("--oracle", help="Oracle spec, e.g. bernoulli:0.3.")] = "bernoulli:0.3",
    kmax: Annotated[int, typer.Option("--kmax", help="Largest Grover power in the table.")] = 32,
    epsilon: Annotated[float | None, typer.Option("--epsilon", help="Also choose k_max for this eps (amplitude units).")] = None,
    fraction: Annotated[float, typer.Option("--fraction", help="Allowed bias as a fraction of eps.")] = 0.5,
) -> None:
    """Print k, depth, duration, 2q gates, predicted contrast and bias bounds per Grover power."""
    from qbo.noise import load_snapshot
    from qbo.noise.depth import choose_k_max, depth_table
    from qbo.oracles import parse_oracle

    if kmax < 0:
        raise ValueError(f"kmax must be >= 0, got {kmax}")
    snapshot, orc = load_snapshot(name), parse_oracle(oracle)
    typer.echo(f"{snapshot.name}, oracle {orc.key}")
    typer.echo(f"{'k':>4} {'depth':>6} {'duration_us':>12} {'2q_gates':>8} {'contrast':>9} {'p_bias':>8} {'a_bias':>8}")
    for r in depth_table(snapshot, orc, range(kmax + 1)):
        typer.echo(
            f"{r.k:>4} {r.depth:>6} {r.duration_s * 1e6:>12.3f} {r.two_qubit_gates:>8} "
            f"{r.contrast:>9.4f} {r.p_bias:>8.4f} {r.bias_bound:>8.4f}"
        )
    if epsilon is not None:
        k = choose_k_max(snapshot, orc, epsilon, fraction)
        typer.echo(f"k_max for eps={epsilon}: " + ("unreachable (bias above fraction*eps at every k)" if k is None else str(k)))
