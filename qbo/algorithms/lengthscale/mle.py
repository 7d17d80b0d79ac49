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

Starts are a fixed log-spaced grid (the best ``n_starts`` grid points), so the fit is a pure
function of the data: policies stay deterministic and replay-restorable.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.linalg import LinAlgError, cho_solve

from qbo.gp.kernels import make_kernel
from qbo.gp.cholesky import ArmStats, whitened_cholesky

__all__ = ["LENGTHSCALE_BOUNDS", "OUTPUTSCALE_BOUNDS", "fit_hyperparameters", "negative_log_likelihood"]

LENGTHSCALE_BOUNDS = (1e-3, 10.0)
OUTPUTSCALE_BOUNDS = (1e-3, 1e3)
GRID_POINTS = 16


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


def _objective(kernel: str, arms: np.ndarray, stats: ArmStats, lam: float,
               outputscale: float | None) -> Callable[[np.ndarray], float]:
    """NLL as a function of ``log theta`` (and ``log s`` when ``outputscale`` is None)."""
    def f(v: np.ndarray) -> float:
        s = math.exp(v[1]) if outputscale is None else outputscale
        return negative_log_likelihood(kernel, math.exp(v[0]), s, arms, stats, lam)
    return f


def _starts(f: Callable[[np.ndarray], float], fit_os: bool, n_starts: int) -> list[np.ndarray]:
    """The ``n_starts`` best points of a fixed log-spaced grid (deterministic)."""
    lo, hi = (math.log(b) for b in LENGTHSCALE_BOUNDS)
    grid = [np.array([v]) for v in np.linspace(lo, hi, GRID_POINTS)]
    if fit_os:
        grid = [np.array([v[0], w]) for v in grid for w in np.log([0.1, 1.0, 10.0])]
    values = [f(v) for v in grid]
    order = np.argsort(values, kind="stable")[:n_starts]
    return [grid[i] for i in order]


def fit_hyperparameters(
    kernel: str, arms: np.ndarray, stats: ArmStats, lam: float, outputscale: float,
    fit_outputscale: bool = False, n_starts: int = 3,
) -> tuple[float, float]:
    """``(lengthscale, outputscale)`` maximising the marginal likelihood (multi-start
    L-BFGS-B over log-parameters, Sec. 5 of the LB-GP-UCB paper); ``outputscale`` is kept
    unless ``fit_outputscale``."""
    f = _objective(kernel, arms, stats, lam, None if fit_outputscale else outputscale)
    bounds = [tuple(math.log(b) for b in LENGTHSCALE_BOUNDS)]
    if fit_outputscale:
        bounds.append(tuple(math.log(b) for b in OUTPUTSCALE_BOUNDS))
    from scipy.optimize import minimize  # lazy: only MLE refits need it

    best_v, best_f = None, math.inf
    for x0 in _starts(f, fit_outputscale, n_starts):
        res = minimize(f, x0, method="L-BFGS-B", bounds=bounds)
        if res.fun < best_f:
            best_v, best_f = res.x, float(res.fun)
    if best_v is None:  # every start failed: keep the grid's first point
        best_v = _starts(f, fit_outputscale, 1)[0]
    ls = math.exp(best_v[0])
    return ls, (math.exp(best_v[1]) if fit_outputscale else outputscale)
