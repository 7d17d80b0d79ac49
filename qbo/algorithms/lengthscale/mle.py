"""Marginal-likelihood fit of the length scale (and optionally the output scale).

The MLE baseline of Ziomek, Adachi & Osborne (NeurIPS 2024), Sec. 5: "the length scale value
is optimised using a multi-start L-BFGS-B method after each timestep by maximising the
marginal likelihood for the data collected so far".  The likelihood is that of the model the
policy actually uses: a zero-mean GP with per-observation noise variance ``lambda eps^2``
(Dai et al. Eq. (3); ``eps = 1`` for classical GP-UCB, where lambda is the noise variance).
By sufficiency (``qbo.gp.cholesky``) it equals, up to a factor free of the kernel,
the likelihood of the per-arm weighted means ``ybar ~ N(0, K_UU + lambda diag(1/W))``:

    -log p = 1/2 z^T A^{-1} z + sum log diag L - 1/2 sum log W + u/2 log(2 pi),
    A = diag(s) K_UU diag(s) + lambda I,  s = sqrt(W),  z = s * ybar,  A = L L^T.

Starts are a fixed log-spaced grid (the best ``n_starts`` grid points), each searched locally by
Brent's method (``qbo.algorithms.lengthscale.mle_search``, which says why not L-BFGS-B), so the
fit is a pure function of the data: policies stay deterministic and replay-restorable, and a
compiled loop (``qbo.algorithms.gp_ucb_mle``) calls the very same search.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import LinAlgError, cho_solve

from qbo.algorithms.gp_ucb_refit import KERNEL_CODES
from qbo.algorithms.lengthscale.mle_search import fit
from qbo.gp.cholesky import ArmStats, whitened_cholesky
from qbo.gp.kernels import make_kernel

__all__ = ["BOUNDS", "GRID", "KERNEL_CODES", "LENGTHSCALE_BOUNDS", "N_STARTS", "OUTPUTSCALE_BOUNDS", "SCALE_GRID",
           "XTOL", "fit_hyperparameters", "negative_log_likelihood"]

LENGTHSCALE_BOUNDS = (1e-3, 10.0)
OUTPUTSCALE_BOUNDS = (1e-3, 1e3)
GRID_POINTS = 16
N_STARTS = 3
# the starts' grids of log theta and (mle+outputscale) log s, their ends the bounds; one point a decade of s
GRID = np.linspace(math.log(LENGTHSCALE_BOUNDS[0]), math.log(LENGTHSCALE_BOUNDS[1]), GRID_POINTS)
SCALE_GRID = np.linspace(math.log(OUTPUTSCALE_BOUNDS[0]), math.log(OUTPUTSCALE_BOUNDS[1]), 7)
XTOL = 1e-6  # Brent's absolute tolerance in log theta and log s: theta to a relative 1e-6
BOUNDS = np.array(LENGTHSCALE_BOUNDS + OUTPUTSCALE_BOUNDS)  # mle_search.fit's clamp of what it returns


def negative_log_likelihood(
    kernel: str, lengthscale: float, outputscale: float, arms: np.ndarray, stats: ArmStats, lam: float
) -> float:
    """``-log p(ybar | lengthscale, outputscale)`` of the observed arms (module docstring)."""
    U, W, ybar = stats.observed()
    K = make_kernel(kernel, lengthscale, outputscale)(arms[U], arms[U])
    try:
        L = whitened_cholesky(K, W, lam)
    except LinAlgError:
        return math.inf
    z = np.sqrt(W) * ybar
    quad = float(z @ cho_solve((L, True), z))
    logdet = float(np.sum(np.log(np.diag(L)))) - 0.5 * float(np.sum(np.log(W)))
    return 0.5 * quad + logdet + 0.5 * U.size * math.log(2.0 * math.pi)


def fit_hyperparameters(
    kernel: str, arms: np.ndarray, stats: ArmStats, lam: float, outputscale: float,
    fit_outputscale: bool = False, n_starts: int = N_STARTS,
) -> tuple[float, float]:
    """``(lengthscale, outputscale)`` maximising the marginal likelihood: the ``n_starts`` best
    points of ``GRID``, each searched locally (``qbo.algorithms.lengthscale.mle_search``; Sec. 5
    of the LB-GP-UCB paper used multi-start L-BFGS-B); ``outputscale`` is kept unless
    ``fit_outputscale`` (then the profile over ``SCALE_GRID``)."""
    if kernel not in KERNEL_CODES:
        raise ValueError(f"the MLE fit needs a kernel in {tuple(KERNEL_CODES)}, got {kernel!r}")
    out = np.empty(4)
    fit(np.ascontiguousarray(arms, dtype=float), stats.W, stats.b, KERNEL_CODES[kernel], float(lam),
        float(outputscale), bool(fit_outputscale), int(n_starts), GRID, SCALE_GRID, XTOL, BOUNDS, out)
    return float(out[0]), float(out[1])
