"""Mitigated estimates of one round's probability p_k, with honest intervals.

A :class:`ProbabilityEstimator` bound to an executor and an oracle (a :class:`RoundEstimator`)
runs every circuit a round needs and returns an interval for the *ideal* p_k =
sin^2((2k + 1) theta) plus every circuit it ran (``Round(k, shots, ones, scale)``), so oracle
calls are counted exactly; ``plug_in`` predicts a round's interval for IAE's shot sizing
(``qbo.qmc.iae``).

Intervals, each at level 1 - alpha:
- none: Clopper-Pearson for the noisy p_k (no claim about noise bias).
- rem: Clopper-Pearson for the observed q, mapped through the exact affine inverse of the
  known confusion (``qbo.noise.readout``): covers the readout-free p_k.
- zne (+rem), Richardson / linear: Z = sum_j c_j r(q_hat_j) is a sum of independent bounded
  shots, so Hoeffding (1963, Thm. 2) gives the half-width sqrt(ln(2 / alpha) sum_j c_j^2 /
  (2 g^2 n_j)) (g the readout gain, 1 without rem). It covers E Z, the extrapolation of the
  noisy expectations, not the ideal p_k.
- zne, exponential: per-scale Clopper-Pearson at alpha / m and the range of the fit over
  that box (exact while the fit is monotone in each value).

Residual-bias pad (``bias_pad=True`` or fixed ``pads``): widens each interval by the depth
model's bound on the bias left, sum_j |c_j| (1 - c_{s_j}) plus max(p01, p10) without REM
(``qbo.noise.depth.residual_bias``), whatever the error's fixed point; padding only widens.
``qbo.qmc.capped.CalibrationAwareIAE`` fixes the pads of the powers it plans
(``with_pads``). The exponential factory takes no pad.

Shots over scales: n_j ~ |c_j| / sqrt(s_j) minimises sum_j c_j^2 / n_j at the oracle cost
sum_j n_j s_j (2k + 1) (Lagrange).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field, replace
from collections.abc import Hashable, Sequence

import numpy as np

from qbo import caches
from qbo.execution.base import Compiling, Executor, ones
from qbo.mitigation.extrapolation import check_factory, coefficients, extrapolate
from qbo.mitigation.folding import check_scale, folded_power_circuit
from qbo.execution.exact import ExactExecutor
from qbo.grover import power_circuit
from qbo.noise.readout import Confusion, best_confusion, measured_qubit, snapshot_confusion
from qbo.noise.schema import Snapshot
from qbo.oracles import bernoulli
from qbo.oracles.base import Oracle
from qbo.noise.blocks import TranspileCache, TranspileCached
from qbo.noise.depth import power_noise, predicted_pads, residual_bias
from qbo.qmc.confidence import clopper_pearson
from qbo.qmc.result import Round
from qbo.qmc.rounds import RoundResult

NAMES = ("none", "rem", "zne", "zne+rem")
DEFAULT_SCALES = (1, 3)


@dataclass(frozen=True)
class Mitigation:
    """Readout-error mitigation and / or zero-noise extrapolation of each IAE round.

    Args:
        readout: correct readout errors (needs ``confusion`` or ``snapshot``).
        scales: odd global-folding scales; (1,) means no ZNE.
        extrapolation: 'richardson', 'linear' or 'exp' (Mitiq factories).
        confusion: a known confusion of the objective qubit (e.g. from a device calibration run);
            overrides ``snapshot``.
        snapshot: calibration whose laid-out objective qubit gives the confusion.
        bias_pad: widen each round's interval by the residual noise bias that the
            snapshot's depth model allows (module docstring); needs ``snapshot`` and a
            transpiling executor.
        pads: fixed residual-bias pads per Grover power (the last one for deeper powers);
            overrides ``bias_pad`` (``with_pads``).
    """

    readout: bool = False
    scales: tuple[int, ...] = (1,)
    extrapolation: str = "richardson"
    confusion: Confusion | None = None
    snapshot: Snapshot | None = field(default=None, compare=False, repr=False)
    bias_pad: bool = False
    pads: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scales", tuple(self.scales))
        for s in self.scales:
            check_scale(s)
        if self.zne:
            check_factory(self.extrapolation, self.scales)
        elif self.scales != (1,):
            raise ValueError(f"without extrapolation the scales must be (1,), got {self.scales}")
        if self.readout and self.confusion is None and self.snapshot is None:
            raise ValueError("readout mitigation needs a confusion or a calibration snapshot, got neither")
        if self.bias_pad and self.snapshot is None:
            raise ValueError("bias_pad needs a calibration snapshot, got none")
        if (self.bias_pad or self.pads is not None) and self.zne and self.extrapolation == "exp":
            raise ValueError("bias_pad supports the linear factories only, got extrapolation 'exp'")
        if self.pads is not None:
            object.__setattr__(self, "pads", tuple(float(p) for p in self.pads))
            if not self.pads or not all(0.0 <= p <= 1.0 for p in self.pads):
                raise ValueError(f"pads must be a non-empty sequence of numbers in [0, 1], got {self.pads}")

    @property
    def zne(self) -> bool:
        return len(self.scales) > 1

    @property
    def covers_device_bias(self) -> bool:
        """Rounds padded by the residual bias (``bias_pad`` or fixed ``pads``, qbo.qmc.capped)."""
        return self.bias_pad or self.pads is not None

    @property
    def name(self) -> str:
        parts = (["zne"] if self.zne else []) + (["rem"] if self.readout else [])
        padded = self.bias_pad or self.pads is not None
        return "+".join(parts + (["pad"] if padded else [])) or "none"

    def predicted_pads(
        self, snapshot: Snapshot, oracle: Oracle, ks: Sequence[int], compiler: TranspileCache | None = None,
    ) -> tuple[float, ...]:
        """The residual-bias pad of every power in ``ks`` on ``snapshot`` (module docstring)."""
        if self.zne and self.extrapolation == "exp":
            raise ValueError("bias pads support the linear factories only, got extrapolation 'exp'")
        coef = _coefficients(self.extrapolation, self.scales) if self.zne else (1.0,)
        return predicted_pads(snapshot, oracle, ks, self.scales, coef, self.readout, compiler)

    def with_pads(self, pads: Sequence[float]) -> "Mitigation":
        """This mitigation with fixed per-power pads (``qbo.qmc.capped.CalibrationAwareIAE``)."""
        return replace(self, pads=tuple(pads))

    def shot_factors(self) -> tuple[float, float]:
        """(variance, oracle calls) per shot of a round relative to a plain round: the
        extrapolation's sum_j c_j^2 / w_j and sum_j w_j s_j at the shot split w_j (readout gain
        ignored)."""
        if not self.zne:
            return 1.0, 1.0
        coef = np.array(_coefficients(self.extrapolation, self.scales))
        scales = np.array(self.scales, dtype=float)
        w = np.abs(coef) / np.sqrt(scales)
        w = w / w.sum()
        return float(np.sum(coef**2 / w)), float(np.sum(w * scales))

    def bind(self, executor: Executor, oracle: Oracle) -> "BoundMitigation":
        return BoundMitigation(self, executor, oracle)

    def estimate(self, executor: Executor, oracle: Oracle, k: int, shots: int, alpha: float) -> RoundResult:
        """One round without a kept binding (convenience; IAE binds once per estimate)."""
        return self.bind(executor, oracle).estimate(k, shots, alpha)

    def cost_model(self) -> tuple[Hashable, "BoundMitigation"]:
        """The configuration the cost model runs, made explicit (``qbo.qmc.rounds``): a readout
        confusion taken from the snapshot's best-read-out qubit (where
        ``qbo.execution.transpile.choose_layout`` starts; the real one depends on the layout),
        no snapshot and no lazy bias pad (oracle-dependent; the model then underestimates such a
        run; fixed ``pads`` are kept, so a calibration-aware run is modelled with its pads), bound to a stand-in exact executor, which plug-in intervals and shot splits ignore."""
        confusion = self.confusion
        if self.readout and confusion is None:
            confusion = best_confusion(self.snapshot)  # type: ignore[arg-type]
        key = replace(self, confusion=confusion, snapshot=None, bias_pad=False)
        return key, BoundMitigation(key, ExactExecutor(seed=0), bernoulli(0.5))


def make_mitigation(
    name: str, snapshot: Snapshot | None = None, scales: tuple[int, ...] = DEFAULT_SCALES,
    extrapolation: str = "richardson", confusion: Confusion | None = None, bias_pad: bool = False,
) -> Mitigation | None:
    """'none' -> None (plain IAE), 'rem', 'zne' or 'zne+rem' -> a Mitigation.

    With ``bias_pad`` 'none' becomes a Mitigation too (no correction, padded intervals).
    """
    if name not in NAMES:
        raise ValueError(f"mitigation must be one of {', '.join(NAMES)}, got '{name}'")
    if name == "none" and not bias_pad:
        return None
    zne = name.startswith("zne")
    return Mitigation(
        readout=name.endswith("rem"), scales=tuple(scales) if zne else (1,),
        extrapolation=extrapolation, confusion=confusion, snapshot=snapshot, bias_pad=bias_pad,
    )


@caches.lru(maxsize=64)
def _coefficients(extrapolation: str, scales: tuple[int, ...]) -> tuple[float, ...]:
    if extrapolation == "exp":
        return tuple(1.0 for _ in scales)  # only used for the shot split
    return tuple(coefficients(extrapolation, scales))


class BoundMitigation:
    """A :class:`Mitigation` bound to one executor and one oracle (a RoundEstimator)."""

    def __init__(self, config: Mitigation, executor: Executor, oracle: Oracle) -> None:
        self.config, self.executor, self.oracle = config, executor, oracle
        self.confusion = _confusion(config, executor, oracle) if config.readout else None
        self.gain = self.confusion.gain if self.confusion else 1.0
        self.coef = np.array(_coefficients(config.extrapolation, config.scales))
        weights = np.abs(self.coef) / np.sqrt(np.array(config.scales, dtype=float))
        self.weights = weights / weights.sum()
        # executors that transpile (Aer, Runtime) cache folded circuits under their own key;
        # the exact executor reads that key as a plain Grover power, so it gets none
        self._cache_key = isinstance(executor, Compiling)
        if config.bias_pad and config.pads is None and not self._cache_key:
            raise ValueError(f"bias_pad on target '{executor.target}' needs a transpiling executor")
        self._pads: dict[int, float] = {}

    @property
    def scales(self) -> tuple[int, ...]:
        return self.config.scales

    def shots_per_scale(self, shots: int) -> list[int]:
        return [max(1, round(shots * w)) for w in self.weights]

    def sample(self, k: int, shots: int) -> tuple[Round, ...]:
        """Every folded circuit of a round at its share of ``shots``: raw counts, one Round per scale."""
        cfg = self.config
        per_scale = self.shots_per_scale(shots)
        circuits = [folded_power_circuit(self.oracle, k, s, self._cache_key) for s in cfg.scales]
        counts = self.executor.run(circuits, per_scale)
        return tuple(Round(k=k, shots=n, ones=ones(c), scale=s) for s, n, c in zip(cfg.scales, per_scale, counts))

    def estimate(self, k: int, shots: int, alpha: float) -> RoundResult:
        rounds = self.sample(k, shots)
        low, high, value = self._interval([r.ones for r in rounds], [r.shots for r in rounds], alpha, self.pad(k))
        return RoundResult(low, high, value, rounds)

    def plug_in(self, k: int, p: float, shots: int, alpha: float) -> tuple[float, float]:
        """The interval if every scale read round(n_j q) ones, q the observed P(1) for p."""
        per_scale = self.shots_per_scale(shots)
        q = float(self.confusion.observe(p)) if self.confusion else p
        low, high, _ = self._interval([round(n * q) for n in per_scale], per_scale, alpha, self.pad(k))
        return low, high

    def pad(self, k: int) -> float:
        """Predicted bound on the residual noise bias of round k's value (0 without pads)."""
        if self.config.pads is not None:
            return self.config.pads[min(k, len(self.config.pads) - 1)]
        if not self.config.bias_pad:
            return 0.0
        if k not in self._pads:
            self._pads[k] = self._predicted_bias(k)
        return self._pads[k]

    def _predicted_bias(self, k: int) -> float:
        snapshot = self.config.snapshot
        compiler = self.executor.transpile_cache if isinstance(self.executor, TranspileCached) else None
        noise = [power_noise(snapshot, self.oracle, k, s, compiler) for s in self.config.scales]  # type: ignore[arg-type]
        confusion = snapshot_confusion(snapshot, noise[0].measured_qubit)  # type: ignore[arg-type]
        coef = self.coef if self.config.zne else (1.0,)
        return residual_bias([n.contrast for n in noise], coef, confusion.p01, confusion.p10, self.config.readout)

    # --- the maths --------------------------------------------------------------------
    def _correct(self, q: float | np.ndarray) -> float | np.ndarray:
        return self.confusion.correct(q) if self.confusion else np.asarray(q, dtype=float)

    def _interval(self, ones_: list[int], shots: list[int], alpha: float, pad: float = 0.0) -> tuple[float, float, float]:
        low, high, value = self._sampling_interval(ones_, shots, alpha)
        if pad > 0.0:
            low, high, value = _clip(low - pad, high + pad, value)
        return low, high, value

    def _sampling_interval(self, ones_: list[int], shots: list[int], alpha: float) -> tuple[float, float, float]:
        cfg = self.config
        q_hat = np.array(ones_, dtype=float) / np.array(shots, dtype=float)
        if not cfg.zne:
            q_low, q_high = clopper_pearson(ones_[0], shots[0], alpha)
            low, high = self._correct(q_low), self._correct(q_high)
            return _clip(low, high, float(self._correct(q_hat[0])))
        values = self._correct(q_hat)
        if cfg.extrapolation == "exp":
            return self._exp_interval(ones_, shots, alpha, values)
        value = float(np.dot(self.coef, values))
        half = math.sqrt(math.log(2.0 / alpha) * float(np.sum(self.coef**2 / np.array(shots))) / 2.0) / self.gain
        return _clip(value - half, value + half, value)

    def _exp_interval(self, ones_: list[int], shots: list[int], alpha: float, values: np.ndarray) -> tuple[float, float, float]:
        scales = self.config.scales
        boxes = [clopper_pearson(o, n, alpha / len(scales)) for o, n in zip(ones_, shots)]
        corners = []
        for corner in itertools.product(*boxes):
            corners.append(_safe_exp(scales, self._correct(np.array(corner))))
        value = _safe_exp(scales, values)
        if not all(math.isfinite(c) for c in corners + [value]):
            return 0.0, 1.0, min(1.0, max(0.0, value)) if math.isfinite(value) else 0.5
        return _clip(min(corners), max(corners), value)


def _safe_exp(scales: tuple[int, ...], values: np.ndarray) -> float:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = extrapolate("exp", scales, [float(v) for v in values])
    except Exception:  # Mitiq's fit fails when values straddle the asymptote
        return float("nan")
    return out if math.isfinite(out) else float("nan")


def _clip(low: float, high: float, value: float) -> tuple[float, float, float]:
    low, high = float(min(max(low, 0.0), 1.0)), float(min(max(high, 0.0), 1.0))
    return min(low, high), max(low, high), float(value)


def _confusion(config: Mitigation, executor: Executor, oracle: Oracle) -> Confusion:
    if config.confusion is not None:
        return config.confusion
    if not isinstance(executor, Compiling):
        raise ValueError(f"readout mitigation on target '{executor.target}' needs an explicit confusion")
    return snapshot_confusion(config.snapshot, measured_qubit(executor.compiled(power_circuit(oracle, 0))))  # type: ignore[arg-type]
