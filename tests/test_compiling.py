"""A signal landing while numba compiles waits for the compile to end (``qbo.compiling``).

Raised inside numba's LLVM callbacks, ``Interrupted`` was printed as an ignored exception and
lost (a CI run of tests/test_reliability_interrupts.py caught it); held, it is raised once the
compiler lock is released, and the kernel is compiled.
"""

from __future__ import annotations

import signal

import pytest

from qbo.compiling import COMPILED, jit
from qbo.files import Interrupted, interruptible, uninterrupted

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba (the extra 'fast') is not installed")


def test_a_signal_during_a_compile_is_held_until_the_compile_ends() -> None:
    import numba
    from numba.core import event

    seen: list[int] = []

    class SignalMidCompile(event.Listener):
        def on_start(self, ev: object) -> None:  # inside the compiler lock
            seen.append(uninterrupted.depth)
            signal.raise_signal(signal.SIGINT)

        def on_end(self, ev: object) -> None:
            pass

    def add_one(x: float) -> float:
        return x + 1.0

    kernel = numba.njit(cache=False)(add_one)  # compiled on every run (``jit`` would load the disk cache)
    listener = SignalMidCompile()
    event.register("numba:compile", listener)
    try:
        with pytest.raises(Interrupted) as caught, interruptible():
            kernel(1.0)
    finally:
        event.unregister("numba:compile", listener)
    assert caught.value.signum == signal.SIGINT
    assert seen and seen[0] >= 1  # the compile ran inside an uninterrupted block
    assert uninterrupted.depth == 0
    assert len(kernel.signatures) == 1  # the compile finished before the raise
    assert kernel(2.0) == 3.0


def test_without_a_signal_compiles_leave_no_deferral_behind() -> None:
    def double(x: float) -> float:
        return 2.0 * x

    kernel = jit(double)
    with interruptible():
        assert kernel(2.0) == 4.0
    assert uninterrupted.depth == 0 and uninterrupted.pending is None


def test_a_compile_broken_before_the_lock_outside_interruptible_holds_no_signal_back() -> None:
    """A Ctrl-C that breaks numba's wait for its lock (no ``interruptible``: Python's own
    handler) sends no end event; the guard must not be left entered."""
    import numba
    from numba.core import event

    class BreakTheAcquire(event.Listener):  # registered after qbo's: runs after its on_start
        def on_start(self, ev: object) -> None:
            raise KeyboardInterrupt

        def on_end(self, ev: object) -> None:
            pass

    def triple(x: float) -> float:
        return 3.0 * x

    listener = BreakTheAcquire()
    event.register("numba:compiler_lock", listener)
    try:
        with pytest.raises(KeyboardInterrupt):
            numba.njit(cache=False)(triple)(1.0)
    finally:
        event.unregister("numba:compiler_lock", listener)
    assert uninterrupted.depth == 0
    with pytest.raises(Interrupted), interruptible():
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):  # the handler runs between bytecodes
            pass
