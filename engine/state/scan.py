"""A full scan: walk the tree, analyze what the facts cache does not already know, build the first state.

Analysis of many files runs in a process pool (the analyzers are pure functions of a file's text); facts
are cached in `.docbridge/cache/facts.json` by size, mtime and content hash, so a scan of an unchanged tree
parses nothing. A pool worker never outlives the process that started it: on Linux the kernel kills it when
that process dies (PR_SET_PDEATHSIG), and a watchdog thread in the worker exits it once its parent changed
(the fallback elsewhere, and for a parent that died before the worker armed the signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import FactsCache, cached_facts, facts_from_row
from docbridge.engine.base.config import Config
from docbridge.engine.base.heap import bulk, release_free_memory
from docbridge.engine.discovery.analyze import ANALYZER_VERSIONS, Analyzed, analyze_batch, read_and_analyze
from docbridge.engine.discovery.files import ANALYZED_KINDS, walk
from docbridge.engine.discovery.universe import build_universe
from docbridge.engine.state.model_state import ModelState, ScanReport
from docbridge.engine.state.transitions import resolve_everything
from immutables import Map

Progress = Callable[[str, int, int], None]
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCHDOG_INTERVAL = 0.5  # seconds between a worker's checks that its parent is still there
POOL_THRESHOLD = 400  # below this many files to parse, a process pool costs more than it saves
BATCH = 48


def scan_state(root: Path, config: Config, *, use_cache: bool = True, jobs: int = 1,
               progress: Progress | None = None, resolve: bool = True, revision: int = 0,
               on_walk: Callable[[list[str]], None] | None = None, resume: bool = False) -> ModelState:
    """The state of the tree on disk: every file walked, analyzed (or reused from the cache) and, unless
    `resolve=False` (resolution then happens when a view first needs it), resolved. `on_walk` gets the
    walked paths as soon as they are known (an editor offers them as workspace symbols meanwhile). With
    `resume`, the model an earlier scan kept (`engine.state.resume`) is used when it is valid: the files changed
    since are applied to it instead of resolving everything."""
    with bulk():
        return _scan_state(root, config, use_cache=use_cache, jobs=jobs, progress=progress, resolve=resolve,
                           revision=revision, on_walk=on_walk, resume=resume)


def _scan_state(root: Path, config: Config, *, use_cache: bool, jobs: int, progress: Progress | None,
                resolve: bool, revision: int, on_walk: Callable[[list[str]], None] | None,
                resume: bool) -> ModelState:
    started = time.perf_counter()
    started_ns = time.time_ns()
    walked, rules = walk(root, config)
    if progress:
        progress("walk", len(walked.files), len(walked.files))
    if on_walk is not None:
        on_walk([item.path for item in walked.files])
    seen = None
    if use_cache and resolve:  # what a later start may resume from (`engine.state.resume`)
        from docbridge.engine.state.resume import keep_walk, resumed_state, walk_record
        seen = walk_record(walked, started_ns)
        if resume:
            resumed = resumed_state(root, config, walked, seen, rules, revision)
            if resumed is not None:
                return keep_walk(resumed, seen)
    cache = FactsCache(root, ANALYZER_VERSIONS) if use_cache else None
    facts: dict[str, Any] = {}
    present: list[str] = []
    skipped: dict[str, str] = dict(walked.skipped)
    pending: list[tuple[str, str, str | None]] = []  # kind, path, the cached content hash it may still have
    stats: dict[str, tuple[int, int]] = {}
    parsed: list[str] = []
    reused = 0
    total_bytes = 0
    limits = config.limits
    for item in walked.files:
        present.append(item.path)
        if item.kind not in ANALYZED_KINDS:
            continue
        if item.size > limits.max_file_bytes:
            skipped[item.path] = "too-large"
            continue
        if total_bytes + item.size > limits.max_total_bytes:
            skipped[item.path] = "total-cap"
            continue
        total_bytes += item.size
        known_hash = None
        if cache is not None:
            hit = cache.lookup_stat(item.path, item.kind, item.size, item.mtime_ns)
            known = cached_facts(item.path, item.kind, hit[1]) if hit is not None else None
            if known is not None:
                facts[item.path] = known
                reused += 1
                continue
            known_hash = cache.known_hash(item.path, item.kind)
        pending.append((item.kind, item.path, known_hash))
        stats[item.path] = (item.size, item.mtime_ns)
    for kind, path, outcome, value in analyze_pending(root, limits.max_file_bytes, pending, jobs, progress):
        size, mtime = stats[path]
        if outcome == "skip":
            skipped[path] = value
            continue
        if outcome == "same" and cache is not None:  # touched, not changed: the cached facts still hold
            row = cache.lookup_hash(path, kind, value)
            known = cached_facts(path, kind, row) if row is not None else None
            if row is not None and known is not None:
                facts[path] = known
                cache.store(path, kind, value, size, mtime, row)
                reused += 1
                continue
            # the cached row no longer reads: analyzed again, here
            kind, path, outcome, value = read_and_analyze(root, limits.max_file_bytes, kind, path, None)
            if outcome == "skip":
                skipped[path] = value
                continue
        facts[path] = facts_from_row(kind, value)
        parsed.append(path)
        if cache is not None:
            cache.store(path, kind, facts[path].content_hash, size, mtime, value)
    if cache is not None:
        cache.prune(set(facts))
        with contextlib.suppress(OSError):  # a read-only checkout still scans, without a warm start
            cache.save()
        # its encoded lines live outside the interpreter's object arenas: given back before resolution allocates
        # the model (which could not reuse them, and the peak rose by their size)
        cache = None
        release_free_memory()
    universe = build_universe(config, rules, ((path, facts.get(path)) for path in sorted(present)))
    state = ModelState(revision=revision, root=root, config=config, universe=universe, skipped=Map(skipped),
                       resolved=False, use_cache=use_cache,
                       scan=ScanReport(tuple(sorted(parsed)), reused, time.perf_counter() - started))
    if resolve:
        if progress:
            progress("resolve", 0, len(universe.documents) + len(universe.modules))
        state = resolve_everything(state)
        if progress:
            progress("resolve", len(state.documents) + len(state.modules), len(state.documents) + len(state.modules))
        if seen is not None:
            state = keep_walk(state, seen)
    return state


def analyze_pending(root: Path, max_bytes: int, pending: list[tuple[str, str, str | None]], jobs: int,
                    progress: Progress | None) -> Iterable[Analyzed]:
    """Read and analyze files (kind, path, cached content hash), in order: in a process pool when there are
    many, whose workers read the files themselves (reading them all here first kept the pool waiting)."""
    total = len(pending)
    if total >= POOL_THRESHOLD and jobs > 1:
        method = "fork" if threading.active_count() == 1 else "spawn"
        batches = [(str(root), max_bytes, pending[i:i + BATCH]) for i in range(0, total, BATCH)]
        done = 0
        with ProcessPoolExecutor(max_workers=min(jobs, 8), mp_context=multiprocessing.get_context(method),
                                 initializer=follow_parent, initargs=(os.getpid(),)) as pool:
            for result in pool.map(analyze_batch, batches):
                done += len(result)
                if progress:
                    progress("analyze", done, total)
                yield from result
        return
    real_root = os.path.realpath(root)
    real_folders: dict[str, str] = {}
    for index, (kind, path, known_hash) in enumerate(pending):
        yield read_and_analyze(root, max_bytes, kind, path, known_hash, real_root, real_folders)
        if progress and index % 100 == 0:
            progress("analyze", index, total)
    if progress and total:
        progress("analyze", total, total)


def follow_parent(parent: int) -> None:
    """Pool worker initializer: end this process when `parent` (the process that started the pool) dies.

    A worker blocks reading its task queue, whose write end its siblings also hold, so it never sees the
    parent go: after `kill -9` of a scan its workers would live on as orphans."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    from docbridge.engine.discovery.typescript import forget_grammars
    forget_grammars()  # a forked worker never parses with the parent's tree-sitter objects
    # analysis leaves no cyclic garbage (none found over 4,000 files of the 20,042-file tree and all of vite's),
    # and collecting the young objects it churns through was an eighth of a worker's processor time; a forked
    # worker inherits a scan's paused collector, a spawned one (the language server's) starts with its own
    gc.disable()
    threading.Thread(target=_watch_parent, args=(parent,), name="docbridge-parent-watchdog", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCHDOG_INTERVAL)
    os._exit(1)


__all__ = ["Progress", "analyze_pending", "follow_parent", "scan_state"]
