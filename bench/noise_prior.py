"""Where MLAE's calibration prior sits against the exact channels (issue 24, item 1 diagnosis).

For each snapshot x oracle, at one amplitude a (default 0.3): the exact readout-free P(1) of
Q^k A (``bench/noise.py``'s superoperators of the compiled blocks under the snapshot's Aer
noise model) for k = 0..K, the contrast it implies, (P_k - 1/2) / (sin^2((2k + 1) theta) - 1/2),
next to the depth model's contrast c_k (``qbo.noise.depth.power_noise``, with and without
idle decay: Aer's gate-only model has none), and the prior MLAE builds from it
(``qbo.qmc.mlae.calibration_prior``: A0 around sqrt(c_0), r = c_1 / c_0, sd of log A0 and
log r). The
``z(A0)`` column is how many prior sds the exact A0 (the implied k = 0 contrast) lies from the
prior's centre; ``z(r)`` the same for r (the implied c_1 / c_0).

    PYTHONPATH=. python bench/noise_prior.py [--snapshots fake_brisbane,fake_sherbrooke]
        [--oracles bernoulli,entangled2,entangled,discrete] [--amplitude 0.3] [--k-top 3]
"""

from __future__ import annotations

import argparse
import math

from noise import DeviceModel, ExactBinomialExecutor, snapshot_of  # bench/noise.py: exact channels
from noise_grid import grid_oracle
from qbo.noise.depth import power_noise
from qbo.qmc.mlae import calibration_prior


def rows(name: str, kinds: list[str], a: float, k_top: int) -> list[str]:
    snapshot = snapshot_of(name)
    model = DeviceModel(snapshot)
    theta = math.asin(math.sqrt(a))
    out = []
    for kind in kinds:
        oracle = grid_oracle(kind, a)
        channel = model.add(oracle)
        exact, depth, no_idle = [], [], []
        for k in range(k_top + 1):
            ideal = math.sin((2 * k + 1) * theta) ** 2
            exact.append((channel.probability(k) - 0.5) / (ideal - 0.5) if abs(ideal - 0.5) > 0.05 else math.nan)
            depth.append(power_noise(snapshot, oracle, k, compiler=model.compiler).contrast)
            no_idle.append(power_noise(snapshot, oracle, k, compiler=model.compiler, idle=False).contrast)
        prior = calibration_prior(snapshot, oracle, ExactBinomialExecutor(model, seed=0))  # as MLAE builds it there
        z_a0 = (math.log(exact[0]) - math.log(prior.a0)) / prior.a0_sd if exact[0] > 0 else math.nan
        r_exact = exact[1] / exact[0] if exact[0] > 0 and exact[1] > 0 else math.nan
        z_r = (math.log(r_exact) - math.log(prior.r)) / prior.r_sd if r_exact == r_exact else math.nan
        cells = " ".join(f"{e:6.3f}/{d:5.3f}/{n:5.3f}" for e, d, n in zip(exact, depth, no_idle))
        out.append(f"{name:16s} {kind:10s} {oracle.num_qubits:1d} {cells}  A0 {prior.a0:.3f} sd {prior.a0_sd:.3f} "
                   f"z(A0) {z_a0:+6.2f}  r {prior.r:.3f} sd {prior.r_sd:.3f} z(r) {z_r:+6.2f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", default="fake_brisbane,fake_sherbrooke")
    parser.add_argument("--oracles", default="bernoulli,entangled2,entangled,discrete")
    parser.add_argument("--amplitude", type=float, default=0.3)
    parser.add_argument("--k-top", type=int, default=3)
    args = parser.parse_args()
    print(f"a = {args.amplitude}; per k: exact implied contrast / depth model c_k / depth model without idle decay; "
          "prior of MLAE (calibration_prior) and the exact A0, r in prior sds")
    for name in args.snapshots.split(","):
        for line in rows(name, args.oracles.split(","), args.amplitude, args.k_top):
            print(line, flush=True)


if __name__ == "__main__":
    main()
