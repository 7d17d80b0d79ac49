"""The noise grid (issue 24, item 7): every snapshot x oracle x method x budget, on exact channels.

Snapshots: the four shipped ones (``calibrations/``) and fake backends no test ships
(``fake:FakeKingston``, ``fake:FakeCusco``, ``fake:FakeNairobiV2`` by default), exported from
qiskit-ibm-runtime. Oracles of 1 to 4 qubits: ``bernoulli`` (1), ``entangled2`` (2),
``entangled`` (3), ``discrete`` (4; 8 equally likely values). Every circuit an estimator asks
for is sampled binomially from its exact noisy probability (``bench/noise.py``: the compiled
blocks' superoperators under the snapshot's Aer noise model, then the readout confusion).

Budgets. B = the mean honest calls of the default device IAE (``iae+pad``: calibration-aware
IAE, no mitigation) at ``--eps`` (0.01) on the cell's amplitudes; ``x10`` = 10 B. Every method
gets each budget through its own knob:

- ``iae+pad``, ``iae+zne+rem`` (``qbo.qmc.capped.CalibrationAwareIAE``): the eps whose planned
  calls (``planned_calls``, the cost model with its depth cap and pads) are the budget (at B,
  ``iae+pad`` runs at ``--eps`` itself), no call cap: they spend what their rounds need, and the
  calls column says what that was;
- ``auto`` (``make_estimator('auto', eps_B, snapshot=..., max_calls=budget)``, what
  ``qbo estimate --max-calls`` runs on a device model), eps_B being ``iae+pad``'s eps at that budget;
- ``mlae`` (``make_estimator('mlae', 1e-4, snapshot=..., max_calls=budget)``): the budget.

Columns per row: honest calls (mean), MAE, coverage of the reported interval with its Wilson
95% lower bound, mean width, share with ``reached_epsilon`` True and the coverage among those
(cov|rch), and ``cheap``: estimates that stopped under 1,000 calls with an interval wider
than 0.5 without ``diagnostics['floor_proven']`` (issue 24's done-when line; must be 0).
``--misses`` prints every uncovered run as it happens (amplitude, interval, the miss in units of the
half-width, the method auto ran, MLAE's fitted nuisances) and every cheap stop (its interval,
calls and ``budget_bound``).

Seeds. ``amplitudes`` per cell (default 30) are drawn uniformly in (0.02, 0.98) from ``--seed``,
the same in every cell. Each run's executor seed is drawn from
``numpy.random.SeedSequence((seed, cell, method, budget, i))``: ``cell`` a hash of the snapshot
and oracle names, ``method`` its index in ``METHODS``, ``budget`` the factor in thousandths, ``i``
the amplitude's index (``executor_seed``). So every (cell, method, budget) row is an
independent sample, and a row's runs do not depend on which other cells, methods or budgets
ran with it: a grid run in parts gives the rows of the grid run whole. (Before 2026-11-27 the
seed was ``seed * 100_003 + i`` plus a per-method offset, the same in every cell and at both
budgets, so one unlucky draw at one amplitude showed as a miss in every cell whose noise models
were alike: ``bench/results/noise_grid*.txt`` were run that way.)

Running in parts. Each row is printed (and, with ``--csv``, appended to the file as one line,
header first when the file is new) as soon as its (cell, method, budget) is done, also from
``--jobs`` workers, so a grid stopped early keeps its finished rows; rerun with the same
``--csv`` and the rows already there are skipped (the cell's ``iae+pad`` x1 run, which sets B,
is always run). The columns do not record ``--amplitudes``, ``--eps``, ``--alpha`` or ``--seed``:
keep one CSV per setting of those. ``--snapshots``, ``--oracles``, ``--methods`` and
``--budgets`` select the grid, ``--cells 0-3,9`` the cells by index in the snapshots x oracles
list they give (``--list-cells`` prints it); ``--summarise`` merges the parts' CSVs.

    python bench/noise_grid.py [--amplitudes 30] [--snapshots a,b] [--oracles bernoulli,entangled2]
                               [--methods iae+pad,iae+zne+rem,auto,mlae] [--budgets 1,10] [--eps 0.01]
                               [--cells 0-3,9] [--list-cells] [--jobs 1] [--csv PATH]
                               [--misses]
    python bench/noise_grid.py --summarise part1.csv,part2.csv   # the summary of grids run in parts

The summary (printed after the rows) gives, per method x budget, the cells, those meeting issue
24's done-when line (coverage >= 90%, Wilson 95% lower bound >= 85%, coverage among
``reached_epsilon`` runs >= 90% where any reached), the lowest coverage and Wilson bound, the
mean MAE, width and calls over the cells, and the cheap stops (``capped``: those of them in
rows whose method was capped under 1,000 calls by the budget itself).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import sys
import time

import numpy as np

from noise import (  # bench/noise.py: exact channels, binomial executor, Wilson bound
    DeviceModel, ExactBinomialExecutor, eps_for_budget, make_oracle, snapshot_of, wilson_lower,
)
from qbo.experiments.fanout import check_workers, fan_out
from qbo.files import append_text_line, cut_torn_line, write_text_atomic
from qbo.mitigation import make_mitigation
from qbo.qmc import IterativeAmplitudeEstimation, make_estimator
from qbo.qmc.capped import CalibrationAwareIAE

SNAPSHOTS = ("fake_brisbane", "fake_sherbrooke", "fake_torino", "fake_fez",
             "fake:FakeKingston", "fake:FakeCusco", "fake:FakeNairobiV2")
ORACLES = ("bernoulli", "entangled2", "entangled", "discrete")
METHODS = ("iae+pad", "iae+zne+rem", "auto", "mlae")
COLUMNS = ("snapshot", "oracle", "qubits", "method", "budget", "target_calls", "n", "calls", "mae", "coverage",
           "wilson", "width", "reached", "cov_reached", "cheap", "cpu_s")


def grid_oracle(kind: str, a: float):
    """``entangled2`` is the 2-qubit entangled oracle; the rest as ``bench/noise.py`` makes them."""
    return make_oracle("entangled", a, 2) if kind == "entangled2" else make_oracle(kind, a)


def capped(snapshot, eps: float, alpha: float, mitigation: str) -> CalibrationAwareIAE:
    iae = IterativeAmplitudeEstimation(eps, alpha, mitigation=make_mitigation(mitigation, snapshot))
    return CalibrationAwareIAE(iae, snapshot)


def executor_seed(seed: int, snapshot: str, oracle: str, method: str, factor: float, i: int) -> int:
    """The executor seed of one run (module docstring, Seeds): independent across cells, methods,
    budgets and amplitudes, and the same whatever else the grid runs."""
    cell = int.from_bytes(hashlib.sha256(f"{snapshot}|{oracle}".encode()).digest()[:8], "little")
    entropy = (seed, cell, METHODS.index(method), int(round(factor * 1000)), i)
    return int(np.random.SeedSequence(entropy).generate_state(2, np.uint64)[0])


def run_method(estimator, oracles: list, model: DeviceModel, seeds: list[int], label: str = "") -> dict:
    """One row: every oracle once, with its executor seed; with ``label`` (``--misses``), every
    uncovered run is printed (``miss_line``) under it, and every cheap stop with whether it
    names the caller's budget as the binding limit (``budget_bound``)."""
    errors, covered, widths, calls, reached, cheap = [], [], [], [], [], 0
    cpu = time.process_time()
    for i, oracle in enumerate(oracles):
        out = estimator.estimate(oracle, ExactBinomialExecutor(model, seed=seeds[i]))
        a = float(oracle.mean)
        errors.append(abs(out.value - a))
        covered.append(out.ci_low <= a <= out.ci_high)
        if label and not covered[-1]:
            print(miss_line(label, a, out), flush=True)
        widths.append(out.ci_high - out.ci_low)
        calls.append(out.oracle_calls)
        reached.append(bool(out.reached_epsilon))
        wide = (out.ci_high - out.ci_low > 0.5 and out.oracle_calls < 1000
                and not out.diagnostics.get("floor_proven", False))
        cheap += wide
        if label and wide:
            print(f"   cheap {label} a={a:.5f} [{out.ci_low:.5f}, {out.ci_high:.5f}] calls={out.oracle_calls} "
                  f"budget_bound={bool(out.diagnostics.get('budget_bound'))}", flush=True)
    n = len(errors)
    hit = [c for c, r in zip(covered, reached) if r]
    return {"n": n, "calls": float(np.mean(calls)), "mae": float(np.mean(errors)), "coverage": float(np.mean(covered)),
            "wilson": wilson_lower(int(np.sum(covered)), n), "width": float(np.mean(widths)),
            "reached": float(np.mean(reached)), "cov_reached": float(np.mean(hit)) if hit else float("nan"),
            "cheap": cheap, "cpu_s": time.process_time() - cpu}


def miss_line(label: str, a: float, out) -> str:
    """One uncovered run: the amplitude, the estimate and interval, the miss in units of the
    half-width (distance of ``a`` past the near end / half-width), the calls, whether it reported
    ``reached_epsilon``, the method that ran
    (auto's choice), the deepest power, and MLAE's fit (A0, r, offset, dispersion phi, gof p)."""
    d = out.diagnostics
    half = 0.5 * (out.ci_high - out.ci_low)
    past = (out.ci_low - a) if a < out.ci_low else (a - out.ci_high)
    ran = d.get("auto_choice", {}).get("chosen", "-")
    fit = " ".join(f"{k}={d[k]:.4g}" for k in ("a0", "r", "offset", "dispersion", "gof_p_value")
                   if isinstance(d.get(k), float))
    return (f"   miss {label} a={a:.5f} value={out.value:.5f} [{out.ci_low:.5f}, {out.ci_high:.5f}] "
            f"past/half={past / half if half > 0 else math.inf:.2f} (value-a)/half="
            f"{(out.value - a) / half if half > 0 else math.inf:+.2f} calls={out.oracle_calls} "
            f"reached={bool(out.reached_epsilon)} ran={ran} "
            f"k_max={max((r.k for r in out.rounds), default=0)} {fit}")


def cell(item: tuple) -> list[dict]:
    """The rows of one snapshot x oracle not in ``done``: (name, kind, amplitudes, methods, factors,
    eps, alpha, seed, misses, csv, done). Each row is printed, and appended to ``csv`` (if any), as
    soon as it is done (module docstring, Running in parts)."""
    name, kind, amplitudes, methods, factors, eps, alpha, seed, misses, csv, done = item
    snapshot = snapshot_of(name)
    model = DeviceModel(snapshot)
    oracles = [grid_oracle(kind, float(a)) for a in amplitudes]
    for oracle in oracles:
        model.add(oracle)
    tag = lambda method, factor: f"{name} {kind} {method} x{factor:g}" if misses else ""  # noqa: E731
    seeds = lambda method, factor: [executor_seed(seed, name, kind, method, factor, i)  # noqa: E731
                                    for i in range(len(oracles))]
    base = run_method(capped(snapshot, eps, alpha, "none"), oracles, model, seeds("iae+pad", 1),
                      tag("iae+pad", 1) if "iae+pad" in methods and ("iae+pad", "x1") not in done else "")
    budget_1 = base["calls"]
    rows = []
    for factor in factors:
        budget = factor * budget_1
        todo = [m for m in methods if (m, f"x{factor:g}") not in done]
        if not todo:
            continue
        if factor == 1:
            eps_pad = eps
        else:
            eps_pad = eps_for_budget(lambda e: capped(snapshot, e, alpha, "none"), budget,
                                     cost=lambda est: est.planned_calls(oracles[0]))
        for method in todo:
            run = lambda est: run_method(est, oracles, model, seeds(method, factor), tag(method, factor))  # noqa: E731
            if method == "iae+pad":
                row = base if factor == 1 else run(capped(snapshot, eps_pad, alpha, "none"))
            elif method == "iae+zne+rem":
                e = eps_for_budget(lambda e: capped(snapshot, e, alpha, "zne+rem"), budget,
                                   cost=lambda est: est.planned_calls(oracles[0]))
                row = run(capped(snapshot, e, alpha, "zne+rem"))
            elif method == "auto":
                row = run(make_estimator("auto", eps_pad, alpha, snapshot=snapshot, max_calls=max(1, int(budget))))
            elif method == "mlae":
                row = run(make_estimator("mlae", 1e-4, alpha, snapshot=snapshot, max_calls=max(1, int(budget))))
            else:
                raise ValueError(f"method must be one of {', '.join(METHODS)}, got '{method}'")
            row = {"snapshot": name, "oracle": kind, "qubits": oracles[0].num_qubits, "method": method,
                   "budget": f"x{factor:g}", "target_calls": budget, **row}
            print(line(row), flush=True)
            if csv:
                append_row(csv, row)
            rows.append(row)
    return rows


def append_row(path: str, row: dict) -> None:
    """One CSV line in one ``write`` on a file opened for appending (``qbo.files.append_text_line``,
    ``shared``): rows from several workers never interleave, and the file must exist
    (``start_csv`` made it)."""
    append_text_line(path, ",".join(str(row[c]) for c in COLUMNS), shared=True)


def start_csv(path: str) -> set[tuple[str, str, str, str]]:
    """The (snapshot, oracle, method, budget) rows already in ``path``; a new or empty file gets the
    header (atomically). A last row torn by a killed grid is cut off first, so that row runs
    again. A file with another header, or a row that does not parse, is bad input (ValueError)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        write_text_atomic(path, ",".join(COLUMNS) + "\n")
        return set()
    cut_torn_line(path)
    with open(path) as fh:
        head = fh.readline().strip()
    if head != ",".join(COLUMNS):
        raise ValueError(f"--csv: expected a grid CSV with header '{','.join(COLUMNS)}', got '{head[:80]}' in {path}")
    return {(r["snapshot"], r["oracle"], r["method"], r["budget"]) for r in read_rows(path)}


def parse_cells(text: str, count: int) -> list[int]:
    """``0-3,9``: cell indices in 0..count-1 (ValueError naming the value otherwise)."""
    picked: list[int] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        lo, _, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            raise ValueError(f"--cells: expected indices or ranges like 0-3,9, got '{part}'") from None
        if not 0 <= a <= b < count:
            raise ValueError(f"--cells: expected indices in 0..{count - 1}, got '{part}'")
        picked.extend(i for i in range(a, b + 1) if i not in picked)
    if not picked:
        raise ValueError(f"--cells: expected indices or ranges like 0-3,9, got '{text}'")
    return picked


def summary(rows: list[dict]) -> list[str]:
    """Per method x budget: cells, cells meeting the done-when line, worst coverage and Wilson
    bound, mean MAE / width / calls, cheap stops (module docstring)."""
    out = [f"{'method':12s} {'budget':>6s} {'cells':>5s} {'meet':>5s} {'min cover':>9s} {'min Wilson':>10s} "
           f"{'min cov|rch':>11s} {'mean MAE':>9s} {'mean width':>10s} {'mean calls':>10s} {'cheap':>5s} {'capped':>6s}"]
    keys = list(dict.fromkeys((r["method"], r["budget"]) for r in rows))
    for method, budget in keys:
        mine = [r for r in rows if (r["method"], r["budget"]) == (method, budget)]
        meets = sum(r["coverage"] >= 0.9 and r["wilson"] >= 0.85
                    and (math.isnan(r["cov_reached"]) or r["cov_reached"] >= 0.9) for r in mine)
        reached = [r["cov_reached"] for r in mine if not math.isnan(r["cov_reached"])]
        out.append(f"{method:12s} {budget:>6s} {len(mine):5d} {meets:5d} {min(r['coverage'] for r in mine):9.1%} "
                   f"{min(r['wilson'] for r in mine):10.1%} {(f'{min(reached):.1%}' if reached else '-'):>11s} "
                   f"{np.mean([r['mae'] for r in mine]):9.5f} {np.mean([r['width'] for r in mine]):10.4f} "
                   f"{np.mean([r['calls'] for r in mine]):10.0f} {sum(int(r['cheap']) for r in mine):5d} "
                   f"{sum(int(r['cheap']) for r in mine if capped_below_1000(r)):6d}")
    return out


def capped_below_1000(row: dict) -> bool:
    """A row whose method was given a call cap under 1,000 (auto and mlae take the budget as
    ``max_calls``; the IAE rows run to their eps with no cap): its cheap stops are the cap's."""
    return row["method"] in ("auto", "mlae") and row["target_calls"] < 1000


def read_rows(path: str) -> list[dict]:
    """Rows written by ``--csv`` (numbers back as numbers), or the row lines of the printed table
    (a grid stopped before its end writes no CSV)."""
    import csv

    text = {"snapshot", "oracle", "method", "budget"}
    with open(path) as fh:
        if path.endswith(".csv"):
            rows = list(csv.DictReader(fh))
            for i, row in enumerate(rows, start=2):
                if None in row or None in row.values():
                    given = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None, []))
                    raise ValueError(f"--csv: line {i} of {path} has {given} fields where "
                                     f"{len(COLUMNS)} were expected")
            return [{k: (v if k in text else float(v)) for k, v in row.items()} for row in rows]
        rows = []
        for raw in fh:
            f = raw.split()
            if len(f) != len(COLUMNS) or not f[4].startswith("x") or f[0] == "snapshot":
                continue
            num = lambda t: float("nan") if t == "-" else float(t.rstrip("%")) / (100 if t.endswith("%") else 1)  # noqa: E731
            rows.append({"snapshot": f[0], "oracle": f[1], "qubits": float(f[2]), "method": f[3], "budget": f[4],
                         **{c: num(t) for c, t in zip(COLUMNS[5:], f[5:])}})
        return rows


def header() -> str:
    return (f"{'snapshot':20s} {'oracle':10s} {'q':>1s} {'method':12s} {'budget':>6s} {'B':>8s} {'n':>3s} "
            f"{'calls':>9s} {'MAE':>8s} {'cover':>6s} {'Wilson':>6s} {'width':>7s} {'reached':>7s} "
            f"{'cov|rch':>7s} {'cheap':>5s} {'CPU s':>6s}")


def line(r: dict) -> str:
    cov_r = "-" if math.isnan(r["cov_reached"]) else f"{r['cov_reached']:.1%}"
    return (f"{r['snapshot']:20s} {r['oracle']:10s} {r['qubits']:1d} {r['method']:12s} {r['budget']:>6s} "
            f"{r['target_calls']:8.0f} {r['n']:3d} {r['calls']:9.0f} {r['mae']:8.5f} {r['coverage']:6.1%} "
            f"{r['wilson']:6.1%} {r['width']:7.4f} {r['reached']:7.0%} {cov_r:>7s} {r['cheap']:5d} {r['cpu_s']:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amplitudes", type=int, default=30)
    parser.add_argument("--snapshots", default=",".join(SNAPSHOTS))
    parser.add_argument("--oracles", default=",".join(ORACLES))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--budgets", default="1,10", help="multiples of B (the default device IAE's calls at --eps)")
    parser.add_argument("--cells", default=None, help="cell indices in the snapshots x oracles list, e.g. 0-3,9")
    parser.add_argument("--list-cells", action="store_true", help="print the cells with their indices and stop")
    parser.add_argument("--eps", type=float, default=0.01)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="local Dask workers for the cells (qbo.experiments.fanout)")
    parser.add_argument("--csv", default=None,
                        help="append every row to this CSV as it is done; rows already there are skipped")
    parser.add_argument("--misses", action="store_true",
                        help="print every uncovered run (amplitude, interval, miss in half-widths, fit) as it happens")
    parser.add_argument("--summarise", default=None,
                        help="only print the summary of these --csv files or printed tables (comma-separated)")
    args = parser.parse_args()
    try:
        if args.summarise:
            rows = [r for path in args.summarise.split(",") for r in read_rows(path)]
            print(f"summary of {args.summarise}: {len(rows)} rows")
            print("\n".join(summary(rows)))
            return
        methods, oracles = choose(args.methods, METHODS, "--methods"), choose(args.oracles, ORACLES, "--oracles")
        snapshots = [s for s in args.snapshots.split(",") if s]
        factors = [budget_factor(f) for f in args.budgets.split(",") if f]
        if not snapshots or not factors or args.amplitudes < 1:
            raise ValueError(f"--snapshots, --budgets and --amplitudes (>= 1) must not be empty, got "
                             f"'{args.snapshots}', '{args.budgets}', {args.amplitudes}")
        try:
            check_workers(args.jobs)
        except ValueError as exc:
            raise ValueError(f"--jobs: {exc}") from None
        cells = [(s, o) for s in snapshots for o in oracles]
        if args.list_cells:
            print("\n".join(f"{i:3d} {s} {o}" for i, (s, o) in enumerate(cells)))
            return
        if args.cells is not None:
            cells = [cells[i] for i in parse_cells(args.cells, len(cells))]
        csv = os.path.abspath(args.csv) if args.csv else None  # workers append to it wherever they run
        done = start_csv(csv) if csv else set()
    except (ValueError, OSError) as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        raise SystemExit(2) from None
    amplitudes = np.random.default_rng(args.seed).uniform(0.02, 0.98, args.amplitudes)
    work = [(s, o, amplitudes, methods, factors, args.eps, args.alpha, args.seed, args.misses, csv,
             frozenset((m, b) for s_, o_, m, b in done if (s_, o_) == (s, o))) for s, o in cells]
    start = time.perf_counter()
    print(f"noise grid: {len(cells)} cells x {len(methods)} methods x budgets {factors} x B, {args.amplitudes} amplitudes, "
          f"eps={args.eps}, alpha={args.alpha}, seed={args.seed}; B = mean calls of iae+pad at eps; "
          f"cheap = width > 0.5 after < 1000 calls without a proven floor; {len(done)} rows already in the CSV",
          flush=True)
    print(header(), flush=True)
    results = map(cell, work) if args.jobs <= 1 else fan_out(cell, work, workers=args.jobs)
    rows = [r for cell_rows in results for r in cell_rows]
    print(f"total {time.perf_counter() - start:.0f} s wall", flush=True)
    if csv:
        rows = read_rows(csv)
        print(f"summary of {args.csv}: {len(rows)} rows", flush=True)
    print("\n".join(summary(rows)) if rows else "no rows", flush=True)


def choose(text: str, names: tuple[str, ...], option: str) -> list[str]:
    picked = [m for m in text.split(",") if m]
    for m in picked:
        if m not in names:
            raise ValueError(f"{option}: expected names from {', '.join(names)}, got '{m}'")
    if not picked:
        raise ValueError(f"{option}: expected names from {', '.join(names)}, got '{text}'")
    return picked


def budget_factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"--budgets: expected positive multiples of B like 1,10, got '{text}'")
    return value


if __name__ == "__main__":
    main()
