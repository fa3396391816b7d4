"""A handler exception the server catches (`safely`) is logged at error level with its traceback and counted
(`handlerErrors` in every docbridge/status); the robustness inputs (bad frames, JSON that is no JSON-RPC
message, a buffer over the size cap with every request on it, commands with null arguments) make none."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture
from docbridge.lsp.server import safely
from lsp_client import RawClient
from support.jsonrpc import encode
from test_lsp_large_buffers import just_over


class _Server:
    def __init__(self) -> None:
        self.handler_errors = 0
        self.logged: list[tuple[str, str]] = []

    def log(self, level: str, message: str) -> None:
        self.logged.append((level, message))


def test_a_failing_handler_is_logged_with_its_traceback_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    @safely(list)
    def broken(ls: Any, params: Any) -> list[str]:
        raise KeyError("lost")

    @safely()
    async def broken_async(ls: Any, params: Any) -> None:
        raise ValueError("gone")

    server = _Server()
    with caplog.at_level(logging.ERROR, logger="docbridge.lsp"):
        assert broken(server, None) == []
        assert asyncio.run(broken_async(server, None)) is None
    assert server.handler_errors == 2
    records = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in records] == ["broken failed", "broken_async failed"]
    assert all(r.exc_info is not None for r in records)  # with the traceback
    assert "Traceback" in caplog.text and "KeyError: 'lost'" in caplog.text
    assert [level for level, _ in server.logged] == ["error", "error"]  # and the client's log hears it


async def test_the_robustness_inputs_make_no_handler_fail(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    big = root / "docs/big.md"
    log_file = tmp_path / "server.log"
    with log_file.open("wb") as stderr:
        client = await RawClient.start(stderr=stderr)
        try:
            await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
            client.send({"method": "initialized", "params": {}})
            await client.ready()
            ping = b'{"jsonrpc": "2.0", "id": 9, "method": "$/ping"}'
            for bad in (encode(ping, length="abc"), encode(ping, length="-5"),
                        encode(ping, length="99999999999999999999"), encode(ping, length=10), ping,
                        encode(b"not json"), encode(b"[1, 2]"), encode(b"null")):
                client.write(bad)
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": big.as_uri(), "languageId": "markdown", "version": 1, "text": just_over()}}})
            document = {"textDocument": {"uri": big.as_uri()}}
            here = {**document, "position": {"line": 2, "character": 6}}
            requests: list[tuple[str, Any]] = [
                ("textDocument/hover", here), ("textDocument/definition", here),
                ("textDocument/references", {**here, "context": {"includeDeclaration": True}}),
                ("textDocument/completion", here), ("textDocument/documentLink", document),
                ("textDocument/documentSymbol", document), ("textDocument/codeLens", document),
                ("textDocument/codeAction", {**document, "range": {"start": here["position"], "end": here["position"]},
                                             "context": {"diagnostics": []}}),
                ("textDocument/prepareRename", here), ("textDocument/rename", {**here, "newName": "x"}),
                ("workspace/symbol", {"query": "Big"}),
            ]
            for command in ("docbridge.search", "docbridge.explain", "docbridge.handoff", "docbridge.lookup",
                            "docbridge.render", "docbridge.documents", "docbridge.doctor", "docbridge.approveProposal",
                            "docbridge.rejectProposal"):
                requests += [("workspace/executeCommand", {"command": command, "arguments": None}),
                             ("workspace/executeCommand", {"command": command, "arguments": [None]})]
            for number, (method, params) in enumerate(requests, start=100):
                answer = await client.request(number, method, params, timeout=60)
                assert "result" in answer or answer["error"]["code"] == -32602, (method, params, answer)
            seen = len(client.notifications)
            await client.request(500, "workspace/executeCommand", {"command": "docbridge.reindex", "arguments": []},
                                 timeout=60)
            status = await client.ready(after=seen)
            assert status["handlerErrors"] == 0
            failures = [n["params"]["message"] for n in client.notifications
                        if n["method"] == "window/logMessage" and n["params"]["type"] == 1]
            assert failures == []
        finally:
            await client.stop()
    log = log_file.read_text(encoding="utf-8", errors="replace")
    assert "a malformed frame was skipped" in log and "not a JSON-RPC 2.0 message" in log  # the log is captured
    assert "Traceback" not in log, log
