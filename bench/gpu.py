"""Aer on a GPU against Aer on the CPU, for qbo's noisy targets (issue 24, item 6).

One process, one compiled circuit per width, the same noise model: only the simulator's
``device`` and ``method`` change between rows. Each row runs Q^k A of a Gaussian oracle
(``gaussian:mean=0.5,std=0.15,qubits=N``; N + 1 qubits in all) on ``aer:SNAPSHOT``:

- ``cpu-sv`` / ``gpu-sv``: one statevector trajectory per shot (the noise sampled in each),
  what Aer's automatic method runs for a noisy circuit while shots <= 2^n;
- ``gpu-sv-batched``: the same on the GPU with Aer's ``batched_shots_gpu`` (trajectories run
  side by side on the card);
- ``cpu-dm`` / ``gpu-dm``: the density matrix (4^n amplitudes, evolved once; every shot is
  then a draw from it, so its time does not grow with shots).

Work is predicted before it starts: trajectory rows first time a few shots, then run as many
as fit ``--seconds``; a density-matrix row runs only where its memory (16 * 4^n bytes) fits.
Every row's fraction of ones is compared with the density matrix's (a z-score from the two
binomial errors), so a fast row that samples the wrong distribution shows.

    python bench/gpu.py --widths 8,12 --seconds 60
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time

import numpy as np

from qbo.execution import parse_target
from qbo.execution.aer import AerExecutor
from qbo.grover import power_circuit
from qbo.noise.aer_model import aer_backend
from qbo.oracle_specs import read_oracle_spec
from qbo.oracles.spec import build_oracle

ROWS = ("cpu-sv", "gpu-sv", "gpu-sv-batched", "cpu-dm", "gpu-dm")
PROBE_SHOTS = 4


def _options(row: str) -> dict:
    device = "GPU" if row.startswith("gpu") else "CPU"
    options: dict = {"device": device, "method": "density_matrix" if row.endswith("-dm") else "statevector"}
    if row == "gpu-sv-batched":
        options["batched_shots_gpu"] = True
    return options


def _run(backend, compiled, shots: int, seed: int) -> tuple[float, int, str]:
    start = time.perf_counter()
    result = backend.run(compiled, shots=shots, seed_simulator=seed).result()
    seconds = time.perf_counter() - start
    counts = result.get_counts()
    method = str(result.results[0].metadata.get("method", "?"))
    return seconds, int(counts.get("1", 0)), method


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", default="fake_torino")
    parser.add_argument("--widths", default="8,12", help="circuit widths (oracle qubits + 1)")
    parser.add_argument("--k", type=int, default=0, help="Grover power")
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument("--seconds", type=float, default=60.0, help="time allowed to each trajectory row")
    parser.add_argument("--max-shots", type=int, default=2000)
    parser.add_argument("--dm-shots", type=int, default=100_000, help="shots drawn in a density-matrix row (>= 1000)")
    parser.add_argument("--dm-bytes", type=float, default=8e9, help="largest density matrix to try (bytes)")
    parser.add_argument("--cpu-dm-max-width", type=int, default=10,
                        help="widest circuit for cpu-dm (it evolves 4^n amplitudes through every noisy op)")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args(argv)
    rows = [r for r in args.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if args.dm_shots < 1000:
        parser.error(f"--dm-shots: expected >= 1000, got {args.dm_shots}")
    if unknown:
        parser.error(f"--rows: unknown {unknown}, expected some of {ROWS}")
    snapshot = parse_target(f"aer:{args.snapshot}").snapshot()
    executor = AerExecutor(snapshot, 0)
    header = ["width", "k", "ops", "2q", "row", "method", "shots", "seconds", "s_per_shot", "s_1000_shots", "p1", "z_vs_dm", "speedup_vs_cpu"]
    table: list[dict] = []
    print(" ".join(f"{h:>12}" for h in header), flush=True)
    for width in (int(w) for w in args.widths.split(",")):
        oracle = build_oracle(read_oracle_spec(f"gaussian:mean=0.5,std=0.15,qubits={width - 1}"))
        circuit = power_circuit(oracle, args.k)
        start = time.perf_counter()
        compiled = executor.compiled(circuit)
        layout = tuple(executor.transpile_cache.layout(circuit.num_qubits))
        ops = compiled.count_ops()
        twoq = sum(v for g, v in ops.items() if g in ("cz", "cx", "ecr"))
        print(f"# width {width}: compiled in {time.perf_counter() - start:.2f} s, {sum(ops.values())} ops, {twoq} two-qubit",
              flush=True)
        warm_up = compiled.copy_empty_like()  # one measurement on the layout: a run that costs nothing
        warm_up.measure(layout[0], 0)
        found: dict[str, dict] = {}
        for row in rows:
            is_dm = row.endswith("-dm")
            if is_dm and 16 * 4.0**width > args.dm_bytes:
                print(f"# {row} skipped at width {width}: density matrix {16 * 4.0**width / 1e9:.3g} GB > --dm-bytes", flush=True)
                continue
            if row == "cpu-dm" and width > args.cpu_dm_max_width:
                print(f"# {row} skipped at width {width}: wider than --cpu-dm-max-width {args.cpu_dm_max_width}", flush=True)
                continue
            print(f"# {row} at width {width}: starting", flush=True)  # a timed-out call still shows where it was
            try:
                backend = aer_backend(snapshot, noise_qubits=layout, **_options(row))
                _run(backend, warm_up, 1, 1)  # the GPU context and the noise model, not the circuit
                if is_dm:
                    seconds, ones, method = _run(backend, compiled, args.dm_shots, 2)
                    shots = args.dm_shots
                else:
                    probe, _, _ = _run(backend, compiled, PROBE_SHOTS, 3)
                    print(f"# {row} at width {width}: {PROBE_SHOTS} shots in {probe:.3g} s", flush=True)
                    shots = int(min(args.max_shots, max(PROBE_SHOTS, args.seconds / max(probe / PROBE_SHOTS, 1e-9))))
                    seconds, ones, method = _run(backend, compiled, shots, 2)
            except Exception as exc:  # a bench row that cannot run says why, the others go on
                print(f"# {row} failed at width {width}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            found[row] = dict(width=width, k=args.k, ops=sum(ops.values()), **{"2q": twoq}, row=row, method=method,
                              shots=shots, seconds=seconds, s_per_shot=seconds / shots, p1=ones / shots)
        reference = found.get("gpu-dm") or found.get("cpu-dm")
        cpu = found.get("cpu-sv")
        for row, rec in found.items():
            if reference is not None and rec is not reference:
                p = reference["p1"]
                sd = math.sqrt(max(p * (1 - p), 1e-12) * (1 / rec["shots"] + 1 / reference["shots"]))
                rec["z_vs_dm"] = (rec["p1"] - p) / sd
            else:
                rec["z_vs_dm"] = float("nan")
            # 1000 shots: a trajectory row's time per shot x 1000; a density-matrix row's one run
            # (it evolves once and draws every shot, --dm-shots >= 1000 of them, from the result)
            rec["s_1000_shots"] = rec["seconds"] if row.endswith("-dm") else 1000 * rec["s_per_shot"]
        for row, rec in found.items():
            rec["speedup_vs_cpu"] = (cpu["s_1000_shots"] / rec["s_1000_shots"]) if cpu else float("nan")
            table.append(rec)
            print(" ".join(f"{rec[h]:>12.4g}" if isinstance(rec[h], float) else f"{rec[h]!s:>12}" for h in header),
                  flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=header)
            writer.writeheader()
            writer.writerows(table)
    if not table:
        sys.exit(1)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
