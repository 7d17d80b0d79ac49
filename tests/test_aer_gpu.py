"""``--device GPU`` on aer targets (issue 24, item 6): noisy GPU runs take the density matrix
where it fits and the run has enough shots (``qbo.execution.aer.gpu_method``); CPU runs keep
Aer's automatic choice; nothing needs a GPU to pass."""

from __future__ import annotations

import pytest
from qiskit_aer import AerSimulator
from hypothesis import given, strategies as st

from qbo.execution import parse_target
from qbo.execution.aer import (
    GPU_DENSITY_MATRIX_BYTES, GPU_DENSITY_MATRIX_MIN_SHOTS, AerExecutor, check_device, gpu_method,
)
from qbo.grover import power_circuit
from qbo.oracles.bernoulli import bernoulli


@given(st.integers(1, 40), st.integers(1, 10**7))
def test_gpu_method_takes_the_density_matrix_exactly_where_it_fits_and_pays(num_qubits, shots):
    fits = 16 * 4**num_qubits <= GPU_DENSITY_MATRIX_BYTES
    expected = "density_matrix" if fits and shots >= GPU_DENSITY_MATRIX_MIN_SHOTS else None
    assert gpu_method(num_qubits, shots) == expected


def test_the_largest_density_matrix_is_14_qubits():
    assert gpu_method(14, 1000) == "density_matrix" and gpu_method(15, 1000) is None


class _Spy:
    """Stands in for the Aer backend: records each run's options, returns all-zero counts."""

    def __init__(self):
        self.calls: list[dict] = []

    def run(self, circuit, shots, **options):
        self.calls.append(options)

        class _Job:
            def result(self):
                class _Result:
                    def get_counts(self):
                        return {"0": shots}
                return _Result()
        return _Job()


@pytest.mark.parametrize("device, shots, method", [("CPU", 100, None), ("GPU", 100, "density_matrix"), ("GPU", 8, None)])
def test_the_executor_passes_the_method_only_on_a_gpu(monkeypatch, device, shots, method):
    snapshot = parse_target("aer:fake_torino").snapshot()
    executor = AerExecutor(snapshot, 0)
    executor.device = device  # the wiring under test; no GPU is needed to check it
    spy = _Spy()
    monkeypatch.setattr(executor, "backend_for", lambda num_qubits: spy)
    circuit = power_circuit(bernoulli(0.3), 1)
    assert executor.run([circuit], [shots]) == [{"0": shots}]
    assert spy.calls[0].get("method") == method
    assert "seed_simulator" in spy.calls[0]


def test_a_noiseless_gpu_run_keeps_the_statevector(monkeypatch):
    executor = AerExecutor(None, 0)
    executor.device = "GPU"
    spy = _Spy()
    monkeypatch.setattr(executor, "backend_for", lambda num_qubits: spy)
    executor.run([power_circuit(bernoulli(0.3), 0)], [100])
    assert "method" not in spy.calls[0]


def test_gpu_without_a_gpu_build_is_one_line():
    if "GPU" in AerSimulator().available_devices():
        pytest.skip("this qiskit-aer has a GPU")
    with pytest.raises(ValueError) as caught:
        check_device("gpu")
    assert "\n" not in str(caught.value) and "qiskit-aer-gpu" in str(caught.value)
