"""A storm of wrong-typed requests and notifications over a real stdio connection: every request is answered
(never an internal error), every notification is absorbed, nothing is printed as a traceback, and the server
still answers afterwards.

Each probe takes a well-formed message and puts a value of another type at one place in its params (the
params themselves included).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsp_client import RawClient

from tests.conftest import copy_fixture

pytestmark = pytest.mark.attack("LSP frames and wrong types")

VALUES: list[Any] = [None, -1, "x", [], {}, True, 1.5, [1, "x", None]]


def _places(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _places(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _places(value, (*prefix, index))
    return found


def _with(node: Any, place: tuple[Any, ...], value: Any) -> Any:
    if not place:
        return value
    node = json.loads(json.dumps(node))
    current = node
    for part in place[:-1]:
        current = current[part]
    current[place[-1]] = value
    return node


def _requests(doc: str, other: str) -> dict[str, Any]:
    at = {"textDocument": {"uri": doc}, "position": {"line": 19, "character": 3}}
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}
    return {
        "textDocument/definition": at, "textDocument/hover": at, "textDocument/completion": at,
        "textDocument/references": {**at, "context": {"includeDeclaration": True}},
        "textDocument/documentLink": {"textDocument": {"uri": doc}},
        "textDocument/documentSymbol": {"textDocument": {"uri": doc}},
        "textDocument/codeLens": {"textDocument": {"uri": doc}},
        "textDocument/codeAction": {"textDocument": {"uri": doc}, "range": whole, "context": {"diagnostics": []}},
        "textDocument/prepareRename": at, "textDocument/rename": {**at, "newName": "x"},
        "textDocument/diagnostic": {"textDocument": {"uri": doc}},
        "workspace/symbol": {"query": "invoice"},
        "workspace/willRenameFiles": {"files": [{"oldUri": doc, "newUri": other}]},
        "workspace/executeCommand": {"command": "docbridge.search", "arguments": ["invoice", 5]},
    }


def _notifications(doc: str, other: str) -> dict[str, Any]:
    return {
        "textDocument/didOpen": {"textDocument": {"uri": other, "languageId": "markdown", "version": 1,
                                                  "text": "# N\n"}},
        "textDocument/didChange": {"textDocument": {"uri": doc, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "x"}]},
        "textDocument/didSave": {"textDocument": {"uri": doc}},
        "textDocument/didClose": {"textDocument": {"uri": other}},
        "workspace/didChangeWatchedFiles": {"changes": [{"uri": doc, "type": 2}]},
        "workspace/didChangeConfiguration": {"settings": {"docbridge": {"diagnostics": {"debounceMs": 0}}}},
        "workspace/didRenameFiles": {"files": [{"oldUri": doc, "newUri": doc}]},
        "$/cancelRequest": {"id": 5},
    }


async def test_a_storm_of_wrong_types_is_answered_without_an_internal_error_or_a_traceback(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path / "repo")
    billing = root / "docs/billing.md"
    doc, other = billing.as_uri(), (root / "docs/new.md").as_uri()
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as log:
        client = await RawClient.start(stderr=log)
        try:
            await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
            client.send({"method": "initialized", "params": {}})
            await client.ready()
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": doc, "languageId": "markdown", "version": 1, "text": billing.read_text()}}})
            number, internal = 100, []
            for method, params in _requests(doc, other).items():
                for place in _places(params):
                    for value in VALUES:
                        number += 1
                        answer = await client.request(number, method, _with(params, place, value), timeout=30)
                        assert "result" in answer or "error" in answer, answer
                        if "error" in answer and answer["error"]["code"] == -32603:
                            internal.append((method, place, value, answer["error"]["message"]))
            assert internal == []
            sent = 0
            for method, params in _notifications(doc, other).items():
                for place in _places(params):
                    for value in VALUES:
                        client.send({"method": method, "params": _with(params, place, value)})
                        sent += 1
            after = await client.request("after", "workspace/symbol", {"query": "invoice"}, timeout=60)
            assert after["result"], after  # still serving
            assert number - 100 > 500 and sent > 200
        finally:
            await client.stop()
    assert "Traceback" not in stderr.read_text(encoding="utf-8", errors="replace")
