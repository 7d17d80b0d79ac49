"""The process-wide caches of qbo, in one registry: list them, read their sizes, clear them.

A module that keeps a cache for the life of the process registers it here, by a dotted name
(the module's and the cache's), either with :func:`lru` (``functools.lru_cache`` plus
registration) or with :func:`register` for any object with ``cache_clear()`` and a length
(:class:`Cache`). Benchmarks that time a computation from empty caches call :func:`clear`;
nothing reaches into a module's private cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["Cache", "clear", "lru", "lru_by_weight", "names", "register", "sizes"]

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


class _WeightedLru:
    """Least-recently-used results whose total ``weight`` stays at most ``max_weight``."""

    def __init__(self, max_weight: int, weight: Callable[[Any], int]) -> None:
        self.max_weight, self.weight, self.held = max_weight, weight, 0
        self._entries: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> tuple[bool, Any]:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return False, None
            self._entries.move_to_end(key)
            return True, entry[0]

    def put(self, key: Any, value: Any) -> None:
        w = self.weight(value)
        if w > self.max_weight:
            return  # heavier than the whole cache: returned, not kept
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (value, w)
            self.held += w
            while self.held > self.max_weight:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.held -= dropped

    def cache_clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.held = 0

    def __len__(self) -> int:
        return len(self._entries)


def lru_by_weight(max_weight: int, weight: Callable[[Any], int]) -> Callable[[F], F]:
    """An LRU cache of a function of hashable positional arguments, bounded by the total
    ``weight(result)`` it holds instead of by a count (results whose sizes span decades, such
    as circuits with k Grover steps); registered like :func:`lru`."""

    def wrap(function: F) -> F:
        cache = _WeightedLru(max_weight, weight)

        @wraps(function)
        def cached(*args: Any) -> Any:
            hit, value = cache.get(args)
            if hit:
                return value
            value = function(*args)
            cache.put(args, value)
            return value

        cached.cache_clear = cache.cache_clear  # type: ignore[attr-defined]
        register(f"{function.__module__}.{function.__qualname__}", cache)
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
