"""Coherent over-rotation of Q on hardware (issue 24, item 2; qbo.qmc.over_rotation): the
calibration-aware IAE's interval holds every over-rotation its counts cannot exclude on an
``ibm:`` target, as MLAE's does, and nothing changes on a simulator."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from qbo.noise import load_snapshot
from qbo.oracles import bernoulli
from qbo.qmc import make_estimator
from qbo.qmc.mlae import calibration_prior
from qbo.qmc.over_rotation import held_by_iae, on_real_device, rotation_widening
from qbo.qmc.result import Round
from tests.support.bench import bench_module

ModelExecutor = bench_module("mlae_coherent").ModelExecutor  # MLAE's model with an over-rotation delta of Q
SNAPSHOT = load_snapshot("fake_torino")


def _model() -> dict[str, float]:
    """The device the estimator is told about: the depth model's contrasts and readout."""
    prior = calibration_prior(SNAPSHOT, bernoulli(0.5))
    return dict(a0=prior.a0, r=prior.r, p01=prior.p01, p10=prior.p10)


def test_iae_on_hardware_holds_an_over_rotation_that_a_simulator_label_misses():
    """delta = 0.1 rad a Grover step moves IAE's deep rounds by about sin(2 theta) delta / 2,
    some 0.05 in amplitude, against a padded half-width near eps = 0.01: on a simulator label
    (no coherent error assumed) the interval misses in every run below; on ``ibm:`` it is
    widened by |shift| (|delta_hat| + z sd) and holds a, with ``reached_epsilon`` False and the
    note naming the over-rotation and --twirl."""
    model = _model()
    for i, a in enumerate((0.3, 0.45, 0.6)):
        estimator = make_estimator("iae", 0.01, snapshot=SNAPSHOT)
        sim = estimator.estimate(bernoulli(a), ModelExecutor(a, **model, delta=0.1, seed=i, target="fake:model"))
        assert not sim.ci_low <= a <= sim.ci_high and "rotation_widening" not in sim.diagnostics
        hw = estimator.estimate(bernoulli(a), ModelExecutor(a, **model, delta=0.1, seed=i, target="ibm:model_executor"))
        d = hw.diagnostics
        assert hw.rounds == sim.rounds  # the same counts: only the interval differs
        assert hw.ci_low <= a <= hw.ci_high and not hw.reached_epsilon
        assert d["rotation_widening"] > 0.04 and 0 < d["rotation_sd"] < 0.1 and d["rotation_shift"] > 0
        assert hw.ci_low == max(sim.ci_low - d["rotation_widening"], 0.0)
        assert "over-rotation of Q the counts cannot exclude" in hw.note and "--twirl" in hw.note
        need = d["calls_for_epsilon"]  # the widening's sd shrinks as calls^-1/2: far more calls than spent
        assert need is None or need >= hw.oracle_calls * (d["rotation_widening"] / 0.005) ** 2 * (1 - 1e-9)
        assert sim.diagnostics["calls_for_epsilon"] is None or need is None or need > sim.diagnostics["calls_for_epsilon"]


def test_held_rotation_of_k0_rounds_is_nothing():
    """Without a Grover step no over-rotation moves the estimate: no widening, no fit."""
    prior = calibration_prior(SNAPSHOT, bernoulli(0.5))
    held = held_by_iae([Round(0, 100, 40)], prior, 0.4, 0.05, 1.96)
    assert held.widening == 0.0 and held.shift == 0.0 and not held.flagged


def test_only_ibm_targets_are_real_devices():
    assert on_real_device("ibm:ibm_torino") and not on_real_device("fake:FakeTorino")
    assert not on_real_device("aer:fake_torino") and not on_real_device("exact") and not on_real_device("a test double")


@settings(max_examples=60, deadline=None)
@given(sd=st.floats(1e-4, 1.0), score=st.floats(0.0, 100.0), shift=st.floats(-1.0, 1.0), z=st.floats(0.5, 4.0))
def test_rotation_widening_is_the_shift_times_the_excludable_delta(sd, score, shift, z):
    """|shift| (sqrt(score) sd + z sd): linear in |shift| and sd, nothing without a shift."""
    w = rotation_widening(sd, score, shift, z)
    assert math.isclose(w, abs(shift) * sd * (math.sqrt(score) + z), rel_tol=1e-12, abs_tol=1e-300)
    assert rotation_widening(sd, score, 0.0, z) == 0.0
    assert rotation_widening(math.inf, score, 0.5, z) == math.inf
