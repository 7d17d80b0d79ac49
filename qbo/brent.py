"""Brent's minimiser and root finder in reverse communication, compiled where numba is.

Brent 1973, "Algorithms for Minimization without Derivatives": Ch. 5's minimiser (golden
section safeguarded by successive parabolic interpolation; never leaves its bracket,
superlinear on a smooth minimum) and Ch. 4's root finder (bisection safeguarding secant and
inverse quadratic steps; never leaves the bracket where the sign changes).

Reverse communication: ``*_start`` takes the bracket, ``*_next`` returns False when done and
otherwise proposes the point ``state[PROPOSED]``, which the caller evaluates and hands back
through ``*_told``. One iteration thus serves any objective without passing functions
(numba compiles no closures of this kind, nor recursion between cached functions). Every
operation is IEEE arithmetic, so a search is a pure function of its inputs, the same with
numba and without (``qbo.compiling``). The state is a float array of ``STATE_SIZE``.
"""

from __future__ import annotations

import math

import numpy as np

from qbo.compiling import jit

__all__ = ["BEST_F", "BEST_X", "GOLDEN", "PROPOSED", "ROOT", "STATE_SIZE", "brent_next", "brent_start", "brent_told",
           "zero_next", "zero_start", "zero_told"]

STATE_SIZE = 12
# the minimiser's state: the bracket [a, b], the best point x, the second and third best w and
# v, their values, the last two steps d and e, the point proposed u, the tolerance
_A, _B, BEST_X, _W, _V, BEST_F, _FW, _FV, _D, _E, PROPOSED, _TOL = range(STATE_SIZE)
GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))  # (3 - sqrt 5) / 2, the golden section of Brent's steps
# the root finder's state: the last point a, the best point b (ROOT), the contrapoint c (the
# root lies between b and c), their values, the last two steps d and e, the tolerance; the
# point proposed is PROPOSED as above
_ZA, ROOT, _ZC, _ZFA, _ZFB, _ZFC, _ZD, _ZE, _ZTOL = range(9)
_EPS = 2.220446049250313e-16  # double precision's machine epsilon: the root's relative floor


@jit
def brent_start(st: np.ndarray, a: float, b: float, x: float, fx: float, tol: float) -> None:
    """Begin a search of [a, b] at x (a <= x <= b) of known value fx, to the absolute tolerance tol."""
    st[_A], st[_B], st[BEST_X], st[_W], st[_V] = a, b, x, x, x
    st[BEST_F], st[_FW], st[_FV] = fx, fx, fx
    st[_D], st[_E], st[_TOL] = 0.0, 0.0, tol


@jit
def brent_next(st: np.ndarray) -> bool:
    """False where the bracket is within tolerance of x (done); else True, and the next point to
    evaluate is ``st[PROPOSED]`` (a parabolic step through x, w, v where it is safe, else golden)."""
    a, b, x, w, v = st[_A], st[_B], st[BEST_X], st[_W], st[_V]
    tol = st[_TOL]
    mid = 0.5 * (a + b)
    if abs(x - mid) <= 2.0 * tol - 0.5 * (b - a):
        return False
    parabola = False
    d, e = st[_D], st[_E]
    if abs(e) > tol and math.isfinite(st[BEST_F]) and math.isfinite(st[_FW]) and math.isfinite(st[_FV]):
        r = (x - w) * (st[BEST_F] - st[_FV])
        q = (x - v) * (st[BEST_F] - st[_FW])
        p = (x - v) * q - (x - w) * r
        q = 2.0 * (q - r)
        if q > 0.0:
            p = -p
        else:
            q = -q
        if abs(p) < abs(0.5 * q * e) and p > q * (a - x) and p < q * (b - x):
            e, d = d, p / q  # the parabola's minimum, inside the bracket, a step shorter than half the one before last
            parabola = True
            u = x + d
            if u - a < 2.0 * tol or b - u < 2.0 * tol:
                d = tol if x < mid else -tol
    if not parabola:
        e = (b - x) if x < mid else (a - x)
        d = GOLDEN * e
    if abs(d) >= tol:
        u = x + d
    else:
        u = x + (tol if d > 0.0 else -tol)
    st[_D], st[_E], st[PROPOSED] = d, e, u
    return True


@jit
def brent_told(st: np.ndarray, fu: float) -> None:
    """The value ``fu`` at the point proposed: shrink the bracket and rank x, w, v."""
    u, x = st[PROPOSED], st[BEST_X]
    if fu <= st[BEST_F]:
        if u < x:
            st[_B] = x
        else:
            st[_A] = x
        st[_V], st[_FV] = st[_W], st[_FW]
        st[_W], st[_FW] = x, st[BEST_F]
        st[BEST_X], st[BEST_F] = u, fu
        return
    if u < x:
        st[_A] = u
    else:
        st[_B] = u
    if fu <= st[_FW] or st[_W] == x:
        st[_V], st[_FV] = st[_W], st[_FW]
        st[_W], st[_FW] = u, fu
    elif fu <= st[_FV] or st[_V] == x or st[_V] == st[_W]:
        st[_V], st[_FV] = u, fu


@jit
def zero_start(st: np.ndarray, a: float, fa: float, b: float, fb: float, tol: float) -> None:
    """Begin a root search between a and b, whose values fa and fb differ in sign (or one is
    0), to ``tol`` plus 4 ulp of the root."""
    st[_ZA], st[_ZFA], st[ROOT], st[_ZFB] = a, fa, b, fb
    st[_ZC], st[_ZFC] = a, fa
    st[_ZD] = st[_ZE] = b - a
    st[_ZTOL] = tol


@jit
def zero_next(st: np.ndarray) -> bool:
    """False where the root ``st[ROOT]`` is within tolerance (done); else True, and the next
    point to evaluate is ``st[PROPOSED]`` (an inverse quadratic or secant step where it lands
    well inside the bracket and shrinks fast enough, else bisection)."""
    a, fa, b, fb, c, fc = st[_ZA], st[_ZFA], st[ROOT], st[_ZFB], st[_ZC], st[_ZFC]
    d, e = st[_ZD], st[_ZE]
    if (fb > 0.0) == (fc > 0.0) and fb != 0.0 and fc != 0.0:  # keep the root between b and c
        c, fc = a, fa
        d = e = b - a
    if abs(fc) < abs(fb):  # b the best guess
        a, b, c = b, c, b
        fa, fb, fc = fb, fc, fb
    tol = 2.0 * _EPS * abs(b) + 0.5 * st[_ZTOL]
    half = 0.5 * (c - b)
    done = abs(half) <= tol or fb == 0.0
    if not done:
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant
                p = 2.0 * half * s
                q = 1.0 - s
            else:  # inverse quadratic
                qa = fa / fc
                r = fb / fc
                p = s * (2.0 * half * qa * (qa - r) - (b - a) * (r - 1.0))
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            p = abs(p)
            if 2.0 * p < min(3.0 * half * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = half
        else:
            d = e = half
        a, fa = b, fb
        b += d if abs(d) > tol else (tol if half > 0.0 else -tol)
        st[PROPOSED] = b
    st[_ZA], st[_ZFA], st[ROOT], st[_ZFB], st[_ZC], st[_ZFC], st[_ZD], st[_ZE] = a, fa, b, fb, c, fc, d, e
    return not done


@jit
def zero_told(st: np.ndarray, fu: float) -> None:
    """The value ``fu`` at the point proposed (now ``st[ROOT]``)."""
    st[_ZFB] = fu
