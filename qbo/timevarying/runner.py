"""Time-aware experiment runner: ``run_tv_experiment(config, out_dir) -> records``.

Two modes, chosen by the algorithms:

* classical (seed 000 Sec. 5, Fig. 1): every algorithm is one of ``CLASSICAL_TV_POLICIES``.
  ``budget`` is the number of rounds n (default ``DEFAULT_ROUNDS`` = 30 random initial points
  + 100 iterations, as in the seed).  Round n evaluates x_n for its time t_n (the field drifts
  by the exact AR(1) step), observes ``y_n = f(x_n, tau_n) + z_n`` and is charged the seed's
  Eq. (1) regret ``r_n = max_x f(x, tau_n) - f(x_n, tau_n)``; one round = one oracle call.
* quantum (honest accounting): some algorithm is in ``QUANTUM_TV_POLICIES``.  ``budget`` is T
  oracle calls.  A stage of a quantum policy runs QMC on ``drifting_oracle(f(x_s, tau))``
  (f at the stage's start); a classical policy's stage is one sample (one call).  The stage
  takes ``overhead + calls * sec_per_call`` seconds (``clock="calls"``) or its measured QMC wall
  time plus the overhead (``clock="wall"``), and the field drifts during the stage: its calls
  are charged in up to 8 chunks, each at the gap ``max f - f(x_s)`` after that chunk's drift.
  Stopping as Dai et al. Alg. 1 line 5: a stage whose predicted cost exceeds the budget left ends
  the run; an overrun is charged only up to T.

Files (as ``qbo.experiments.runner``): config.toml (the resolved ``ExperimentConfig``),
stages.jsonl, summary.csv (``qbo.experiments.summary``), regret.png (R_n / n against rounds in
classical mode, as the seed's Fig. 1; cumulative regret against oracle calls in quantum mode).

Randomness: per trial, f_0 and the drift innovations, the observation noise and the initial
design come from generators seeded by (seed, trial, stream), shared by all algorithms (common
random numbers); QMC shots from (seed, trial, algorithm).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from qbo.experiments.accounting import charged_calls
from qbo.experiments.config import ExperimentConfig
from qbo.files import write_text_atomic
from qbo.experiments.plot import regret_curves, save_curves
from qbo.experiments.runner import stable_seed
from qbo.experiments.summary import summarise, write_summary_csv
from qbo.gp.kernels import make_kernel
from qbo.qmc import make_estimator
from qbo.qmc.base import unit_epsilon
from qbo.sampling import classical_samples
from qbo.timevarying.policies import CLASSICAL_TV_POLICIES, TVConfig, TVPolicy, TVQuery
from qbo.timevarying.problems import TVProblem, World, drifting_oracle, make_tv_problem
from qbo.timevarying.qpolicy import QUANTUM_TV_POLICIES, QCTVConfig, QCTVGPUCB

__all__ = ["DEFAULT_ROUNDS", "TV_PROBLEMS", "TV_POLICIES", "is_tv_problem", "make_tv_policy",
           "run_classical_trial", "run_quantum_trial", "run_tv_experiment"]

TV_PROBLEMS = ("tv-synthetic",)
TV_POLICIES = CLASSICAL_TV_POLICIES + QUANTUM_TV_POLICIES
DEFAULT_ROUNDS = 130
QUANTUM_OPTIONS = {"oracle": "bernoulli", "window": (-3.0, 3.0), "sec_per_call": 1e-3,
                   "overhead": 0.0, "clock": "calls", "std": 0.5}
ProgressCallback = Callable[[str, int, int], None]


def is_tv_problem(name: str) -> bool:
    """True for the problems this runner owns (the CLI dispatches on it)."""
    return name in TV_PROBLEMS


def make_tv_policy(name: str, problem: TVProblem, options: Mapping[str, Any] | None = None,
                   budget: int | None = None, reward_range: float | None = None,
                   sec_per_call: float | None = None, overhead: float = 0.0,
                   grams: dict | None = None) -> TVPolicy | QCTVGPUCB:
    """Policy ``name`` on ``problem``; forgetting eps defaults to the problem's lambda.

    The space model is the config's (default Matern-5/2, l = 0.2, as the seed's Sec. 5 uses for
    every algorithm whatever kernel drew the data); ``grams`` caches its Gram matrix by
    (kernel, lengthscale, outputscale) across policies and trials.
    """
    opts = {"eps": problem.lam} | dict(options or {})
    if name in CLASSICAL_TV_POLICIES:
        noise = problem.noise if reward_range is None else (reward_range / 2.0) ** 2
        cfg = _config(TVConfig, name, {"noise": noise} | opts)
        return TVPolicy(name, problem.arms, cfg, kernel_matrix=_gram(cfg, problem, grams),
                        eval_times=problem.eval_times)
    if name in QUANTUM_TV_POLICIES:
        q = {"budget": budget, "reward_range": reward_range or 1.0, "overhead": overhead}
        q |= {"sec_per_call": sec_per_call} if sec_per_call else {}
        cfg = _config(QCTVConfig, name, q | opts)
        return QCTVGPUCB(name, problem.arms, cfg, kernel_matrix=_gram(cfg, problem, grams))
    raise ValueError(f"unknown time-varying policy {name!r}; expected one of {TV_POLICIES}")


def _gram(cfg: Any, problem: TVProblem, grams: dict | None) -> np.ndarray:
    key = (cfg.kernel, float(cfg.lengthscale), float(cfg.outputscale))
    po = problem.options
    if key == (po["kernel"], float(po["lengthscale"]), float(po["outputscale"])):
        return problem.space.K
    cache = grams if grams is not None else {}
    if key not in cache:
        cache[key] = make_kernel(*key)(problem.arms, problem.arms)
    return cache[key]


def _config(cls: type, name: str, opts: dict[str, Any]) -> Any:
    valid = {f.name for f in fields(cls)}
    unknown = sorted(set(opts) - valid)
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r} for policy {name!r}; valid: {sorted(valid)}")
    return cls(**opts)


# ---------------------------------------------------------------- classical (seed Fig. 1)
def run_classical_trial(problem: TVProblem, policy: TVPolicy, rounds: int, init: int,
                        seeds: tuple[int, ...]) -> list[dict[str, Any]]:
    """Seed Alg. 1 for ``rounds`` rounds, the first ``init`` at random arms (seed Sec. 5.2)."""
    world = problem.world(np.random.default_rng(seeds + (0,)))
    world.rng = np.random.default_rng(seeds + (1,))
    design = np.random.default_rng(seeds + (2,)).choice(problem.num_arms, size=min(init, rounds), replace=False)
    records, regret = [], 0.0
    for n in range(rounds):
        query = TVQuery(int(design[n])) if n < len(design) else policy.ask()
        y, t, r = world.evaluate(query.arm)
        policy.tell(query, y, t)
        regret += r
        records.append({"stage": n + 1, "arm": query.arm, "eps": None,
                        "method": "init" if n < len(design) else "ucb", "oracle_calls": 1,
                        "honest_calls": 1, "estimate": y, "cum_calls": n + 1, "cum_regret": regret,
                        "regret": r, "elapsed": t, "time": world.time, "horizon": query.horizon})
    return records


# ---------------------------------------------------------------- quantum (honest accounting)
def run_quantum_trial(problem: TVProblem, policy: TVPolicy | QCTVGPUCB, budget: int, seeds: tuple[int, ...],
                      executor: Any, qopts: Mapping[str, Any], estimator: str = "iae",
                      accounting: str = "honest", leftover: str = "recommend") -> list[dict[str, Any]]:
    """Stages until T oracle calls; drift and per-call regret during every stage (module doc).

    When the line-5 stop rule ends the run early, ``leftover="recommend"`` charges the calls
    left at the drifting gap of the policy's recommended arm, as qbo.experiments.trial does.
    """
    world = problem.world(np.random.default_rng(seeds + (0,)))
    records: list[dict[str, Any]] = []
    calls, regret = 0, 0.0
    while calls < budget:
        query = policy.ask()
        oracle = drifting_oracle(float(world.field.values[query.arm]), qopts["oracle"], tuple(qopts["window"]), qopts["std"])
        outcome = _stage(oracle, query, executor, estimator, accounting, budget - calls)
        if outcome is None:
            break
        value, charged, honest, wall, method = outcome
        elapsed = qopts["overhead"] + (wall if qopts["clock"] == "wall" else honest * qopts["sec_per_call"])
        charged = min(charged, budget - calls)
        stage_regret = _charge_stage(world, query.arm, elapsed, charged)
        if policy.quantum:
            policy.tell(query, value, elapsed, calls=honest)
        else:
            policy.tell(query, value, elapsed)
        calls, regret = calls + charged, regret + stage_regret
        records.append({"stage": len(records) + 1, "arm": query.arm, "eps": query.epsilon, "method": method,
                        "oracle_calls": charged, "honest_calls": honest, "estimate": value,
                        "cum_calls": calls, "cum_regret": regret, "regret": stage_regret / max(charged, 1),
                        "elapsed": elapsed, "time": world.time, "horizon": query.horizon})
    if leftover == "recommend" and calls < budget:
        records.append(_exploit(world, policy.recommend(), budget - calls, qopts, calls, regret, len(records)))
    return records


def _exploit(world: World, arm: int, left: int, qopts: Mapping[str, Any], calls: int, regret: float,
             stages: int) -> dict[str, Any]:
    """The calls left after the stop rule, spent on the recommended arm while f drifts on."""
    elapsed = left * qopts["sec_per_call"]
    stage_regret = _charge_stage(world, arm, elapsed, left)
    return {"stage": stages + 1, "arm": int(arm), "eps": None, "method": "exploit", "oracle_calls": left,
            "honest_calls": left, "estimate": None, "cum_calls": calls + left,
            "cum_regret": regret + stage_regret, "regret": stage_regret / left, "elapsed": elapsed,
            "time": world.time, "horizon": None}


def _stage(oracle, query: TVQuery, executor, estimator: str, accounting: str, left: int):
    if query.epsilon is None:
        (sample,) = classical_samples(executor, oracle, 1)
        return float(sample), 1, 1, 0.0, "sample"
    est = make_estimator(estimator, query.epsilon, query.alpha)
    eps_unit = unit_epsilon(oracle, query.epsilon)
    if est.expected_calls(eps_unit) > left:
        return None
    e = est.estimate(oracle, executor)
    return e.value, charged_calls(accounting, e, eps_unit), e.oracle_calls, e.wall_time, e.method


def _charge_stage(world: World, arm: int, elapsed: float, calls: int, chunks: int = 8) -> float:
    """Drift through the stage in ``<= chunks`` steps; each chunk's calls pay the gap after it."""
    k = max(1, min(chunks, calls))
    split = np.diff(np.round(np.linspace(0, calls, k + 1))).astype(int)
    total = 0.0
    for c in split:
        world.field.step(elapsed / k)
        total += c * world.regret(arm)
    return total


# ---------------------------------------------------------------- experiment + files
def run_tv_experiment(config: ExperimentConfig | Mapping[str, Any], out_dir: str | Path,
                      on_progress: ProgressCallback | None = None) -> list[dict[str, Any]]:
    """Run every (trial, algorithm) on a drifting problem; write config.toml, stages.jsonl,
    summary.csv and regret.png into ``out_dir``; return the records (one per round / stage)."""
    cfg = config if isinstance(config, ExperimentConfig) else ExperimentConfig(**dict(config))
    _validate(cfg)
    out = Path(out_dir)
    popts = dict(cfg.problem_options)
    qopts = QUANTUM_OPTIONS | {k: popts.pop(k) for k in list(popts) if k in QUANTUM_OPTIONS}
    init = int(popts.pop("init", 30))
    quantum = any(a in QUANTUM_TV_POLICIES for a in cfg.algorithms)
    first = make_tv_problem(cfg.problem, **popts)  # bad options fail before the folder is claimed
    for alg in cfg.algorithms:
        _policy(cfg, first, alg, quantum, qopts, {})
    _claim(out, cfg)
    grams: dict = {}
    records: list[dict[str, Any]] = []
    for trial in range(cfg.trials):
        problem = first if trial == 0 else make_tv_problem(cfg.problem, space=first.space, **popts)
        for alg in cfg.algorithms:
            seeds = (cfg.seed, trial)
            lines = _run_unit(cfg, problem, alg, seeds, quantum, qopts, init, grams, out)
            records.extend({"trial": trial, "algorithm": alg} | line for line in lines)
            if on_progress:
                on_progress(f"trial{trial:03d}-{alg}", lines[-1]["cum_calls"] if lines else 0, cfg.budget)
    write_tv_results(out, cfg, records, quantum)
    return records


def _policy(cfg: ExperimentConfig, problem: TVProblem, alg: str, quantum: bool, qopts: dict[str, Any],
            grams: dict) -> TVPolicy | QCTVGPUCB:
    user = cfg.algorithm_options.get(alg, {})
    if not quantum:
        return make_tv_policy(alg, problem, user, grams=grams)
    lo, hi = qopts["window"]
    return make_tv_policy(alg, problem, user, budget=cfg.budget, reward_range=hi - lo,
                          sec_per_call=qopts["sec_per_call"], overhead=qopts["overhead"], grams=grams)


def _run_unit(cfg: ExperimentConfig, problem: TVProblem, alg: str, seeds: tuple[int, int], quantum: bool,
              qopts: dict[str, Any], init: int, grams: dict, out: Path | None = None) -> list[dict[str, Any]]:
    policy = _policy(cfg, problem, alg, quantum, qopts, grams)
    if not quantum:
        return run_classical_trial(problem, policy, cfg.budget, init, seeds)
    from qbo.execution import make_executor

    executor = make_executor(cfg.target, seed=stable_seed(f"{seeds}/{alg}"), run_dir=out)  # ibm: journalled
    return run_quantum_trial(problem, policy, cfg.budget, seeds, executor, qopts, cfg.estimator, cfg.accounting,
                             cfg.leftover)


def _validate(cfg: ExperimentConfig) -> None:
    if not is_tv_problem(cfg.problem):
        raise ValueError(f"time-varying problem must be one of {TV_PROBLEMS}, got {cfg.problem!r}")
    for alg in cfg.algorithms:
        if alg not in TV_POLICIES:
            raise ValueError(f"unknown time-varying policy {alg!r}; expected one of {TV_POLICIES}")
    if cfg.mitigation != "none":
        raise ValueError(f"time-varying runs do not support mitigation yet, got mitigation '{cfg.mitigation}'")
    if cfg.weights != "requested":
        raise ValueError(f"time-varying runs weigh stages by the requested eps only, got weights '{cfg.weights}'")
    clock = dict(cfg.problem_options).get("clock", "calls")
    if clock not in ("calls", "wall"):
        raise ValueError(f"clock must be one of calls, wall, got {clock!r}")


def _claim(out: Path, cfg: ExperimentConfig) -> None:
    """Write config.toml (qbo.experiments.runner refuses a folder that already has one)."""
    write_text_atomic(out / "config.toml", cfg.to_toml())


def write_tv_results(out: Path, cfg: ExperimentConfig, records: list[dict[str, Any]], quantum: bool) -> None:
    """stages.jsonl, summary.csv (final cumulative regret), regret.png."""
    write_text_atomic(out / "stages.jsonl", "".join(json.dumps(_plain(r)) + "\n" for r in records))
    write_summary_csv(out / "summary.csv", summarise(records, cfg), cfg)
    plot_tv_regret(records, cfg, out / "regret.png", per_round=not quantum)


def plot_tv_regret(records: list[dict[str, Any]], cfg: ExperimentConfig, path: str | Path, per_round: bool) -> None:
    """Mean +- stderr of R_n / n against n (seed Fig. 1), or of R_T against oracle calls."""
    points = cfg.budget + 1 if per_round else 400
    curves = regret_curves(records, cfg.budget, points)
    if per_round:  # R_n / n, undefined at n = 0
        curves = {a: (x, m / np.where(x > 0, x, np.nan), se / np.where(x > 0, x, np.nan)) for a, (x, m, se) in curves.items()}
    opts = dict(cfg.problem_options)
    save_curves(
        curves, path,
        xlabel="round n" if per_round else "oracle calls (honest: shots x (2k+1))",
        ylabel="R_n / n (seed Eq. (1))" if per_round else "cumulative regret (per call, drifting)",
        title=f"{cfg.problem} ({opts.get('kernel', 'se')}, {opts.get('times', 'uniform')}), {cfg.trials} trials",
    )


def _plain(r: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in r.items()}
