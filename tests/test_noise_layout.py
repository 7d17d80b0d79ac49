"""Layouts (``qbo.noise.layout.choose_layout``): the connected set of working qubits with the
least predicted error, found on any device, not only from its best-read-out qubit."""

from __future__ import annotations

import itertools
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qiskit.circuit import Measure, Parameter
from qiskit.circuit.library import CXGate, HGate, RZGate
from qiskit.transpiler import InstructionProperties, Target

from qbo.noise.layout import choose_layout, link_errors, readout_errors


def _target(n: int, readout: dict[int, float], links: dict[tuple[int, int], float]) -> Target:
    target = Target(num_qubits=n)
    target.add_instruction(RZGate(Parameter("t")), {(q,): InstructionProperties(error=0.0) for q in range(n)})
    target.add_instruction(HGate(), {(q,): InstructionProperties(error=0.0) for q in range(n)})
    target.add_instruction(Measure(), {(q,): InstructionProperties(error=e) for q, e in readout.items()})
    if links:
        target.add_instruction(CXGate(), {edge: InstructionProperties(error=e) for edge, e in links.items()})
    return target


def _error(layout: list[int], readout: dict[int, float], links: dict[tuple[int, int], float]) -> float:
    """Predicted error of a pair: both readouts plus the link."""
    a, b = layout
    return readout[a] + readout[b] + min(links.get((a, b), 1.0), links.get((b, a), 1.0))


def test_a_best_qubit_without_a_link_does_not_block_the_device():
    """Qubit 0 reads out best but has no working link (issue 24: 'no connected set of 2 working
    qubits' on such a device): the pair comes from the rest of the chip."""
    readout = {0: 0.001, 1: 0.02, 2: 0.03, 3: 0.01}
    target = _target(4, readout, {(1, 2): 0.01, (2, 3): 0.005})
    assert sorted(choose_layout(target, 2)) == [2, 3]
    assert sorted(choose_layout(target, 3)) == [1, 2, 3]
    assert choose_layout(target, 1) == [0]
    with pytest.raises(ValueError, match="no connected set of 4 working qubits"):
        choose_layout(target, 4)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 7),
    data=st.data(),
)
def test_a_pair_is_the_best_connected_pair(n, data):
    """For two qubits the search is exhaustive: the pair has the least readout + link error of
    all connected working pairs (random graphs, some qubits unmeasurable)."""
    errors = st.floats(0.0, 0.2)
    readout = {q: data.draw(errors) for q in range(n) if data.draw(st.booleans()) or q == n - 1}
    edges = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=12))
    links = {(a, b): data.draw(errors) for a, b in edges if a != b}
    target = _target(n, readout, links)
    working = {(a, b): e for (a, b), e in link_errors(target).items() if a in readout and b in readout}
    if not working:
        with pytest.raises(ValueError):
            choose_layout(target, 2)
        return
    layout = choose_layout(target, 2)
    assert tuple(layout) in working
    best = min(_error(list(pair), readout, links) for pair in working)
    assert _error(layout, readout, links) == pytest.approx(best, abs=1e-12)


def _fake_snapshots():
    from qbo.noise.export import export_from_fake

    from qiskit_ibm_runtime import fake_provider
    from qiskit_ibm_runtime.fake_provider.fake_backend import FakeBackendV2

    names = sorted(n for n in dir(fake_provider) if n.startswith("Fake") and isinstance(getattr(fake_provider, n), type)
                   and issubclass(getattr(fake_provider, n), FakeBackendV2) and getattr(fake_provider, n) is not FakeBackendV2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [(name, export_from_fake(name)) for name in names]


@pytest.mark.slow  # exports every fake backend (~30 s) and runs 16 shots of a 2-qubit oracle on each
def test_every_fake_backend_with_a_working_pair_runs_a_two_qubit_oracle():
    from qbo.execution.aer import AerExecutor
    from qbo.noise.aer_model import snapshot_target
    from qbo.oracles import discrete
    from qbo.qmc.base import run_round

    oracle = discrete([0.0, 0.5], [0.4, 0.6])  # one outcome qubit and the objective
    assert oracle.num_qubits == 2
    ran, without = [], []
    for name, snapshot in _fake_snapshots():
        target = snapshot_target(snapshot)
        readout = readout_errors(target)
        pairs = [e for e in link_errors(target) if not readout or (e[0] in readout and e[1] in readout)]
        if not pairs:
            without.append(name)
            continue
        assert len(set(choose_layout(target, 2))) == 2
        if target.num_qubits >= oracle.num_qubits:
            rnd = run_round(AerExecutor(snapshot, seed=1), oracle, 1, 16)
            assert rnd.shots == 16 and 0 <= rnd.ones <= 16
        ran.append(name)
    assert len(ran) >= 60, (ran, without)
    assert set(without) <= {"FakeArmonkV2", "FakeKyoto"}, without  # 1 qubit; every two-qubit gate reported faulty


def test_a_one_way_cx_without_hadamards_is_not_a_link():
    """The transpiler flips a CX with Hadamards; without H on the target a one-way CX cannot
    carry a circuit's CNOTs both ways (FakeCairoV2), so it is not a link."""
    target = Target(num_qubits=3)
    target.add_instruction(RZGate(Parameter("t")), {(q,): InstructionProperties(error=0.0) for q in range(3)})
    target.add_instruction(Measure(), {(q,): InstructionProperties(error=0.01) for q in range(3)})
    target.add_instruction(CXGate(), {(0, 1): InstructionProperties(error=0.001), (1, 2): InstructionProperties(error=0.01),
                                      (2, 1): InstructionProperties(error=0.01)})
    assert sorted(link_errors(target)) == [(1, 2), (2, 1)]
    assert sorted(choose_layout(target, 2)) == [1, 2]


def test_layout_search_is_deterministic():
    readout = {q: 0.01 * (q % 3 + 1) for q in range(6)}
    links = {(q, q + 1): 0.01 for q in range(5)}
    target = _target(6, readout, links)
    assert all(choose_layout(target, 3) == choose_layout(target, 3) for _ in itertools.repeat(None, 3))
