"""A test client for the language server over a real stdio connection (pytest-lsp), with helpers to wait
for the initial scan and for diagnostics."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from conftest import BIN
from lsprotocol import types as T
from pytest_lsp.client import LanguageClient, client_capabilities, make_test_lsp_client
from support.jsonrpc import encode, read_messages
from support.wait import describe, wait_until_async

SERVER = str(BIN / "docbridge-lsp")


class Session:
    def __init__(self, client: LanguageClient, roots: list[Path]) -> None:
        self.client = client
        self.roots = roots
        self.statuses: list[Any] = []
        self.versions: dict[str, int] = {}
        self.result: T.InitializeResult | None = None
        self.on_status: Any = None  # called with each docbridge/status, in the order the client reads them

    # ---- waiting

    async def ready(self, count: int | None = None, timeout: float = 60) -> None:
        """Until every folder reported `ready` (docbridge/status)."""
        wanted = count if count is not None else len(self.roots)

        def done() -> bool:
            ready = {s["root"] if isinstance(s, dict) else s.root for s in self.statuses
                     if (s["state"] if isinstance(s, dict) else s.state) == "ready"}
            return len(ready) >= wanted

        await self.until(done, timeout, what=f"{wanted} folder(s) to report ready")

    async def until(self, predicate: Any, timeout: float = 20, *, what: str | None = None) -> None:
        """Until `predicate()` holds, checked every few milliseconds: it may read anything (the client's
        diagnostics and messages, a file, a stub endpoint), so no single event announces its change."""
        await wait_until_async(predicate, timeout, what=what or describe(predicate), interval=0.02)

    def diagnostics(self, path: Path) -> list[T.Diagnostic]:
        return list(self.client.diagnostics.get(path.as_uri(), []))

    def codes(self, path: Path) -> list[tuple[str, int]]:
        return sorted((str(d.code), d.range.start.line) for d in self.diagnostics(path))

    # ---- documents

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        language = "markdown" if path.suffix in (".md", ".markdown") else "typescript"
        self.client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
            uri=uri, language_id=language, version=1,
            text=text if text is not None else path.read_text(encoding="utf-8"))))
        return uri

    def replace_all(self, path: Path, text: str) -> None:
        uri = path.as_uri()
        self.versions[uri] = self.versions.get(uri, 1) + 1
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)]))

    def edit(self, path: Path, line: int, start: int, end: int, text: str) -> None:
        uri = path.as_uri()
        self.versions[uri] = self.versions.get(uri, 1) + 1
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[T.TextDocumentContentChangePartial(
                range=T.Range(start=T.Position(line=line, character=start), end=T.Position(line=line, character=end)),
                text=text)]))

    def close(self, path: Path) -> None:
        self.client.text_document_did_close(T.DidCloseTextDocumentParams(
            text_document=T.TextDocumentIdentifier(uri=path.as_uri())))

    def watched(self, *changes: tuple[Path, T.FileChangeType]) -> None:
        self.client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=[
            T.FileEvent(uri=path.as_uri(), type=kind) for path, kind in changes]))

    # ---- requests

    async def definition(self, path: Path, line: int, character: int) -> Any:
        return await self.client.text_document_definition_async(T.DefinitionParams(
            text_document=T.TextDocumentIdentifier(uri=path.as_uri()), position=T.Position(line=line,
                                                                                          character=character)))

    async def hover(self, path: Path, line: int, character: int) -> T.Hover | None:
        return await self.client.text_document_hover_async(T.HoverParams(
            text_document=T.TextDocumentIdentifier(uri=path.as_uri()), position=T.Position(line=line,
                                                                                          character=character)))

    async def command(self, name: str, *arguments: Any) -> Any:
        return await self.client.workspace_execute_command_async(T.ExecuteCommandParams(
            command=name, arguments=list(arguments)))


def capabilities(encodings: list[str] | None = None) -> T.ClientCapabilities:
    caps = client_capabilities("visual-studio-code")
    if encodings is not None:
        caps.general = T.GeneralClientCapabilities(position_encodings=encodings)
    return caps


@contextlib.asynccontextmanager
async def session(*roots: Path, settings: dict[str, Any] | None = None, encodings: list[str] | None = None,
                  wait: bool = True) -> AsyncIterator[Session]:
    client = make_test_lsp_client()
    client.set_configuration({"diagnostics": {"debounceMs": 0}, **(settings or {})}, section="docbridge")
    state = Session(client, list(roots))

    @client.feature("docbridge/status")
    def on_status(params: Any) -> None:
        state.statuses.append(params)
        if state.on_status is not None:
            state.on_status(params if isinstance(params, dict) else {"state": params.state, "root": params.root})

    @client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: Any) -> None:
        return None

    await client.start_io(SERVER)
    try:
        state.result = await client.initialize_session(T.InitializeParams(
            capabilities=capabilities(encodings),
            workspace_folders=[T.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots]))
        if wait and roots:
            await state.ready()
        yield state
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


class RawClient:
    """JSON-RPC over the server's stdio with nothing in between: messages go out exactly as written, so
    malformed requests reach the server as malformed requests."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.responses: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.requests: list[tuple[int, str]] = []  # (notifications received before it, method)
        self.arrived = asyncio.Condition()  # notified after each message read, and when the output ends
        self.ended = False  # the server's output ended
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, stderr: Any = asyncio.subprocess.DEVNULL, env: dict[str, str] | None = None) -> RawClient:
        """The server as a subprocess; `stderr` (a file) receives its log; `env`: variables added to the
        environment."""
        process = await asyncio.create_subprocess_exec(SERVER, stdin=asyncio.subprocess.PIPE,
                                                       stdout=asyncio.subprocess.PIPE, stderr=stderr,
                                                       env={**os.environ, **env} if env else None)
        return cls(process)

    async def serve_folder(self, root: Path) -> None:
        """`initialize` with `root` as the workspace (request id 1), `initialized`, and the first scan's end."""
        await self.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        self.send({"method": "initialized", "params": {}})
        await self.ready()

    async def until(self, predicate: Any, timeout: float = 20, *, what: str | None = None) -> Any:
        """Until `predicate()`, a check of what the server sent (`responses`, `notifications`, `requests`),
        holds: checked again as each message arrives. Returns its value."""
        return await wait_until_async(predicate, timeout, what=what or describe(predicate), condition=self.arrived)

    async def ready(self, after: int = 0, timeout: float = 60) -> dict[str, Any]:
        """The first `docbridge/status` "ready" among the notifications from index `after` on."""
        def found() -> dict[str, Any] | None:
            return next((n["params"] for n in self.notifications[after:]
                         if n["method"] == "docbridge/status" and n["params"]["state"] == "ready"), None)

        return await self.until(found, timeout, what=f"a folder to report ready (after notification {after})")

    def send(self, message: dict[str, Any] | bytes) -> None:
        """One frame: a message (given its "jsonrpc": "2.0") or a body as it is."""
        assert self.process.stdin is not None
        self.process.stdin.write(encode(message))

    def write(self, raw: bytes) -> None:
        """Bytes as they are: several frames in one write, or a frame that is not one."""
        assert self.process.stdin is not None
        self.process.stdin.write(raw)

    async def request(self, id_: Any, method: str, params: Any, timeout: float = 20) -> dict[str, Any]:
        self.send({"id": id_, "method": method, "params": params})
        return await self.response(id_, timeout)

    async def response(self, id_: Any, timeout: float = 20) -> dict[str, Any]:
        """The response to request `id_` (TimeoutError when none comes in time or the server's output ended)."""
        await self.until(lambda: id_ in self.responses or self.ended, timeout,
                         what=f"the response to request {id_!r}")
        if id_ not in self.responses:
            raise TimeoutError(f"no response to {id_!r}: the server's output ended")
        return self.responses.pop(id_)

    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            async for message in read_messages(stream):
                if "id" in message and "method" not in message:
                    self.responses[message["id"]] = message
                elif "id" in message:  # a request from the server: answer it (noting the notifications before it)
                    self.requests.append((len(self.notifications), message["method"]))
                    self.send({"id": message["id"], "result": [{}] if message["method"] == "workspace/configuration"
                               else None})
                else:
                    self.notifications.append(message)
                async with self.arrived:
                    self.arrived.notify_all()
        finally:
            self.ended = True
            async with self.arrived:
                self.arrived.notify_all()

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.request("shutdown", "shutdown", None, timeout=5)
            self.send({"method": "exit"})
        self.reader.cancel()
        with contextlib.suppress(Exception):
            self.process.kill()
        await self.process.wait()
