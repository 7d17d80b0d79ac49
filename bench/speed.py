"""Where the time of a qbo run goes (issue 13), measured in one run on one machine.

Sections (``--sections``; by default ``default,arms,fanout,size``, the others only when named):

* ``default``: the default experiment (synthetic Bernoulli, q-gp-ucb vs gp-ucb, T = 10,000,
  ``--trials`` trials) as a user runs it (``python -m qbo.cli run``, a subprocess: imports
  included), then qbo and the qiskit-algorithms IAE + Aer build of the same experiment
  (bench/timing_reference.py: only the QMC implementation differs) side by side in this
  process: wall and CPU time, and the ratio;
* ``arms``: cost of one UCB stage against the number of arms (d = 4) for every posterior
  model, with bench/gp_models.py's cells (``--stages``, ``--cell-seconds``); the rank-one
  model is skipped where its m x m matrices would exceed ``--max-gb``;
* ``fanout``: the wall time of ``run_fanned_out`` with 1, 2 and 4 local Dask workers
  (``--workers``) on ``--fanout-trials`` trials, and whether the files are identical;
* ``size``: the size of every file a default run writes;
* ``lockstep``: gp-ucb's units of the default experiment, journals included, run one by one
  and in lockstep (``qbo.experiments.runner.lockstep_groups``), alternating ``--repeats``
  times, with the sha256 of each stages.jsonl;
* ``loop``: the stage loop alone (``qbo.experiments.trial.run_stages`` of every unit of the
  default experiment in one process, no journal, imports and problem set-up excluded), per
  algorithm: wall and CPU seconds, CPU us per stage, and a hash of every stage record and of
  the unit generator's state after it.  With ``--reference TREE`` (another checkout, e.g. the
  main branch) each of ``--repeats`` rounds runs the loop in a child process on TREE and then
  on this tree, so that both see the same load; the hashes say whether results are identical.
* ``scale``: each classical learner with a compiled loop at T = 1e4, 1e5, 1e6 (``--horizons``)
  on the centred problem against a compiled reference written in bench/scale_reference.py
  (a numpy + numba process of its own): CPU seconds of the loops and of the whole processes,
  peak RSS and bytes on disk a call, and numba's compile cold and warm (bench/scale.py says how);
* ``cost``: IAE's cost model alone: ``expected_calls`` of every distinct (configuration, eps)
  that the stage loop above asks for (collected once on this tree), all computed from empty
  caches, ``--cost-passes`` times per child process, with ``--reference`` and ``--repeats``
  as for ``loop``; a hash of the values says whether they are identical.

The machine's cores and load average are printed first: on a shared machine every time
here is an upper bound of what the same code takes alone.  ``--blas-threads N`` pins
OpenBLAS (and OpenMP / MKL) to N threads for the whole run (set before numpy is imported;
child processes inherit it): on a loaded 2-core machine, OpenBLAS's default threads made
the large GP cells several times slower in wall time (docs/models.md).

    python bench/speed.py [--trials 10] [--sections default,arms,fanout,size,loop,cost,lockstep,scale]
    python bench/speed.py --sections loop --reference ../main --repeats 3
    python bench/speed.py --sections cost --reference ../main --repeats 4
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    """CPU seconds of this process and its reaped children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores, load average (1, 5, 15 min) {load}"


def default_experiment(trials: int) -> None:
    from qbo.experiments import trial
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import run_experiment

    sys.path.insert(0, str(ROOT / "bench"))
    from timing_reference import QiskitAlgorithmsIAE

    print(f"\n== default experiment: synthetic-bernoulli, q-gp-ucb vs gp-ucb, T=10000, {trials} trials ==")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        wall, cpu = time.perf_counter(), _cpu()
        subprocess.run([sys.executable, "-m", "qbo.cli", "run", "--trials", str(trials), "--out", f"{tmp}/cli"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        wall, cpu = time.perf_counter() - wall, _cpu() - cpu
        print(f"{'qbo run (CLI, imports included)':44s} wall {wall:7.1f} s  cpu {cpu:7.1f} s")
        config = ExperimentConfig(trials=trials)
        rows = []
        for label, factory in (("qbo (in process)", None), ("qiskit-algorithms IAE + Aer SamplerV2", QiskitAlgorithmsIAE)):
            original = trial.make_estimator
            if factory is not None:
                trial.make_estimator = lambda method, eps, alpha, shots=None, mitigation=None, **kw: factory(eps, alpha)
            try:
                wall, cpu = time.perf_counter(), time.process_time()
                run_experiment(config, f"{tmp}/{len(rows)}")
                rows.append((label, time.perf_counter() - wall, time.process_time() - cpu))
            finally:
                trial.make_estimator = original
        for label, wall, cpu in rows:
            print(f"{label:44s} wall {wall:7.1f} s  cpu {cpu:7.1f} s")
        (_, qw, qc), (_, bw, bc) = rows
        print(f"{'ratio qiskit-algorithms + Aer / qbo':44s} wall {bw / qw:7.1f} x  cpu {bc / qc:7.1f} x")


def stage_cost(arms_list: list[int], stages: int, max_gb: float, seconds: float) -> None:
    """bench/gp_models.py's cells (one UCB stage: posterior at every arm, argmax, add)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from gp_models import MODELS, run_cell

    print(f"\n== GP stage cost vs arms (bench/gp_models.py cells: d=4, SE(0.2), up to {stages} stages "
          f"or {seconds:g} s per cell; ms per stage over the last 50) ==")
    print(f"{'model':<10} {'arms':>8} {'stages':>7} {'ms/stage':>9} {'cpu ms':>8} {'peak MB':>9}")
    for m in arms_list:
        for model in MODELS:
            need = 3 * 8 * m * m / 2**30
            if model == "rank-one" and need > max_gb:
                print(f"{model:<10} {m:>8} {'skipped: its m x m matrices need ~' + format(need, '.0f') + ' GB':>45}")
                continue
            n, ms, cms, _, peak = run_cell(model, m, 4, stages, seconds, 0)
            print(f"{model:<10} {m:>8} {n:>7} {ms:>9.2f} {cms:>8.2f} {peak:>9.1f}", flush=True)


def fanout(workers_list: list[int], trials: int, budget: int) -> None:
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.fanout import run_fanned_out

    config = ExperimentConfig(trials=trials, budget=budget)
    print(f"\n== fan-out: default problem and policies, T={budget}, {trials} trials "
          f"({trials * 2} units), local Dask workers (start-up included) ==")
    with tempfile.TemporaryDirectory() as tmp:
        reference, base = None, None
        for n in workers_list:
            wall = time.perf_counter()
            run_fanned_out(config, f"{tmp}/{n}", workers=n)
            wall = time.perf_counter() - wall
            files = tuple((Path(tmp) / str(n) / f).read_bytes() for f in ("stages.jsonl", "summary.csv"))
            reference = reference or files
            base = base or wall
            same = "identical" if files == reference else "DIFFERENT"
            print(f"workers {n:2d}: wall {wall:7.1f} s  speed-up {base / wall:5.2f} x  files {same}")


def sizes(trials: int) -> None:
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import run_experiment

    print(f"\n== what a default run writes ({trials} trials) ==")
    with tempfile.TemporaryDirectory() as tmp:
        run_experiment(ExperimentConfig(trials=trials), tmp)
        total = 0
        for path in sorted(Path(tmp).rglob("*")):
            if path.is_file():
                total += path.stat().st_size
        for path in sorted(Path(tmp).iterdir()):
            size = sum(p.stat().st_size for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file())
            kind = f"{sum(1 for _ in path.iterdir())} files" if path.is_dir() else ""
            print(f"{path.name + ('/' if path.is_dir() else ''):16s} {size / 1e6:9.2f} MB {kind}")
        print(f"{'total':16s} {total / 1e6:9.2f} MB")


def loop_child(trials: int) -> None:
    """Print one JSON line: per algorithm [wall s, cpu s, stages], and the records' hash."""
    import numpy as np

    from qbo.experiments import assembly
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.trial import Progress, run_stages

    config = ExperimentConfig(trials=trials)
    settings = assembly.stage_settings(config)
    totals: dict[str, list[float]] = {}
    digest = hashlib.sha256()
    for unit in assembly.units(config):
        parts = assembly.unit_parts(config, unit)
        problem, policy, clock = parts.problem, parts.policy, parts.clock
        rng = np.random.default_rng(unit.seed(config.seed))
        executor = assembly.unit_executor(config, rng)
        lines = []
        wall, cpu = time.perf_counter(), time.process_time()
        for record in run_stages(problem, policy, executor, settings, Progress(), clock=clock):
            lines.append((record, rng.bit_generator.state["state"]["state"]))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        digest.update("".join(json.dumps(line) + "\n" for line in lines).encode())
        total = totals.setdefault(unit.algorithm, [0.0, 0.0, 0])
        total[0] += wall
        total[1] += cpu
        total[2] += len(lines)
    print(json.dumps({"totals": totals, "hash": digest.hexdigest()[:16]}))


def stage_loop(trials: int, reference: str | None, repeats: int) -> None:
    trees = ([("reference", Path(reference).resolve())] if reference else []) + [("this tree", ROOT)]
    print(f"\n== stage loop alone: default experiment, {trials} trials, in process, no journal "
          f"(best of {repeats}; trees alternate) ==")
    best: dict[str, dict[str, list[float]]] = {}
    hashes: dict[str, set[str]] = {}
    for _ in range(repeats):
        for label, tree in trees:
            env = dict(os.environ, PYTHONPATH=str(tree))
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--loop-child", "--trials", str(trials)],
                                 check=True, env=env, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            hashes.setdefault(label, set()).add(result["hash"])
            for algorithm, row in result["totals"].items():
                kept = best.setdefault(label, {}).get(algorithm)
                if kept is None or row[1] < kept[1]:
                    best[label][algorithm] = row
    print(f"{'tree':<10} {'algorithm':<10} {'wall s':>7} {'cpu s':>7} {'stages':>7} {'cpu us/stage':>13}  hash")
    for label, _ in trees:
        for algorithm, (wall, cpu, stages) in best[label].items():
            print(f"{label:<10} {algorithm:<10} {wall:7.2f} {cpu:7.2f} {stages:7d} {1e6 * cpu / stages:13.1f}  "
                  f"{','.join(sorted(hashes[label]))}")
    if reference:
        same = hashes["reference"] == hashes["this tree"] and len(hashes["this tree"]) == 1
        print(f"records and generator states: {'identical' if same else 'DIFFERENT'}")


def cost_collect(trials: int, path: str) -> None:
    """Write the distinct (configuration fields, eps) keys of IAE's cost model that the stage
    loop of ``trials`` trials asks for (JSON), recording them as it runs."""
    import contextlib
    import dataclasses
    import io

    from qbo.qmc import iae

    keys: dict[str, None] = {}
    with iae.recording_cost_queries() as queries, contextlib.redirect_stdout(io.StringIO()):
        loop_child(trials)
    for config, key, eps in queries:
        if key is None:
            keys.setdefault(json.dumps([dataclasses.asdict(config), eps]))
    Path(path).write_text("[" + ",".join(keys) + "]")


def _empty_caches(iae: ModuleType) -> None:
    """Empty qbo's process-wide caches through their registry (``qbo.caches``); a reference
    tree from before the registry cannot be measured by this section (it would need its
    private names)."""
    try:
        from qbo import caches
    except ImportError:
        sys.exit("bench/speed.py: the cost section needs a reference tree with qbo.caches (main after f31ae54)")
    caches.clear()


def cost_child(path: str, passes: int) -> None:
    """Print one JSON line: [wall s, cpu s] of each pass over the keys at ``path`` from empty
    caches, and a hash of the values."""
    from qbo.qmc import iae

    configs = [(iae.IterativeAmplitudeEstimation(**fields), eps) for fields, eps in json.loads(Path(path).read_text())]
    times, values = [], []
    for _ in range(passes):
        _empty_caches(iae)
        wall, cpu = time.perf_counter(), time.process_time()
        values = [config.expected_calls(eps) for config, eps in configs]
        times.append([time.perf_counter() - wall, time.process_time() - cpu])
    print(json.dumps({"times": times, "keys": len(configs), "hash": hashlib.sha256(repr(values).encode()).hexdigest()[:16]}))


def cost_model(trials: int, reference: str | None, repeats: int, passes: int) -> None:
    trees = ([("reference", Path(reference).resolve())] if reference else []) + [("this tree", ROOT)]
    script = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        keys = str(Path(tmp) / "keys.json")
        subprocess.run([sys.executable, script, "--cost-collect", keys, "--trials", str(trials)], check=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
        print(f"\n== IAE cost model alone: the distinct (configuration, eps) of a default run's stage loop, "
              f"{trials} trials, from empty caches ({passes} passes a child; trees alternate) ==")
        print(f"{'round':>5} {'tree':<10} {'keys':>5}  wall s per pass{'':<13} cpu s per pass{'':<14} hash")
        cpus: dict[str, list[float]] = {}
        hashes: dict[str, set[str]] = {}
        for round_ in range(1, repeats + 1):
            for label, tree in trees:
                out = subprocess.run([sys.executable, script, "--cost-child", keys, "--cost-passes", str(passes)],
                                     check=True, env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True,
                                     text=True).stdout
                result = json.loads(out.strip().splitlines()[-1])
                hashes.setdefault(label, set()).add(result["hash"])
                cpus.setdefault(label, []).extend(cpu for _, cpu in result["times"])
                walls = " ".join(f"{wall:.3f}" for wall, _ in result["times"])
                cpu_s = " ".join(f"{cpu:.3f}" for _, cpu in result["times"])
                print(f"{round_:>5} {label:<10} {result['keys']:>5}  {walls:<28} {cpu_s:<28} {result['hash']}")
    for label, _ in trees:
        values = sorted(cpus[label])
        print(f"{label}: cpu s min {values[0]:.3f}, median {values[len(values) // 2]:.3f} over {len(values)} passes")
    if reference:
        same = hashes["reference"] == hashes["this tree"] and len(hashes["this tree"]) == 1
        print(f"values: {'identical' if same else 'DIFFERENT'}")


def lockstep(trials: int, repeats: int) -> None:
    """gp-ucb's units of the default experiment with their journals, in this process: one by
    one (``LOCKSTEP_BYTES = 1``) and in lockstep, alternating; merge excluded."""
    from qbo.experiments import runner
    from qbo.experiments.config import ExperimentConfig

    config = ExperimentConfig(trials=trials, algorithms=("gp-ucb",))
    print(f"\n== gp-ucb's {trials} trials of the default experiment (T=10000, journals included, merge excluded): "
          f"one by one vs in lockstep, alternating ==")
    print(f"{'round':>5} {'how':<11} {'wall s':>7} {'cpu s':>7}  stages.jsonl sha256")
    cap, seen = runner.LOCKSTEP_BYTES, {}
    for round_ in range(1, repeats + 1):
        for label, limit in (("one by one", 1), ("lockstep", cap)):
            runner.LOCKSTEP_BYTES = limit
            with tempfile.TemporaryDirectory() as tmp:
                lock = runner.prepare(config, tmp)
                try:
                    groups = runner.lockstep_groups(config)
                    wall, cpu = time.perf_counter(), time.process_time()
                    for group in groups:
                        runner.run_lockstep_units(config, group, tmp)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    runner.merge(config, tmp)
                finally:
                    lock.release()
                digest = hashlib.sha256((Path(tmp) / "stages.jsonl").read_bytes()).hexdigest()[:16]
            runner.LOCKSTEP_BYTES = cap
            seen.setdefault(label, []).append((wall, cpu))
            print(f"{round_:>5} {label:<11} {wall:7.2f} {cpu:7.2f}  {digest}  ({len(groups)} groups)", flush=True)
    walls = {label: sorted(w for w, _ in rows) for label, rows in seen.items()}
    one, together = walls["one by one"], walls["lockstep"]
    print(f"median wall: one by one {one[len(one) // 2]:.2f} s, lockstep {together[len(together) // 2]:.2f} s, "
          f"ratio {one[len(one) // 2] / together[len(together) // 2]:.2f} x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="default,arms,fanout,size")
    parser.add_argument("--trials", type=int, default=10, help="trials of the default experiment")
    parser.add_argument("--arms", default="100,1000,10000,100000")
    parser.add_argument("--stages", type=int, default=500)
    parser.add_argument("--cell-seconds", type=float, default=10.0, help="wall-time cap of one GP cell")
    parser.add_argument("--max-gb", type=float, default=4.0, help="skip models that would need more memory")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--fanout-trials", type=int, default=4)
    parser.add_argument("--fanout-budget", type=int, default=10_000)
    parser.add_argument("--reference", default=None, help="another checkout for the loop and cost sections")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the loop and cost sections")
    parser.add_argument("--loop-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cost-passes", type=int, default=3, help="passes of a cost child")
    parser.add_argument("--cost-collect", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cost-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--horizons", default="1e4,1e5,1e6", help="horizons of the scale section")
    parser.add_argument("--blas-threads", type=int, default=None, help="pin BLAS threads (default: the library's)")
    args = parser.parse_args()
    if args.blas_threads is not None:  # before numpy is imported (this script imports it lazily)
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[name] = str(args.blas_threads)
    if args.loop_child:
        loop_child(args.trials)
        return
    if args.cost_collect:
        cost_collect(args.trials, args.cost_collect)
        return
    if args.cost_child:
        cost_child(args.cost_child, args.cost_passes)
        return
    sections = args.sections.split(",")
    # an installed package has its bytecode; with PYTHONDONTWRITEBYTECODE set (this sandbox) every
    # start would compile qbo's modules from source (76 of them, ~0.1-0.2 s a run)
    compiled = compileall.compile_dir(str(ROOT / "qbo"), quiet=1)
    print(f"machine: {_machine()}; BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; "
          f"qbo byte-compiled: {'yes' if compiled else 'failed'}")
    started = time.perf_counter()
    if "scale" in sections:
        sys.path.insert(0, str(ROOT / "bench"))
        from scale import DEFAULT_LEARNERS, scale  # the section's children run bench/scale.py

        print("\n== scale: classical learners, one trial each, centred problem (spread 0.01, 20 arms) ==")
        scale(list(DEFAULT_LEARNERS), [int(float(h)) for h in args.horizons.split(",")])
    if "default" in sections:
        default_experiment(args.trials)
    if "arms" in sections:
        stage_cost([int(m) for m in args.arms.split(",")], args.stages, args.max_gb, args.cell_seconds)
    if "fanout" in sections:
        fanout([int(n) for n in args.workers.split(",")], args.fanout_trials, args.fanout_budget)
    if "size" in sections:
        sizes(args.trials)
    if "loop" in sections:
        stage_loop(args.trials, args.reference, args.repeats)
    if "cost" in sections:
        cost_model(args.trials, args.reference, args.repeats, args.cost_passes)
    if "lockstep" in sections:
        lockstep(args.trials, args.repeats)
    print(f"\nmachine at the end: {_machine()}; bench took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
