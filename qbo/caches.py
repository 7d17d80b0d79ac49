"""The process-wide caches of qbo, in one registry: list them, read their sizes, clear them.

A module that keeps a cache for the life of the process registers it here, by a dotted name
(the module's and the cache's), either with :func:`lru` (``functools.lru_cache`` plus
registration) or with :func:`register` for any object with ``cache_clear()`` and a length
(:class:`Cache`). Benchmarks that time a computation from empty caches call :func:`clear`;
nothing reaches into a module's private cache.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["Cache", "clear", "lru", "names", "register", "sizes"]

F = TypeVar("F", bound=Callable[..., Any])


@runtime_checkable
class Cache(Protocol):
    """A cache the registry can clear and measure (entries held now)."""

    def cache_clear(self) -> None: ...

    def __len__(self) -> int: ...


class _LruCache:
    """A ``functools.lru_cache`` wrapper seen as a :class:`Cache`."""

    def __init__(self, wrapper: Any) -> None:
        self._wrapper = wrapper

    def cache_clear(self) -> None:
        self._wrapper.cache_clear()

    def __len__(self) -> int:
        return int(self._wrapper.cache_info().currsize)


_REGISTRY: dict[str, Cache] = {}


def register(name: str, cache: Cache) -> None:
    """Register ``cache`` under the dotted ``name`` (e.g. ``qbo.noise.depth.compiler_for``);
    registering a name again replaces the entry (a reloaded module)."""
    _REGISTRY[name] = cache


def lru(maxsize: int | None = 128) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)``, registered under the function's module and qualname."""

    def wrap(function: F) -> F:
        cached = lru_cache(maxsize=maxsize)(function)
        register(f"{function.__module__}.{function.__qualname__}", _LruCache(cached))
        return cached  # type: ignore[return-value]

    return wrap


def names() -> list[str]:
    """The registered caches' names, sorted."""
    return sorted(_REGISTRY)


def sizes(prefix: str = "") -> dict[str, int]:
    """Entries held now by each registered cache whose name starts with ``prefix``."""
    return {name: len(cache) for name, cache in sorted(_REGISTRY.items()) if name.startswith(prefix)}


def clear(prefix: str = "") -> list[str]:
    """Empty every registered cache whose name starts with ``prefix`` (all by default); returns
    the names cleared. Results are unchanged: a cache only remembers what it computed."""
    cleared = [name for name in sorted(_REGISTRY) if name.startswith(prefix)]
    for name in cleared:
        _REGISTRY[name].cache_clear()
    return cleared
