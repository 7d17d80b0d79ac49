"""Qiskit samplers as executors, and problems as users hold them (issue 26 items 1 and 2)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.primitives import StatevectorSampler
from qiskit.primitives.containers import BitArray, DataBin, PrimitiveResult, SamplerPubResult
from qiskit.primitives.base import BaseSamplerV2

from qbo.errors import BadInput, Unavailable
from qbo.execution import make_executor
from qbo.execution.sampler import DEPTH_CAPS, SamplerExecutor, as_executor
from qbo.oracles import bernoulli, from_circuit
from qbo.oracles.accepted import as_oracle
from qbo.qmc import IterativeAmplitudeEstimation, MaximumLikelihoodAE, MonteCarloEstimator


def _circuit() -> QuantumCircuit:
    qc = QuantumCircuit(2)
    qc.ry(0.7, 0)
    qc.cx(0, 1)
    qc.ry(0.3, 1)
    return qc


EXACT = from_circuit(_circuit(), objective=1).mean


def _shots(est) -> int:
    return sum(r.shots for r in est.rounds)


def test_statevector_sampler_gives_an_honest_iae_estimate():
    est = IterativeAmplitudeEstimation(epsilon=0.01, alpha=0.05).estimate(
        from_circuit(_circuit(), objective=1), StatevectorSampler(seed=1))
    assert est.target == "sampler:qiskit.StatevectorSampler"
    assert est.reached_epsilon and est.note == ""
    assert est.ci_low <= EXACT <= est.ci_high
    assert est.half_width <= 0.01 + 1e-12
    d = est.diagnostics
    assert d["sampler_shots"] == {"requested": _shots(est), "returned": _shots(est)}
    assert d["depth_caps"] == DEPTH_CAPS and "aer:CALIBRATION" in DEPTH_CAPS


@pytest.mark.parametrize("estimator", [
    MonteCarloEstimator(epsilon=0.05, alpha=0.05),
    MaximumLikelihoodAE(epsilon=0.02, alpha=0.05),
])
def test_statevector_sampler_works_with_mc_and_mlae(estimator):
    est = estimator.estimate(from_circuit(_circuit(), objective=1), StatevectorSampler(seed=3))
    assert est.ci_low <= EXACT <= est.ci_high
    assert est.diagnostics["sampler_shots"]["returned"] == _shots(est)


def test_aer_sampler_is_counted_and_its_unknown_noise_is_said():
    from qiskit_aer.primitives import SamplerV2

    oracle = from_circuit(_circuit(), objective=1)
    bare = IterativeAmplitudeEstimation(epsilon=0.02, alpha=0.05).estimate(oracle, SamplerV2(seed=1))
    assert bare.target == "sampler:qiskit_aer.SamplerV2"
    assert not bare.reached_epsilon and "carries device noise" not in bare.note
    assert "noise is unknown to qbo and no calibration-aware depth caps apply" in bare.note
    assert bare.diagnostics["sampler_noise"] == "unknown to qbo"
    assert bare.diagnostics["sampler_shots"]["requested"] == _shots(bare)
    declared = IterativeAmplitudeEstimation(epsilon=0.02, alpha=0.05).estimate(
        oracle, SamplerExecutor(SamplerV2(seed=1), noiseless=True))
    assert declared.target == "sampler:noiseless" and declared.reached_epsilon
    assert declared.ci_low <= EXACT <= declared.ci_high


def test_noise_is_declared_by_the_target_not_read_from_its_label():
    import pickle

    from qbo.execution.base import DeclaresNoise
    from qbo.execution.sampler import SamplerTarget
    from qbo.qmc.base import is_noiseless
    from qbo.qmc.mlae import noiseless_target

    exact = SamplerExecutor(StatevectorSampler(seed=0)).target
    assert isinstance(exact, DeclaresNoise) and exact.is_noiseless and not exact.has_device_model
    # a label alone declares nothing: the same string, not from a declaring executor, is unknown
    assert not is_noiseless(str(exact))
    assert is_noiseless(exact) and is_noiseless("exact") and not is_noiseless("aer:fake_torino")
    assert noiseless_target(exact) and not noiseless_target(str(exact))  # MLAE asks the same capability
    noisy = SamplerExecutor(StatevectorSampler(seed=0), noiseless=False).target
    assert not is_noiseless(noisy) and noisy.endswith("+declared-noise")
    assert pickle.loads(pickle.dumps(exact)) == exact and pickle.loads(pickle.dumps(exact)).is_noiseless
    assert isinstance(pickle.loads(pickle.dumps(noisy)), SamplerTarget)
    assert not pickle.loads(pickle.dumps(noisy)).is_noiseless


def _runtime_samplers():
    from qiskit_ibm_runtime import SamplerV2
    from qiskit_ibm_runtime.executor_sampler import Sampler
    from qiskit_ibm_runtime.fake_provider import FakeManilaV2

    backend = FakeManilaV2()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # SamplerV2 is deprecated in 0.50+
        legacy = SamplerV2(mode=backend)
    legacy.options.simulator.seed_simulator = 5
    return [legacy, Sampler(mode=backend)]


@pytest.mark.parametrize("which", [0, 1], ids=["runtime.SamplerV2", "runtime.executor_sampler.Sampler"])
def test_runtime_samplers_in_local_mode_are_transpiled_and_counted(which):
    sampler = _runtime_samplers()[which]
    oracle = bernoulli(0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        est = MonteCarloEstimator(epsilon=0.1, alpha=0.05).estimate(oracle, sampler)
    assert est.target.startswith("sampler:qiskit_ibm_runtime.") and est.target.endswith("@fake_manila")
    assert not est.reached_epsilon  # a device's noise is not modelled through a bare sampler
    assert est.diagnostics["sampler_shots"] == {"requested": _shots(est), "returned": _shots(est)}
    # FakeManila's noise is small: the 95% Hoeffding interval, widened by 0.1 for device bias
    assert est.ci_low - 0.1 <= 0.3 <= est.ci_high + 0.1


class _ShortSampler(BaseSamplerV2):
    """Returns one shot fewer than asked: the wrapper must refuse, not count metadata."""

    def run(self, pubs, *, shots=None):
        results = []
        for circuit, _, n in pubs:
            bits = BitArray.from_samples(["1"] * (n - 1), num_bits=circuit.num_clbits)
            results.append(SamplerPubResult(DataBin(c=bits), metadata={"shots": n}))
        return _Done(PrimitiveResult(results))


class _Done:
    def __init__(self, result):
        self._result = result

    def result(self):
        return self._result


def test_a_sampler_that_returns_fewer_shots_is_refused():
    with pytest.raises(Unavailable, match="returned 9 shots where 10 were asked"):
        SamplerExecutor(_ShortSampler()).run([_power()], [10])


def _power():
    from qbo.grover import power_circuit

    return power_circuit(bernoulli(0.5), 0)


def test_as_executor_passes_qbo_executors_and_names_what_it_accepts():
    ex = make_executor("exact", seed=0)
    assert as_executor(ex) is ex
    with pytest.raises(BadInput, match="a qbo executor .* or a Qiskit BaseSamplerV2, got str"):
        as_executor("exact")
    with pytest.raises(BadInput, match="BaseSamplerV2, got int"):
        IterativeAmplitudeEstimation(0.1, 0.05).estimate(bernoulli(0.5), 3)


# --- problems as users hold them (item 2) --------------------------------------------------


def test_a_bare_circuit_with_objective_is_estimated():
    est = MonteCarloEstimator(epsilon=0.05, alpha=0.05).estimate(_circuit(), make_executor("exact", 0), objective=1)
    assert est.ci_low <= EXACT <= est.ci_high


def test_a_bare_circuit_without_objective_and_other_things_are_refused():
    with pytest.raises(BadInput, match="needs objective=QUBIT"):
        as_oracle(_circuit())
    with pytest.raises(BadInput, match="goes with a bare QuantumCircuit only"):
        as_oracle(bernoulli(0.5), objective=0)
    with pytest.raises(BadInput, match=r"cannot estimate a dict: expected a qbo Oracle .*QuantumCircuit with "
                                       r"objective=q, or a qiskit-algorithms EstimationProblem"):
        IterativeAmplitudeEstimation(0.1, 0.05).estimate({"high": 1}, make_executor("exact", 0))


def test_an_estimation_problem_becomes_an_oracle_with_its_window():
    ea = pytest.importorskip("qiskit_algorithms")
    problem = ea.EstimationProblem(_circuit(), objective_qubits=[1], post_processing=lambda a: 2.0 + 3.0 * a)
    oracle = as_oracle(problem)
    assert (oracle.low, oracle.high, oracle.objective) == (2.0, 5.0, 1)
    assert math.isclose(oracle.mean, 2.0 + 3.0 * EXACT)
    est = IterativeAmplitudeEstimation(0.05, 0.05).estimate(problem, StatevectorSampler(seed=2))
    assert est.ci_low <= oracle.mean <= est.ci_high


@pytest.mark.parametrize("kwargs, message", [
    ({"objective_qubits": [0, 1]}, "one objective qubit"),
    ({"objective_qubits": 1, "post_processing": lambda a: a * a}, "affine"),
    ({"objective_qubits": 1, "post_processing": lambda a: 1 - a}, "increasing"),
    ({"objective_qubits": 1, "is_good_state": lambda bits: bits == "0"}, "is_good_state"),
])
def test_estimation_problems_qbo_cannot_honour_are_refused(kwargs, message):
    ea = pytest.importorskip("qiskit_algorithms")
    with pytest.raises(BadInput, match=message):
        as_oracle(ea.EstimationProblem(_circuit(), **kwargs))


def test_an_estimation_problem_with_its_own_grover_operator_is_refused():
    ea = pytest.importorskip("qiskit_algorithms")
    problem = ea.EstimationProblem(_circuit(), objective_qubits=1)
    problem.grover_operator = QuantumCircuit(2)
    with pytest.raises(BadInput, match="grover_operator"):
        as_oracle(problem)


def test_counts_keep_qiskit_bit_order():
    qc = QuantumCircuit(2, 2)
    qc.x(0)
    qc.measure([0, 1], [0, 1])
    (counts,) = SamplerExecutor(StatevectorSampler(seed=0)).run([qc], [7])
    assert counts == {"01": 7}
    assert np.sum(list(counts.values())) == 7
