"""The cyclic garbage collector around bulk builds of the model, and sorting that lets other threads run.

A scan, a projection or a search index allocates a million objects that live as long as the model. While they
are built, every few hundred allocations start a collection that walks the young objects, and each full
collection walks them all: on a 15,000-file tree that was 45 % of a scan (2.5 of 5.5 s) and stalls of up to a
second that held the interpreter lock while the language server had requests to answer. Nearly nothing a build
allocates is cyclic garbage (15,000 objects of 1.3 million after a scan; reference counting frees the rest),
so collection is paused during a build and what survives it is frozen (`gc.freeze`): later collections, run
while editing, never walk the model again. The price is that the few cycles a build leaves are never
collected, once per build of a state.
"""

from __future__ import annotations

import ctypes
import gc
import heapq
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

T = TypeVar("T")
K = TypeVar("K")

_lock = threading.Lock()
_depth = 0  # builds running (in any thread): collection resumes when the last one ends
_resume = False  # whether collection was enabled when the first of them started


@contextmanager
def bulk() -> Iterator[None]:
    """Collection paused for the duration (nested and concurrent builds share one pause); the survivors are
    frozen when the last build ends."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.freeze()
                if _resume:
                    gc.enable()
                release_free_memory()


def release_free_memory() -> None:
    """Give the memory a build freed back to the system (glibc keeps it otherwise: a search index build on a
    3,000-file repository left 15 MB of freed pages in the process); the next build then starts lower."""
    if _TRIM is not None:
        _TRIM(0)


def _libc(name: str) -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # the process's own symbols hold the C library's (`ctypes.util`, which finds it by name, costs 40 ms)
        function: Callable[..., int] = getattr(ctypes.CDLL(None), name)
        return function
    except (OSError, AttributeError):  # another C library (musl): nothing to tune
        return None


_TRIM = _libc("malloc_trim")
_MALLOPT = _libc("mallopt")
M_ARENA_MAX = -8  # glibc's `mallopt` parameter: the most malloc arenas the process makes
ARENAS = 2


def bound_malloc_arenas() -> None:
    """At most ARENAS malloc arenas in this process. glibc gives threads arenas of their own (up to eight per
    core), and memory freed in one is kept by it: the search index's writer and merge threads, new at each patch
    of the index, left 4 MB more in the language server after every edit and search on a 20,000-file tree
    (0.3 MB with two arenas). Called before the process starts its threads."""
    if _MALLOPT is not None:
        _MALLOPT(M_ARENA_MAX, ARENAS)


def built(build: Callable[[], T]) -> Callable[[], T]:
    """`build` run inside `bulk()`."""

    def run() -> T:
        with bulk():
            return build()
    return run


def add_alone_or_listed(table: dict[Any, Any], key: Any, value: Any) -> None:
    """Add `value` under `key`, a key's first value held as itself and a list made from its second: where most keys
    name one value, a list each (88 bytes with its first append) is most of such a table. Values are never lists."""
    found = table.get(key)
    if found is None:
        table[key] = value
    elif type(found) is list:
        found.append(value)
    else:
        table[key] = [found, value]


class OneCopy(Generic[K, T]):
    """One copy of each equal value across the process, as `sys.intern` keeps one of each string, for what many
    files repeat (dependency keys, positions, metadata). When `limit` values are held they are all forgotten at
    once: values made once (a name typed in an editor's buffer) do not pile up, and copies already shared stay
    shared."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: dict[K, T] = {}

    def same(self: OneCopy[K, K], value: K) -> K:
        """The copy held of `value` (itself when it is the first)."""
        found = self._held.get(value)
        return found if found is not None else self._hold(value, value)

    def made(self, key: K, make: Callable[[], T]) -> T:
        """The value held for `key`, made when there is none."""
        found = self._held.get(key)
        return found if found is not None else self._hold(key, make())

    def _hold(self, key: K, value: T) -> T:
        if len(self._held) >= self.limit:
            self._held.clear()
        self._held[key] = value
        return value


ENTRY_MEMO = 8192  # entries whose derived values (field masks, body tokens, neighbours) a search index keeps


def remember(memo: dict[K, T], key: K, value: T, limit: int | None = None) -> T:
    """`value` kept in `memo` under `key`, the memo emptied first when it holds `limit` values. Searches of a
    long session reach most entries of an index: kept for all of them, what the ranking derives of each grew
    a language server by 66 MB over 2,000 searches of a 20,000-file tree (five times that at 100,000 files)."""
    if len(memo) >= (ENTRY_MEMO if limit is None else limit):
        memo.clear()
    memo[key] = value
    return value


SORT_RUN = 8192  # items one C-level sort handles before the merge lets other threads run (about 5 ms)


def sorted_in_runs(items: Iterable[Any], key: Callable[[Any], Any] | None = None) -> list[Any]:
    """`sorted(items, key=key)`, the same list, without holding the interpreter lock for the whole sort: a sort
    of 100,000 tuples runs about 100 ms in C, and a thread analysing a large buffer would hold the language
    server's event loop that long. Runs are sorted apart and merged lazily (`heapq.merge` is stable, so equal
    keys keep their order)."""
    listed = list(items)
    if len(listed) <= SORT_RUN:
        return sorted(listed, key=key)
    runs = [sorted(listed[i:i + SORT_RUN], key=key) for i in range(0, len(listed), SORT_RUN)]
    return list(heapq.merge(*runs, key=key))


__all__ = ["ENTRY_MEMO", "OneCopy", "bound_malloc_arenas", "built", "bulk", "release_free_memory", "remember",
           "sorted_in_runs"]
