"""Classical learners at T = 1e4 ... 1e7 calls (issue 21): qbo against a compiled reference.

For each learner (``--learners``) and horizon (``--horizons``), one learner-trial on the
centred problem (synthetic-bernoulli-centred, spread 0.01, 20 arms) runs in a child process
(``run_experiment``, as ``qbo run`` does), and the parent reads the child's CPU seconds
(user + system) and peak RSS from ``wait4``, and the bytes its run folder holds. Runs at
T = 100 give the fixed cost (problem, numba's cached kernels, the figure), so
``loop s`` (CPU inside ``run_experiment`` less that of the least of three runs at T = 100)
is what one more learner-trial costs in a process that runs many (regret.png is drawn in the
child at every T, not by a helper process from T = 1e5 on, so that all runs count it alike).

The reference is the same learner written here, independently, in numba (same arm means,
same T, its own generator): its loop's CPU seconds, compiled beforehand. ``ratio`` is
qbo's loop seconds over the reference's; ``ratio (all)`` the whole child's CPU over it.

    python bench/scale.py [--learners thompson,thompson-gaussian,kl-ucb,gp-ucb,gp-ts,linucb,gp-ucb-rff]
                          [--horizons 1e4,1e5,1e6]
    python bench/speed.py --sections scale
"""

from __future__ import annotations

import argparse
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
}
# O(m M^2) a call for M = 100 features (like the policy's feature-space form): about 1e-4 s a call
# compiled, so T = 1e6 would take minutes for qbo and the reference each; it runs up to this T
MAX_T = {"gp-ucb-rff": 10**5}


def _config(learner: str, budget: int) -> dict:
    algorithm, options = LEARNERS[learner]
    return {"problem": "synthetic-bernoulli-centred", "algorithms": [algorithm], "budget": budget, "trials": 1,
            "algorithm_options": {algorithm: options} if options else {}}


def run_child(config_json: str, out: str) -> None:
    """A learner-trial as ``qbo run`` runs it (imports included)."""
    from qbo.experiments import runner
    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import run_experiment

    runner.PAINTER_MIN_CALLS = 1 << 62  # draw regret.png in this process at every T (its CPU is then counted alike)
    data = json.loads(config_json)
    data["algorithms"] = tuple(data["algorithms"])
    start = time.process_time()
    run_experiment(ExperimentConfig(**data), out)
    print(json.dumps({"run_cpu": time.process_time() - start}))


def _measure(args: list[str]) -> tuple[float, float, str]:
    """(CPU s, peak RSS MB, stdout) of a child process."""
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"child {args} failed with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------- the reference

def reference_child(learner: str, budget: int) -> None:
    """Print the CPU seconds of the reference loop (compiled first, on a small T)."""
    import numba
    import numpy as np

    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.assembly import make_policy_for, problem_for_trial

    config = ExperimentConfig(**{**_config(learner, budget), "algorithms": (LEARNERS[learner][0],)})
    problem = problem_for_trial(config, 0)
    means = np.asarray(problem.means, dtype=float)
    gaps = np.array([float(problem.regret(i)) for i in range(means.shape[0])])

    @numba.njit(cache=False)
    def thompson(means, gaps, budget, seed):
        np.random.seed(seed)
        m = means.shape[0]
        s, f = np.zeros(m), np.zeros(m)
        regret = 0.0
        for _ in range(budget):
            arm, top = 0, -1.0
            for i in range(m):
                x = np.random.beta(1.0 + s[i], 1.0 + f[i])
                if x > top:
                    arm, top = i, x
            if np.random.random() < means[arm]:
                s[arm] += 1.0
            else:
                f[arm] += 1.0
            regret += gaps[arm]
        return regret

    @numba.njit(cache=False)
    def thompson_gaussian(means, gaps, budget, seed):
        np.random.seed(seed)
        m = means.shape[0]
        n, total = np.zeros(m), np.zeros(m)
        regret = 0.0
        for _ in range(budget):
            arm, top = 0, -np.inf
            for i in range(m):
                precision = 1.0 + n[i] / 0.25
                x = (0.5 + total[i] / 0.25) / precision + np.random.standard_normal() / math.sqrt(precision)
                if x > top:
                    arm, top = i, x
            y = 1.0 if np.random.random() < means[arm] else 0.0
            n[arm] += 1.0
            total[arm] += y
            regret += gaps[arm]
        return regret

    @numba.njit(cache=False)
    def kl_ucb(means, gaps, budget, seed):
        np.random.seed(seed)
        m = means.shape[0]
        n, s = np.zeros(m), np.zeros(m)
        regret = 0.0
        for t in range(1, budget + 1):
            arm, top = 0, -1.0
            for i in range(m):
                if n[i] == 0:
                    arm = i
                    break
                p = min(max(s[i] / n[i], 1e-15), 1 - 1e-15)
                level = math.log(t) / n[i]
                q = min(p + math.sqrt(level / 2.0), 1 - 1e-15)
                for _ in range(60):  # Newton on kl(p, q) = level from above
                    g = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q)) - level
                    if g <= 1e-12:
                        break
                    q = max(p, q - g / ((q - p) / (q * (1 - q))))
                if q > top:
                    arm, top = i, q
            y = 1.0 if np.random.random() < means[arm] else 0.0
            n[arm] += 1.0
            s[arm] += y
            regret += gaps[arm]
        return regret

    @numba.njit(cache=False)
    def gp_ucb(means, gaps, budget, seed, K, lam, delta):
        np.random.seed(seed)
        m = means.shape[0]
        Sigma, mu, u = K.copy(), np.zeros(m), np.zeros(m)
        regret = 0.0
        for t in range(1, budget + 1):
            beta = math.sqrt(max(2.0 * math.log(m * t * t * math.pi ** 2 / (6.0 * delta)), 0.0))
            arm, top = 0, -np.inf
            for i in range(m):
                x = mu[i] + beta * math.sqrt(max(Sigma[i, i], 0.0))
                if x > top:
                    arm, top = i, x
            y = 1.0 if np.random.random() < means[arm] else 0.0
            for j in range(m):
                u[j] = Sigma[arm, j]
            c = 1.0 / (lam + u[arm])
            r = y - mu[arm]
            for j in range(m):
                mu[j] += c * r * u[j]
                for k in range(m):
                    Sigma[j, k] -= c * u[j] * u[k]
            regret += gaps[arm]
        return regret

    @numba.njit(cache=False)
    def gp_ts(means, gaps, budget, seed, K, lam):
        np.random.seed(seed)
        m = means.shape[0]
        Sigma, mu, u, z, R = K.copy(), np.zeros(m), np.zeros(m), np.zeros(m), np.zeros((m, m))
        regret = 0.0
        for _ in range(budget):
            top = 1e-300
            for i in range(m):
                top = max(top, Sigma[i, i])
            for j in range(m):  # Cholesky-Crout by columns of Sigma + 1e-12 max var I
                d = Sigma[j, j] + 1e-12 * top
                for k in range(j):
                    d -= R[j, k] * R[j, k]
                R[j, j] = math.sqrt(d) if d > 0.0 else 0.0
                for i in range(j + 1, m):
                    s = Sigma[i, j]
                    for k in range(j):
                        s -= R[i, k] * R[j, k]
                    R[i, j] = s / R[j, j] if R[j, j] > 0.0 else 0.0
            for i in range(m):
                z[i] = np.random.standard_normal()
            arm, best = 0, -np.inf
            for i in range(m):
                x = mu[i]
                for k in range(i + 1):
                    x += R[i, k] * z[k]
                if x > best:
                    arm, best = i, x
            y = 1.0 if np.random.random() < means[arm] else 0.0
            for j in range(m):
                u[j] = Sigma[arm, j]
            c = 1.0 / (lam + u[arm])
            r = y - mu[arm]
            for j in range(m):
                mu[j] += c * r * u[j]
                for k in range(m):
                    Sigma[j, k] -= c * u[j] * u[k]
            regret += gaps[arm]
        return regret

    @numba.njit(cache=False)
    def feature_ucb(means, gaps, budget, seed, P, lam, linear, R, S, L, delta):
        """OFUL (linear) or GP-UCB (theorem-1 beta) on features P by Sherman-Morrison."""
        np.random.seed(seed)
        m, M = P.shape
        Vinv, b, theta, u = np.eye(M) / lam, np.zeros(M), np.zeros(M), np.zeros(M)
        regret = 0.0
        for t in range(budget):
            if linear:
                rho = R * math.sqrt(M * math.log((1.0 + t * L * L / lam) / delta)) + math.sqrt(lam) * S
            else:
                rho = math.sqrt(lam) * math.sqrt(max(2.0 * math.log(m * (t + 1.0) ** 2 * math.pi ** 2 / (6.0 * delta)), 0.0))
            for j in range(M):
                theta[j] = 0.0
                for k in range(M):
                    theta[j] += Vinv[j, k] * b[k]
            arm, best = 0, -np.inf
            for i in range(m):
                mean, q = 0.0, 0.0
                for j in range(M):
                    mean += P[i, j] * theta[j]
                    row = 0.0
                    for k in range(M):
                        row += Vinv[j, k] * P[i, k]
                    q += P[i, j] * row
                x = mean + rho * math.sqrt(max(q, 0.0))
                if x > best:
                    arm, best = i, x
            y = 1.0 if np.random.random() < means[arm] else 0.0
            q = 0.0
            for j in range(M):
                u[j] = 0.0
                for k in range(M):
                    u[j] += Vinv[j, k] * P[arm, k]
                q += P[arm, j] * u[j]
            c = 1.0 / (1.0 + q)
            for j in range(M):
                b[j] += y * P[arm, j]
                for k in range(M):
                    Vinv[j, k] -= c * u[j] * u[k]
            regret += gaps[arm]
        return regret

    if learner == "gp-ucb":
        policy = make_policy_for(config, "gp-ucb", problem)
        K, lam, delta = policy.surrogate.model.kernel_matrix, policy.lam, policy.config.delta
        run = lambda b: gp_ucb(means, gaps, b, 1, K, lam, delta)  # noqa: E731
    elif learner == "gp-ts":
        policy = make_policy_for(config, "gp-ts", problem)
        K, lam = policy.model.kernel_matrix, policy.model.lam
        run = lambda b: gp_ts(means, gaps, b, 1, K, lam)  # noqa: E731
    elif learner == "linucb":
        policy = make_policy_for(config, "linucb", problem)
        c = policy.config
        run = lambda b: feature_ucb(means, gaps, b, 1, policy.features, policy.lam, True,  # noqa: E731
                                    c.R, c.S, policy.L, c.delta)
    elif learner == "gp-ucb-rff":
        policy = make_policy_for(config, "gp-ucb", problem)
        model = policy.surrogate.model
        run = lambda b: feature_ucb(means, gaps, b, 1, model.Phi, policy.lam, False,  # noqa: E731
                                    0.0, 0.0, 0.0, policy.config.delta)
    else:
        kernel = {"thompson": thompson, "thompson-gaussian": thompson_gaussian, "kl-ucb": kl_ucb}[learner]
        run = lambda b: kernel(means, gaps, b, 1)  # noqa: E731
    run(100)  # compile
    start = time.process_time()
    regret = run(budget)
    print(json.dumps({"cpu": time.process_time() - start, "regret": regret}))


# ---------------------------------------------------------------------------- the table

def scale(learners: list[str], horizons: list[int]) -> None:
    """Print the table (module docstring)."""
    script = str(Path(__file__).resolve())
    print(f"{'learner':18s} {'T':>9s} {'CPU s':>8s} {'run s':>7s} {'loop s':>7s} {'ref s':>7s} {'ratio':>6s} "
          f"{'ratio (all)':>11s} {'RSS MB':>7s} {'B/call':>7s}")
    with tempfile.TemporaryDirectory() as tmp:
        for learner in learners:
            fixed = min(json.loads(_measure([script, "--child", json.dumps(_config(learner, 100)),
                                             f"{tmp}/{learner}-fixed{k}"])[2])["run_cpu"] for k in range(3))
            for budget in [h for h in horizons if h <= MAX_T.get(learner, h)]:
                out = Path(tmp) / f"{learner}-{budget}"
                cpu, rss, text = _measure([script, "--child", json.dumps(_config(learner, budget)), str(out)])
                run = json.loads(text)["run_cpu"]
                ref = json.loads(_measure([script, "--reference", learner, str(budget)])[2])["cpu"]
                loop = max(run - fixed, 0.0)
                print(f"{learner:18s} {budget:9.0e} {cpu:8.2f} {run:7.2f} {loop:7.2f} {ref:7.2f} {loop / ref:6.2f} "
                      f"{cpu / ref:11.2f} {rss:7.0f} {_folder_bytes(out) / budget:7.2f}", flush=True)
    print("CPU s: the whole child (imports included); run s: inside run_experiment; loop s: run s less the "
          "least of three runs at T = 100; ratio: loop s / ref s; ratio (all): CPU s / ref s")
    capped = {k: v for k, v in MAX_T.items() if k in learners and any(h > v for h in horizons)}
    if capped:
        print(f"not run above these T (MAX_T in bench/scale.py, O(m M^2) a call): {capped}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--horizons", default="1e4,1e5,1e6")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--reference", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(*args.child)
    elif args.reference:
        reference_child(args.reference[0], int(args.reference[1]))
    else:
        scale(args.learners.split(","), [int(float(h)) for h in args.horizons.split(",")])


if __name__ == "__main__":
    main()
