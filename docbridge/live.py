"""A live model of one repository: scanned once, then kept equal to the files on disk.

`LiveWorkspace` holds one engine `Workspace`. `run()` scans the repository in a worker thread (reporting
progress), then follows file changes with `watchfiles` (debounced; ignored paths are dropped with the same
rules as the scan) and applies each batch as one transition, in the order the batches arrived. A changed
configuration or ignore file rescans; the previous model answers meanwhile, and what changed during the scan
is applied to its result before it is installed.

`current()` is what a request asks first: it waits (bounded) for the first scan, then for every batch seen
before the call, and returns that state. The search index of a state is built in a worker thread once and
shared by concurrent callers (`retriever`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from docbridge.engine.base.config import Config, ConfigError, load_config
from docbridge.engine.ide.files import needs_rescan
from docbridge.engine.retrieval.rank import COMBINED, retriever_of
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.scan import scan_state
from docbridge.engine.state.transitions import Change, apply_changes
from docbridge.engine.workspace import Workspace

log = logging.getLogger("docbridge.mcp")

Reporter = Callable[[float, float | None, str], Awaitable[None]]


class NotReady(Exception):
    """The first scan did not finish in time (or failed); the message says which, in one sentence."""


class LiveWorkspace:
    def __init__(self, root: Path, *, debounce_ms: int = 200, scan_timeout: float = 120.0, use_cache: bool = True,
                 jobs: int | None = None, watch: bool = True) -> None:
        self.root = root.resolve()
        self.debounce_ms = debounce_ms
        self.scan_timeout = scan_timeout
        self.use_cache = use_cache
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        self.watch = watch
        self.workspace: Workspace | None = None
        self.config: Config | None = None
        self.error: str | None = None
        self.scanning = False
        self.progress: tuple[str, int, int] = ("starting", 0, 0)
        self.ready = anyio.Event()
        self.watching = anyio.Event()  # set once the watcher runs (changes from then on are seen)
        self.scan_seconds = 0.0
        # the change pipeline: batches are numbered as they arrive and applied in that order
        self._received = 0
        self._applied = 0
        self._applied_changed = anyio.Event()
        self._touched: dict[str, None] = {}  # paths changed while a scan runs
        self._rescan_wanted = False
        self._rescan_requested = anyio.Event()
        self._index_lock = anyio.Lock()

    # ------------------------------------------------------------------ reads

    @property
    def state(self) -> ModelState | None:
        return self.workspace.state if self.workspace is not None else None

    def status(self) -> dict[str, Any]:
        phase, done, total = self.progress
        state = self.state
        return {"root": str(self.root), "state": "error" if self.error and state is None else (
            "scanning" if state is None else "ready"), "rescanning": self.scanning and state is not None,
            "progress": {"phase": phase, "done": done, "total": total}, "error": self.error,
            "revision": state.revision if state is not None else None,
            "files": len(state.facts) if state is not None else None, "scanSeconds": round(self.scan_seconds, 3),
            "pendingChanges": self._received - self._applied, "memory": _memory()}

    async def current(self, report: Reporter | None = None) -> ModelState:
        """The state that includes every change seen so far, once the first scan is installed."""
        if self.workspace is None:
            await self._wait_ready(report)
        while self._applied < self._received:
            event = self._applied_changed
            await event.wait()
        assert self.workspace is not None
        return self.workspace.state

    async def _wait_ready(self, report: Reporter | None) -> None:
        deadline = time.monotonic() + self.scan_timeout
        while not self.ready.is_set():
            if self.error is not None:
                raise NotReady(f"Doc Bridge could not scan {self.root}: {self.error}")
            left = deadline - time.monotonic()
            if left <= 0:
                phase, done, total = self.progress
                raise NotReady(f"The first scan of {self.root} is still running ({phase} {done}/{total}) after "
                               f"{self.scan_timeout:g} s; call again shortly (or start the server with a larger "
                               "--scan-timeout).")
            if report is not None:
                phase, done, total = self.progress
                try:
                    await report(float(done), float(total) if total else None, f"scanning: {phase} {done}/{total}")
                except Exception:  # a client that went away does not stop the wait
                    log.debug("progress report failed", exc_info=True)
            with anyio.move_on_after(min(0.25, left)):
                await self.ready.wait()
        if self.workspace is None:
            raise NotReady(f"Doc Bridge could not scan {self.root}: {self.error or 'the scan failed'}")

    async def retriever(self, state: ModelState) -> Any:
        """The ranked index of `state`: built once per state in a worker thread (one build at a time); hybrid
        when `retrieval.hybrid` is set (docbridge.engine.semantic: vectors built and updated in the background)."""
        if not state.has_view(COMBINED):
            async with self._index_lock:  # a second caller waits for the first build, then finds it memoised
                if not state.has_view(COMBINED):
                    await anyio.to_thread.run_sync(self._build_index, state)
        if state.config.retrieval.hybrid:
            from docbridge.engine.semantic.hybrid import hybrid_retriever_for
            return hybrid_retriever_for(state, retriever_of(state), lambda message: log.warning("%s", message))
        return retriever_of(state)

    @staticmethod
    def _build_index(state: ModelState) -> None:
        from docbridge.engine.artifacts.snapshot_file import stored_or_built_projection
        stored_or_built_projection(state)
        retriever = retriever_of(state)
        retriever.projection.content_hash  # noqa: B018 (sealed once, here, not on the first search)

    # ------------------------------------------------------------------ the scan and the watcher

    async def run(self) -> None:
        """Scan, then follow the disk until cancelled."""
        async with anyio.create_task_group() as group:
            if self.watch:
                group.start_soon(self._watch)
                with anyio.move_on_after(5):
                    await self.watching.wait()  # so that nothing written during the scan is missed
            await self._scan("initial")
            while True:
                await self._rescan_requested.wait()
                self._rescan_requested = anyio.Event()
                await self._scan("configuration changed")

    async def _scan(self, reason: str) -> None:
        self.scanning = True
        self._touched = {}
        started = time.perf_counter()

        def progress(phase: str, done: int, total: int) -> None:
            self.progress = (phase, done, total)

        try:
            config = await anyio.to_thread.run_sync(load_config, self.root)
            previous = self.state
            revision = previous.revision + 1 if previous is not None else 1
            state = await anyio.to_thread.run_sync(lambda: scan_state(
                self.root, config, use_cache=self.use_cache, jobs=self.jobs, progress=progress, revision=revision))
            while self._touched:  # what changed on disk while the scan read it
                touched, self._touched = self._touched, {}
                changes = [Change(path) for path in sorted(touched)]
                state = (await anyio.to_thread.run_sync(apply_changes, state, changes))[0]
        except ConfigError as exc:
            self.error = str(exc)
            log.error("Doc Bridge: %s", exc)
            return
        except Exception as exc:  # a scan never takes the server down
            self.error = f"{type(exc).__name__}: {exc}"
            log.exception("scanning %s failed", self.root)
            return
        finally:
            self.scanning = False
            if not self.ready.is_set() and self.error is not None:
                self.ready.set()
        self.error = None
        self.config = config
        if self.workspace is None:
            self.workspace = Workspace(self.root, config, use_cache=self.use_cache, jobs=self.jobs)
        self.workspace.config = config
        self.workspace.install(state)
        self.scan_seconds = time.perf_counter() - started
        self.progress = ("ready", len(state.facts), len(state.facts))
        log.info("Doc Bridge: %s scan of %s took %.2fs (%d files, %d from cache)", reason, self.root,
                 self.scan_seconds, len(state.facts), state.scan.reused)
        self.ready.set()

    async def _watch(self) -> None:
        from watchfiles import Change as Event
        from watchfiles import awatch

        def keep(_: Event, path: str) -> bool:
            return self._relevant(path) is not None

        try:
            async for batch in awatch(self.root, watch_filter=keep, debounce=self.debounce_ms, step=25,
                                      yield_on_timeout=True, rust_timeout=250, recursive=True):
                self.watching.set()
                if batch:
                    await self.changed(sorted({p for _, path in batch if (p := self._relevant(path)) is not None}))
        except Exception:  # the model stays as it is; say so, once
            log.exception("watching %s for changes failed; the model no longer follows the disk", self.root)

    def _relevant(self, absolute: str) -> str | None:
        """The repository path of a watched file the model cares about, or None (outside, ignored, hidden)."""
        try:
            relative = Path(absolute).relative_to(self.root).as_posix()
        except ValueError:
            return None
        if not relative or relative == ".":
            return None
        if needs_rescan(relative):
            return relative
        state = self.state
        rules = state.universe.rules if state is not None else None
        if rules is None:
            return None if relative.split("/", 1)[0] in (".docbridge", ".git") else relative
        return None if rules.is_ignored_anywhere(relative) else relative

    async def changed(self, paths: list[str]) -> None:
        """Apply one batch of changed paths (in arrival order with the batches before it)."""
        if not paths:
            return
        if any(needs_rescan(p) for p in paths):
            self._rescan_requested.set()
        if self.scanning or self.workspace is None:
            for path in paths:
                self._touched[path] = None
            if self.workspace is None:
                return
        self._received += 1
        number = self._received
        try:
            workspace = self.workspace
            while True:
                base = workspace.state
                changes = [Change(path) for path in self._expand(base, paths)]
                state, _ = await anyio.to_thread.run_sync(apply_changes, base, changes)
                if workspace.state is base:  # else a rescan installed a newer model meanwhile: apply onto it
                    workspace.install(state)
                    break
        except Exception:
            log.exception("applying changes to %s failed", ", ".join(paths[:5]))
        finally:
            self._applied = max(self._applied, number)
            event, self._applied_changed = self._applied_changed, anyio.Event()
            event.set()

    def _expand(self, state: ModelState, paths: list[str]) -> list[str]:
        """Paths with directories spelled out: a directory moved or removed as a whole is reported once, and
        every file the model knows under it (or finds under it now) changes."""
        out = dict.fromkeys(paths)
        rules = state.universe.rules
        for path in paths:
            full = self.root / path
            if full.is_dir() and not full.is_symlink():
                for directory, names, files in os.walk(full):
                    names[:] = sorted(n for n in names if not n.startswith("."))
                    for name in files:
                        relative = Path(directory, name).relative_to(self.root).as_posix()
                        if not rules.is_ignored_anywhere(relative):
                            out[relative] = None
            elif path not in state.present and not full.exists():
                prefix = path + "/"
                out.update(dict.fromkeys(p for p in state.present if p.startswith(prefix)))
        return list(out)


def _memory() -> dict[str, float]:
    """This process's resident and peak resident memory, in MiB (Linux; peak only elsewhere)."""
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"peakRssMiB": round(peak, 1)}
    try:
        with open("/proc/self/statm") as handle:
            out["rssMiB"] = round(int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return out


__all__ = ["LiveWorkspace", "NotReady"]
