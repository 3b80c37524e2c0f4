"""Caches bounded by bytes, least recently used first out, several sharing one budget.

A long-lived process (the warm engine, the MCP server) keeps the matrices it has read for the
next question; without a bound it would hold every scope's vectors and every question's vector
it was ever asked. ``ByteBudget`` holds the bytes; each ``budget.view()`` is a dict-like cache
(``in``, ``[]``, ``[]=``) whose entries count against it, so the oldest entry of any view leaves
first. The newest entry always stays, even when it alone is over the budget.
"""
from __future__ import annotations

import sys
from collections import OrderedDict
from itertools import count
from _thread import allocate_lock as Lock   # not `threading`: a one-shot question need not import it
from typing import Any, Callable


def size_of(value: Any) -> int:
    """Bytes an entry holds: its ``nbytes`` (an array's buffer, a store's estimate of itself), a
    container's entries, a string's length."""
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    if isinstance(value, (list, tuple)):
        return 56 + sum(size_of(v) for v in value)
    if isinstance(value, dict):
        return 64 + sum(size_of(k) + size_of(v) for k, v in value.items())
    if isinstance(value, (str, bytes)):
        return 49 + len(value)
    return sys.getsizeof(value) if value is not None else 0


class ByteBudget:
    """At most ``cap`` bytes over every view made from it (see the module's docstring)."""

    def __init__(self, cap: int):
        self.cap = cap
        self.used = 0
        self._entries: OrderedDict[tuple[int, Any], tuple[Any, int]] = OrderedDict()
        self._views = count()
        self._lock = Lock()

    def view(self) -> "CacheView":
        return CacheView(self, next(self._views))

    def _get(self, key: tuple[int, Any]) -> Any:
        with self._lock:
            value, size = self._entries[key]
            self._entries.move_to_end(key)
            if not isinstance(getattr(type(value), "nbytes", None), property):
                return value
            now = size_of(value)   # a store fills as it is read: its estimate is taken again at each use
            if now != size:
                self._entries[key] = (value, now)
                self.used += now - size
                self._evict()
            return value

    def _put(self, key: tuple[int, Any], value: Any) -> None:
        size = size_of(value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.used -= old[1]
            self._entries[key] = (value, size)
            self.used += size
            self._evict()

    def _evict(self) -> None:
        """Least recently used out until within the cap; the newest entry stays."""
        while self.used > self.cap and len(self._entries) > 1:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.used -= dropped

    def _has(self, key: tuple[int, Any]) -> bool:
        return key in self._entries

    def _keys(self, view: int) -> list:
        with self._lock:
            return [k for v, k in self._entries if v == view]


class CacheView:
    """One cache inside a ByteBudget, used like a dict."""

    def __init__(self, budget: ByteBudget, view: int):
        self._budget = budget
        self._view = view

    def __contains__(self, key: Any) -> bool:
        return self._budget._has((self._view, key))

    def __getitem__(self, key: Any) -> Any:
        return self._budget._get((self._view, key))

    def __setitem__(self, key: Any, value: Any) -> None:
        self._budget._put((self._view, key), value)

    def fetch(self, key: Any, load: Callable[[], Any]) -> Any:
        """The cached value of ``key``, else ``load()``'s, kept; what is returned is never
        missing, even when another thread's entry pushed it out at once."""
        try:
            return self[key]
        except KeyError:
            value = load()
            self[key] = value
            return value

    def __len__(self) -> int:
        return len(self._budget._keys(self._view))

    def __iter__(self):
        return iter(self._budget._keys(self._view))

    def keys(self) -> list:
        return self._budget._keys(self._view)
