"""MLAE's goodness of fit under an injected coherent error, with and without Pauli twirling
(issue 9, items 1 and 3).

The coherent error is ``bench/noise.py``'s: RZZ(delta) after every two-qubit gate of the
3-qubit entangled oracle, on a shipped snapshot's exact channels; "twirl" replaces each
two-qubit error channel by its Pauli twirl (the average of ``--twirl``'s random twirls). For
k = 0..K at ``--shots`` shots per power, the expected counts are fitted by MLAE's decay
likelihood (``qbo.qmc.likelihood.profile``, A0 and r free); the table gives, averaged over
amplitudes, the deviance (its non-centrality on K + 1 - 3 dof), the over-rotation score
statistic (``rotation_score``, chi2_1, MLAE flags it above 10.83 at gof_level 1e-3), the
share of amplitudes whose score is flagged, and |a_fit - a|.

    PYTHONPATH=. python bench/mlae_gof.py [--snapshot fake_torino] [--amplitudes 10] [--deltas 0,0.05,0.1]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.stats import chi2

from bench.noise import DeviceModel, entangled
from qbo.noise import load_snapshot
from qbo.qmc.likelihood import DecayPrior, Pooled, deviance, profile, rotation_score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", default="fake_torino")
    parser.add_argument("--amplitudes", type=int, default=10)
    parser.add_argument("--deltas", default="0,0.05,0.1")
    parser.add_argument("--k-top", type=int, default=20)
    parser.add_argument("--shots", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    snapshot = load_snapshot(args.snapshot)
    amplitudes = np.random.default_rng(args.seed).uniform(0.02, 0.98, args.amplitudes)
    ks = np.arange(args.k_top + 1, dtype=float)
    shots = np.full(ks.shape, float(args.shots))
    cut = chi2.isf(1e-3, 1)
    print(f"{args.snapshot}, entangled oracle, RZZ(delta) after every two-qubit gate, k = 0..{args.k_top}, "
          f"{args.shots} shots per power (expected counts), {args.amplitudes} amplitudes")
    print(f"{'delta':>6s} {'twirl':>6s} {'deviance':>9s} {'dof':>4s} {'rotation score':>14s} "
          f"{'flagged':>8s} {'|a_fit - a|':>12s} {'fitted r':>9s}")
    for delta in (float(d) for d in args.deltas.split(",")):
        for twirl in (False, True):
            model = DeviceModel(snapshot, delta=delta, twirl=twirl)
            devs, scores, errors, rs = [], [], [], []
            for a in amplitudes:
                channels = model.add(entangled(float(a)))
                conf = model.confusion
                p = np.array([float(conf.observe(channels.probability(int(k)))) for k in ks])
                data = Pooled(ks, shots, shots * p)
                prior = DecayPrior(0.98, 0.92, 0.2, 0.06, conf.p01, conf.p10)
                theta = math.asin(math.sqrt(a))
                grid = np.linspace(max(0.0, theta - 0.15), min(math.pi / 2, theta + 0.15), 3001)
                ll, u, v = profile(grid, data, prior)
                i = int(np.argmax(ll))
                devs.append(deviance(grid[i], u[i], v[i], data, prior))
                scores.append(rotation_score(grid[i], u[i], v[i], data, prior)[0])
                errors.append(abs(math.sin(grid[i]) ** 2 - a))
                rs.append(math.exp(v[i]))
            print(f"{delta:6.3f} {str(twirl):>6s} {np.mean(devs):9.1f} {len(ks) - 3:4d} {np.mean(scores):14.1f} "
                  f"{np.mean(np.array(scores) > cut):8.0%} {np.mean(errors):12.5f} {np.mean(rs):9.4f}")


if __name__ == "__main__":
    main()
