"""Is MLAE's interval calibrated when few powers have run? (issue 24: the wrong-mode misses).

With one to three Grover powers and A0, r and the offset free, the profile likelihood of
``qbo.qmc.mlae_fit`` has several modes (the aliases of the deepest power), and a miss puts the
whole interval on another mode, many half-widths from the truth. Whether such misses are a
defect or the tail of an honest interval is a question of calibration: for a fixed design
(``--design``: k:shots pairs, the rounds an estimate ran), this draws ``--reps`` count sets
binomially from a snapshot's exact noisy channels (``bench/noise.py``), fits each as the
estimator does (``ProfileFit.refit`` over [0, pi/2], then ``span_other_modes``, the
dispersion phi and the counts-at-one-end threshold included), and reports per amplitude:

- ``LR>c``: the share whose profile likelihood ratio at the true theta, 2 (l_max - l_p(theta)),
  exceeds chi2_1 at 1 - s alpha (5.02 at alpha 0.05, s 1/2): Wilks' nominal share is s alpha;
- ``miss``: the share whose final interval (hull of every mode within phi times the threshold)
  excludes the truth, with its Wilson 95% upper bound;
- ``gross``: the share of misses more than 3 half-widths from the truth (wrong-mode misses);
- ``modes>1``: the share whose interval spans more than one mode.

The interval the estimator reports can only be wider than the fit's (the goodness-of-fit
fallback, the k = 0 top-up), so ``miss`` bounds its miss rate for this design. Adaptive
designs choose their rounds from the counts; the two designs of the grid's gross misses
(bench/results/noise_grid_60.txt) are the defaults.

    python bench/mlae_calibration.py [--snapshot fake:FakeNairobiV2] [--oracle entangled]
        [--amplitudes 0.1,0.3,0.54,0.7,0.9] [--design 0:16,1:16,2:32,3:17] [--reps 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from noise import DeviceModel, snapshot_of, wilson_lower  # bench/noise.py
from noise_grid import grid_oracle
from qbo.qmc.mlae import MaximumLikelihoodAE
from qbo.qmc.mlae_fit import ProfileFit
from qbo.qmc.result import Round


def parse_design(text: str) -> list[tuple[int, int]]:
    """'0:16,1:473' -> [(0, 16), (1, 473)]; one line naming the bad pair otherwise."""
    design = []
    for pair in text.split(","):
        try:
            k, n = (int(x) for x in pair.split(":"))
        except ValueError:
            k, n = -1, 0
        if k < 0 or n < 1:
            raise ValueError(f"--design: expected k:shots pairs with k >= 0 and shots >= 1, got '{pair}'")
        design.append((k, n))
    return design


def calibrate(name: str, kind: str, a: float, design: list[tuple[int, int]], reps: int, seed: int,
              alpha: float = 0.05) -> dict:
    """One row: ``reps`` count sets at amplitude ``a`` under ``design``, fitted as MLAE does."""
    snapshot = snapshot_of(name)
    oracle = grid_oracle(kind, a)
    model = DeviceModel(snapshot)
    channels = model.add(oracle)
    config = MaximumLikelihoodAE(1e-4, alpha)
    prior = config.device_prior(snapshot, oracle)
    q = {k: float(model.confusion.observe(channels.probability(k, 1))) for k, _ in design}
    truth = math.asin(math.sqrt(float(oracle.mean)))
    rng = np.random.default_rng(seed)
    exceed = misses = gross = multi = 0
    for _ in range(reps):
        fit = ProfileFit(prior, alpha, config.stop_share, config.localise, config.gof_level)
        fit.rounds = [Round(k=k, shots=n, ones=int(rng.binomial(n, q[k]))) for k, n in design]
        fit.refit(whole=True)
        fit.span_other_modes()
        f = fit.fit
        top = float(fit.profiled(np.array([f.theta]))[0][0])
        at_truth = float(fit.profiled(np.array([truth]))[0][0])
        exceed += 2 * (top - at_truth) > fit.c_final
        a_low, a_high = math.sin(f.low) ** 2, math.sin(f.high) ** 2
        if not a_low <= oracle.mean <= a_high:
            misses += 1
            half = max(0.5 * (a_high - a_low), 1e-12)
            gross += min(abs(oracle.mean - a_low), abs(oracle.mean - a_high)) > 3 * half
        multi += fit.modes > 1
    upper = 1 - wilson_lower(reps - misses, reps)
    return {"a": float(oracle.mean), "exceed": exceed / reps, "miss": misses / reps, "miss_upper": upper,
            "gross": gross / reps, "multi": multi / reps, "nominal": alpha * config.stop_share}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", default="fake:FakeNairobiV2")
    parser.add_argument("--oracle", default="entangled")
    parser.add_argument("--amplitudes", default="0.1,0.3,0.5398,0.7,0.9")
    parser.add_argument("--design", default="0:16,1:16,2:32,3:17")
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    try:
        design = parse_design(args.design)
        amplitudes = [float(x) for x in args.amplitudes.split(",") if x]
        if not amplitudes or not all(0 < x < 1 for x in amplitudes) or args.reps < 1:
            raise ValueError(f"--amplitudes must be in (0, 1) and --reps >= 1, got '{args.amplitudes}', {args.reps}")
    except ValueError as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        raise SystemExit(2) from None
    print(f"{args.snapshot} x {args.oracle}, design {args.design}, {args.reps} count sets per amplitude, "
          f"seed {args.seed}")
    print(f"{'a':>8s} {'LR>c':>6s} {'nominal':>7s} {'miss':>6s} {'miss<=':>7s} {'gross':>6s} {'modes>1':>7s} {'s':>5s}")
    for i, a in enumerate(amplitudes):
        start = time.perf_counter()
        r = calibrate(args.snapshot, args.oracle, a, design, args.reps, args.seed + i)
        print(f"{r['a']:8.4f} {r['exceed']:6.3f} {r['nominal']:7.3f} {r['miss']:6.3f} {r['miss_upper']:7.3f} "
              f"{r['gross']:6.3f} {r['multi']:7.3f} {time.perf_counter() - start:5.1f}", flush=True)


if __name__ == "__main__":
    main()
