"""Workspace folders: each holds one engine Workspace (the folder's current model state) and applies the
editor's changes to it in the order they arrive.

A change is applied at once, on the event loop, when it is cheap (an ordinary buffer edit); a costly one (a
very large buffer, a `package.json` that re-resolves everything) is computed in a worker thread from the state
current when its turn comes, and every later change waits its turn behind it. A request asks `settled(seq)`
first: it then sees every change the client sent before it, and nothing waits for work that came after.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbridge.engine.base.config import Config
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.transitions import Change, apply_changes, costly
from docbridge.engine.workspace import Workspace
from docbridge.lsp.positions import uri_to_path

log = logging.getLogger("docbridge.lsp")


class Waited:
    """Whether the editor is waiting for something: a build it waits for (a search index built for a search), or a
    message heard from it in the last `QUIET_S` (an edit, a request). Writing in the background (the kept model)
    waits for such a build to end, and while the editor is busy it writes in short turns: sharing the interpreter
    with it, each time the server's thread gave up the lock (a read, a write) the writer took it and the server
    waited up to a switch interval (5 ms) to get it back, and an edit's diagnostics on a 100,000-file tree took
    120-155 ms instead of 35 ms while the model was written. Waiting for the editor to be quiet instead kept a
    model from being written at all through minutes of editing."""

    QUIET_S = 0.1  # the editor is quiet this long after its last message
    YIELD_S = 0.02  # while it is not, a pause lasts this long (the writer keeps about a tenth of the time)
    LIMIT_S = 120.0  # a pause ends after this long whatever runs: background work is delayed, never starved

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._idle = threading.Event()
        self._idle.set()
        self._heard = 0.0  # time.monotonic() of the editor's last message
        self._closing = False

    def close(self) -> None:
        """The editor is leaving (a shutdown): background work it waits for goes on without pauses."""
        self._closing = True
        self._idle.set()

    def heard(self) -> None:
        self._heard = time.monotonic()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        with self._lock:
            self._running += 1
            self._idle.clear()
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0:
                    self._idle.set()

    def pause(self) -> None:
        """Between two pieces of background work: wait while a build the editor waits for runs, rest a moment
        while the editor is busy, then let another thread run."""
        if not self._closing:
            self._idle.wait(self.LIMIT_S)
            busy = self._heard + self.QUIET_S - time.monotonic()
            if busy > 0 and not self._closing:
                time.sleep(min(busy, self.YIELD_S))
        time.sleep(0)


waited = Waited()  # the process's one editor


def _set_event() -> asyncio.Event:
    event = asyncio.Event()
    event.set()
    return event


@dataclass(slots=True)
class Folder:
    root: Path
    uri: str
    refused: str | None = None  # why this folder is not scanned (home directory, filesystem root)
    workspace: Workspace | None = None  # None until the first scan finishes
    config: Config | None = None
    scanning: bool = False
    # set once a model is installed, or once a scan failed with no model to answer from (requests waiting for
    # the first model then answer empty instead of waiting until the configuration is fixed)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    # changes seen while a scan runs (path -> buffer text, or None for the disk): applied to the scan's result
    touched: dict[str, str | None] = field(default_factory=dict)
    provisional: dict[str, tuple[str, ModelState]] = field(default_factory=dict)
    walked: list[str] = field(default_factory=list)  # the paths a running first scan has walked
    # uri -> (relative path, signature of what was last published: `diagnostics._signature`), for files with
    # diagnostics
    published: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    # uri of an open document -> (its text when they were sent, the diagnostics last sent): what a restart shows
    open_sent: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)
    published_index: Any = None  # the findings index diagnostics were last published from
    burst: Any = None  # the findings index the burst after a scan publishes, while it runs
    # set unless that burst runs: a search index is built after it, not beside it (`docbridge.lsp.commands`)
    published_all: asyncio.Event = field(default_factory=_set_event)
    burst_sent: set[str] = field(default_factory=set)  # files an edit published during that burst
    burst_before: Any = None  # `published_index` when that burst began
    noticed: set[str] = field(default_factory=set)  # paths last published with a "not analyzed" notice
    findings_total: int = 0
    timer: Any = None  # the debounced diagnostics call
    forced: set[str] = field(default_factory=set)  # files to publish at the next call even if unchanged
    deriving: bool = False  # findings are being derived in a worker thread
    indexing: dict[int, asyncio.Future[Any]] = field(default_factory=dict)  # revision -> retriever build
    index_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    scan_started: float = 0.0
    # the change pipeline
    received: int = 0
    applied: int = 0
    backlog: collections.deque[tuple[int, list[Change]]] = field(default_factory=collections.deque)
    runner: asyncio.Task[None] | None = None
    waiters: list[tuple[int, asyncio.Future[None]]] = field(default_factory=list)
    on_change: Callable[[Folder], None] | None = None  # called after every change to the model
    after_change: Callable[[Folder], None] | None = None  # set once the search index is used (docbridge.lsp.commands)
    warm_timer: asyncio.TimerHandle | None = None  # the pending rebuild of that index
    index_build_s: float = 0.0  # how long the last whole build of that index took
    unkept: ModelState | None = None  # the last scan's result, until a thread starts writing it for a restart
    keeping: threading.Thread | None = None  # that thread

    @property
    def state(self) -> ModelState | None:
        return self.workspace.state if self.workspace is not None else None

    def relative(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            try:
                return path.relative_to(self.root).as_posix()
            except ValueError:
                return None

    # ---- changes in order

    def change(self, changes: list[Change]) -> bool:
        """Apply the editor's changes: now when cheap and nothing is waiting, else in order after the rest.
        Whether they are applied already."""
        if self.scanning:
            for change in changes:
                self.touched[change.path] = change.text
        if self.workspace is None:
            return False
        self.received += 1
        if not self.backlog and self.runner is None and not costly(changes, self.workspace.state):
            try:
                self._install(apply_changes(self.workspace.state, changes)[0])
            finally:  # a change that failed (the handler reports it) is not waited for by every later request
                self.applied = self.received
            return True
        self.backlog.append((self.received, changes))
        if self.runner is None:
            self.runner = asyncio.ensure_future(self._drain())
        return False

    async def _drain(self) -> None:
        try:
            while self.backlog:
                seq, changes = self.backlog.popleft()
                workspace = self.workspace
                if workspace is not None:
                    try:
                        if costly(changes, workspace.state):
                            state = await asyncio.to_thread(apply_changes, workspace.state, changes)
                        else:
                            state = apply_changes(workspace.state, changes)
                        if self.workspace is workspace:
                            self._install(state[0])
                    except Exception:
                        log.exception("applying a change failed")
                self.applied = seq
                self._wake()
        finally:
            self.runner = None
            self.applied = self.received
            self._wake()

    def _install(self, state: ModelState) -> None:
        assert self.workspace is not None
        if state is self.workspace.state:
            return
        self.workspace.install(state)
        if self.on_change is not None:
            self.on_change(self)
        if self.after_change is not None:
            self.after_change(self)

    def _wake(self) -> None:
        waiting = []
        for seq, future in self.waiters:
            if seq <= self.applied:
                if not future.done():
                    future.set_result(None)
            else:
                waiting.append((seq, future))
        self.waiters = waiting

    async def settled(self) -> None:
        """Wait until every change received so far is applied (at once when nothing is in the backlog)."""
        wanted = self.received
        if self.applied >= wanted:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append((wanted, future))
        await future


def refusal(root: Path) -> str | None:
    """Why a folder must not be scanned: a home directory or a filesystem root is not a project."""
    resolved = root.resolve()
    if resolved.parent == resolved:
        return f"{resolved} is the filesystem root"
    try:
        if resolved == Path.home().resolve():
            return f"{resolved} is your home directory"
    except RuntimeError:
        pass
    return None


class Folders:
    """The workspace folders of a session, and which one holds a URI (memoised: resolving a path costs
    system calls on every request)."""

    def __init__(self) -> None:
        self.by_root: dict[str, Folder] = {}
        self._located: dict[str, tuple[Folder | None, str | None]] = {}

    def __iter__(self) -> Any:
        return iter(list(self.by_root.values()))

    def __len__(self) -> int:
        return len(self.by_root)

    def add(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        root = path.resolve()
        folder = self.by_root.get(str(root))
        if folder is None:
            folder = Folder(root=root, uri=uri, refused=refusal(root))
            self.by_root[str(root)] = folder
            self._located.clear()
        return folder

    def remove(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        self._located.clear()
        return self.by_root.pop(str(path.resolve()), None) if path else None

    def locate(self, uri: str) -> tuple[Folder | None, str | None]:
        """The folder that holds `uri` (the deepest), and the repository-relative path in it."""
        found = self._located.get(uri)
        if found is None:
            found = self._locate(uri)
            if len(self._located) > 50_000:
                self._located.clear()
            self._located[uri] = found
        return found

    def _locate(self, uri: str) -> tuple[Folder | None, str | None]:
        path = uri_to_path(uri)
        if path is None:
            return None, None
        # `..` and links are resolved for a path that does not exist yet too (a rename's target):
        # `<root>/docs/../../etc/x.md` is outside the root, however it is spelled
        try:
            resolved = path.resolve()
        # a link loop; a lone surrogate, which no file name can hold (JSON can): no file of any folder
        except (OSError, RuntimeError, ValueError):
            return None, None
        best: Folder | None = None
        for folder in self.by_root.values():
            if folder.refused:
                continue
            if (resolved == folder.root or folder.root in resolved.parents) and (
                    best is None or len(str(folder.root)) > len(str(best.root))):
                best = folder
        if best is None:
            return None, None
        return best, best.relative(resolved)


__all__ = ["Folder", "Folders", "Waited", "refusal", "waited"]
