"""Classical learners at T = 1e4 ... 1e7 calls (issue 21): qbo against a compiled reference.

For each learner (``--learners``) and horizon (``--horizons``), one learner-trial on the
centred problem (synthetic-bernoulli-centred, spread 0.01, 20 arms) runs in a child process
(``run_experiment``, as ``qbo run`` does), and the parent reads the child's CPU seconds
(user + system) and peak RSS from ``wait4``, and the bytes its run folder holds. Runs at
T = 100 give the fixed cost (problem, numba's cached kernels, the figure), so
``loop s`` (CPU inside ``run_experiment`` less that of the least of three runs at T = 100)
is what one more learner-trial costs in a process that runs many (regret.png is drawn in the
child at every T, not by a helper process from T = 1e5 on, so that all runs count it alike;
the child calls ``gc.freeze()`` before the run, as ``qbo run`` does).

The reference (bench/scale_reference.py) is the same learner written independently in numba
(same arm means and model constants, same T, its own generator), in a process of its own that
imports numpy and numba only. ``ref s`` is its loop's CPU seconds; ``ref all`` the whole
reference process's (python, numpy, numba, its kernel, the loop), read from ``wait4`` as qbo's.
``ratio`` is qbo's loop seconds over the reference's; ``ratio (all)`` qbo's whole child over
the whole reference child.

Fair both ways on numba's compile: qbo's kernels and the reference's are compiled with
``cache=True``, and both caches are warm before the measured runs (three qbo runs and three
reference runs at T = 100 each), so neither side compiles in the table and both pay numba's
import and the load of their machine code from disk. What a compile costs is the last table:
each side's whole child at T = 100 with an empty ``NUMBA_CACHE_DIR`` (cold) and with its
warm cache. (An earlier version of this bench compared qbo's whole process with the
reference's loop alone, which charged python's and numpy's start to qbo only.)

    python bench/scale.py [--learners thompson,thompson-gaussian,kl-ucb,gp-ucb,gp-ucb-cholesky,gp-ts,linucb,gp-ucb-rff,
                          gp-ucb-a-gp-ucb,gp-ucb-lb,tv-gp-ucb,tv-gp-ucb-forgetting]
                          [--horizons 1e4,1e5,1e6]
    OPENBLAS_NUM_THREADS=1 python bench/scale.py --learners gp-ucb-a-gp-ucb,gp-ucb-lb --horizons 1e5,1e6

``gp-ucb-cholesky`` is gp-ucb on the Cholesky posterior (``model="exact-cholesky"``,
``qbo.algorithms.gp_ucb_cholesky``); its reference keeps the same O(m s) posterior as an
inverse (bench/scale_reference.py). ``gp-ucb-a-gp-ucb`` (``qbo.algorithms.gp_ucb_schedule``)
and ``gp-ucb-lb`` (``qbo.algorithms.gp_ucb_balanced``) are gp-ucb with A-GP-UCB's and
LB-GP-UCB's length scales, and ``gp-ucb-mle`` (``qbo.algorithms.gp_ucb_mle``) with the MLE
baseline's (a marginal-likelihood fit after every call), each against a reference of the same
algorithm (the MLE reference runs qbo's search constants, ``qbo.algorithms.lengthscale.mle``).
A fit costs O(s^3) a likelihood evaluation in the s arms played so far, so the MLE rows say
how many arms each run played (``arms``, ``ref arms``): ``gp-ucb-mle-berkenkamp`` is the MLE
baseline on berkenkamp-bernoulli (``PROBLEM``), ``gp-ucb-mle-outputscale`` the baseline with
the output scale fit too (``mle+outputscale``: a search over log s in every likelihood value
of the search over log theta).

    OPENBLAS_NUM_THREADS=1 nice python bench/scale.py --learners gp-ucb-mle --horizons 1e4,1e5,1e6
    OPENBLAS_NUM_THREADS=1 nice python bench/scale.py --learners gp-ucb-mle-berkenkamp,gp-ucb-mle-outputscale \
        --horizons 1e4,1e5
    python bench/speed.py --sections scale
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEARNERS = {  # name: (algorithm, algorithm options)
    "thompson": ("thompson", {}),
    "thompson-gaussian": ("thompson", {"prior": "gaussian"}),
    "kl-ucb": ("kl-ucb", {}),
    "gp-ucb": ("gp-ucb", {}),
    "gp-ts": ("gp-ts", {}),
    "linucb": ("linucb", {}),
    "gp-ucb-rff": ("gp-ucb", {"model": "rff"}),
    "gp-ucb-cholesky": ("gp-ucb", {"model": "exact-cholesky"}),  # qbo.algorithms.gp_ucb_cholesky
    "gp-ucb-a-gp-ucb": ("gp-ucb", {"lengthscale": "a-gp-ucb"}),  # qbo.algorithms.gp_ucb_schedule
    "gp-ucb-lb": ("gp-ucb", {"lengthscale": "lb"}),  # qbo.algorithms.gp_ucb_balanced
    "tv-gp-ucb": ("tv-gp-ucb", {}),  # qbo.algorithms.tv_gp_ucb_kernel; eps = 0 on a static problem
    "tv-gp-ucb-forgetting": ("tv-gp-ucb", {"eps": 0.01}),  # the seed's forgetting rate
    "gp-ucb-mle": ("gp-ucb", {"lengthscale": "mle"}),  # qbo.algorithms.gp_ucb_mle
    "gp-ucb-mle-berkenkamp": ("gp-ucb", {"lengthscale": "mle"}),  # on a problem where it plays many arms
    "gp-ucb-mle-outputscale": ("gp-ucb", {"lengthscale": "mle+outputscale"}),  # the 2-D search
}
PROBLEM = {"gp-ucb-mle-berkenkamp": "berkenkamp-bernoulli"}  # the problem of a learner not on the centred one
DEFAULT_LEARNERS = ("thompson", "thompson-gaussian", "kl-ucb", "gp-ucb", "gp-ucb-cholesky", "gp-ts", "linucb",
                    "gp-ucb-rff", "gp-ucb-a-gp-ucb", "gp-ucb-lb", "tv-gp-ucb", "tv-gp-ucb-forgetting")
# O(m M^2) a call for M = 100 features (like the policy's feature-space form): about 1e-4 s a call
# compiled, so T = 1e6 would take minutes for qbo and the reference each; it runs up to this T
MAX_T = {"gp-ucb-rff": 10**5}
# the reference of a learner without its own (none now; gp-ucb-mle had gp-ucb's while it was stepped in Python)
REFERENCE: dict[str, str] = {}


def _config(learner: str, budget: int) -> dict:
    algorithm, options = LEARNERS[learner]
    return {"problem": PROBLEM.get(learner, "synthetic-bernoulli-centred"), "algorithms": [algorithm], "budget": budget, "trials": 1,
            "algorithm_options": {algorithm: options} if options else {}}


def run_child(config_json: str, out: str) -> None:
    """A learner-trial as ``qbo run`` runs it (imports included)."""
    from qbo.experiments import runner
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import run_experiment

    runner.PAINTER_MIN_CALLS = 1 << 62  # draw regret.png in this process at every T (its CPU is then counted alike)
    data = json.loads(config_json)
    data["algorithms"] = tuple(data["algorithms"])
    gc.freeze()  # as qbo run does before its units run (qbo.cli.run_commands)
    start = time.process_time()
    run_experiment(ExperimentConfig(**data), out)
    print(json.dumps({"run_cpu": time.process_time() - start}))


def _measure(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(CPU s, peak RSS MB, stdout) of a child process (``env`` added to this one's)."""
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"child {args} failed with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _arms_played(folder: Path) -> str:
    """The distinct arms in a run folder's call files ("-" where the unit kept none)."""
    import numpy as np

    from qbo.experiments.compact import CALL_DTYPE

    files = sorted((folder / "calls").glob("*.calls"))
    if not files:
        return "-"
    return str(np.unique(np.concatenate([np.fromfile(f, dtype=CALL_DTYPE)["arm"] for f in files])).size)


# ---------------------------------------------------------------------------- the reference

def reference_params(learner: str, path: Path) -> None:
    """Write what bench/scale_reference.py needs to ``path`` (.npz): the centred problem's arm
    means and regrets, and the constants of qbo's policy (kernel matrix, lambda, features)."""
    import numpy as np

    from qbo.experiments.assembly import make_policy_for, problem_for_trial
    from qbo.experiments.config import ExperimentConfig
    from qbo.gp.forgetting import decay

    learner = REFERENCE.get(learner, learner)
    config = ExperimentConfig(**{**_config(learner, 100), "algorithms": (LEARNERS[learner][0],)})
    problem = problem_for_trial(config, 0)
    means = np.asarray(problem.means, dtype=float)
    params = {"means": means, "gaps": np.array([float(problem.regret(i)) for i in range(means.shape[0])])}
    if learner not in ("thompson", "thompson-gaussian", "kl-ucb"):
        policy = make_policy_for(config, LEARNERS[learner][0], problem)
    if LEARNERS[learner][0] == "gp-ucb" and learner != "gp-ucb-rff":  # the policy's beta, as the reference reads it
        beta = policy.config.beta
        params |= {"bmode": {"theorem1": 0, "practical": 1, "bogunovic": 2}.get(beta, 3) if isinstance(beta, str) else 3,
                   "bconst": 0.0 if isinstance(beta, str) else float(beta), "bscale": policy.config.beta_scale}
        if isinstance(beta, str) and beta not in ("theorem1", "practical", "bogunovic"):
            raise SystemExit(f"the GP-UCB references have no beta schedule {beta!r}")
    if learner.startswith("tv-gp-ucb"):
        if policy.config.beta != "bogunovic":
            raise SystemExit(f"the TV-GP-UCB reference has Bogunovic et al.'s beta only, got {policy.config.beta!r}")
        post = policy.posterior
        params |= {"K": post.kernel_matrix, "lam": post.lam, "a": decay(post.eps, 1.0)}
    if learner.startswith("gp-ucb-mle"):  # the GP, the refit cadence and the search's constants
        from qbo.algorithms.lengthscale.mle import GRID, N_STARTS, SCALE_GRID, XTOL

        s = policy.surrogate.settings
        if s.kernel != "se":
            raise SystemExit("the MLE reference has the SE kernel only")
        params |= {"X": s.arms, "lam": s.lam, "delta": policy.config.delta, "theta0": policy.surrogate.theta,
                   "scale": policy.surrogate.scale, "fit_scale": policy.surrogate.fit_outputscale,
                   "every": policy.surrogate.every, "grid": GRID, "scale_grid": SCALE_GRID, "starts": N_STARTS,
                   "tol": XTOL}
    elif learner in ("gp-ucb-a-gp-ucb", "gp-ucb-lb"):  # the schedule and GP (the reference evaluates the SE kernel)
        s = policy.surrogate.settings
        if s.kernel != "se":
            raise SystemExit(f"the length-scale references have the SE kernel only, got {s.kernel!r}")
        params |= {"X": s.arms, "lam": s.lam, "delta": policy.config.delta, "theta0": s.theta0, "t0": s.t0,
                   "power": s.power, "scale": s.outputscale}
        if learner == "gp-ucb-lb":
            params |= {"norm": policy.surrogate.norm, "noise": policy.surrogate.noise_var}
    elif learner == "gp-ucb-cholesky":  # the kernel matrix the Cholesky posterior evaluates column by column
        model = policy.surrogate.model
        params |= {"K": model.kernel(model.arms, model.arms), "lam": policy.lam, "delta": policy.config.delta}
    elif learner == "gp-ucb":
        params |= {"K": policy.surrogate.model.kernel_matrix, "lam": policy.lam, "delta": policy.config.delta}
    elif learner == "gp-ts":
        params |= {"K": policy.model.kernel_matrix, "lam": policy.model.lam}
    elif learner == "linucb":
        c = policy.config
        params |= {"P": policy.features, "lam": policy.lam, "linear": True, "R": c.R, "S": c.S, "L": policy.L,
                   "delta": c.delta}
    elif learner == "gp-ucb-rff":
        params |= {"P": policy.surrogate.model.Phi, "lam": policy.lam, "linear": False, "R": 0.0, "S": 0.0, "L": 0.0,
                   "delta": policy.config.delta}
    np.savez(path, **params)


# ---------------------------------------------------------------------------- the table

def scale(learners: list[str], horizons: list[int]) -> None:
    """Print the tables (module docstring)."""
    script, reference = str(Path(__file__).resolve()), str(Path(__file__).resolve().parent / "scale_reference.py")
    rows, jit = [], []
    print(f"{'learner':22s} {'T':>9s} {'CPU s':>8s} {'run s':>7s} {'loop s':>7s} {'ref s':>7s} {'ref all':>7s} "
          f"{'ratio':>6s} {'ratio (all)':>11s} {'RSS MB':>7s} {'ref MB':>7s} {'B/call':>7s} {'arms':>5s} "
          f"{'ref arms':>8s}")
    with tempfile.TemporaryDirectory() as tmp:
        for learner in learners:
            params = f"{tmp}/{learner}.npz"
            reference_params(learner, Path(params))
            child = lambda budget, out, env=None: _measure(  # noqa: E731
                [script, "--child", json.dumps(_config(learner, budget)), out], env)
            ref = lambda budget, env=None: _measure(  # noqa: E731
                [reference, REFERENCE.get(learner, learner), str(budget), params], env)
            cold = {"NUMBA_CACHE_DIR": f"{tmp}/cold-{learner}"}  # an empty cache: every kernel compiles
            jit.append((learner, child(100, f"{tmp}/{learner}-cold", cold)[0], ref(100, cold)[0]))
            small = [child(100, f"{tmp}/{learner}-fixed{k}") for k in range(3)]  # qbo's cache warm from the first
            fixed = min(json.loads(text)["run_cpu"] for _, _, text in small)
            warm = min(ref(100)[0] for _ in range(3))  # warms the reference's cache
            jit[-1] += (min(cpu for cpu, _, _ in small[1:]), warm)
            for budget in [h for h in horizons if h <= MAX_T.get(learner, h)]:
                out = Path(tmp) / f"{learner}-{budget}"
                cpu, rss, text = child(budget, str(out))
                run = json.loads(text)["run_cpu"]
                ref_all, ref_rss, ref_text = ref(budget)
                ref_loop = json.loads(ref_text)["cpu"]
                loop = max(run - fixed, 0.0)
                ref_arms = json.loads(ref_text)["arms"]
                print(f"{learner:22s} {budget:9.0e} {cpu:8.2f} {run:7.2f} {loop:7.2f} {ref_loop:7.2f} {ref_all:7.2f} "
                      f"{loop / ref_loop:6.2f} {cpu / ref_all:11.2f} {rss:7.0f} {ref_rss:7.0f} "
                      f"{_folder_bytes(out) / budget:7.2f} {_arms_played(out):>5s} "
                      f"{'-' if ref_arms is None else ref_arms:>8}", flush=True)
    print("CPU s: the whole qbo child (imports included); run s: inside run_experiment; loop s: run s less the "
          "least of three runs at T = 100; ref s: the reference's loop; ref all: the whole reference child "
          "(python, numpy, numba, its cached kernel, the loop); ratio: loop s / ref s; ratio (all): CPU s / ref all; "
          "arms: the distinct arms qbo's run played (its call file); ref arms: the reference's (MLE baseline only)")
    capped = {k: v for k, v in MAX_T.items() if k in learners and any(h > v for h in horizons)}
    if capped:
        print(f"not run above these T (MAX_T in bench/scale.py: rff is O(m M^2) a call): {capped}")
    print("\nnumba's compile, whole-child CPU s at T = 100: cold (an empty NUMBA_CACHE_DIR, every kernel compiles) "
          "and warm (the on-disk cache, as in the table)")
    print(f"{'learner':22s} {'qbo cold':>9s} {'qbo warm':>9s} {'ref cold':>9s} {'ref warm':>9s}")
    for learner, qbo_cold, ref_cold, qbo_warm, ref_warm in jit:
        print(f"{learner:22s} {qbo_cold:9.2f} {qbo_warm:9.2f} {ref_cold:9.2f} {ref_warm:9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default=",".join(DEFAULT_LEARNERS), help=f"of {','.join(LEARNERS)}")
    parser.add_argument("--horizons", default="1e4,1e5,1e6")
    parser.add_argument("--uncapped", action="store_true", help="run every horizon, MAX_T's caps ignored")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(*args.child)
    else:
        if args.uncapped:
            MAX_T.clear()
        scale(args.learners.split(","), [int(float(h)) for h in args.horizons.split(",")])


if __name__ == "__main__":
    main()
