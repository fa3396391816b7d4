"""A client cancels requests it no longer needs, often after the answer was sent (search-as-you-type does it
on every keystroke). That is normal: the server must not log it above debug, neither on stderr (which an
editor shows in its output channel) nor as window/logMessage."""

from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import copy_fixture
from lsp_client import SERVER, RawClient


async def _server_with_stderr() -> RawClient:
    process = await asyncio.create_subprocess_exec(SERVER, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    return RawClient(process)


async def test_cancelling_an_answered_request_is_not_logged(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    billing = root / "docs/billing.md"
    client = await _server_with_stderr()
    try:
        await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        client.send({"method": "initialized", "params": {}})
        client.send({"method": "workspace/didChangeConfiguration", "params": {"settings": {}}})
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": billing.as_uri(), "languageId": "markdown", "version": 1, "text": billing.read_text()}}})
        for request_id in range(2, 12):
            answer = await client.request(request_id, "textDocument/hover", {
                "textDocument": {"uri": billing.as_uri()}, "position": {"line": 0, "character": 2}})
            assert "error" not in answer
            # answered already: the cancel names an id the server no longer knows
            client.send({"method": "$/cancelRequest", "params": {"id": request_id}})
        # a cancel for an id that was never used is just as harmless
        client.send({"method": "$/cancelRequest", "params": {"id": 999}})
        # messages are read in order: once this is answered, every cancel above was handled
        assert "error" not in await client.request(20, "textDocument/hover", {
            "textDocument": {"uri": billing.as_uri()}, "position": {"line": 0, "character": 2}})
    finally:
        await client.stop()
    assert client.process.stderr is not None
    stderr = (await client.process.stderr.read()).decode(errors="replace")
    assert "Cancel notification" not in stderr, stderr
    logged = [n["params"]["message"] for n in client.notifications if n["method"] == "window/logMessage"]
    assert not any("Cancel notification" in message for message in logged), logged
