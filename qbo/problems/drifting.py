"""Drifting problems: the seed's synthetic time-varying generator and a drifting QMC oracle.

Seed 000 Sec. 5.1: arms are the 50 x 50 grid on [0, 1]^2; ``f_0 ~ GP(0, k)`` and after each
second ``f_{i+1} = sqrt(1 - lambda) f_i + sqrt(lambda) eta``, eta ~ GP(0, k) fresh, lambda =
0.01; k is SE or Matern-5/2 with l = 0.2, theta = 1; observation noise variance 0.01 (1 % of
the signal variance).  Evaluation times: uniform t = 3, or biased
``t(x) = 2 (sin(sqrt(2) pi ||x||_2) + 2)`` (in [2, 6]).

Exact continuous-time step (derived, ``ar1_coefficients``): for any dt >= 0,

    f(tau + dt) = a f(tau) + sqrt(q) eta,   a = (1 - lambda)^{dt/2},   q = 1 - (1 - lambda)^{dt}.

For dt = 1 this is the seed's recursion.  It keeps the stationary covariance
(``a^2 K + q K = K``), it composes (two steps of dt/2 give ``a(dt/2)^2 = a(dt)`` and
``a(dt/2)^2 q(dt/2) + q(dt/2) = q(dt)``), and its covariance ``Cov(f(tau), f(tau + dt)) =
a(dt) K = k_space x k_time`` with k_time of Eq. (2) at eps = lambda, so the generator is
exactly the GP the time-varying policies assume.

A ``TVProblem`` also says how a run measures it (``StageModel``): the seed's rounds (one noisy
evaluation taking t(x), after ``init`` random rounds) when every policy is classical, or QMC
stages on ``drifting_oracle`` (Bernoulli or Gaussian in a fixed reward window) whose duration
is ``overhead + calls * sec_per_call`` (``clock="calls"``) or the QMC stage's wall time plus
the overhead (``clock="wall"``) when some policy is quantum (``qbo.experiments.clock``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from qiskit import QuantumCircuit

from qbo import caches
from qbo.gp.forgetting import check_forgetting, decay
from qbo.gp.kernels import make_kernel
from qbo.oracles.base import Oracle
from qbo.oracles.gaussian import gaussian

__all__ = [
    "ArmSpace", "DriftingField", "StageModel", "TIME_SETTINGS", "TVProblem", "World", "ar1_coefficients",
    "biased_time", "drifting_oracle", "make_tv_problem",
]

TIME_SETTINGS = ("uniform", "biased")
ORACLE_KINDS = ("bernoulli", "gaussian")
CLOCKS = ("calls", "wall")


def ar1_coefficients(lam: float, dt: float) -> tuple[float, float]:
    """``(a, q) = ((1 - lam)^{dt/2}, 1 - (1 - lam)^{dt})`` of the exact step (module doc)."""
    a = decay(check_forgetting(lam, "lam"), float(dt))
    return a, -math.expm1(float(dt) * math.log1p(-lam))


def biased_time(arms: np.ndarray) -> np.ndarray:
    """Seed Sec. 5.1 biased evaluation time ``t(x) = 2 (sin(sqrt(2) pi ||x||_2) + 2)``."""
    r = np.linalg.norm(np.asarray(arms, float), axis=1)
    return 2.0 * (np.sin(math.sqrt(2.0) * math.pi * r) + 2.0)


def grid(n: int) -> np.ndarray:
    """The n x n grid on [0, 1]^2 (row-major), seed Sec. 5.1 with n = 50."""
    g = np.linspace(0.0, 1.0, n)
    return np.array([(u, v) for u in g for v in g])


@caches.lru(maxsize=4)
def _grid_gram(arms: bytes, m: int, kernel: str, lengthscale: float, outputscale: float) -> np.ndarray:
    A = np.frombuffer(arms, dtype=float).reshape(m, -1)
    return make_kernel(kernel, lengthscale, outputscale)(A, A)


@dataclass(frozen=True, eq=False)
class ArmSpace:
    """Arms (m x d), the space Gram matrix K (m x m) and a square-root factor F (K ~= F F^T)."""

    arms: np.ndarray
    K: np.ndarray
    factor: np.ndarray

    @classmethod
    def make(cls, arms: np.ndarray, kernel: str, lengthscale: float, outputscale: float = 1.0,
             rel_tol: float = 1e-12) -> "ArmSpace":
        """Gram matrix of ``make_kernel(kernel, ...)``; F from eigenvalues > rel_tol * max (low rank)."""
        A = np.asarray(arms, float)
        K = make_kernel(kernel, lengthscale, outputscale)(A, A)
        s, U = np.linalg.eigh(K)
        keep = s > rel_tol * s[-1]
        return cls(A, K, U[:, keep] * np.sqrt(s[keep]))

    @classmethod
    @caches.lru(maxsize=4)
    def on_grid(cls, n: int, kernel: str, lengthscale: float, outputscale: float = 1.0) -> "ArmSpace":
        """``make`` on the n x n grid, memoised: every trial and unit of a run shares it."""
        return cls.make(grid(n), kernel, lengthscale, outputscale)

    @property
    def num_arms(self) -> int:
        return self.arms.shape[0]

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One draw of GP(0, k) on the arms (m)."""
        return self.factor @ rng.standard_normal(self.factor.shape[1])


class DriftingField:
    """The AR(1) drift of seed Sec. 5.1 over the arms with the exact step of any dt >= 0."""

    def __init__(self, space: ArmSpace, lam: float, rng: np.random.Generator) -> None:
        self.space, self.lam, self.rng = space, check_forgetting(lam, "lam"), rng
        self.values = space.sample(rng)
        self.time = 0.0

    def step(self, dt: float) -> np.ndarray:
        """Advance by ``dt`` seconds: ``f <- a f + sqrt(q) eta`` (module doc); returns f."""
        if not (math.isfinite(dt) and dt >= 0):
            raise ValueError(f"dt must be a finite number >= 0, got {dt!r}")
        a, q = ar1_coefficients(self.lam, dt)
        self.values = a * self.values + math.sqrt(q) * self.space.sample(self.rng)
        self.time += dt
        return self.values


@dataclass(frozen=True)
class StageModel:
    """How a quantum-mode run measures the drifting problem (module doc; seconds)."""

    oracle: str = "bernoulli"
    window: tuple[float, float] = (-3.0, 3.0)
    std: float = 0.5
    sec_per_call: float = 1e-3
    overhead: float = 0.0
    clock: str = "calls"

    def __post_init__(self) -> None:
        if self.oracle not in ORACLE_KINDS:
            raise ValueError(f"oracle kind must be one of {ORACLE_KINDS}, got {self.oracle!r}")
        try:
            lo, hi = (float(v) for v in self.window)
        except (TypeError, ValueError):
            raise ValueError(f"window must be two numbers (lo, hi), got {self.window!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
            raise ValueError(f"window must be finite with hi > lo, got {self.window!r}")
        object.__setattr__(self, "window", (lo, hi))
        for key in ("std", "sec_per_call"):
            _check_positive(key, getattr(self, key))
        if not (isinstance(self.overhead, (int, float)) and math.isfinite(self.overhead) and self.overhead >= 0):
            raise ValueError(f"overhead must be a finite number >= 0, got {self.overhead!r}")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}")

    @property
    def reward_range(self) -> float:
        return self.window[1] - self.window[0]


def _check_positive(key: str, val: object) -> None:
    if isinstance(val, bool) or not (isinstance(val, (int, float)) and math.isfinite(val) and val > 0):
        raise ValueError(f"{key} must be a finite number > 0, got {val!r}")


@dataclass(frozen=True, eq=False)
class TVProblem:
    """A drifting problem: arms, drift rate lambda, noise variance, evaluation time per arm.

    ``time_noise``: sd of a multiplicative log-normal error on every realised evaluation time
    (0: the exact t(x) of the seed; > 0 reproduces the noisy evaluation times of the
    seed's Sec. 5.3).
    """

    name: str
    space: ArmSpace
    lam: float
    noise: float
    eval_times: np.ndarray
    time_noise: float = 0.0
    options: dict = field(default_factory=dict)
    stages: StageModel = field(default_factory=StageModel)
    init: int = 30

    @property
    def arms(self) -> np.ndarray:
        return self.space.arms

    def gram(self, kernel: str, lengthscale: float, outputscale: float) -> np.ndarray:
        """The space Gram matrix of a model's kernel: the generator's own when they agree."""
        po = self.options
        if (kernel, float(lengthscale), float(outputscale)) == (po["kernel"], float(po["lengthscale"]), float(po["outputscale"])):
            return self.space.K
        return _grid_gram(self.space.arms.tobytes(), self.num_arms, kernel, float(lengthscale), float(outputscale))

    @property
    def num_arms(self) -> int:
        return self.space.num_arms

    def world(self, rng: np.random.Generator) -> "World":
        """A fresh realisation: f_0 drawn, clock at 0."""
        return World(self, DriftingField(self.space, self.lam, rng), rng)


class World:
    """One realisation of a drifting problem: evaluate arms, advance the clock, measure regret."""

    def __init__(self, problem: TVProblem, field_: DriftingField, rng: np.random.Generator) -> None:
        self.problem, self.field, self.rng = problem, field_, rng

    @property
    def time(self) -> float:
        return self.field.time

    def eval_time(self, arm: int) -> float:
        """The realised evaluation time of ``arm``: t(x) times exp(time_noise * N(0, 1))."""
        t = float(self.problem.eval_times[arm])
        s = self.problem.time_noise
        return t * math.exp(s * self.rng.standard_normal()) if s > 0 else t

    def evaluate(self, arm: int) -> tuple[float, float, float]:
        """Seed Alg. 1 line 4: the evaluation takes t_n, ``y_n = f(x_n, tau_n) + z_n``.

        Returns ``(y, t_n, r_n)`` with r_n of seed Eq. (1): ``max_x f(x, tau_n) - f(x_n, tau_n)``.
        """
        t = self.eval_time(arm)
        f = self.field.step(t)
        y = float(f[arm]) + math.sqrt(self.problem.noise) * self.rng.standard_normal()
        return y, t, self.regret(arm)

    def regret(self, arm: int) -> float:
        """``max_x f(x, tau) - f(x_arm, tau)`` at the current time (seed Eq. (1))."""
        f = self.field.values
        return float(f.max() - f[arm])

    def charge(self, arm: int, elapsed: float, calls: int, chunks: int = 8) -> float:
        """Regret of ``calls`` calls at ``arm`` spread over ``elapsed`` seconds while f drifts:
        ``<= chunks`` steps, each chunk's calls paying the gap after its step."""
        k = max(1, min(chunks, calls))
        split = np.diff(np.round(np.linspace(0, calls, k + 1))).astype(int)
        total = 0.0
        for c in split:
            self.field.step(elapsed / k)
            total += c * self.regret(arm)
        return total


def make_tv_problem(
    name: str = "tv-synthetic", *, kernel: str = "se", times: str = "uniform", grid_size: int = 50,
    lengthscale: float = 0.2, outputscale: float = 1.0, lam: float = 0.01, noise: float = 0.01,
    uniform_time: float = 3.0, time_noise: float = 0.0, space: ArmSpace | None = None,
    init: int = 30, oracle: str = "bernoulli", window: tuple[float, float] = (-3.0, 3.0), std: float = 0.5,
    sec_per_call: float = 1e-3, overhead: float = 0.0, clock: str = "calls",
) -> TVProblem:
    """The seed's Sec. 5.1 problem; ``space`` reuses a precomputed ArmSpace (same kernel/grid).

    ``init``: random initial rounds of a classical run (seed Sec. 5.2); ``oracle`` ... ``clock``:
    the ``StageModel`` of a quantum run (module doc)."""
    if name != "tv-synthetic":
        raise ValueError(f"time-varying problem must be 'tv-synthetic', got {name!r}")
    if kernel not in ("se", "matern12", "matern32", "matern52"):
        raise ValueError(f"kernel must be one of se, matern12, matern32, matern52, got {kernel!r}")
    if times not in TIME_SETTINGS:
        raise ValueError(f"times must be one of {TIME_SETTINGS}, got {times!r}")
    if isinstance(grid_size, bool) or not isinstance(grid_size, int) or grid_size < 2:
        raise ValueError(f"grid_size must be an integer >= 2, got {grid_size!r}")
    for key, val in (("noise", noise), ("uniform_time", uniform_time)):
        if not (isinstance(val, (int, float)) and math.isfinite(val) and val > 0):
            raise ValueError(f"{key} must be a finite number > 0, got {val!r}")
    if not (isinstance(time_noise, (int, float)) and math.isfinite(time_noise) and time_noise >= 0):
        raise ValueError(f"time_noise must be a finite number >= 0, got {time_noise!r}")
    if isinstance(init, bool) or not isinstance(init, int) or init < 0:
        raise ValueError(f"init must be an integer >= 0, got {init!r}")
    stages = StageModel(oracle, window, std, sec_per_call, overhead, clock)
    sp = space if space is not None else ArmSpace.on_grid(grid_size, kernel, float(lengthscale), float(outputscale))
    times_arr = np.full(sp.num_arms, float(uniform_time)) if times == "uniform" else biased_time(sp.arms)
    opts = {"kernel": kernel, "times": times, "grid_size": grid_size, "lengthscale": lengthscale,
            "outputscale": outputscale, "lam": lam, "noise": noise, "uniform_time": uniform_time,
            "time_noise": time_noise}
    opts |= {"init": init, "oracle": oracle, "window": list(stages.window), "std": std,
             "sec_per_call": sec_per_call, "overhead": overhead, "clock": clock}
    return TVProblem(name, sp, check_forgetting(lam, "lam"), float(noise), times_arr, float(time_noise), opts,
                     stages, init)


def drifting_oracle(value: float, kind: str = "bernoulli", window: tuple[float, float] = (-3.0, 3.0),
                    std: float = 0.5) -> Oracle:
    """Arm oracle for the current f(x, tau) = ``value`` in a fixed reward window (lo, hi).

    ``bernoulli``: one qubit with P(1) = (v - lo) / (hi - lo), reward units lo / hi, so the
    QMC estimate (reward units) estimates v (clipped into the window).  ``gaussian``:
    ``qbo.oracles.gaussian(v, std, window=window)`` (v clipped 1e-9 inside the window).
    """
    lo, hi = window
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"window must be finite with hi > lo, got {window!r}")
    if kind == "gaussian":
        return gaussian(float(np.clip(value, lo + 1e-9, hi - 1e-9)), std, window=(lo, hi))
    if kind != "bernoulli":
        raise ValueError(f"oracle kind must be one of {ORACLE_KINDS}, got {kind!r}")
    p = float(np.clip((value - lo) / (hi - lo), 0.0, 1.0))
    circuit = QuantumCircuit(1, name="A")
    circuit.ry(2.0 * math.asin(math.sqrt(p)), 0)
    mean = lo + (hi - lo) * p
    return Oracle(circuit, 0, low=lo, high=hi, mean=mean, spec=f"drift-bernoulli:{p!r}@({lo!r},{hi!r})")
