"""Calibration-aware depth: how much contrast of Q^k A survives a device, and k_max.

Model (per transpiled circuit, laid out on the snapshot's qubits). Every gate g on the
causal cone of the measured qubit (the gates that can influence it; for Q^k A that is
essentially all of them, the multi-qubit generalisation of the critical path) shrinks the
Bloch / Pauli components by a depolarising factor

    lambda_g = min(1 - r_g D / (D - 1), prod_q (e^{-d_g/T1_q} + 2 e^{-d_g/T2_q}) / 3),

r_g the reported average gate error, D = 2^n, d_g the gate duration: the first term is
the depolarising channel with that average infidelity (Nielsen 2002, F_avg = (D F_pro +
1) / (D + 1)), the second the orientation-averaged T1/T2 decay during the gate (the PTM of
amplitude + phase damping is diag(1, e^{-t/T2}, e^{-t/T2}, e^{-t/T1})). Taking the smaller
mirrors Aer's device model, which composes thermal relaxation with just enough
depolarisation to reach r_g, and uses thermal relaxation alone when it already exceeds
r_g. With ``idle=True`` every qubit of the cone also decays over its idle time on the
critical path (duration = longest path through the circuit with gate durations); hardware
does this, Aer's gate-only noise model does not. The contrast is c_k = prod lambda.

Then, with the confusion p01 = P(1|0), p10 = P(0|1), g = 1 - p01 - p10 of the measured
qubit, a global depolarising approximation gives

    P_noisy(k) = p01 + g (c_k P_ideal(k) + (1 - c_k) / 2)

(the register relaxes towards the maximally mixed state, whose objective marginal is 1/2;
T1 alone would pull towards 0 instead, the main modelling error), and, linear in P_ideal,
|P_noisy - P_ideal| <= max(p01, p10) + g (1 - c_k) / 2 under that approximation. Since T1
pulls towards 0 and the exact channels exceed that bound by up to 11% (bench/noise.py
--pad-check), ``p_bias`` uses the general bound max(p01, p10) + g (1 - c_k), which assumes
nothing about where the error pulls (``residual_bias``, shared with qbo.qmc.capped); p_bias
grows with k as c_k falls.

Bias on the amplitude. IAE inverts p_k = (1 - cos(K theta)) / 2, K = 4k + 2, inside a known
half period, so a probability error of p_bias moves theta by at most acos(1 - 2 p_bias) / K
and the amplitude a = sin^2 theta by at most ``bias_bound(k)``, computed here as the exact
supremum over theta of |a(theta') - a(theta)| for p' = p +- p_bias. It is p_bias at k = 0
and is *diluted* by 1/K at larger k: deeper rounds are less sensitive to a given
probability error, while their contrast (and so their information per shot, ~ c_k^2)
falls. ``choose_k_max`` keeps the largest k <= the depth eps needs (K <= pi / (2 eps)) whose
bias_bound is <= fraction * eps, and returns None if no k qualifies (then eps cannot be
reached honestly on this device and the estimate must say so).

Speed (``depth_table``). The executors compose Q^k A from compiled blocks
(``qbo.noise.blocks``), so the model reads each block's noise once (``block_noise``: every
gate of the block, the cone being essentially all of them) and combines powers in closed
form (``word_noise``): log c_k = log c_A + k log c_Q plus the idle decay of every used qubit
over (sum of block durations - its busy time). A table for k up to 50 costs at most eight
transpiles (A, Q, A^dagger, Q^dagger and their undo-swap networks), then microseconds per
row. On oracles that need no routing (1-qubit Bernoulli, the 3-qubit entangled oracle) the
contrasts equal the whole-circuit model's (``circuit_noise`` on one transpile of Q^k A) to
1% in log contrast (measured <= 0.21%); where routing permutes qubits, every block carries its undo swaps,
and the prediction is for that (deeper) circuit, which is the one the executors run
(``tests/test_depth.py`` checks both).
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from dataclasses import dataclass

import numpy as np
from qiskit import QuantumCircuit

from qbo import caches
from qbo.grover import power_circuit
from qbo.noise.aer_model import snapshot_target
from qbo.noise.blocks import CompiledBlocks, TranspileCache, TranspileCached, block_counts
from qbo.noise.readout import snapshot_confusion
from qbo.noise.schema import Snapshot
from qbo.oracles.base import Oracle

_SKIP = ("barrier", "measure", "delay")


@dataclass(frozen=True)
class DepthRow:
    """Prediction for one Grover power k on one device (times in seconds)."""

    k: int
    depth: int
    duration_s: float
    two_qubit_gates: int
    contrast: float
    p_bias: float
    bias_bound: float


@dataclass(frozen=True)
class CircuitNoise:
    """What ``circuit_noise`` reads off one transpiled circuit."""

    contrast: float
    duration_s: float
    two_qubit_gates: int
    measured_qubit: int
    depth: int | None = None


def circuit_noise(snapshot: Snapshot, compiled: QuantumCircuit, idle: bool = True) -> CircuitNoise:
    """Contrast, critical-path duration and two-qubit gates of a transpiled circuit."""
    gates = {(g.gate, g.qubits): g for g in snapshot.gates}
    ops = [(i.operation.name, tuple(compiled.find_bit(q).index for q in i.qubits)) for i in compiled.data]
    measured = [q for name, qs in ops if name == "measure" for q in qs]
    if len(measured) != 1:
        raise ValueError(f"expected one measured qubit in '{compiled.name}', got {len(measured)}")
    cone, kept = {measured[0]}, []
    for name, qs in reversed(ops):
        if name in _SKIP or not cone.intersection(qs):
            continue
        cone.update(qs)
        kept.append((name, qs))
    log_c, clock, busy, two_q = _walk(snapshot, gates, reversed(kept))
    total = max(clock.values(), default=0.0)
    if idle:
        for q in cone:
            log_c += math.log(max(_thermal_lambda(snapshot, q, total - busy.get(q, 0.0)), 1e-300))
    return CircuitNoise(math.exp(log_c), total, two_q, measured[0])


def _thermal_lambda(snapshot: Snapshot, qubit: int, t: float) -> float:
    cal = snapshot.qubits[qubit]
    return (math.exp(-t / cal.t1) + 2.0 * math.exp(-t / cal.t2)) / 3.0


def _gate_lambda(snapshot: Snapshot, qubits: tuple[int, ...], error: float, duration: float) -> float:
    dim = 2 ** len(qubits)
    depolarizing = 1.0 - error * dim / (dim - 1)
    thermal = math.prod(_thermal_lambda(snapshot, q, duration) for q in qubits)
    return max(0.0, min(depolarizing, thermal))


def residual_bias(
    contrasts: Sequence[float], coef: Sequence[float], p01: float, p10: float, readout_corrected: bool,
) -> float:
    """Bound on |E value - P_ideal| of a round reading sum_j coef_j P_{s_j} at contrasts c_{s_j}:
    sum_j |coef_j| (1 - c_j), plus max(p01, p10) (gain-scaled gate part) without readout
    correction; at most 1. It assumes nothing about where the error pulls the state (T1 pulls
    towards 0, not 1/2), so it is twice the depolarising (1 - c) / 2 (qbo.qmc.capped)."""
    gate = float(sum(abs(c) * (1.0 - x) for c, x in zip(coef, contrasts)))
    if readout_corrected:
        return min(1.0, gate)
    return min(1.0, max(p01, p10) + (1.0 - p01 - p10) * gate)


def p_bias(contrast: float, p01: float, p10: float) -> float:
    """max over P_ideal of |P_noisy - P_ideal| of one plain round at contrast ``contrast``
    (``residual_bias`` of one circuit; the padded estimators use the same bound)."""
    return residual_bias((contrast,), (1.0,), p01, p10, False)


def amplitude_bias(k: int, bias: float, grid: int = 20001, theta_low: float = 0.0,
                   theta_high: float = math.pi / 2) -> float:
    """sup over theta in [theta_low, theta_high] of |sin^2 theta' - sin^2 theta| when p_k is
    off by +- ``bias`` and theta' is read back inside the true half period (as IAE does)."""
    big_k = 4 * k + 2
    theta = np.linspace(theta_low, theta_high, grid)
    phi = big_k * theta
    period = np.floor(phi / (2 * math.pi))
    up = (phi - 2 * math.pi * period) <= math.pi
    p = (1.0 - np.cos(phi)) / 2.0
    worst = np.zeros_like(theta)
    for sign in (-1.0, 1.0):
        angle = np.arccos(np.clip(1.0 - 2.0 * np.clip(p + sign * bias, 0.0, 1.0), -1.0, 1.0))
        angle = np.where(up, angle, 2 * math.pi - angle)
        moved = (2 * math.pi * period + angle) / big_k
        worst = np.maximum(worst, np.abs(np.sin(moved) ** 2 - np.sin(theta) ** 2))
    return float(worst.max())


def depth_table(
    snapshot: Snapshot, oracle: Oracle, ks: list[int] | range, idle: bool = True,
    readout_mitigated: bool = False, executor: object = None, compiler: TranspileCache | None = None,
) -> list[DepthRow]:
    """One DepthRow per k for the circuits a device executor runs (``qbo.noise.blocks``).

    A constant number of transpiles however many powers: the blocks A, Q (and their
    inverses) are compiled once per (oracle, snapshot, layout) and cached, their noise is
    read once (``block_noise``), and each power's row is the closed-form combination
    (``word_noise``). ``executor``: take the compiled blocks from its transpile cache
    (``qbo.noise.blocks.TranspileCached``), or from ``compiler``; by default the shared cache
    ``compiler_for(snapshot)``.
    ``readout_mitigated`` drops the readout terms from p_bias (REM corrects them).
    """
    if compiler is None and isinstance(executor, TranspileCached):
        compiler = executor.transpile_cache
    compiler = compiler or compiler_for(snapshot)
    noises, blocks = oracle_block_noise(snapshot, oracle, compiler)
    conf = snapshot_confusion(snapshot, blocks.objective)
    p01, p10 = (0.0, 0.0) if readout_mitigated else (conf.p01, conf.p10)
    rows = []
    for k in ks:
        noise = word_noise(snapshot, noises, block_counts(int(k)), blocks.objective, idle)
        bias = p_bias(noise.contrast, p01, p10)
        rows.append(DepthRow(
            k=int(k), depth=noise.depth, duration_s=noise.duration_s, two_qubit_gates=noise.two_qubit_gates,
            contrast=noise.contrast, p_bias=bias, bias_bound=amplitude_bias(int(k), bias),
        ))
    return rows


@dataclass(frozen=True)
class BlockNoise:
    """What ``block_noise`` reads off one compiled block (all of its gates)."""

    log_contrast: float
    duration_s: float
    busy_s: dict[int, float]
    two_qubit_gates: int
    depth: int


def _walk(snapshot: Snapshot, gates: dict, ops) -> tuple[float, dict[int, float], dict[int, float], int]:
    """(sum of log lambda_g, per-qubit finish clock, per-qubit busy time, two-qubit gates) of
    the gates ``ops`` = (name, physical qubits), scheduled as soon as their qubits are free."""
    clock: dict[int, float] = {}
    busy: dict[int, float] = {}
    log_c, two_q = 0.0, 0
    for name, qs in ops:
        cal = gates.get((name, qs))
        duration = (cal.duration or 0.0) if cal else 0.0
        error = (cal.error or 0.0) if cal else 0.0
        log_c += math.log(max(_gate_lambda(snapshot, qs, error, duration), 1e-300))
        start = max(clock.get(q, 0.0) for q in qs)
        for q in qs:
            clock[q] = start + duration
            busy[q] = busy.get(q, 0.0) + duration
        two_q += len(qs) == 2
    return log_c, clock, busy, two_q


def block_noise(snapshot: Snapshot, compiled: QuantumCircuit) -> BlockNoise:
    """log contrast (sum of log lambda_g over every gate), critical-path duration, per-qubit
    busy time, two-qubit gates and depth of one compiled block."""
    gates = {(g.gate, g.qubits): g for g in snapshot.gates}
    ops = ((i.operation.name, tuple(compiled.find_bit(q).index for q in i.qubits)) for i in compiled.data)
    log_c, clock, busy, two_q = _walk(snapshot, gates, ((name, qs) for name, qs in ops if name not in _SKIP))
    depth = compiled.depth(lambda i: i.operation.name not in _SKIP)
    return BlockNoise(log_c, max(clock.values(), default=0.0), busy, two_q, depth)


def word_noise(
    snapshot: Snapshot, noises: dict[str, BlockNoise], counts: dict[str, int], measured: int, idle: bool = True,
) -> CircuitNoise:
    """Noise of a word of blocks (``qbo.noise.blocks.power_word``) in closed form:
    log c = sum_b n_b log c_b, duration = sum_b n_b d_b (barriers separate the blocks), and
    with ``idle`` every qubit the word touches decays over (duration - its busy time)."""
    used = {b: n for b, n in counts.items() if n}
    log_c = sum(n * noises[b].log_contrast for b, n in used.items())
    total = sum(n * noises[b].duration_s for b, n in used.items())
    busy: dict[int, float] = {}
    for b, n in used.items():
        for q, t in noises[b].busy_s.items():
            busy[q] = busy.get(q, 0.0) + n * t
    if idle:
        for q in set(busy) | {measured}:
            log_c += math.log(max(_thermal_lambda(snapshot, q, max(total - busy.get(q, 0.0), 0.0)), 1e-300))
    two_q = sum(n * noises[b].two_qubit_gates for b, n in used.items())
    depth = sum(n * noises[b].depth for b, n in used.items())
    return CircuitNoise(math.exp(log_c), total, two_q, measured, depth)


def oracle_block_noise(
    snapshot: Snapshot, oracle: Oracle, compiler: TranspileCache | None = None,
) -> tuple[dict[str, BlockNoise], CompiledBlocks]:
    """Noise of each compiled block of ``oracle`` (read once per compiler and oracle)."""
    compiler = compiler or compiler_for(snapshot)
    blocks = compiler.blocks_of(power_circuit(oracle, 1))
    key = ("block_noise", oracle.key, snapshot.name, snapshot.timestamp)
    if key not in compiler.derived or set(compiler.derived[key]) != set(blocks.blocks):  # type: ignore[arg-type]
        compiler.derived[key] = {name: block_noise(snapshot, c) for name, c in blocks.blocks.items()}
    return compiler.derived[key], blocks  # type: ignore[return-value]


def power_noise(
    snapshot: Snapshot, oracle: Oracle, k: int, scale: int = 1, compiler: TranspileCache | None = None,
    idle: bool = True,
) -> CircuitNoise:
    """Predicted noise of Q^k A folded at ``scale`` (``qbo.mitigation.folding``), from the blocks."""
    noises, blocks = oracle_block_noise(snapshot, oracle, compiler)
    return word_noise(snapshot, noises, block_counts(k, scale), blocks.objective, idle)


@caches.lru(maxsize=16)
def compiler_for(snapshot: Snapshot, optimization_level: int = 1, seed: int = 0) -> TranspileCache:
    """The shared transpile cache of a snapshot: compiled blocks are made once per process."""
    return TranspileCache(snapshot_target(snapshot), optimization_level, seed)


def predicted_pads(
    snapshot: Snapshot, oracle: Oracle, ks: Sequence[int], scales: Sequence[int] = (1,),
    coef: Sequence[float] = (1.0,), readout_corrected: bool = False, compiler: TranspileCache | None = None,
) -> tuple[float, ...]:
    """``residual_bias`` of every power in ``ks`` from the depth model's contrasts at ``scales``
    (``qbo.noise.depth.power_noise``: the oracle's block noise read once, each power in closed form)."""
    noises, blocks = oracle_block_noise(snapshot, oracle, compiler or compiler_for(snapshot))
    conf = snapshot_confusion(snapshot, blocks.objective)
    pads = []
    for k in ks:
        contrasts = [word_noise(snapshot, noises, block_counts(int(k), int(s)), blocks.objective).contrast for s in scales]
        pads.append(residual_bias(contrasts, coef, conf.p01, conf.p10, readout_corrected))
    return tuple(pads)


def needed_k(epsilon_unit: float) -> int:
    """The largest k IAE can use for eps: K = 4k + 2 <= pi / (2 eps)."""
    if not epsilon_unit > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon_unit}")
    return max(0, int((math.pi / (2 * epsilon_unit) - 2) // 4))


def choose_k_max(
    snapshot: Snapshot, oracle: Oracle, epsilon_unit: float, fraction: float = 0.5,
    idle: bool = True, readout_mitigated: bool = False,
) -> int | None:
    """Largest k <= needed_k(eps) with bias_bound(k) <= fraction * eps; None if none."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    rows = depth_table(snapshot, oracle, range(needed_k(epsilon_unit) + 1), idle, readout_mitigated)
    ok = [r.k for r in rows if r.bias_bound <= fraction * epsilon_unit]
    return max(ok) if ok else None
