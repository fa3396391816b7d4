"""Hostile and malformed requests never take the server down: each gets an empty or an error response, and
the server answers correctly afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture
from lsp_client import RawClient, session
from lsprotocol import types as T
from support.jsonrpc import encode
from support.positions import find

from docbridge.bench.synthetic import generate


async def _still_correct(s: Any, root: Path) -> None:
    billing = root / "docs/billing.md"
    s.open(billing)
    line, _ = find(billing, "`createInvoice` is re-exported")
    result = await s.definition(billing, line, 3)
    (location,) = result if isinstance(result, list) else [result]
    assert location.uri == (root / "src/billing/invoice.ts").as_uri()
    assert (await s.command("docbridge.search", "calculateTax", 1))["results"][0]["id"] == "module:src/billing/tax.ts"


@pytest.mark.attack("LSP frames and wrong types")
async def test_malformed_and_hostile_requests(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\n[x](nowhere.md)\n")
    (root / "docs/latin1.md").write_bytes("# Café\n\nLigação `src/billing/tax.ts`.\n".encode("latin-1"))
    billing = root / "docs/billing.md"
    client = await RawClient.start()
    try:
        await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        client.send({"method": "initialized", "params": {}})
        await client.ready()  # the first scan finished
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": billing.as_uri(), "languageId": "markdown", "version": 1, "text": billing.read_text()}}})
        position = {"line": 0, "character": 0}
        hostile: list[tuple[str, Any]] = [
            ("textDocument/definition", {"textDocument": {"uri": billing.as_uri()},
                                         "position": {"line": 10_000, "character": 5}}),
            ("textDocument/hover", {"textDocument": {"uri": billing.as_uri()},
                                    "position": {"line": 3, "character": 100_000}}),
            ("textDocument/definition", {"textDocument": {"uri": "file:///does/not/exist.md"}, "position": position}),
            ("textDocument/hover", {"textDocument": {"uri": "untitled:Untitled-1"}, "position": position}),
            ("textDocument/definition", {"textDocument": {"uri": outside.as_uri()},
                                         "position": {"line": 2, "character": 2}}),
            ("textDocument/definition", {"textDocument": {"uri": (root / "docs/latin1.md").as_uri()},
                                         "position": {"line": 2, "character": 12}}),
            ("textDocument/definition", {"textDocument": {"uri": 42}, "position": "nowhere"}),
            ("textDocument/completion", {}),
            ("textDocument/hover", None),
            ("textDocument/references", {"textDocument": {"uri": billing.as_uri()},
                                         "position": {"line": -1, "character": -1},
                                         "context": {"includeDeclaration": True}}),
            ("workspace/executeCommand", {"command": "docbridge.search", "arguments": [None, "many"]}),
            ("workspace/executeCommand", {"command": "docbridge.handoff", "arguments": []}),
            ("workspace/executeCommand", {"command": "docbridge.handoff", "arguments": ["no-such-thing"]}),
            ("workspace/executeCommand", {"command": "docbridge.nothing", "arguments": []}),
            ("workspace/symbol", {"query": "\x00\uffff" * 500}),
            ("docbridge/unknownMethod", {"x": 1}),
        ]
        for number, (method, params) in enumerate(hostile, start=100):
            answer = await client.request(number, method, params)
            assert "result" in answer or "error" in answer, answer
        # parameters that do not fit the method: the error says what and where (it said only "Invalid Params")
        unfit = await client.request(150, "textDocument/hover", {"textDocument": {"uri": billing.as_uri()},
                                                                 "position": {"line": "three", "character": 0}})
        assert unfit["error"] == {"code": -32602, "message": "textDocument/hover: invalid value for type, expected "
                                  "int @ $.params.position.line"}, unfit
        missing = await client.request(151, "textDocument/definition", {"textDocument": {"uri": billing.as_uri()},
                                                                        "position": {"line": 3}})
        assert missing["error"]["message"] == \
            "textDocument/definition: required field missing @ $.params.position.character", missing
        unknown = await client.request(200, "workspace/executeCommand",
                                       {"command": "docbridge.handoff", "arguments": ["acme-biling"]})
        assert unknown["error"]["message"].startswith('Unknown entity "acme-biling"')
        assert "acme-billing" in unknown["error"]["data"]["candidates"]
        # garbage on the wire, a notification nobody knows, a cancellation of nothing, a huge buffer
        client.send(b'{"jsonrpc": "2.0", "id": 300, "method": ')
        client.send(b"not json at all")
        client.send({"method": "docbridge/unknownNotification", "params": {}})
        client.send({"method": "$/cancelRequest", "params": {"id": 999_999}})
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (root / "docs/huge.md").as_uri(), "languageId": "markdown", "version": 1,
            "text": "# Huge\n\n" + "word `src/x.ts` [y](z.md) " * 250_000}}})
        # a request cancelled while it is queued
        client.send({"id": 400, "method": "textDocument/references", "params": {
            "textDocument": {"uri": billing.as_uri()}, "position": {"line": 12, "character": 2},
            "context": {"includeDeclaration": True}}})
        client.send({"method": "$/cancelRequest", "params": {"id": 400}})
        with contextlib.suppress(TimeoutError):
            await client.response(400, timeout=5)
        # and the server still answers correctly
        line, _ = find(billing, "`createInvoice` is re-exported")
        answer = await client.request(500, "textDocument/definition", {
            "textDocument": {"uri": billing.as_uri()}, "position": {"line": line, "character": 3}})
        result = answer["result"]
        location = result[0] if isinstance(result, list) else result
        assert location["uri"] == (root / "src/billing/invoice.ts").as_uri()
        # none of it made a handler fail (a failure answers its default, and is logged at error level)
        failures = [n["params"]["message"] for n in client.notifications
                    if n["method"] == "window/logMessage" and n["params"]["type"] == 1]
        assert failures == []
    finally:
        await client.stop()


async def test_a_thousand_random_requests(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    rng = random.Random(42)
    files = sorted(p for p in root.rglob("*") if p.suffix in (".md", ".ts", ".tsx") and ".docbridge" not in p.parts)
    async with session(root) as s:
        for path in files[:12]:
            s.open(path)

        def position() -> T.Position:
            return T.Position(line=rng.randrange(0, 120), character=rng.randrange(0, 140))

        def document(path: Path) -> T.TextDocumentIdentifier:
            return T.TextDocumentIdentifier(uri=path.as_uri())

        pending = []
        for _ in range(1000):
            path = rng.choice(files)
            kind = rng.randrange(8)
            client = s.client
            if kind == 0:
                request = client.text_document_definition_async(T.DefinitionParams(text_document=document(path),
                                                                                   position=position()))
            elif kind == 1:
                request = client.text_document_hover_async(T.HoverParams(text_document=document(path),
                                                                         position=position()))
            elif kind == 2:
                request = client.text_document_references_async(T.ReferenceParams(
                    text_document=document(path), position=position(),
                    context=T.ReferenceContext(include_declaration=rng.random() < 0.5)))
            elif kind == 3:
                request = client.text_document_completion_async(T.CompletionParams(text_document=document(path),
                                                                                   position=position()))
            elif kind == 4:
                request = client.text_document_document_link_async(T.DocumentLinkParams(text_document=document(path)))
            elif kind == 5:
                start = position()
                request = client.text_document_code_action_async(T.CodeActionParams(
                    text_document=document(path), range=T.Range(start=start, end=start),
                    context=T.CodeActionContext(diagnostics=[])))
            elif kind == 6:
                request = client.text_document_code_lens_async(T.CodeLensParams(text_document=document(path)))
            else:
                request = client.text_document_document_symbol_async(T.DocumentSymbolParams(
                    text_document=document(path)))
            pending.append(request)
        results = await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 120)
        errors = [r for r in results if isinstance(r, Exception)]
        assert not errors, errors[:3]
        # a handler that failed would have answered its default and logged the failure at error level
        failures = [m.message for m in s.client.log_messages if m.type == T.MessageType.Error]
        assert failures == []
        await _still_correct(s, root)


async def test_requests_during_the_initial_scan_are_answered(tmp_path: Path) -> None:
    root = tmp_path / "large"
    generate(root, 600)
    doc = sorted((root / "docs").rglob("*.md"))[0]
    lines = doc.read_text(encoding="utf-8").split("\n")
    # the first relative link to a document that exists: its definition is that document
    line, column, target = next((n, text.index("]("), text[text.index("](") + 2:text.index(")", text.index("]("))])
                                for n, text in enumerate(lines) if "](" in text and "#" not in text.split("](")[1]
                                and (doc.parent / text.split("](")[1].split(")")[0]).is_file())
    expected = (doc.parent / target).resolve().as_uri()
    async with session(root, wait=False) as s:
        s.open(doc)
        for _ in range(5):
            found = await asyncio.wait_for(s.definition(doc, line, column + 3), 60)
            found = found[0] if isinstance(found, list) else found
            assert found is not None and found.uri == expected
            search = await asyncio.wait_for(s.command("docbridge.search", "order", 3), 120)
            assert search["results"]  # answered from the model, once the first scan is done
        await s.ready(timeout=120)
        search = await s.command("docbridge.search", "order", 3)
        assert search["results"] and not search["scanning"]


async def test_a_huge_buffer_is_not_analyzed_and_the_server_keeps_answering(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    huge = root / "docs/huge.md"
    billing = root / "docs/billing.md"
    async with session(root) as s:
        # 50 MB of ordinary Markdown lines, each with a path mention and a link: far over limits.maxFileBytes
        s.open(huge, "# Huge\n\n" + "Line with `src/x.ts` and [y](z.md).\n" * 1_400_000)
        s.open(billing)
        line, _ = find(billing, "`createInvoice` is re-exported")
        found = await asyncio.wait_for(s.definition(billing, line, 3), 60)
        found = found[0] if isinstance(found, list) else found
        assert found is not None and found.uri == (root / "src/billing/invoice.ts").as_uri()
        await s.until(lambda: any(d.code == "FILE_TOO_LARGE" for d in s.diagnostics(huge)), 60)
        (notice,) = s.diagnostics(huge)
        assert notice.severity == T.DiagnosticSeverity.Information and "maxFileBytes" in notice.message
        symbols = await s.client.text_document_document_symbol_async(T.DocumentSymbolParams(
            text_document=T.TextDocumentIdentifier(uri=huge.as_uri())))
        assert symbols == []  # no request kind analyzes what is over the limit
        assert [m.message for m in s.client.log_messages if m.type == T.MessageType.Error] == []


@pytest.mark.attack("LSP frames and wrong types")
async def test_a_frame_nested_too_deeply_is_answered_and_the_request_after_it_in_the_same_write_too(
        tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    client = await RawClient.start()
    try:
        await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        client.send({"method": "initialized", "params": {}})
        await client.ready()
        deep = b"[" * 200_000 + b"]" * 200_000
        request = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol",
                              "params": {"query": "invoice"}}).encode()
        client.write(encode(deep) + encode(request))
        answer = await client.response(2, timeout=30)  # not held back until another message arrives
        assert "result" in answer
    finally:
        await client.stop()


async def test_a_request_after_shutdown_is_answered_with_an_error(tmp_path: Path) -> None:
    """After `shutdown`, a request was skipped without an answer, and its client waited for one forever; LSP 3.17
    answers it with InvalidRequest. `exit` still ends the server."""
    root = copy_fixture("acme", tmp_path)
    client = await RawClient.start()
    try:
        await client.serve_folder(root)
        assert (await client.request(2, "shutdown", None))["result"] is None
        late = await client.request(3, "textDocument/hover", {"textDocument": {"uri": (root / "README.md").as_uri()},
                                                              "position": {"line": 0, "character": 0}}, timeout=10)
        assert late["error"]["code"] == -32600 and "shutting down" in late["error"]["message"], late
        client.send({"method": "exit"})
        assert await asyncio.wait_for(client.process.wait(), 30) == 0
    finally:
        await client.stop()
