"""The Doc Bridge language server (pygls 2, stdio): `docbridge-lsp`, `docbridge lsp` or `python -m docbridge.lsp`.

`create_server()` builds a server and registers every feature module on it. The server object holds the
session (settings, folders, the converter between engine values and protocol values) and the few things
every feature needs: the folder and model state behind a URI, answering in order after the edits before
a request, logging, status and diagnostics scheduling. Feature handlers convert; the engine answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar

from docbridge.engine import __version__
from docbridge.engine.ide.files import not_analyzed
from docbridge.engine.ide.provisional import is_complete, provisional_state
from docbridge.engine.state.model_state import ModelState
from docbridge.lsp import framing, protocol
from docbridge.lsp.convert import Converter
from docbridge.lsp.folders import Folder, Folders, waited
from docbridge.lsp.settings import LOG_LEVELS, Settings
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

log = logging.getLogger("docbridge.lsp")
F = TypeVar("F", bound=Callable[..., Any])
FIRST_SCAN_WAIT = 600.0  # seconds a request that needs the full model waits for the first scan
SHOW_DOCUMENT_WAIT = 30.0  # seconds a command waits for the client to open a document it wrote


@dataclass(slots=True)
class Target:
    """The folder, repository-relative path and model state a request is answered from."""

    folder: Folder
    path: str
    state: ModelState
    uri: str
    provisional: bool = False  # resolved against the file system while the first scan runs


class DocBridgeServer(LanguageServer):
    protocol: protocol.DocBridgeProtocol  # what `protocol_cls` makes pygls build

    def __init__(self) -> None:
        protocol.install()
        super().__init__("docbridge", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Incremental,
                         protocol_cls=protocol.DocBridgeProtocol)
        self.settings = Settings()
        self.folders = Folders()
        self.convert = Converter()
        self.handler_errors = 0  # handler exceptions caught and logged (the robustness tests read it)
        self.prepublished: dict[str, tuple[str, list[Any]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None, early: Any = None) -> None:
        """Serve on stdio with Doc Bridge's frame reader (lsp/framing.py): one loop wake-up per message, and a
        malformed frame answered and skipped instead of silencing the server. `early`: what the start-up read
        (and answered) before the server existed (`docbridge.lsp.bootstrap`)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        self.protocol.early = early
        # uri -> (text hash, diagnostics) the start-up published from what was kept at the last stop
        self.prepublished = dict(early.prepublished) if early is not None else {}
        try:
            _run(framing.serve(self.protocol, stdin or sys.stdin.buffer, self._stop_event, early, heard=waited.heard))
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """An exception no `safely` caught (pygls answered it InternalError, or dropped a notification): counted
        and sent to the client's log like a caught one (pygls has logged its traceback). Errors a handler
        answers on purpose (InvalidParams, RequestFailed, ...) are answers, not failures."""
        if isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError):
            return
        self.handler_errors += 1
        self.log("error", f"Doc Bridge: a request or notification failed: {type(error).__name__}: {error}")

    def spawn(self, coroutine: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run a background task, keeping a reference so it is not collected before it finishes."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ---- logging and status

    def log(self, level: str, message: str) -> None:
        wanted = LOG_LEVELS[self.settings.log_level]
        kind = LOG_LEVELS.get(level, T.MessageType.Info)
        if kind <= wanted:  # Error=1 < Warning=2 < Info=3 < Log=4
            try:
                self.window_log_message(T.LogMessageParams(type=kind, message=message))
            except Exception:  # the client may be gone; never let logging take a request down
                log.debug("could not send log message", exc_info=True)

    def status(self, folder: Folder, state: str, message: str | None = None) -> None:
        files = len(folder.state.facts) if folder.state is not None else 0
        params = {"state": state, "files": files, "findings": folder.findings_total, "root": folder.uri,
                  "handlerErrors": self.handler_errors}
        if message:
            params["message"] = message
        try:
            self.protocol.notify("docbridge/status", params)
        except Exception:
            log.debug("could not send status", exc_info=True)

    # ---- the model behind a request

    async def target(self, uri: str, *, provisional: bool = True) -> Target | None:
        """The folder, path and current state for `uri`, after every change sent before this request. During
        the first scan: the provisional state of an open Markdown buffer (when `provisional`), else the full
        model once it is there; None when the file is outside every folder or over `limits.maxFileBytes`."""
        folder, path = self.folders.locate(uri)
        if folder is None or path is None:
            return None
        if folder.workspace is None:
            early = self.provisional(folder, path, uri) if provisional else None
            if early is not None:
                return early
            await self.first_model(folder)
            if folder.workspace is None:
                return None
        await folder.settled()
        state = folder.state
        if state is None or too_large(state, path):
            return None
        return Target(folder, path, state, uri)

    def ready_target(self, uri: str) -> Target | object | None:
        """The target of a request that can be answered now (the full model, every change applied), None
        when the file is outside every folder, or `LATER`."""
        folder, path = self.folders.locate(uri)
        if folder is None or path is None:
            return None
        state = folder.state
        if state is None or folder.applied < folder.received:
            return protocol.LATER
        return Target(folder, path, state, uri) if not too_large(state, path) else None

    async def first_model(self, folder: Folder) -> None:
        if folder.workspace is None and not folder.refused:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(folder.ready.wait(), FIRST_SCAN_WAIT)

    async def full(self, target: Target) -> Target | None:
        """The same request's target in the full model (waiting for the first scan if need be)."""
        if not target.provisional:
            return target
        return await self.target(target.uri, provisional=False)

    def provisional(self, folder: Folder, path: str, uri: str, linked: bool = True) -> Target | None:
        """An open Markdown buffer resolved against the file system, while the folder's first scan runs (with
        `linked=False` it may lack the headings of the documents it links to: `is_complete` says)."""
        text = self.convert.buffer_text(uri)
        if text is None or folder.config is None:
            return None
        cached = folder.provisional.get(path)
        if cached is not None and cached[0] is text and (not linked or is_complete(cached[1])):
            return Target(folder, path, cached[1], uri, provisional=True)
        buffers = {}
        for other_uri in list(self.workspace.text_documents):
            owner, other = self.folders.locate(other_uri)
            if owner is folder and other is not None:
                buffers[other] = self.convert.buffer_text(other_uri) or ""
        try:
            state = provisional_state(folder.root, folder.config, path, text, buffers, linked)
        except Exception:
            log.exception("provisional analysis of %s failed", path)
            return None
        if state is None:
            return None
        folder.provisional[path] = (text, state)
        return Target(folder, path, state, uri, provisional=True)

    async def show_document(self, uri: str) -> None:
        """Ask the client to open `uri`; a client that cannot (or answers something else) costs the command
        nothing, since what it computed is in its answer."""
        try:
            await asyncio.wait_for(self.window_show_document_async(T.ShowDocumentParams(uri=uri, take_focus=True)),
                                   SHOW_DOCUMENT_WAIT)
        except Exception as exc:  # an error answer, a malformed one, or none in time
            log.warning("the client did not show %s: %s", uri, exc)

    # ---- settings

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
        from docbridge.lsp import diagnostics
        before = self.settings
        self.settings = Settings.from_client(raw)
        if (before.severity, before.diagnostics_enabled) != (self.settings.severity, self.settings.diagnostics_enabled):
            for folder in self.folders:
                diagnostics.publish(self, folder, everything=True)
        if before.code_lens != self.settings.code_lens:
            try:
                self.workspace_code_lens_refresh(None)
            except Exception:
                log.debug("code lens refresh failed", exc_info=True)


def too_large(state: ModelState, path: str) -> bool:
    """Whether the file (its open buffer, when there is one) is beyond a budget: no request kind answers from
    it; its only diagnostic says why it is not analyzed."""
    return not_analyzed(state, path)


def safely(default: Any = None) -> Callable[[F], F]:
    """A handler that fails answers `default` instead of an error, so the server keeps serving; the failure
    is logged at error level with its traceback (stderr and the client's log) and counted."""

    def report(ls: DocBridgeServer, name: str, exc: Exception) -> Any:
        ls.handler_errors += 1
        log.error("%s failed", name, exc_info=exc)
        ls.log("error", f"Doc Bridge: {name} failed: {type(exc).__name__}: {exc}")
        return default() if callable(default) else default

    def wrap(handler: F) -> F:
        if asyncio.iscoroutinefunction(handler):
            @functools.wraps(handler)
            async def run_async(ls: DocBridgeServer, *args: Any) -> Any:
                try:
                    return await handler(ls, *args)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    return report(ls, handler.__name__, exc)
            return run_async  # type: ignore[return-value]  # pygls accepts a coroutine function as a handler

        @functools.wraps(handler)
        def run(ls: DocBridgeServer, *args: Any) -> Any:
            try:
                return handler(ls, *args)
            except Exception as exc:
                return report(ls, handler.__name__, exc)
        return run  # type: ignore[return-value]  # pygls accepts a plain function as a handler

    return wrap


def _run(main: Awaitable[Any]) -> None:
    """`asyncio.run` without its wait for the worker threads: after `exit` the server ends at once, where the
    scan, the search index build or the findings of a large repository still running in a worker thread held it
    for as long as they took (tens of seconds on 100,000 files; an editor restarting the server meanwhile ran two).
    What a worker would write is written atomically: an unfinished write leaves a temporary file, removed later."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    finally:
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()  # the default executor shut down without waiting for its threads


def create_server() -> DocBridgeServer:
    """A new server with every feature registered."""
    from docbridge.lsp import commands, documents, editing, governance, lifecycle, navigation, proposals
    server = DocBridgeServer()
    for module in (lifecycle, documents, navigation, editing, commands, proposals, governance):
        module.register(server)
    return server


def main(argv: list[str] | None = None) -> int:
    """The `docbridge-lsp` command (started through `lsp.bootstrap`, which loads this module while it reads)."""
    from docbridge.lsp.bootstrap import main as start
    return start(argv)


__all__ = ["DocBridgeServer", "Target", "create_server", "main", "safely", "too_large"]
