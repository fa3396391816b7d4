"""The server object, its lifecycle and document synchronisation.

A thin layer over `engine`: one Workspace per workspace folder, fed with editor buffers and watched-file
events; every answer comes from the engine's resolutions, findings, retrieval and handoffs. Feature
handlers live in `lsp.navigation`, `lsp.completion`, `lsp.actions` and `lsp.commands`; `lsp.server` puts
them together.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pygls.protocol.language_server as pygls_language_server
from lsprotocol import types as T
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification

from engine import __version__
from engine.config import ConfigError
from engine.discovery.files import ANALYZED_KINDS, file_kind
from engine.hashing import sha256_bytes
from engine.workspace import Workspace
from lsp import diagnostics
from lsp.positions import UTF8, UTF16, path_to_uri
from lsp.state import LOG_LEVELS, Folder, ServerState, Settings

log = logging.getLogger("docbridge.lsp")
F = TypeVar("F", bound=Callable[..., Any])
WATCHED = "**/*.{md,markdown,ts,tsx,js,jsx,mjs,cjs,mts,cts}"


class _Capabilities(ServerCapabilitiesBuilder):
    @classmethod
    def choose_position_encoding(cls, client_capabilities: T.ClientCapabilities) -> Any:
        """UTF-8 when the client offers it (no conversion of ASCII or UTF-8 text), else UTF-16."""
        general = client_capabilities.general
        offered = list(general.position_encodings or []) if general else []
        return UTF8 if UTF8 in offered else UTF16


pygls_language_server.ServerCapabilitiesBuilder = _Capabilities  # type: ignore[misc]


class _Protocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        """A request whose parameters do not fit its method still gets an answer ("invalid params")
        instead of being dropped, which would leave the client waiting forever."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], None, exc.to_response_error())
            return JsonRPCNotification(method="$/docbridge/ignored", jsonrpc="2.0", params=None)


class DocBridgeServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("docbridge", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Incremental,
                         protocol_cls=_Protocol)
        self.state = ServerState()
        self._codes: dict[str, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Any) -> None:
        """Run a background task, keeping a reference so it is not collected before it finishes."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---- logging and status

    def log(self, level: str, message: str) -> None:
        wanted = LOG_LEVELS[self.state.settings.log_level]
        kind = LOG_LEVELS.get(level, T.MessageType.Info)
        if kind <= wanted:  # Error=1 < Warning=2 < Info=3 < Log=4
            try:
                self.window_log_message(T.LogMessageParams(type=kind, message=message))
            except Exception:  # the client may be gone; never let logging take a request down
                log.debug("could not send log message", exc_info=True)

    def status(self, folder: Folder, state: str, message: str | None = None) -> None:
        files = len(folder.workspace.facts) if folder.workspace is not None else 0
        params = {"state": state, "files": files, "findings": folder.findings_total, "root": folder.uri}
        if message:
            params["message"] = message
        try:
            self.protocol.notify("docbridge/status", params)
        except Exception:
            log.debug("could not send status", exc_info=True)

    def codes_uri(self, folder: Folder) -> str:
        key = str(folder.root)
        if key not in self._codes:
            self._codes[key] = path_to_uri(Path(diagnostics.codes_page(folder)))
        return self._codes[key]

    # ---- scanning

    async def scan(self, folder: Folder, reason: str = "initial") -> None:
        """Scan a folder in a worker thread with work-done progress, then swap the new model in."""
        if folder.refused:
            return
        if folder.scanning:
            return
        folder.scanning = True
        folder.scan_started = time.perf_counter()
        self.status(folder, "scanning")
        token = str(uuid.uuid4())
        progress = bool(self.client_capabilities.window and self.client_capabilities.window.work_done_progress)
        loop = asyncio.get_running_loop()
        if progress:
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(token, T.WorkDoneProgressBegin(
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
            loop.call_soon_threadsafe(self._report, token, f"{phase} {done}/{total}", percentage)

        def open_paths() -> list[str]:  # asked from the worker when resolution starts; a snapshot of the dict
            found = []
            try:
                for uri in list(self.workspace.text_documents):
                    owner, relative, _ = self.state.locate(uri)
                    if owner is folder and relative is not None:
                        found.append(relative)
            except RuntimeError:  # folders changed under us: nothing early, the full publish follows
                return []
            return found

        def build() -> Workspace:
            workspace = Workspace(folder.root)

            def early(findings: dict[str, list[Any]]) -> None:  # the open documents' findings, ahead of the rest
                loop.call_soon_threadsafe(self._publish_early, folder, workspace, findings)

            workspace.scan(progress=report, first=open_paths, early=early)
            workspace.refresh_findings()
            return workspace

        try:
            workspace = await asyncio.to_thread(build)
        except ConfigError as exc:
            folder.scanning = False
            self._replay(folder)  # the previous model, if any, stays: edits made meanwhile go into it
            self.window_show_message(T.ShowMessageParams(type=T.MessageType.Error, message=f"Doc Bridge: {exc}"))
            self.status(folder, "error", str(exc))
            if progress:
                self.work_done_progress.end(token, T.WorkDoneProgressEnd(message="configuration error"))
            return
        except Exception as exc:  # a scan must never take the server down
            folder.scanning = False
            self._replay(folder)
            log.exception("scan failed")
            self.log("error", f"Doc Bridge: scanning {folder.root} failed: {exc}")
            self.status(folder, "error", str(exc))
            if progress:
                self.work_done_progress.end(token, T.WorkDoneProgressEnd(message="failed"))
            return
        if str(folder.root) not in self.state.folders:  # removed while scanning
            if progress:
                self.work_done_progress.end(token, T.WorkDoneProgressEnd(message="folder removed"))
            return
        folder.workspace = workspace
        folder.retriever = None
        folder.scanning = False
        # open buffers win over what was on disk; edits made during the scan are replayed
        for uri, document in list(self.workspace.text_documents.items()):
            owner, relative, _ = self.state.locate(uri)
            if owner is folder and relative is not None:
                folder.pending[relative] = document.source
        pending, _ = self._apply_pending(folder)  # everything is published below
        opened = frozenset(relative for relative, text in pending.items() if text is not None)
        seconds = time.perf_counter() - folder.scan_started
        self.log("info", f"Doc Bridge: {reason} scan of {folder.root} took {seconds:.2f}s "
                         f"({len(workspace.facts)} files, {workspace.last_scan.reused} from cache)")
        if progress:
            self.work_done_progress.end(token, T.WorkDoneProgressEnd(message=f"{len(workspace.facts)} files"))
        self.status(folder, "ready")
        await diagnostics.publish_everything(self, folder, first=opened)

    def _publish_early(self, folder: Folder, workspace: Workspace, findings: dict[str, list[Any]]) -> None:
        if not folder.scanning:  # the full model is in already
            return
        for relative, found in findings.items():
            facts = workspace.facts.get(relative)
            current = self.state.buffer_text(self.state.uri_of(folder, relative))
            # only while the buffer is the text on disk that was analyzed (else positions would be off)
            if facts is None or current is None or sha256_bytes(current.encode("utf-8")) != facts.content_hash:
                continue
            try:
                diagnostics.publish_findings(self, folder, workspace, relative, found)
            except Exception:
                log.exception("publishing early diagnostics failed")

    def _report(self, token: str, message: str, percentage: int) -> None:
        try:
            self.work_done_progress.report(token, T.WorkDoneProgressReport(message=message, percentage=percentage))
        except Exception:
            log.debug("progress report failed", exc_info=True)

    # ---- edits

    def _apply(self, folder: Folder, relative: str, text: str | None) -> bool:
        workspace = folder.workspace
        if workspace is None:
            return False
        try:
            return workspace.update(relative, text).changed
        except Exception as exc:
            log.exception("update failed")
            self.log("error", f"Doc Bridge: could not update {relative}: {exc}")
            return False

    def edited(self, uri: str, text: str | None) -> None:
        """A buffer changed (text) or was closed or changed on disk (None): update the owning model."""
        folder, relative, _ = self.state.locate(uri)
        if folder is None or relative is None:
            return
        if folder.scanning or folder.workspace is None or folder.readers:
            folder.pending[relative] = text  # the model is being read by a worker: replayed when it is done
            return
        if self._apply(folder, relative, text):
            self.schedule_diagnostics(folder)

    async def off_thread(self, folder: Folder, compute: Callable[[], Any]) -> Any:
        """Run a read of the folder's model (a projection, a retrieval index: seconds on a large repository)
        in a worker thread while the server keeps answering; edits that arrive meanwhile wait and are
        applied when no worker reads the model any more."""
        folder.readers += 1
        try:
            return await asyncio.to_thread(compute)
        finally:
            folder.readers -= 1
            self._replay(folder)

    def _apply_pending(self, folder: Folder) -> tuple[dict[str, str | None], bool]:
        """Apply the edits that waited for a scan or a worker; return them and whether the model changed."""
        pending, folder.pending = folder.pending, {}
        changed = False
        for relative, text in pending.items():
            changed = self._apply(folder, relative, text) or changed
        return pending, changed

    def _replay(self, folder: Folder) -> None:
        """Apply waiting edits once nothing reads the model any more, and republish what they changed."""
        if folder.readers == 0 and not folder.scanning and folder.workspace is not None and folder.pending \
                and self._apply_pending(folder)[1]:
            self.schedule_diagnostics(folder)

    async def retriever(self, folder: Folder) -> Any:
        """The folder's ranked retrieval index for the current model, rebuilt off the server's thread when the
        model changed since (concurrent callers share one build)."""
        workspace = folder.workspace
        if workspace is None:
            return None
        if folder.retriever is not None and folder.retriever_generation == workspace.generation:
            return folder.retriever
        if folder.indexing is None:
            folder.indexing = asyncio.ensure_future(self._build_retriever(folder, workspace))
        return await asyncio.shield(folder.indexing)

    async def _build_retriever(self, folder: Folder, workspace: Workspace) -> Any:
        generation = workspace.generation
        try:
            built = await self.off_thread(folder, workspace.retriever)
            if folder.workspace is workspace:
                folder.retriever, folder.retriever_generation = built, generation
            return built
        finally:
            folder.indexing = None

    def schedule_diagnostics(self, folder: Folder) -> None:
        """Publish changed diagnostics after `debounceMs` of quiet (0: on the next loop turn)."""
        loop = asyncio.get_running_loop()
        if folder.timer is not None:
            folder.timer.cancel()
        delay = self.state.settings.debounce_ms / 1000

        def run() -> None:
            folder.timer = None
            try:
                if folder.workspace is not None:
                    diagnostics.publish(self, folder, folder.workspace.refresh_findings())
            except Exception:
                log.exception("publishing diagnostics failed")

        folder.timer = loop.call_soon(run) if delay <= 0 else loop.call_later(delay, run)

    async def pull_settings(self) -> None:
        configuration = self.client_capabilities.workspace and self.client_capabilities.workspace.configuration
        if not configuration:
            return
        try:
            result = await self.workspace_configuration_async(
                T.ConfigurationParams(items=[T.ConfigurationItem(section="docbridge")]))
        except Exception:
            log.debug("workspace/configuration failed", exc_info=True)
            return
        self.apply_settings(result[0] if result else None)

    def apply_settings(self, raw: Any) -> None:
        before = self.state.settings
        self.state.settings = Settings.from_client(raw)
        if (before.severity, before.diagnostics_enabled) != (self.state.settings.severity,
                                                             self.state.settings.diagnostics_enabled):
            for folder in self.state.folders.values():
                diagnostics.publish(self, folder)
        if before.code_lens != self.state.settings.code_lens:
            try:
                self.workspace_code_lens_refresh(None)
            except Exception:
                log.debug("code lens refresh failed", exc_info=True)


server = DocBridgeServer()


def safely(default: Any = None) -> Callable[[F], F]:
    """A handler that fails answers `default` (and logs why) instead of an error: the server keeps serving."""

    def wrap(handler: F) -> F:
        if asyncio.iscoroutinefunction(handler):
            @functools.wraps(handler)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await handler(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    log.exception("%s failed", handler.__name__)
                    server.log("error", f"Doc Bridge: {handler.__name__} failed: {exc}")
                    return default() if callable(default) else default
            return run_async  # type: ignore[return-value]

        @functools.wraps(handler)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return handler(*args, **kwargs)
            except Exception as exc:
                log.exception("%s failed", handler.__name__)
                server.log("error", f"Doc Bridge: {handler.__name__} failed: {exc}")
                return default() if callable(default) else default
        return run  # type: ignore[return-value]

    return wrap


# ------------------------------------------------------------------------------------------------ lifecycle


@server.feature(T.INITIALIZE)
def initialize(ls: DocBridgeServer, params: T.InitializeParams) -> None:
    ls.state.encoding = ls.workspace.position_encoding or UTF16
    ls.state.buffers = ls.workspace
    folders = params.workspace_folders or []
    if not folders and params.root_uri:
        folders = [T.WorkspaceFolder(uri=params.root_uri, name=Path(params.root_uri).name)]
    for folder in folders:
        ls.state.add_folder(folder.uri)
    options = params.initialization_options
    if isinstance(options, dict):
        ls.apply_settings(options.get("docbridge", options))


@server.feature(T.INITIALIZED)
async def initialized(ls: DocBridgeServer, params: T.InitializedParams) -> None:
    await ls.pull_settings()
    watched = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
    if watched and watched.dynamic_registration:
        try:
            await ls.client_register_capability_async(T.RegistrationParams(registrations=[T.Registration(
                id="docbridge-watched-files", method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=T.DidChangeWatchedFilesRegistrationOptions(watchers=[
                    T.FileSystemWatcher(glob_pattern=WATCHED),
                    T.FileSystemWatcher(glob_pattern="**/package.json"),
                    T.FileSystemWatcher(glob_pattern="**/{tsconfig,jsconfig}.json"),
                    T.FileSystemWatcher(glob_pattern="**/{doc-bridge.config.json,.gitignore}"),
                ]))]))
        except Exception:
            log.debug("watched-file registration failed", exc_info=True)
    for folder in list(ls.state.folders.values()):
        if folder.refused:
            ls.window_show_message(T.ShowMessageParams(
                type=T.MessageType.Warning,
                message=f"Doc Bridge does not scan {folder.refused}. Open a project folder; until then only the "
                        f"open file is analyzed."))
            continue
        ls.spawn(ls.scan(folder))


@server.feature(T.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def folders_changed(ls: DocBridgeServer, params: T.DidChangeWorkspaceFoldersParams) -> None:
    for removed in params.event.removed:
        folder = ls.state.remove_folder(removed.uri)
        if folder is not None:
            for uri in list(folder.published):
                ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    for added in params.event.added:
        folder = ls.state.add_folder(added.uri)
        if folder is None:
            continue
        if folder.refused:
            ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning,
                                                       message=f"Doc Bridge does not scan {folder.refused}."))
        elif folder.workspace is None:
            ls.spawn(ls.scan(folder))


@server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def configuration_changed(ls: DocBridgeServer, params: T.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("docbridge"), dict):
        ls.apply_settings(settings["docbridge"])
    else:
        await ls.pull_settings()


# ------------------------------------------------------------------------------------------------ documents


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
@safely()
def did_open(ls: DocBridgeServer, params: T.DidOpenTextDocumentParams) -> None:
    ls.edited(params.text_document.uri, params.text_document.text)
    folder, relative, _ = ls.state.locate(params.text_document.uri)
    if folder is not None and folder.workspace is not None and relative is not None and not folder.scanning \
            and not folder.readers:
        diagnostics.publish(ls, folder, folder.workspace.refresh_findings(), force=frozenset({relative}))


@server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
@safely()
def did_change(ls: DocBridgeServer, params: T.DidChangeTextDocumentParams) -> None:
    document = ls.workspace.get_text_document(params.text_document.uri)
    ls.edited(params.text_document.uri, document.source)


@server.feature(T.TEXT_DOCUMENT_DID_SAVE)
@safely()
def did_save(ls: DocBridgeServer, params: T.DidSaveTextDocumentParams) -> None:
    document = ls.workspace.text_documents.get(params.text_document.uri)
    if document is not None:
        ls.edited(params.text_document.uri, document.source)


@server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
@safely()
def did_close(ls: DocBridgeServer, params: T.DidCloseTextDocumentParams) -> None:
    ls.state.forget_buffer(params.text_document.uri)
    ls.edited(params.text_document.uri, None)  # the file on disk is the truth again


@server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@safely()
def watched_files_changed(ls: DocBridgeServer, params: T.DidChangeWatchedFilesParams) -> None:
    rescan: set[str] = set()
    for change in params.changes:
        folder, relative, _ = ls.state.locate(change.uri)
        if folder is None or relative is None:
            continue
        if relative in ("doc-bridge.config.json",) or relative.endswith(".gitignore"):
            rescan.add(str(folder.root))
            continue
        open_buffer = change.uri in ls.workspace.text_documents
        if open_buffer and change.type != T.FileChangeType.Deleted:
            continue  # the editor's buffer is newer than the disk
        if file_kind(relative) in ANALYZED_KINDS or change.type != T.FileChangeType.Changed:
            ls.edited(change.uri, None)
    for root in rescan:
        folder = ls.state.folders.get(root)
        if folder is not None:
            ls.spawn(ls.scan(folder, "configuration"))
