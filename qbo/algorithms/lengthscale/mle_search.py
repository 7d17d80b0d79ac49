"""The marginal-likelihood search of the MLE baseline as scalar code (compiled where numba is).

Ziomek, Adachi & Osborne (NeurIPS 2024), Sec. 5: the MLE baseline refits "the length scale
value ... using a multi-start L-BFGS-B method after each timestep by maximising the marginal
likelihood". qbo keeps that shape, a multi-start local optimiser over ``v = log theta`` within
the bounds, with its own local optimiser in place of L-BFGS-B:

* **starts**: the negative log likelihood (``qbo.algorithms.lengthscale.mle``'s, on the
  per-arm statistics) on a fixed log-spaced grid of ``v``; the ``n_starts`` best grid points,
  ties to the lower index;
* **local search from a start**: downhill on the grid to a grid point no neighbour beats
  (the way a descent method started there would go), then Brent's method (Brent 1973,
  "Algorithms for Minimization without Derivatives", Ch. 5: golden section safeguarded by
  successive parabolic interpolation) in the bracket of its two neighbours, started at that
  grid point; a start whose descent ends at the grid point an earlier start's ended at is not
  searched again (two that end at neighbouring grid points, as on a flat stretch, are each
  searched, though their brackets overlap);
* **result**: the best point evaluated, grid points included, the first on ties (the lowest
  grid point, then the starts in order): its NLL is at most that of every grid point, and at
  a bound the bound's grid point is returned, as a bounded optimiser would return the bound.

Why not L-BFGS-B: the problem is one bounded variable (two with the output scale), where a
quasi-Newton method's Hessian model buys nothing; scipy's L-BFGS-B is a Fortran black box that
numba cannot compile, so a compiled loop could not call it, and its iterates (line search,
finite-difference gradients, stopping rules) change with scipy's version. Brent's method needs
no derivative, never leaves its bracket and converges superlinearly on a smooth minimum; every
operation here is IEEE arithmetic with libm's ``exp``/``log``/``sqrt``, so a fit is a pure
function of the statistics, the same with numba and without (``qbo.compiling``), and the
Python stepper (``MLESurrogate``) and the compiled loop (``qbo.algorithms.gp_ucb_mle``) call
this one function.

The output scale too (``mle+outputscale``): the profile likelihood ``min_s NLL(theta, s)``
is searched over ``log theta`` as above, each profile value itself a search over ``log s``
(grid, one start, Brent), so the pair returned is a local minimum of the two-variable NLL
found by nested 1-D searches.

Brent's iteration is ``qbo.brent``'s, in reverse communication (``brent_start``,
``brent_next``, ``brent_told``): the caller evaluates the point proposed, so one iteration
serves the three objectives.

The NLL on the observed arms U, ascending (``mle.negative_log_likelihood``'s formula):
``1/2 z^T A^{-1} z + sum log diag L - 1/2 sum log W + |U|/2 log(2 pi)``,
``A = diag(s) K_UU diag(s) + lambda I = L L^T``, ``s = sqrt(W)``, ``z = s ybar``;
O(|U|^3) an evaluation, from the pairwise distances of the observed arms formed once a fit.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.algorithms.gp_ucb_refit import kernel_value
from qbo.algorithms.jit import jit
from qbo.brent import BEST_F, BEST_X, PROPOSED, STATE_SIZE, brent_next, brent_start, brent_told

__all__ = ["FIT_EVALS", "FIT_NLL", "FIT_SCALE", "FIT_THETA", "fit", "nll"]

# fit's output: theta, the output scale, their NLL, the NLL evaluations made
FIT_THETA, FIT_SCALE, FIT_NLL, FIT_EVALS = range(4)


@jit
def nll(code: int, theta: float, scale: float, lam: float, dist: np.ndarray, sw: np.ndarray, z: np.ndarray,
        const: float, A: np.ndarray, y: np.ndarray) -> float:
    """The NLL (module docstring) of the u observed arms: ``dist`` their distances (u x u), ``sw``
    sqrt W, ``z`` sqrt W ybar, ``const`` the terms free of the kernel; ``A`` (u x u) and ``y`` (u)
    are scratch. inf where A is not positive definite in floating point."""
    u = sw.shape[0]
    for i in range(u):
        for k in range(i + 1):
            acc = sw[i] * kernel_value(code, dist[i, k] / theta, scale) * sw[k]
            if i == k:
                acc += lam
            for t in range(k):
                acc -= A[i, t] * A[k, t]
            if i == k:
                if not acc > 0.0:
                    return math.inf
                A[i, i] = math.sqrt(acc)
            else:
                A[i, k] = acc / A[k, k]
    quad, logdet = 0.0, 0.0
    for i in range(u):
        acc = z[i]
        for k in range(i):
            acc -= A[i, k] * y[k]
        y[i] = acc / A[i, i]
        quad += y[i] * y[i]
        logdet += math.log(A[i, i])
    return 0.5 * quad + logdet + const


@jit
def _descend(values: np.ndarray, i: int) -> int:
    """From grid index i, downhill to an index no neighbour beats (the lower neighbour on ties)."""
    n = values.shape[0]
    while True:
        best = i
        if i > 0 and values[i - 1] < values[best]:
            best = i - 1
        if i + 1 < n and values[i + 1] < values[best]:
            best = i + 1
        if best == i:
            return i
        i = best


@jit
def _starts(values: np.ndarray, count: int, out: np.ndarray) -> int:
    """The indices of the ``count`` least values (ties to the lower index) into ``out``, best first."""
    n = values.shape[0]
    k = min(count, n)
    for c in range(k):
        best = -1
        for i in range(n):
            taken = False
            for p in range(c):
                if out[p] == i:
                    taken = True
            if not taken and (best < 0 or values[i] < values[best]):
                best = i
        out[c] = best
    return k


@jit
def _scale_search(code: int, theta: float, lam: float, dist: np.ndarray, sw: np.ndarray, z: np.ndarray,
                  const: float, A: np.ndarray, y: np.ndarray, scale_grid: np.ndarray, tol: float,
                  values: np.ndarray, st: np.ndarray, result: np.ndarray) -> None:
    """min over ``log s`` of NLL(theta, s): the grid ``scale_grid`` (log s), its best point, downhill,
    Brent in the bracket; ``result`` gets (log s, NLL, evaluations)."""
    n = scale_grid.shape[0]
    for i in range(n):
        values[i] = nll(code, theta, math.exp(scale_grid[i]), lam, dist, sw, z, const, A, y)
    best = 0
    for i in range(1, n):
        if values[i] < values[best]:
            best = i
    evals = n
    i = _descend(values, best)
    x, fx = scale_grid[i], values[i]
    brent_start(st, scale_grid[max(i - 1, 0)], scale_grid[min(i + 1, n - 1)], x, fx, tol)
    while brent_next(st):
        brent_told(st, nll(code, theta, math.exp(st[PROPOSED]), lam, dist, sw, z, const, A, y))
        evals += 1
    if st[BEST_F] < fx:
        x, fx = st[BEST_X], st[BEST_F]
    result[0], result[1], result[2] = x, fx, evals


@jit
def _theta_value(v: float, code: int, scale: float, fit_scale: bool, lam: float, dist: np.ndarray,
                 sw: np.ndarray, z: np.ndarray, const: float, A: np.ndarray, y: np.ndarray,
                 scale_grid: np.ndarray, tol: float, scale_values: np.ndarray, inner: np.ndarray,
                 result: np.ndarray) -> float:
    """The objective in ``v = log theta``: the NLL at the fixed ``scale``, or (``fit_scale``) its
    profile over the output scale; ``result`` gets (log s, NLL, evaluations; log s 0 where the
    scale is fixed)."""
    if fit_scale:
        _scale_search(code, math.exp(v), lam, dist, sw, z, const, A, y, scale_grid, tol, scale_values, inner,
                      result)
        return result[1]
    f = nll(code, math.exp(v), scale, lam, dist, sw, z, const, A, y)
    result[0], result[1], result[2] = 0.0, f, 1.0
    return f


@jit
def fit(points: np.ndarray, W: np.ndarray, b: np.ndarray, code: int, lam: float, scale: float, fit_scale: bool,
        n_starts: int, grid: np.ndarray, scale_grid: np.ndarray, tol: float, bounds: np.ndarray,
        out: np.ndarray) -> None:
    """Maximise the marginal likelihood of the per-arm statistics (module docstring).

    ``points`` (m x d) the arms, ``W`` and ``b`` (m) each arm's weight sum and weighted reward
    sum (``qbo.gp.cholesky.ArmStats``; arms with W = 0 unobserved), kernel ``code`` (0 SE, 1-3
    Matern 1/2, 3/2, 5/2: ``qbo.algorithms.gp_ucb_refit.KERNEL_CODES``), ``lam`` lambda,
    ``scale`` the output scale (kept unless ``fit_scale``), ``grid`` the starts' grid of ``log theta`` (ascending, its ends the
    bounds), ``scale_grid`` that of ``log s`` (used where ``fit_scale``), ``tol`` Brent's
    absolute tolerance in the logs, ``bounds`` (theta's, then the output scale's: lower, upper)
    those the grids' ends are the logs of. ``out`` gets theta, the output scale (each clamped to
    its bounds: ``exp`` of a grid's end can be a rounding step outside them), their NLL and the
    number of NLL evaluations (``FIT_*``)."""
    m, d = points.shape
    u = 0
    for i in range(m):
        if W[i] > 0.0:
            u += 1
    index = np.empty(u, dtype=np.int64)
    sw, z, y = np.empty(u), np.empty(u), np.empty(u)
    dist, A = np.empty((u, u)), np.empty((u, u))
    k, const = 0, 0.5 * u * math.log(2.0 * math.pi)
    for i in range(m):
        if W[i] > 0.0:
            index[k] = i
            sw[k] = math.sqrt(W[i])
            z[k] = sw[k] * (b[i] / W[i])
            const -= 0.5 * math.log(W[i])
            k += 1
    for i in range(u):
        for j in range(i + 1):
            acc = 0.0
            for c in range(d):
                diff = points[index[i], c] - points[index[j], c]
                acc += diff * diff
            dist[i, j] = math.sqrt(acc)
            dist[j, i] = dist[i, j]
    n = grid.shape[0]
    values, logs = np.empty(n), np.empty(n)
    scale_values, inner, st, result = np.empty(scale_grid.shape[0]), np.empty(STATE_SIZE), np.empty(STATE_SIZE), np.empty(3)
    evals = 0.0
    for i in range(n):
        values[i] = _theta_value(grid[i], code, scale, fit_scale, lam, dist, sw, z, const, A, y, scale_grid, tol,
                                 scale_values, inner, result)
        logs[i] = result[0]
        evals += result[2]
    best = 0
    for i in range(1, n):
        if values[i] < values[best]:
            best = i
    x, fx, x_scale = grid[best], values[best], logs[best]
    starts, searched = np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.bool_)
    for c in range(_starts(values, n_starts, starts)):
        i = _descend(values, starts[c])
        if searched[i]:
            continue
        searched[i] = True
        brent_start(st, grid[max(i - 1, 0)], grid[min(i + 1, n - 1)], grid[i], values[i], tol)
        here_scale = logs[i]
        while brent_next(st):
            f = _theta_value(st[PROPOSED], code, scale, fit_scale, lam, dist, sw, z, const, A, y, scale_grid, tol,
                             scale_values, inner, result)
            evals += result[2]
            if f <= st[BEST_F]:  # the new best of this search: its output scale goes with it
                here_scale = result[0]
            brent_told(st, f)
        if st[BEST_F] < fx:
            x, fx, x_scale = st[BEST_X], st[BEST_F], here_scale
    out[FIT_THETA], out[FIT_NLL], out[FIT_EVALS] = min(max(math.exp(x), bounds[0]), bounds[1]), fx, evals
    out[FIT_SCALE] = min(max(math.exp(x_scale), bounds[2]), bounds[3]) if fit_scale else scale
