"""Scanning a folder: in a worker thread, with work-done progress; the result becomes the folder's model.

The scan reads the disk. Whatever the editor changed while it ran (buffer edits, files changed on disk) is
applied to its result before it is installed, so the new model equals the files as the editor sees them.
Until the first scan is installed, requests on open Markdown buffers are answered provisionally (see
`docbridge.engine.ide.provisional`); a rescan (configuration changed, `docbridge.reindex`) leaves the previous model
serving, and edits keep going into it meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from docbridge.engine.base.config import ConfigError, load_config
from docbridge.engine.base.heap import release_free_memory
from docbridge.engine.base.safe_io import ArtifactPathError
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.resume import write_model
from docbridge.engine.state.scan import scan_state
from docbridge.engine.state.transitions import Change, apply_changes
from docbridge.engine.workspace import Workspace
from docbridge.lsp import diagnostics, restart
from docbridge.lsp.folders import Folder, waited
from lsprotocol import types as T

if TYPE_CHECKING:
    from docbridge.lsp.server import DocBridgeServer

log = logging.getLogger("docbridge.lsp")


def prepare(server: DocBridgeServer, folder: Folder) -> None:
    """Load the folder's configuration (for provisional answers during its first scan)."""
    if folder.config is None and not folder.refused:
        try:
            folder.config = load_config(folder.root)
        except ConfigError:
            folder.config = None  # the scan reports it
        except Exception:
            log.exception("loading the configuration of %s failed", folder.root)


async def scan(server: DocBridgeServer, folder: Folder, reason: str = "initial") -> None:
    """Scan a folder in a worker thread, then install the new model (with the editor's changes since)."""
    if folder.refused or folder.scanning:
        return
    folder.scanning = True
    # open buffers win over the disk: the scan's result gets every one of them (and edits made meanwhile)
    folder.touched = {path: "" for uri in list(server.workspace.text_documents)
                      for owner, path in [server.folders.locate(uri)] if owner is folder and path is not None}
    folder.scan_started = time.perf_counter()
    server.status(folder, "scanning")
    token = str(uuid.uuid4())
    progress = bool(server.client_capabilities.window and server.client_capabilities.window.work_done_progress)
    loop = asyncio.get_running_loop()
    if progress:
        try:
            await server.work_done_progress.create_async(token)
            server.work_done_progress.begin(token, T.WorkDoneProgressBegin(
                title="Doc Bridge", message=f"scanning {folder.root.name}", percentage=0, cancellable=False))
        except Exception:
            progress = False
    last = [0.0]

    def report(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if not progress or now - last[0] < 0.2:
            return
        last[0] = now
        percentage = int(100 * done / total) if total else 0
        loop.call_soon_threadsafe(_report, server, token, f"{phase} {done}/{total}", percentage)

    def end(message: str) -> None:
        if progress:
            try:
                server.work_done_progress.end(token, T.WorkDoneProgressEnd(message=message))
            except Exception:
                log.debug("progress end failed", exc_info=True)

    try:
        config = await asyncio.to_thread(load_config, folder.root)
        folder.config = config
        previous = folder.state
        revision = previous.revision + 1 if previous is not None else 1
        def walked(paths: list[str]) -> None:
            loop.call_soon_threadsafe(setattr, folder, "walked", paths)

        # the first scan starts from the model the last server kept, when it is still valid (a restart)
        state = await asyncio.to_thread(scan_state, folder.root, config, progress=report, revision=revision,
                                        jobs=os.cpu_count() or 1, on_walk=walked, resume=reason == "initial")
        scanned = state
        while True:  # what the editor changed while the disk was read, until nothing new came
            while folder.touched:
                touched, folder.touched = folder.touched, {}
                changes = [Change(path, _buffer(server, folder, path, text))
                           for path, text in sorted(touched.items())]
                state = (await asyncio.to_thread(apply_changes, state, changes))[0]
            await folder.settled()  # edits still queued on the previous model are recorded in `touched` too
            if not folder.touched:
                break
    except (ConfigError, ArtifactPathError) as exc:  # the user must fix it: say so, not only in the log
        folder.scanning = False
        folder.touched = {}
        server.window_show_message(T.ShowMessageParams(type=T.MessageType.Error, message=f"Doc Bridge: {exc}"))
        server.status(folder, "error", str(exc))
        end("configuration error")
        folder.ready.set()
        return
    except Exception as exc:  # a scan must never take the server down
        folder.scanning = False
        folder.touched = {}
        log.exception("scan failed")
        server.log("error", f"Doc Bridge: scanning {folder.root} failed: {exc}")
        server.status(folder, "error", str(exc))
        end("failed")
        folder.ready.set()
        return
    if server.folders.by_root.get(str(folder.root)) is not folder:  # removed while scanning
        end("folder removed")
        return
    if folder.workspace is None:
        folder.workspace = Workspace(folder.root, config)
    folder.workspace.config = config
    folder.workspace.install(state)
    folder.on_change = lambda changed: diagnostics.schedule(server, changed)
    folder.unkept = scanned  # kept for the next start once the diagnostics below are out
    folder.scanning = False
    folder.provisional.clear()
    folder.walked = []
    folder.indexing.clear()
    folder.ready.set()
    seconds = time.perf_counter() - folder.scan_started
    origin = (f"resumed from the model kept by the last start, {scanned.scan.applied} changed since"
              if scanned.scan.resumed else f"{state.scan.reused} from cache")
    server.log("info", f"Doc Bridge: {reason} scan of {folder.root} took {seconds:.2f}s "
                       f"({len(state.facts)} files, {origin})")
    end(f"{len(state.facts)} files")
    server.status(folder, "ready")
    opened = frozenset(path for uri in list(server.workspace.text_documents)
                       for owner, path in [server.folders.locate(uri)] if owner is folder and path is not None)
    folder.published_all.clear()
    try:
        await diagnostics.publish_everything(server, folder, first=opened)
    finally:
        folder.published_all.set()
    await restart.keep(server, folder)  # what a restart shows at once (and again at shutdown)
    keep_model(folder)  # unless a shutdown already started it


def keep_model(folder: Folder) -> threading.Thread | None:
    """Start writing the model of the folder's last scan, for the next start to resume from (once per scan), in
    a thread of its own: an exit does not wait for it, a shutdown does (`wait_for_kept`)."""
    state, folder.unkept = folder.unkept, None
    if state is not None:  # after the model of an earlier scan, if that one is still being written
        folder.keeping = threading.Thread(target=_keep_model, args=(state, folder.keeping, waited.pause),
                                          name="docbridge-keep-model", daemon=True)
        folder.keeping.start()
    return folder.keeping


def wait_for_kept(folder: Folder, timeout: float) -> None:
    """At shutdown: the model of the last scan written (started now if the scan's diagnostics were still being
    published), waiting up to `timeout` seconds."""
    waited.close()  # the writer pauses no more: the editor waits for the exit
    keeping = keep_model(folder)
    if keeping is not None:
        keeping.join(timeout)


def _keep_model(state: ModelState, earlier: threading.Thread | None, pause: Callable[[], None]) -> None:
    # collection is not paused (`bulk`) while writing: edits go on meanwhile, and nothing written is kept
    if earlier is not None:
        earlier.join()
    try:
        write_model(state, pause)
    except (OSError, ArtifactPathError) as exc:  # a read-only checkout, a `.docbridge` that is a file or a link
        log.warning("the resolved model of %s is not kept for the next start: %s", state.root, exc)
    except Exception:  # the next start only resolves again
        log.exception("keeping the resolved model of %s failed", state.root)
    # what the write freed (a record's pickle at a time, in this thread's malloc arena), given back: glibc keeps it
    release_free_memory()


def _buffer(server: DocBridgeServer, folder: Folder, path: str, text: str | None) -> str | None:
    """The text to analyze for a path changed during a scan: its open buffer's newest text, else the disk."""
    if text is None:
        return None
    uri = server.convert.uri(folder, path)
    current = server.convert.buffer_text(uri)
    return current if current is not None else None


def _report(server: DocBridgeServer, token: str, message: str, percentage: int) -> None:
    try:
        server.work_done_progress.report(token, T.WorkDoneProgressReport(message=message, percentage=percentage))
    except Exception:
        log.debug("progress report failed", exc_info=True)


__all__ = ["keep_model", "prepare", "scan", "wait_for_kept"]
