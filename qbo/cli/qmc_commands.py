"""`qbo estimate` and `qbo circuits export`."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from qbo.cli.errors import one_line_errors

circuits_app = typer.Typer(help="Oracle circuits as OpenQASM 3.", no_args_is_help=True, rich_markup_mode=None)

ORACLE_HELP = (
    "Oracle spec: bernoulli:P | gaussian:mean=M,std=S[,qubits=N] | "
    "discrete:values=V1|V2,probs=P1|P2 | qasm:PATH[,objective=Q]"
)


@one_line_errors
def estimate(
    oracle: Annotated[str, typer.Option(help=ORACLE_HELP)] = "bernoulli:0.3",
    epsilon: Annotated[float, typer.Option(help="Target half-width, reward units.")] = 0.01,
    alpha: Annotated[float, typer.Option(help="Failure probability.")] = 0.05,
    method: Annotated[str, typer.Option(help="auto | iae | mlae | mc | lrae (auto: lrae or mc on noiseless targets; on noisy ones mlae or calibration-aware iae, whichever the depth model predicts narrower at the budget; iae with --mitigation; docs/estimators.md); mlae takes --mitigation zne (folds as likelihood terms)")] = "auto",
    target: Annotated[str, typer.Option(help="exact | aer | aer:CALIBRATION | fake:BACKEND | ibm:BACKEND")] = "exact",
    shots: Annotated[Optional[int], typer.Option(help="IAE shots per round.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling and transpilation.")] = 0,
    calibration_aware: Annotated[bool, typer.Option(help="On aer:/fake: targets, cap the Grover depth by the device's calibration (qbo.noise.depth), widen every interval by the residual noise bias it allows (also with --mitigation) and say when eps is out of reach. --no-calibration-aware assumes a noiseless device.")] = True,
    mitigation: Annotated[str, typer.Option(help="none | rem | zne | zne+rem: readout-error mitigation and / or zero-noise extrapolation of every round (qbo.mitigation).")] = "none",
    twirl: Annotated[bool, typer.Option("--twirl", help="Pauli-twirl the two-qubit gates (Aer: qiskit circuit twirling; fake:/ibm: the runtime Sampler's twirling).")] = False,
    device: Annotated[str, typer.Option(help="CPU | GPU: Aer simulation device (GPU needs the gpu extra, qiskit-aer-gpu).")] = "CPU",
    check_shots: Annotated[int, typer.Option(help="MLAE: honest calls of check rounds after the schedule, so that the goodness of fit can flag a coherent over-rotation delta of Q: A0 fixed (noiseless targets), one k = 0 round (about 36/delta^2 shots); A0 fitted (noisy targets), rounds at the powers that resolve delta best (docs/mlae.md).")] = 0,
    max_calls: Annotated[Optional[int], typer.Option(help="Budget: at most this many honest oracle calls; an estimate that hits it returns its honest, wider interval (not the calibration-aware mc).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress line on stderr (a line at 3 s, then every 4 s).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Estimate the mean reward of an oracle, counting oracle calls honestly."""
    from qbo.cli.quick_checks import check_estimate_options
    from qbo.limits import BUDGET_MAX, SEED_MAX, SHOTS_MAX, check_alpha, check_epsilon, check_int, check_qubits
    from qbo.oracle_specs import read_oracle_spec

    check_estimate_options(method, target, mitigation)
    check_epsilon(epsilon)
    check_alpha(alpha)
    check_int(seed, "seed", 0, SEED_MAX, "SEED_MAX")
    if shots is not None:
        check_int(shots, "shots", 1, SHOTS_MAX, "SHOTS_MAX")
    check_int(check_shots, "check-shots", 0, SHOTS_MAX, "SHOTS_MAX")
    if max_calls is not None:
        check_int(max_calls, "max-calls", 1, BUDGET_MAX, "BUDGET_MAX")
    spec = read_oracle_spec(oracle)  # no Qiskit yet: a bad oracle is refused in a fraction of a second

    # Heavy (Qiskit, Aer, the runtime), imported only once the cheap checks have passed.
    from qbo.execution import make_executor, parse_target
    from qbo.mitigation import make_mitigation
    from qbo.oracles.spec import build_oracle
    from qbo.qmc import make_estimator
    from qbo.qmc.auto import choose_method
    from qbo.qmc.progress import ProgressPrinter, listening

    parsed = parse_target(target)
    the_oracle = build_oracle(spec)
    check_qubits(the_oracle.circuit.num_qubits, parsed.kind, grover=method != "mc")  # before any round runs
    device_model = parsed.snapshot()
    mit = make_mitigation(mitigation, device_model)
    method = choose_method(method, target, mitigation=mit is not None, assume_noiseless=not calibration_aware)
    snapshot = device_model if calibration_aware else None
    estimator = make_estimator(method, epsilon, alpha, shots, mitigation=mit, snapshot=snapshot,
                               check_shots=check_shots, max_calls=max_calls)
    executor = make_executor(parsed, seed, twirl=twirl, device=device)
    with contextlib.ExitStack() as stack:
        printer = None if quiet else stack.enter_context(ProgressPrinter(sys.stderr))
        stack.enter_context(listening(printer))
        result = estimator.estimate(the_oracle, executor)
    if as_json:
        out = result.to_json()
        keys = ("value", "ci_low", "ci_high", "epsilon", "alpha", "oracle_calls", "rounds", "method", "target")
        extra = ("reached_epsilon", "wall_time", "note", "diagnostics")
        payload = {k: out[k] for k in keys + extra if k in out}
        payload.update(mitigation=mitigation, twirl=twirl, device=device.upper())
        typer.echo(json.dumps(payload))
        return
    exact = "" if the_oracle.mean is None else f"   (exact mean {the_oracle.mean:.6f})"
    typer.echo(f"oracle       {the_oracle.key}")
    typer.echo(f"estimate     {result.value:.6f}  [{result.ci_low:.6f}, {result.ci_high:.6f}]{exact}")
    typer.echo(f"method       {result.method} on {result.target}, eps={epsilon}, alpha={alpha}, "
               f"mitigation {mitigation}{', twirled' if twirl else ''}, device {device.upper()}")
    folded = any(r.scale > 1 for r in result.rounds)
    per_shot = "scale*(2k+1)" if folded else "(2k+1)"
    typer.echo(f"oracle calls {result.oracle_calls}  (sum of shots*{per_shot} over {len(result.rounds)} rounds)")
    typer.echo(f"rounds (k, shots, ones{', xscale' if folded else ''}): "
               + " ".join(f"({r.k},{r.shots},{r.ones}{f',x{r.scale}' if folded else ''})" for r in result.rounds))
    if result.note:
        typer.echo(f"note         {result.note}")
    reach = result.diagnostics
    if "reachable_half_width" in reach:
        calls = reach.get("calls_for_epsilon")
        need = "is not reachable at any budget" if calls is None else f"needs about {calls:.4g} honest calls"
        typer.echo(f"reach        half-width {reach['reachable_half_width']:.4g} reached; eps={epsilon} {need}"
                   f" (noise floor {reach.get('epsilon_floor', 0.0):.3g})")
    elif snapshot is None and parsed.has_device_model:
        typer.echo("note         no device model: the interval assumes a noiseless device (sampling error only)")
    if not result.reached_epsilon:
        typer.echo("warning: epsilon was not reached (see the note, or the round cap was hit)")


@circuits_app.command("export")
@one_line_errors
def export(
    oracle: Annotated[str, typer.Option(help=ORACLE_HELP)],
    output: Annotated[Path, typer.Option("-o", "--output", help="Destination .qasm file.")],
    power: Annotated[int, typer.Option(help="Grover power k of Q^k A.")] = 0,
) -> None:
    """Write Q^k A of an oracle (with its measurement) as OpenQASM 3."""
    from qbo.files import check_writable, write_text_atomic
    from qbo.limits import check_export_work, check_power
    from qbo.oracle_specs import read_oracle_spec

    check_power(power)
    check_writable(output)  # before any work: never a device, FIFO, folder or a path below a file
    spec = read_oracle_spec(oracle)  # no Qiskit yet: a bad oracle is refused at once

    # Heavy (Qiskit), imported only once the cheap checks have passed.
    from qiskit import qasm3

    from qbo.grover import power_circuit
    from qbo.oracles.spec import build_oracle

    the_oracle = build_oracle(spec)
    check_export_work(the_oracle.circuit, power)
    circuit = power_circuit(the_oracle, power).decompose(reps=3)
    write_text_atomic(output, qasm3.dumps(circuit))
    typer.echo(f"wrote {output} (k={power}, {circuit.num_qubits} qubits, depth {circuit.depth()})")
