"""Noise study: QMC estimators on the shipped device models at two budgets (issue 9, item 8).

Snapshots: the shipped ones by name, or ``fake:FakeKingston`` (any qiskit-ibm-runtime fake
backend, exported; device models no test ships). Oracles: ``bernoulli`` (1 qubit),
``entangled`` (3), ``discrete`` (4 qubits: 8 equally likely values with mean a).

For every snapshot x oracle, N amplitudes x R replicates, each method runs at two budgets:
B1 = the mean honest calls unmitigated IAE spends at eps = 0.01, and B2 = the mean honest
calls zne+rem IAE spends at eps = 0.01. IAE reaches another budget through its own cost
model (the eps whose ``expected_calls`` is the budget); MLAE (``make_estimator("mlae")``,
when qbo.qmc has it) takes the budget directly. Columns: method, budget, honest calls
(mean, every shot of every power at scale (2k + 1), k = 0 included), MAE, coverage of the
reported interval with its Wilson 95% lower bound, mean interval width (amplitude units).

Probabilities are exact, then sampled binomially (as the issue's prototype did): every
circuit an estimator asks for is the compiled circuit the Aer executor would run
(``qbo.noise.blocks``: A, Q, A^dagger, Q^dagger compiled once per oracle), and its P(1) is
computed from the exact noisy superoperator of each compiled block under the snapshot's Aer
noise model (the errors ``qiskit_aer.noise.device.basic_device_gate_errors`` builds, after
every gate, as Aer applies them), composed for Q^k A or its folds, then passed through the
measured qubit's readout confusion. Each study first checks this against Aer's
density-matrix simulation of the same compiled circuits (k = 2, and k = 1 folded at scale 3;
the largest difference is printed) and costs microseconds per power, so 100s of amplitudes
run in minutes.

Coherent-error study (``--coherent``, item 3): a ZZ over-rotation RZZ(delta) after every
two-qubit gate of the entangled oracle. For k = 0..K the exact P(1) is fitted by the decay
model P(k) = readout(1/2 + A0 r^k (sin^2((2k + 1) theta) - 1/2)) (theta, A0, r free); the
table gives the expected deviance of that fit at ``--gof-shots`` shots per power (the
deviance the counts would show on average beyond its chi-square reference: the
non-centrality), its p-value on K + 1 - 3 dof, and the amplitude error of the fit, without
and with Pauli twirling (the exact twirl average: each two-qubit gate's error channel
replaced by its Pauli twirl, the limit of ``--twirl``'s random twirls).

Rows. ``[no model]``: IAE as the Python API runs it without a snapshot (it assumes a noiseless
device; these rows define B1 and B2). ``[dev]``: what qbo runs where it knows the device model
(``make_estimator(..., snapshot=...)``, as ``qbo estimate`` / ``qbo run`` on ``aer:NAME``):
calibration-aware IAE with mitigation none, rem and zne+rem (``qbo.qmc.capped``: depth cap,
every round padded by the residual bias the depth model allows) at B1 and B2 through its own
cost model (which aims at a reachable eps, so such a row may spend less than the budget), and
MLAE given the budget, without and with ZNE's folds (scales 1, 3) as extra likelihood terms
(``mlae+zne``; every folded shot counts s (2k + 1) calls of the budget). Extra columns: the share of estimates with ``reached_epsilon`` True,
the coverage among those, the median ``diagnostics['calls_for_epsilon']`` ("unreachable":
eps below the noise floor), and "misfit": MLAE estimates whose goodness of fit failed (their
interval is widened). Each cell also prints a pad check: the largest |exact bias| / pad
over 10 of its amplitudes and k <= 12 (below 1: the pads hold on the exact channels).

BO under noise (``--bo-trials N``): q-gp-ucb with the noise-aware estimator ('auto', MLAE on a
device model), q-gp-ucb with (calibration-aware) IAE, and gp-ucb on synthetic-bernoulli,
through qbo's runner on ``aer:SNAPSHOT`` (the path of ``qbo run``): final regret mean, its
standard error, median, calls, stages, and the QMC stages that did not reach eps_s (weighed
by the half-width they reached).

    python bench/noise.py [--amplitudes 100] [--replicates 2] [--snapshots a,b] [--oracles bernoulli,entangled]
                          [--eps 0.01] [--alpha 0.05] [--seed 0] [--jobs 1] [--coherent] [--deltas 0,0.05,0.1]
                          [--bo-trials 0] [--bo-budget 3000] [--bo-snapshot fake_torino] [--no-study]
                          [--fold-fit] [--scales 1,3,5] [--k-top 20] [--gof-shots 1000]

Folded decay fits (``--fold-fit``): which contrast model of a folded power C (C^dagger C)^n
the exact channels follow (``fold_fit_study``), for mlae+zne's likelihood.

The full study (issue 9, item 8): ``python bench/noise.py --jobs 2 --bo-trials 5 --bo-budget 10000`` (all four
snapshots x both oracles, 100 amplitudes x 2 replicates).

Oracles (both encode the amplitude a exactly, window (0, 1), so amplitude = reward):
- bernoulli: A = RY(2 arcsin sqrt a) on one qubit; no two-qubit gate at all.
- entangled: RY(2 arcsin sqrt a) on qubit 2, then CX(2, 1), CX(1, 0) (objective qubit 0):
  every Grover step runs 16 two-qubit gates, the bias-dominated regime.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # 64 x 64 products: threads only contend (measured 4x slower)

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402

import numpy as np  # noqa: E402
from qiskit import QuantumCircuit  # noqa: E402
from scipy.optimize import least_squares  # noqa: E402
from scipy.stats import chi2  # noqa: E402

from qbo.execution.base import Counts, check_shots  # noqa: E402
from qbo.experiments.fanout import fan_out  # noqa: E402
from qbo.grover import BLOCKS_KEY, ORACLE_KEY, POWER_KEY, power_circuit  # noqa: E402
from qbo.mitigation import make_mitigation  # noqa: E402
from qbo.noise.depth import predicted_pads  # noqa: E402
from qbo.qmc.capped import CalibrationAwareIAE  # noqa: E402
from qbo.noise import Snapshot, load_snapshot  # noqa: E402
from qbo.noise.aer_model import snapshot_target  # noqa: E402
from qbo.noise.depth import power_noise  # noqa: E402
from qbo.noise.blocks import SCALE_KEY, CompiledBlocks, TranspileCache, power_word  # noqa: E402
from qbo.noise.readout import snapshot_confusion  # noqa: E402
from qbo.noise import export_from_fake  # noqa: E402
from qbo.oracles import Oracle, bernoulli, discrete  # noqa: E402
from qbo.qmc import IterativeAmplitudeEstimation, make_estimator  # noqa: E402

SNAPSHOTS = ("fake_brisbane", "fake_sherbrooke", "fake_torino", "fake_fez")
ORACLES = ("bernoulli", "entangled", "discrete")
_SKIP = ("barrier", "delay", "measure")


def entangled(a: float, qubits: int = 3) -> Oracle:
    """RY(2 arcsin sqrt a) on qubit n - 1, then CX(q, q - 1) down to the objective qubit 0."""
    if qubits < 2:
        raise ValueError(f"an entangled oracle needs >= 2 qubits, got {qubits}")
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"amplitude must be in [0, 1], got {a}")
    circuit = QuantumCircuit(qubits, name="A")
    circuit.ry(2.0 * math.asin(math.sqrt(a)), qubits - 1)
    for q in range(qubits - 1, 0, -1):
        circuit.cx(q, q - 1)
    return Oracle(circuit, objective=0, low=0.0, high=1.0, mean=float(a), spec=f"entangled{qubits}:{float(a)!r}")


def discrete8(a: float) -> Oracle:
    """A 4-qubit discrete oracle (8 equally likely values, 3 outcome qubits and the objective)
    with mean a: values a + c_w min(a, 1 - a), c_w = (w - 3.5) / 3.5, on the window (0, 1)."""
    spread = min(a, 1.0 - a)
    values = [min(1.0, max(0.0, a + (w - 3.5) / 3.5 * spread)) for w in range(8)]
    return discrete(values, [0.125] * 8, window=(0.0, 1.0))


def make_oracle(kind: str, a: float, qubits: int = 3) -> Oracle:
    if kind == "bernoulli":
        return bernoulli(a)
    if kind == "entangled":
        return entangled(a, qubits)
    if kind == "discrete":
        return discrete8(a)
    raise ValueError(f"oracle must be one of {', '.join(ORACLES)}, got '{kind}'")


def snapshot_of(name: str) -> Snapshot:
    """A shipped snapshot by name, or ``fake:FakeKingston`` exported from qiskit-ibm-runtime's
    fake backend (device models no test ships)."""
    return export_from_fake(name.removeprefix("fake:")) if name.startswith("fake:") else load_snapshot(name)


# ---------------------------------------------------------------- exact channels of compiled blocks


def restrict(snapshot: Snapshot, qubits: Sequence[int]) -> tuple[Snapshot, dict[int, int]]:
    """The snapshot on ``qubits`` only, renumbered 0..m-1 (and the renumbering)."""
    index = {q: i for i, q in enumerate(qubits)}
    gates = tuple(dataclasses.replace(g, qubits=tuple(index[q] for q in g.qubits))
                  for g in snapshot.gates if set(g.qubits) <= set(index))
    edges = tuple((index[a], index[b]) for a, b in snapshot.coupling_map if a in index and b in index)
    small = dataclasses.replace(snapshot, num_qubits=len(index), qubits=tuple(snapshot.qubits[q] for q in qubits),
                                gates=gates, coupling_map=edges)
    return small, index


class BlockChannels:
    """Exact noisy superoperators of an oracle's compiled blocks on one snapshot.

    ``errors`` maps (gate, compact qubits) to the Aer error superoperator applied after the
    gate; ``extra`` (optional) maps a gate name to a unitary superoperator appended after
    every such gate (the injected coherent error); ``twirl`` replaces every two-qubit error
    (coherent part included) by its Pauli twirl.
    """

    def __init__(self, blocks: CompiledBlocks, index: dict[int, int], errors: dict, extra: dict | None = None,
                 twirl: bool = False) -> None:
        from qiskit.quantum_info import SuperOp

        self.m = len(index)
        self.dim = 2**self.m
        self.ops: dict[str, np.ndarray] = {}
        for name, block in blocks.blocks.items():
            total = SuperOp(np.eye(4**self.m), input_dims=(2,) * self.m, output_dims=(2,) * self.m)
            for instruction in block.data:
                gate = instruction.operation.name
                if gate in _SKIP:
                    continue
                qs = [index[block.find_bit(q).index] for q in instruction.qubits]
                total = total.compose(SuperOp(instruction.operation), qargs=qs)
                error = errors.get((gate, tuple(qs)))
                if extra and gate in extra:
                    error = extra[gate] if error is None else error.compose(extra[gate])
                if error is not None:
                    if twirl and len(qs) == 2:
                        error = pauli_twirl(error)
                    total = total.compose(error, qargs=qs)
            self.ops[name] = total.data
        self.objective = index[blocks.objective]
        self.objective_physical = blocks.objective
        self._mask = np.array([(i >> self.objective) & 1 for i in range(self.dim)], dtype=bool)
        start = np.zeros(self.dim * self.dim, dtype=complex)
        start[0] = 1.0
        self._start = self.ops["A"] @ start
        self._eig: dict[str, tuple] = {}
        self._cache: dict[tuple[int, int], float] = {}

    def _p(self, vec: np.ndarray) -> float:
        rho = vec.reshape(self.dim, self.dim, order="F")
        return float(np.clip(np.real(np.diag(rho))[self._mask].sum(), 0.0, 1.0))

    def _power(self, block: str, k: int, vec: np.ndarray) -> np.ndarray:
        """S^k vec by the eigendecomposition S = V diag(lam) V^-1 (one per block), so any
        power costs one dense product; checked against repeated products in ``spot_check``."""
        if block not in self._eig:
            lam, vecs = np.linalg.eig(self.ops[block])
            self._eig[block] = (lam, vecs, np.linalg.inv(vecs))
        lam, vecs, inv = self._eig[block]
        return vecs @ (lam**k * (inv @ vec))

    def probability(self, k: int, scale: int = 1) -> float:
        """Readout-free P(objective = 1) of C (C^dagger C)^n, C = Q^k A, n = (scale - 1) / 2."""
        if (k, scale) not in self._cache:
            vec = self._power("Q", k, self._start)
            for _ in range((scale - 1) // 2):
                vec = self._power("Qdg", k, vec)
                vec = self.ops["A"] @ (self.ops["Adg"] @ vec)
                vec = self._power("Q", k, vec)
            self._cache[(k, scale)] = self._p(vec)
        return self._cache[(k, scale)]

    def probability_by_products(self, k: int, scale: int = 1) -> float:
        """The same probability by repeated products (the reference for ``spot_check``)."""
        vec = self._start
        for block in power_word(k, scale)[1:]:
            vec = self.ops[block] @ vec
        return self._p(vec)


def pauli_twirl(error) -> "object":
    """(1/16) sum_P P E P over the two-qubit Paulis P: the Pauli twirl of a channel E."""
    from qiskit.quantum_info import Pauli, SuperOp

    total = None
    for label in ("II", "IX", "IY", "IZ", "XI", "XX", "XY", "XZ", "YI", "YX", "YY", "YZ", "ZI", "ZX", "ZY", "ZZ"):
        p = SuperOp(Pauli(label))
        term = p.compose(error).compose(p)
        total = term if total is None else total + term
    return total / 16.0


class DeviceModel:
    """One snapshot: compiled blocks (shared compiler), exact channels per oracle, readout."""

    def __init__(self, snapshot: Snapshot, extra_gate: str | None = None, delta: float = 0.0, twirl: bool = False) -> None:
        from qiskit.circuit.library import RZZGate
        from qiskit.quantum_info import SuperOp

        self.snapshot = snapshot
        self.compiler = TranspileCache(snapshot_target(snapshot))
        self.channels: dict[str, BlockChannels] = {}
        self._errors: dict[tuple[int, ...], tuple[dict[int, int], dict]] = {}
        two_q = [g for g in snapshot.basis_gates if g in ("cz", "ecr", "cx")]
        self.extra = {two_q[0]: SuperOp(RZZGate(delta))} if delta and two_q else None
        self.twirl = twirl

    def add(self, oracle: Oracle) -> BlockChannels:
        if oracle.key not in self.channels:
            from qiskit_aer.noise.device import basic_device_gate_errors

            blocks = self.compiler.blocks_of(power_circuit(oracle, 1))
            active = tuple(sorted({b.find_bit(q).index for b in blocks.blocks.values() for i in b.data
                                   for q in i.qubits if i.operation.name not in _SKIP} | {blocks.objective}))
            if active not in self._errors:
                from qiskit.quantum_info import SuperOp

                small, index = restrict(self.snapshot, active)
                errors = {(n, tuple(q)): SuperOp(e) for n, q, e in
                          basic_device_gate_errors(target=snapshot_target(small), gate_error=True, thermal_relaxation=True)}
                self._errors[active] = (index, errors)
            index, errors = self._errors[active]
            self.channels[oracle.key] = BlockChannels(blocks, index, errors, self.extra, self.twirl)
            self.confusion = snapshot_confusion(self.snapshot, blocks.objective)
        return self.channels[oracle.key]


class ExactBinomialExecutor:
    """An executor on exact compiled-circuit probabilities, sampled binomially (module docstring)."""

    def __init__(self, model: DeviceModel, seed: int) -> None:
        self.model = model
        self.rng = np.random.default_rng(seed)
        self.target = f"aer:{model.snapshot.name}"

    @property
    def transpile_cache(self) -> TranspileCache:
        return self.model.compiler

    def compiled(self, circuit: QuantumCircuit) -> QuantumCircuit:
        return self.model.compiler(circuit)

    def run(self, circuits: Sequence[QuantumCircuit], shots: Sequence[int]) -> list[Counts]:
        shots = check_shots(circuits, shots)
        out = []
        for circuit, n in zip(circuits, shots):
            meta = circuit.metadata or {}
            if BLOCKS_KEY not in meta:
                raise ValueError(f"the exact bench executor runs Grover powers only, got '{circuit.name}'")
            key = str(meta[ORACLE_KEY]).split("|fold")[0]
            p = self.model.channels[key].probability(int(meta[POWER_KEY]), int(meta.get(SCALE_KEY, 1)))
            ones = int(self.rng.binomial(n, float(self.model.confusion.observe(p))))
            out.append({k: v for k, v in (("1", ones), ("0", n - ones)) if v})
        return out


# ---------------------------------------------------------------- the study


def spot_check(model: DeviceModel, oracle: Oracle) -> float:
    """max |P_channels - P_Aer density matrix| over Q^2 A and (Q A) folded at scale 3, and
    |eigendecomposition power - repeated products| at k = 40 and 400."""
    from qiskit_aer import AerSimulator

    from qbo.mitigation.folding import folded_power_circuit
    from qbo.noise.aer_model import noise_model

    channels = model.add(oracle)
    layout = model.compiler.layout(oracle.num_qubits)
    sim = AerSimulator(method="density_matrix", noise_model=noise_model(model.snapshot, qubits=layout, readout_error=False))
    worst = 0.0
    for k, scale in ((2, 1), (1, 3)):
        compiled = model.compiler(folded_power_circuit(oracle, k, scale))
        probe = compiled.remove_final_measurements(inplace=False)
        probe.save_probabilities([model.add(oracle).objective_physical], label="p")
        p = float(sim.run(probe, shots=1).result().data(0)["p"][1])
        worst = max(worst, abs(p - channels.probability(k, scale)))
    for k, scale in ((40, 1), (400, 1), (20, 3)):
        worst = max(worst, abs(channels.probability(k, scale) - channels.probability_by_products(k, scale)))
    return worst


def wilson_lower(successes: int, n: int, z: float = 1.959963984540054) -> float:
    """Wilson score 95% lower bound of a proportion (Wilson 1927)."""
    if n == 0:
        return float("nan")
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def eps_for_budget(make, budget: float, lo: float = 2e-4, hi: float = 0.45, cost=None) -> float:
    """The eps whose cost model (``expected_calls``, or ``cost(estimator)``) spends ``budget``
    (bisection in log eps; a padded estimator's cost need not be monotone, so its calls are
    printed as spent)."""
    for _ in range(24):
        mid = math.sqrt(lo * hi)
        est = make(mid)
        spent = est.expected_calls(mid) if cost is None else cost(est)
        if spent > budget:
            lo = mid
        else:
            hi = mid
    return hi


def mlae_available() -> bool:
    try:
        make_estimator("mlae", 0.01, 0.05)
    except ValueError:
        return False
    return True


def run_cell(estimator, oracles: list[Oracle], model: DeviceModel, replicates: int, seed: int) -> dict:
    errors, covered, widths, calls, reached, needed, floors = [], [], [], [], [], [], []
    flagged = 0  # estimates whose goodness of fit says the model does not describe the counts
    cpu = time.process_time()
    for r in range(replicates):
        executor = ExactBinomialExecutor(model, seed=seed * 1000 + r)
        for oracle in oracles:
            out = estimator.estimate(oracle, executor)
            a = float(oracle.mean)
            errors.append(abs(out.value - a))
            covered.append(out.ci_low <= a <= out.ci_high)
            widths.append(out.ci_high - out.ci_low)
            calls.append(out.oracle_calls)
            reached.append(out.reached_epsilon)
            flagged += out.diagnostics.get("model_fits", True) is False
            if "calls_for_epsilon" in out.diagnostics:
                c = out.diagnostics["calls_for_epsilon"]
                needed.append(float("inf") if c is None else float(c))
                floors.append(float(out.diagnostics.get("epsilon_floor", float("nan"))))
    n = len(errors)
    hit = [c for c, r in zip(covered, reached) if r]
    return {"calls": float(np.mean(calls)), "mae": float(np.mean(errors)), "mae_se": float(np.std(errors) / math.sqrt(n)),
            "coverage": float(np.mean(covered)), "wilson": wilson_lower(int(np.sum(covered)), n),
            "width": float(np.mean(widths)), "n": n, "reached": float(np.mean(reached)),
            "cov_reached": float(np.mean(hit)) if hit else float("nan"),
            "needed": float(np.median(needed)) if needed else float("nan"), "cpu": time.process_time() - cpu,
            "floor": float(np.median(floors)) if floors else float("nan"), "flagged": flagged}


def study(name: str, kind: str, amplitudes: np.ndarray, replicates: int, eps: float, alpha: float, seed: int) -> list[tuple]:
    snapshot = snapshot_of(name)
    model = DeviceModel(snapshot)
    oracles = [make_oracle(kind, float(a)) for a in amplitudes]
    for oracle in oracles:
        model.add(oracle)
    lines = [f"{name} x {kind}: exact channels vs Aer density matrix, max |dP| = {spot_check(model, oracles[0]):.1e}",
             pad_check(model, snapshot, oracles[:: max(1, len(oracles) // 10)])]
    zr = make_mitigation("zne+rem", snapshot)
    iae = lambda e: IterativeAmplitudeEstimation(e, alpha)  # noqa: E731
    iae_zr = lambda e: IterativeAmplitudeEstimation(e, alpha, mitigation=zr)  # noqa: E731
    rows = []
    base = run_cell(iae(eps), oracles, model, replicates, seed)
    mitigated = run_cell(iae_zr(eps), oracles, model, replicates, seed + 1)
    budgets = {"B1": base["calls"], "B2": mitigated["calls"]}
    rows.append(("iae [no model]", "B1", budgets["B1"], f"eps={eps}", base))
    rows.append(("iae+zne+rem [no model]", "B2", budgets["B2"], f"eps={eps}", mitigated))
    e2 = eps_for_budget(iae, budgets["B2"])
    rows.append(("iae [no model]", "B2", budgets["B2"], f"eps={e2:.4f}", run_cell(iae(e2), oracles, model, replicates, seed + 2)))
    e1 = eps_for_budget(iae_zr, budgets["B1"])
    rows.append(("iae+zne+rem [no model]", "B1", budgets["B1"], f"eps={e1:.4f}", run_cell(iae_zr(e1), oracles, model, replicates, seed + 3)))
    # what qbo offers on a device model (make_estimator(..., snapshot)): IAE with and without
    # mitigation, depth-capped and padded by the residual bias the depth model allows
    for mit in ("none", "rem", "zne+rem"):
        m = make_mitigation(mit, snapshot)
        offered = lambda e, m=m: CalibrationAwareIAE(IterativeAmplitudeEstimation(e, alpha, mitigation=m), snapshot)  # noqa: E731
        label = "iae" if mit == "none" else f"iae+{mit}"
        for b in ("B1", "B2"):
            e_b = eps_for_budget(offered, budgets[b], cost=lambda est: est.planned_calls(oracles[0]))
            rows.append((f"{label} [dev]", b, budgets[b], f"eps={e_b:.4f}",
                         run_cell(offered(e_b), oracles, model, replicates, seed + 5)))
    if mlae_available():
        for label in ("B1", "B2"):
            est = make_estimator("mlae", eps, alpha, snapshot=snapshot)
            if hasattr(est, "budget"):
                est = dataclasses.replace(est, budget=int(budgets[label]), epsilon=min(eps, 1e-4))
            rows.append(("mlae [dev]", label, budgets[label], "budget", run_cell(est, oracles, model, replicates, seed + 4)))
        # ZNE's folds (scales 1, 3) as extra terms of MLAE's likelihood, same budgets and seeds
        zne = make_mitigation("zne", snapshot)
        for label in ("B1", "B2"):
            est = dataclasses.replace(make_estimator("mlae", eps, alpha, snapshot=snapshot, mitigation=zne),
                                      budget=int(budgets[label]), epsilon=min(eps, 1e-4))
            rows.append(("mlae+zne [dev]", label, budgets[label], "budget", run_cell(est, oracles, model, replicates, seed + 4)))
    return rows, lines


def capped_deep(name: str, kind: str, amplitudes: np.ndarray, eps: float, alpha: float, seed: int) -> None:
    """Calibration-aware IAE with mitigation none and zne+rem at ``eps`` (one seed per amplitude):
    the calls it spent against its own planned calls, the widths, coverage and the floor."""
    snapshot = snapshot_of(name)
    model = DeviceModel(snapshot)
    oracles = [make_oracle(kind, float(a)) for a in amplitudes]
    for oracle in oracles:
        model.add(oracle)
    for mit in ("none", "zne+rem"):
        est = CalibrationAwareIAE(IterativeAmplitudeEstimation(eps, alpha, mitigation=make_mitigation(mit, snapshot)), snapshot)
        outs = [est.estimate(o, ExactBinomialExecutor(model, seed=seed * 1000 + i)) for i, o in enumerate(oracles)]
        ratio = max(out.oracle_calls / max(est.planned_calls(o), 1.0) for out, o in zip(outs, oracles))
        covered = sum(out.ci_low <= float(o.mean) <= out.ci_high for out, o in zip(outs, oracles))
        widths = [out.ci_high - out.ci_low for out in outs]
        calls = [out.oracle_calls for out in outs]
        floors = [out.diagnostics["epsilon_floor"] for out in outs]
        skipped = sum(bool(out.diagnostics.get("mitigation_skipped")) for out in outs)
        wide_cheap = sum(w > 0.5 and c < 1000 for w, c in zip(widths, calls))
        print(f"{name} x {kind} iae+{mit} [dev] eps={eps}: calls {min(calls)}..{max(calls)} (0 calls: {calls.count(0)}), "
              f"max calls/planned {ratio:.2f}, width {min(widths):.3f}..{max(widths):.3f} "
              f"(> 0.5 after < 1000 calls: {wide_cheap}), covered {covered}/{len(outs)} "
              f"(Wilson LB {wilson_lower(covered, len(outs)):.1%}), floor {min(floors):.3f}..{max(floors):.3f}, "
              f"plain rounds ran {skipped}/{len(outs)}", flush=True)


def pad_check(model: DeviceModel, snapshot: Snapshot, oracles: list[Oracle], k_top: int = 12) -> str:
    """max over oracles and k <= k_top of |exact bias| / pad, for the pads qbo pads rounds with
    (``qbo.qmc.capped.residual_bias``): none (readout included), rem, zne+rem (scales 1, 3,
    Richardson); below 1: the pads hold on the exact channels. In brackets, the same ratio for
    the depolarising model's pads that qbo used before (none: max(p01, p10) + g (1 - c) / 2,
    rem: (1 - c) / 2, zne+rem: |1 - c_eff| / 2, c_eff = 1.5 c_1 - 0.5 c_3)."""
    worst = {"none": 0.0, "rem": 0.0, "zne+rem": 0.0}
    old = dict(worst)
    ks = range(k_top + 1)
    for oracle in oracles:
        channels, conf = model.add(oracle), model.confusion
        theta = math.asin(math.sqrt(float(oracle.mean)))
        pads = {"none": predicted_pads(snapshot, oracle, ks, compiler=model.compiler),
                "rem": predicted_pads(snapshot, oracle, ks, readout_corrected=True, compiler=model.compiler),
                "zne+rem": predicted_pads(snapshot, oracle, ks, (1, 3), (1.5, -0.5), True, model.compiler)}
        for k in ks:
            ideal = math.sin((2 * k + 1) * theta) ** 2
            p1, p3 = channels.probability(k, 1), channels.probability(k, 3)
            c1 = power_noise(snapshot, oracle, k, 1, model.compiler).contrast
            c3 = power_noise(snapshot, oracle, k, 3, model.compiler).contrast
            depolarising = {"none": max(conf.p01, conf.p10) + conf.gain * (1 - c1) / 2, "rem": (1 - c1) / 2,
                            "zne+rem": abs(1 - (1.5 * c1 - 0.5 * c3)) / 2}
            bias = {"none": abs(float(conf.observe(p1)) - ideal), "rem": abs(p1 - ideal),
                    "zne+rem": abs(1.5 * p1 - 0.5 * p3 - ideal)}
            for key in worst:
                worst[key] = max(worst[key], bias[key] / max(pads[key][k], 1e-15))
                old[key] = max(old[key], bias[key] / max(depolarising[key], 1e-15))
    parts = ", ".join(f"{key} {worst[key]:.2f} [{old[key]:.2f}]" for key in worst)
    return (f"pad check (max |exact bias| / pad over {len(oracles)} amplitudes, k <= {k_top}; < 1 holds; "
            f"[depolarising pad]): {parts}")


def pad_checks(snapshots: list[str], kinds: list[str], amplitudes: np.ndarray) -> None:
    """``--pad-check``: only the pad checks, every snapshot x oracle."""
    for name in snapshots:
        snapshot = snapshot_of(name)
        model = DeviceModel(snapshot)
        for kind in kinds:
            oracles = [make_oracle(kind, float(a)) for a in amplitudes]
            print(f"{name} x {kind}: {pad_check(model, snapshot, oracles)}")


def print_study(name: str, kind: str, rows: list[tuple], lines: list[str], elapsed: float) -> None:
    print()
    for line in lines:
        print(line)
    print(f"\n{name} x {kind}  ({rows[0][4]['n']} estimates per row, {elapsed:.0f} s)")
    print(f"{'method':22s} {'budget':>11s} {'how':>11s} {'honest calls':>12s} {'MAE':>9s} {'+-se':>8s} "
          f"{'coverage':>8s} {'Wilson95':>8s} {'width':>8s} {'reached':>7s} {'cov|rch':>7s} {'calls for eps (median)':>22s} {'floor':>7s} {'CPU s':>6s} {'misfit':>6s}")
    for method, label, budget, how, r in rows:
        needed = r["needed"]
        need = "-" if math.isnan(needed) else ("unreachable" if math.isinf(needed) else f"{needed:.3g}")
        print(f"{method:22s} {label:>3s}={budget:7.0f} {how:>11s} {r['calls']:12.0f} {r['mae']:9.5f} {r['mae_se']:8.5f} "
              f"{r['coverage']:8.1%} {r['wilson']:8.1%} {r['width']:8.4f} {r['reached']:7.0%} {r['cov_reached']:7.1%} {need:>22s} {r['floor']:7.4f} {r['cpu']:6.1f} {r['flagged']:6d}")


# ---------------------------------------------------------------- coherent error and twirling


def decay_fit(ks: np.ndarray, p_obs: np.ndarray, p01: float, p10: float, a_true: float) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares fit of P(k) = p01 + g (1/2 + A0 r^k (sin^2((2k+1) theta) - 1/2)); returns
    (theta, A0, r) and the fitted P(k). Started at the true theta and (1, 0.95)."""
    g = 1.0 - p01 - p10

    def model(x):
        theta, a0, r = x
        return p01 + g * (0.5 + a0 * r**ks * (np.sin((2 * ks + 1) * theta) ** 2 - 0.5))

    start = np.array([math.asin(math.sqrt(a_true)), 1.0, 0.95])
    fit = least_squares(lambda x: model(x) - p_obs, start, bounds=([0.0, 0.0, 0.0], [math.pi / 2, 1.0, 1.0]))
    return fit.x, model(fit.x)


def expected_deviance(p: np.ndarray, q: np.ndarray, shots: int) -> float:
    """The binomial deviance's mean excess for counts drawn from p and fitted by q:
    2 N sum_k KL(p_k || q_k) (the non-centrality of its chi-square)."""
    p, q = np.clip(p, 1e-12, 1 - 1e-12), np.clip(q, 1e-12, 1 - 1e-12)
    return float(2 * shots * np.sum(p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))))


def coherent_study(name: str, deltas: list[float], amplitudes: np.ndarray, k_top: int, shots: int) -> None:
    snapshot = snapshot_of(name)
    ks = np.arange(k_top + 1)
    dof = len(ks) - 3
    print(f"\ncoherent ZZ over-rotation after every two-qubit gate, entangled oracle, {name}, k = 0..{k_top}, "
          f"{len(amplitudes)} amplitudes; decay-model fit, expected deviance at {shots} shots per power (dof {dof})")
    print("p* = chi-square p-value of the mean deviance (dof + non-centrality); share = amplitudes with p* < 0.01")
    print(f"{'delta (rad)':>11s} {'twirl':>6s} {'mean dev':>10s} {'median p*':>9s} {'share p*<.01':>12s} "
          f"{'|a_fit - a| mean':>16s} {'max':>8s} {'fitted r':>9s}")
    for delta in deltas:
        for twirl in (False, True):
            model = DeviceModel(snapshot, delta=delta, twirl=twirl)
            devs, pvals, errs, rs = [], [], [], []
            for a in amplitudes:
                channels = model.add(entangled(float(a)))
                conf = model.confusion
                p = np.array([float(conf.observe(channels.probability(int(k)))) for k in ks])
                x, fitted = decay_fit(ks, p, conf.p01, conf.p10, float(a))
                dev = expected_deviance(p, fitted, shots)
                devs.append(dev)
                pvals.append(float(chi2.sf(dof + dev, dof)))
                errs.append(abs(math.sin(x[0]) ** 2 - a))
                rs.append(x[2])
            print(f"{delta:11.3f} {str(twirl):>6s} {np.mean(devs):10.1f} {np.median(pvals):9.3g} "
                  f"{np.mean(np.array(pvals) < 0.01):12.0%} {np.mean(errs):16.5f} {np.max(errs):8.5f} {np.mean(rs):9.4f}")


FOLD_MODELS = ("per-call", "block", "block@prior", "own-rate")


def fold_contrast(ks: np.ndarray, scales: np.ndarray, a0: float, r: float, model: str = "per-call",
                  extra: float | None = None) -> np.ndarray:
    """Contrast of Q^k A folded at scale s (n = (s - 1) / 2 folds) under the decay models:
    per-call, A0 r^((s(2k+1)-1)/2) (every oracle call decays by sqrt r); block,
    A0 r^(s k) b^n (each fold C^dagger C adds 2k Grover steps and one A^dagger A pair of
    contrast b; per-call is b = r); own-rate, A0 r^k w^(n (2k+1)) (the folded calls decay
    at a rate w of their own; per-call is w = r)."""
    folds = (scales - 1) / 2
    if model == "per-call":
        return a0 * r ** ((scales * (2 * ks + 1) - 1) / 2)
    if model in ("block", "block@prior"):
        return a0 * r ** (scales * ks) * extra**folds
    return a0 * r**ks * extra ** (folds * (2 * ks + 1))


def fold_fit(ks, scales, p_obs, p01, p10, a_true, model: str, shots: int, b_prior: float = 1.0
             ) -> tuple[float, float, np.ndarray]:
    """Fit theta, A0, r (and b or w) to exact P(k, s) by least squares weighted with the
    binomial sd at ``shots`` shots per term ('block@prior': b fixed at ``b_prior``). Returns
    (expected deviance, |a_fit - a|, fitted parameters)."""
    g = 1.0 - p01 - p10
    sd = np.sqrt(np.clip(p_obs * (1 - p_obs), 1e-9, None) / shots)
    free_extra = model in ("block", "own-rate")

    def predict(x):
        extra = x[3] if free_extra else b_prior
        c = fold_contrast(ks, scales, x[1], x[2], model, extra)
        return p01 + g * (0.5 + c * (np.sin((2 * ks + 1) * x[0]) ** 2 - 0.5))

    start = [math.asin(math.sqrt(a_true)), 1.0, 0.95] + ([0.95] if free_extra else [])
    upper = [math.pi / 2, 1.0, 1.0] + ([1.0] if free_extra else [])
    fit = least_squares(lambda x: (predict(x) - p_obs) / sd, start, bounds=([0.0] * len(start), upper))
    return expected_deviance(p_obs, predict(fit.x), shots), abs(math.sin(fit.x[0]) ** 2 - a_true), fit.x


def fold_fit_study(name: str, kinds: list[str], amplitudes: np.ndarray, k_top: int, scales: tuple[int, ...],
                   shots: int) -> None:
    """``--fold-fit``: which decay model describes the folded circuits' exact P(k, s)? For every
    oracle and amplitude, the exact readout-affected P(k, s), k = 0..k_top, s in ``scales``,
    is fitted by each model of ``FOLD_MODELS`` ('block@prior': b fixed at the depth model's
    contrast ratio c(0, 3) / c(0, 1), ``qbo.noise.depth.power_noise``), and, as a reference,
    the unfolded P(k) alone; the table gives the expected deviance at ``shots`` shots per
    term (its excess over the chi-square reference), its p-value, the amplitude bias of the
    fit and the fitted rates."""
    snapshot = snapshot_of(name)
    model = DeviceModel(snapshot)
    ks_all = np.arange(k_top + 1, dtype=float)
    print(f"\nfolded decay fits, {name}, k = 0..{k_top}, scales {scales}, {len(amplitudes)} amplitudes, "
          f"expected deviance at {shots} shots per (k, s)")
    print(f"{'oracle':10s} {'data':7s} {'model':11s} {'dof':>4s} {'mean dev':>9s} {'median p*':>9s} "
          f"{'share p*<.01':>12s} {'|a_fit - a| mean':>16s} {'max':>8s} {'r':>7s} {'b or w':>7s}")
    variants = [("plain", "per-call")] + [("folded", m) for m in FOLD_MODELS]
    for kind in kinds:
        rows = []
        for a in amplitudes:
            oracle = make_oracle(kind, float(a))
            channels = model.add(oracle)
            conf = model.confusion
            b_prior = (power_noise(snapshot, oracle, 0, 3, model.compiler).contrast
                       / power_noise(snapshot, oracle, 0, 1, model.compiler).contrast)
            ks = np.repeat(ks_all, len(scales))
            ss = np.tile(np.array(scales, dtype=float), len(ks_all))
            p = np.array([float(conf.observe(channels.probability(int(k), int(s)))) for k, s in zip(ks, ss)])
            row = []
            for data, m in variants:
                pick = ss == 1 if data == "plain" else np.ones(len(ks), dtype=bool)
                dev, err, x = fold_fit(ks[pick], ss[pick], p[pick], conf.p01, conf.p10, float(a), m, shots, b_prior)
                row.append((dev, err, x[2], x[3] if len(x) > 3 else (b_prior if m == "block@prior" else float("nan"))))
            rows.append(row)
        for j, (data, m) in enumerate(variants):
            terms = len(ks_all) * (1 if data == "plain" else len(scales))
            dof = terms - (4 if m in ("block", "own-rate") else 3)
            devs, errs, rs, extras = (np.array([row[j][i] for row in rows]) for i in range(4))
            pvals = np.array([float(chi2.sf(dof + d, dof)) for d in devs])
            print(f"{kind:10s} {data:7s} {m:11s} {dof:4d} {devs.mean():9.1f} {np.median(pvals):9.3g} "
                  f"{np.mean(pvals < 0.01):12.0%} {errs.mean():16.5f} {errs.max():8.5f} {rs.mean():7.4f} {np.mean(extras):7.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amplitudes", type=int, default=100)
    parser.add_argument("--replicates", type=int, default=2)
    parser.add_argument("--eps", type=float, default=0.01)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--snapshots", default=",".join(SNAPSHOTS))
    parser.add_argument("--oracles", default=",".join(ORACLES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--coherent", action="store_true", help="run the coherent-error / twirling study instead")
    parser.add_argument("--deltas", default="0,0.05,0.1")
    parser.add_argument("--k-top", type=int, default=20)
    parser.add_argument("--gof-shots", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1, help="local Dask workers for the (snapshot, oracle) cells (qbo.experiments.fanout, as qbo run --workers)")
    parser.add_argument("--pad-check", action="store_true", help="only check the pads against the exact channels")
    parser.add_argument("--fold-fit", action="store_true",
                        help="only fit the folded circuits' exact P(k, s) by the decay models (mlae+zne's likelihood)")
    parser.add_argument("--scales", default="1,3,5", help="fold scales of --fold-fit")
    parser.add_argument("--capped-deep", action="store_true",
                        help="only run calibration-aware IAE (none, zne+rem) at --eps on each snapshot x oracle: calls vs planned, width, coverage, floor (issue 24 item 3)")
    parser.add_argument("--no-study", action="store_true", help="skip the estimator tables (e.g. BO only)")
    parser.add_argument("--bo-trials", type=int, default=0, help="trials of the BO-under-noise section (0: skip)")
    parser.add_argument("--bo-budget", type=int, default=3000)
    parser.add_argument("--bo-snapshot", default="fake_torino")
    args = parser.parse_args()
    amplitudes = np.random.default_rng(args.seed).uniform(0.02, 0.98, args.amplitudes)
    if args.coherent:
        for name in args.snapshots.split(","):
            coherent_study(name, [float(d) for d in args.deltas.split(",")], amplitudes, args.k_top, args.gof_shots)
        return
    if args.fold_fit:
        for name in args.snapshots.split(","):
            fold_fit_study(name, args.oracles.split(","), amplitudes, args.k_top, tuple(int(x) for x in args.scales.split(",")),
                           args.gof_shots)
        return
    if args.capped_deep:
        for name in args.snapshots.split(","):
            for kind in args.oracles.split(","):
                capped_deep(name, kind, amplitudes, args.eps, args.alpha, args.seed)
        return
    if args.pad_check:
        pad_checks(args.snapshots.split(","), args.oracles.split(","), amplitudes)
        return
    print(f"{args.amplitudes} amplitudes x {args.replicates} replicates, eps={args.eps}, alpha={args.alpha}; "
          f"B1 = calls of iae at eps, B2 = calls of iae+zne+rem (scales 1,3, richardson) at eps; "
          f"mlae {'included' if mlae_available() else 'not available in qbo.qmc (make_estimator has no mlae)'}")
    print("[no model]: IAE as the Python API runs it without a snapshot (assumes a noiseless device); "
          "[dev]: make_estimator(..., snapshot=...), what qbo estimate / qbo run use on aer:NAME; "
          "reached = share with reached_epsilon True, cov|rch = coverage among those; "
          "calls for eps = diagnostics['calls_for_epsilon'] (median; unreachable = beyond the noise floor); "
          "floor = diagnostics['epsilon_floor'] (median)")
    if not args.no_study:
        cells = [(name, kind) for name in args.snapshots.split(",") for kind in args.oracles.split(",")]
        work = [(name, kind, amplitudes, args.replicates, args.eps, args.alpha, args.seed) for name, kind in cells]
        # the cells run as qbo run --workers runs units: in this process, or on local Dask workers
        for (name, kind), (rows, lines, elapsed) in zip(cells, fan_out(_timed_study, work, workers=args.jobs)):
            print_study(name, kind, rows, lines, elapsed)
    if args.bo_trials:
        bo_section(args.bo_snapshot, args.bo_trials, args.bo_budget, args.seed)


def _timed_study(item: tuple) -> tuple[list[tuple], list[str], float]:
    start = time.perf_counter()
    rows, lines = study(*item)
    return rows, lines, time.perf_counter() - start


# ---------------------------------------------------------------- BO under noise


def bo_section(snapshot: str, trials: int, budget: int, seed: int) -> None:
    """q-gp-ucb with the noise-aware estimator ('auto': MLAE on a device model), q-gp-ucb with
    (calibration-aware) IAE, and gp-ucb, on synthetic-bernoulli through qbo's runner on
    aer:SNAPSHOT: the path of ``qbo run`` with target = "aer:SNAPSHOT"."""
    import tempfile

    from qbo.experiments.config import ExperimentConfig
    from qbo.experiments.runner import run_experiment

    print(f"\nBO under noise: synthetic-bernoulli on aer:{snapshot}, budget {budget}, {trials} trials, "
          f"honest accounting, leftover 'recommend' (qbo's runner, as qbo run --target aer:{snapshot})")
    print(f"{'algorithm':30s} {'final regret mean':>17s} {'se':>8s} {'median':>8s} {'calls':>7s} {'stages':>7s} "
          f"{'QMC stages not reached':>22s} {'CPU s':>7s}")
    variants = (("q-gp-ucb (noise-aware: auto)", "q-gp-ucb", "auto"), ("q-gp-ucb (iae)", "q-gp-ucb", "iae"),
                ("gp-ucb", "gp-ucb", "iae"))
    for label, algorithm, estimator in variants:
        config = ExperimentConfig(problem="synthetic-bernoulli", algorithms=(algorithm,), budget=budget, trials=trials,
                                  target=f"aer:{snapshot}", seed=seed, estimator=estimator)
        cpu = time.process_time()
        with tempfile.TemporaryDirectory() as out:
            records = run_experiment(config, out)
        cpu = time.process_time() - cpu
        final, calls, stages, unreached, qmc = [], [], [], 0, 0
        for t in range(trials):
            mine = [r for r in records if r["trial"] == t]
            final.append(mine[-1]["cum_regret"])
            calls.append(mine[-1]["cum_calls"])
            stages.append(sum(r["method"] not in ("exploit", "init") for r in mine))
            for r in mine:
                if r.get("eps") is not None and r.get("weight_eps") is not None:
                    qmc += 1
                    unreached += r["weight_eps"] > r["eps"] * (1 + 1e-9)
        se = float(np.std(final, ddof=1) / math.sqrt(trials)) if trials > 1 else float("nan")
        print(f"{label:30s} {np.mean(final):17.2f} {se:8.2f} {np.median(final):8.2f} {np.mean(calls):7.0f} "
              f"{np.mean(stages):7.1f} {f'{unreached}/{qmc}':>22s} {cpu:7.1f}")


if __name__ == "__main__":
    main()
