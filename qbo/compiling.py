"""numba where it is installed (the optional extra ``fast``), plain Python where not: ``jit``
compiles a function with no Python objects, cached on disk, or returns it unchanged.

Compiles are ``uninterrupted`` blocks (``qbo.files``): a SIGINT or SIGTERM landing while numba
compiles or loads a cached kernel waits for the compile to end, then raises ``Interrupted`` as
anywhere else. Raised inside numba's LLVM callbacks it would be printed as an ignored
exception and lost. The hook listens to numba's compiler-lock event, which numba ends after
releasing the lock, so the raise leaves numba's state clean; it is registered at import, before
any other listener of that event, which therefore may miss the end event of a compile that
raised. Main thread only: signals are delivered there (a main thread waiting for the lock that
a worker's compile holds still waits, its signals with it).

numba's disk cache is checked against the file of the function compiled only: a kernel that
calls a compiled function of another module (``qbo.brent``'s searches, ``kernel_value``)
keeps the callee's old code after that module alone is edited. A developer editing such a
callee removes the ``*.nbi``/``*.nbc`` files under ``__pycache__``; a fresh install has none.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from qbo.files import uninterrupted

try:  # the optional extra 'fast'; the same functions run as Python without it
    import numba as _numba
    from numba.core import event as _event
except ImportError:  # pragma: no cover - exercised where numba is not installed
    if uninterrupted.replaced() is not None:  # a signal during numba's import, not a missing numba
        raise
    _numba = None
    _event = None

__all__ = ["COMPILED", "jit"]

F = TypeVar("F", bound=Callable[..., Any])
COMPILED = _numba is not None


if _event is not None:

    class _CompilesUninterrupted(_event.Listener):
        """Enters ``uninterrupted`` when numba asks for its compiler lock, leaves when it lets go.

        Only under ``interruptible`` (qbo's handler installed): there a signal during the wait
        for the lock is held too, so the acquire cannot fail and every start has its end.
        Outside it a Ctrl-C can break the acquire, numba then sends no end event, and an
        entered block would hold signals for good; ``entered`` records per start whether this
        listener entered, so an end leaves only what its start entered."""

        def __init__(self) -> None:
            self.entered: list[bool] = []

        def on_start(self, event: object) -> None:
            if threading.current_thread() is not threading.main_thread():
                return
            ours = signal.getsignal(signal.SIGINT) == uninterrupted.handle
            self.entered.append(ours)
            if ours:
                uninterrupted.__enter__()

        def on_end(self, event: object) -> None:
            if threading.current_thread() is threading.main_thread() and self.entered and self.entered.pop():
                uninterrupted.__exit__(None, None, None)  # raises a held signal, lock released

    _event.register("numba:compiler_lock", _CompilesUninterrupted())


def jit(function: F) -> F:
    """``function`` compiled by numba (nopython, nogil, cached on disk), or itself without numba."""
    if _numba is None:
        return function
    return _numba.njit(cache=True, nogil=True)(function)
