"""Every request sees the text sent before it: a `didChange` (or `didOpen`) and a request written in one write
get an answer about the new text, while the first scan runs and while a search index is being built.

The repository is the acme fixture plus a few thousand generated files, so that its first scan is still
running when the requests are sent (the test checks that it was). Expected answers come from the fixture
files (`find`) and from the text the test itself sends.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from conftest import copy_fixture
from lsp_client import RawClient
from support.jsonrpc import encode
from support.positions import find, lsp_position, position

from docbridge.bench.synthetic import generate

NEW_LINES = ("\n## Freshly written\n\n"
             "See [sessions](auth.md#sessions), [the orders guide](orders.md) and `calculateTax`.\n"
             "Back to [this section](#freshly-written); broken: [gone](./nowhere-at-all.md).\n"
             "zanzibarquokka is a word only this edit contains.\n"
             "Type here: [next](./aut")


def big_acme(tmp_path: Path, padding: int) -> Path:
    root = copy_fixture("acme", tmp_path)
    generate(root / "padding", padding)
    return root


async def start(root: Path) -> RawClient:
    client = await RawClient.start()
    capabilities = {"workspace": {"workspaceEdit": {"documentChanges": True, "resourceOperations": ["rename"]}},
                    "textDocument": {"hover": {"contentFormat": ["markdown"]}}}
    await client.request(0, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities,
                                           "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]}, 60)
    client.send({"method": "initialized", "params": {}})
    return client


def ready(client: RawClient) -> bool:
    return any(n["method"] == "docbridge/status" and n["params"]["state"] == "ready" for n in client.notifications)


def diagnostics_for(client: RawClient, uri: str) -> list[list[dict[str, Any]]]:
    return [n["params"]["diagnostics"] for n in client.notifications
            if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri]


def requests_about_the_new_text(uri: str, text: str, first_id: int) -> list[dict[str, Any]]:
    """One request of every kind, each about something only the new text contains."""
    def at(needle: str, offset: int = 1) -> dict[str, int]:
        return lsp_position(text, needle, shift=offset)

    document = {"uri": uri}
    broken = at("[gone](./nowhere-at-all.md)", 0)
    return [
        {"id": first_id, "method": "textDocument/definition",
         "params": {"textDocument": document, "position": at("[sessions]")}},
        {"id": first_id + 1, "method": "textDocument/hover",
         "params": {"textDocument": document, "position": at("[the orders guide]")}},
        {"id": first_id + 2, "method": "textDocument/references",
         "params": {"textDocument": document, "position": at("## Freshly written", 4),
                    "context": {"includeDeclaration": False}}},
        {"id": first_id + 3, "method": "textDocument/completion",
         "params": {"textDocument": document, "position": at("[next](./aut", len("[next](./aut"))}},
        {"id": first_id + 4, "method": "textDocument/codeAction", "params": {
            "textDocument": document, "range": {"start": broken, "end": broken},
            "context": {"only": ["quickfix"], "diagnostics": [{
                "range": {"start": broken, "end": broken}, "message": "Link target does not exist.",
                "source": "docbridge", "code": "LINK_BROKEN",
                "data": {"code": "LINK_BROKEN", "candidates": ["docs/storage.md"]}}]}}},
        {"id": first_id + 5, "method": "textDocument/documentLink", "params": {"textDocument": document}},
        {"id": first_id + 6, "method": "textDocument/documentSymbol", "params": {"textDocument": document}},
        {"id": first_id + 7, "method": "textDocument/definition",
         "params": {"textDocument": document, "position": at("`calculateTax`", 3)}},
        {"id": first_id + 8, "method": "workspace/executeCommand",
         "params": {"command": "docbridge.search", "arguments": ["zanzibarquokka", 5]}},
    ]


def check_answers(root: Path, answers: dict[int, dict[str, Any]], first_id: int, text: str) -> None:
    def result(offset: int) -> Any:
        answer = answers[first_id + offset]
        assert "error" not in answer, answer
        return answer["result"]

    auth, orders, tax = root / "docs/auth.md", root / "docs/orders.md", root / "src/billing/tax.ts"
    definition = result(0)
    definition = definition[0] if isinstance(definition, list) else definition
    assert definition["uri"] == auth.as_uri() and definition["range"]["start"]["line"] == find(auth, "## Sessions")[0]
    assert result(1)["contents"]["value"].startswith("**document**") and "docs/orders.md" in result(1)[
        "contents"]["value"]
    self_link = position(text, "[this section](#freshly-written)")[0]
    assert [r["range"]["start"]["line"] for r in result(2)] == [self_link]
    assert "./auth.md" in [item["label"] for item in result(3)["items"]]
    assert [action["title"] for action in result(4)] == ["Link to docs/storage.md"]
    targets = [link.get("target", "") for link in result(5)]
    assert any(t.startswith(auth.as_uri()) for t in targets) and any(t.startswith(orders.as_uri()) for t in targets)

    def names(symbols: list[dict[str, Any]]) -> list[str]:
        return [s["name"] for s in symbols] + [n for s in symbols for n in names(s.get("children") or [])]
    assert "Freshly written" in names(result(6))
    symbol = result(7)
    symbol = symbol[0] if isinstance(symbol, list) else symbol
    assert symbol["uri"] == tax.as_uri() and symbol["range"]["start"]["line"] == find(tax, "calculateTax(")[0]
    assert result(8)["results"] and result(8)["results"][0]["id"] == "document:docs/billing.md"


async def test_requests_in_the_same_write_as_an_edit_see_it_during_the_first_scan(tmp_path: Path) -> None:
    root = big_acme(tmp_path, 2500)
    billing = root / "docs/billing.md"
    uri = billing.as_uri()
    original = billing.read_text(encoding="utf-8")
    client = await start(root)
    try:
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": original}}})
        await client.until(lambda: diagnostics_for(client, uri), 120, what=f"diagnostics for {uri}")
        assert not ready(client), "the first scan ended before the edit: the repository is too small to test this"
        text = original + NEW_LINES
        edit = {"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}}
        requests = requests_about_the_new_text(uri, text, 10)
        client.write(b"".join(encode(m) for m in [edit, *requests]))
        answers = {m["id"]: await client.response(m["id"], 180) for m in requests}
        check_answers(root, answers, 10, text)
        # the provisional answers (links to files) came before the scan ended
        broken_line = position(text, "[gone]")[0]
        assert any(any(d["code"] == "LINK_BROKEN" and d["range"]["start"]["line"] == broken_line for d in published)
                   for published in diagnostics_for(client, uri))
    finally:
        await client.stop()


async def test_a_document_opened_during_the_scan_is_answered_at_once(tmp_path: Path) -> None:
    root = big_acme(tmp_path, 2500)
    orders = root / "docs/orders.md"
    uri = orders.as_uri()
    client = await start(root)
    try:
        text = orders.read_text(encoding="utf-8")
        line, column = find(orders, "(billing.md#invoices)")
        opened = {"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": text}}}
        request = {"id": 5, "method": "textDocument/definition", "params": {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": column + 3}}}
        client.write(encode(opened) + encode(request))
        answer = await client.response(5, 60)
        assert not ready(client), "the first scan ended before the request: the repository is too small"
        result = answer["result"]
        result = result[0] if isinstance(result, list) else result
        billing = root / "docs/billing.md"
        assert result["uri"] == billing.as_uri() and result["range"]["start"]["line"] == find(billing, "## Invoices")[0]
    finally:
        await client.stop()


async def test_documents_opened_during_the_scan_get_their_diagnostics_at_once(tmp_path: Path) -> None:
    # a repository that declares nothing to Doc Bridge (no configuration file): its check scope is decided by
    # reading every document, which the provisional answer has not read
    root = big_acme(tmp_path, 2500)
    (root / "doc-bridge.config.json").unlink()
    broken, clean = root / "docs/billing.md", root / "docs/orders.md"
    client = await start(root)
    try:
        text = broken.read_text(encoding="utf-8") + "\nSee [the missing page](./nowhere.md).\n"
        for path, body in ((broken, text), (clean, clean.read_text(encoding="utf-8"))):
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": path.as_uri(), "languageId": "markdown", "version": 1, "text": body}}})
        await client.until(lambda: diagnostics_for(client, broken.as_uri()) and diagnostics_for(client, clean.as_uri()),
                           60, what="diagnostics for both opened documents")
        assert not ready(client), "the first scan ended before the diagnostics: the repository is too small"
        first = diagnostics_for(client, broken.as_uri())[0]
        assert [(d["code"], d["range"]["start"]["line"]) for d in first] == [
            ("LINK_BROKEN", len(text.split("\n")) - 2)]
        assert diagnostics_for(client, clean.as_uri())[0] == []  # said at once: nothing is wrong in it
    finally:
        await client.stop()


async def test_requests_do_not_wait_for_a_search_index_being_built(tmp_path: Path) -> None:
    root = big_acme(tmp_path, 2500)
    billing = root / "docs/billing.md"
    uri = billing.as_uri()
    original = billing.read_text(encoding="utf-8")
    client = await start(root)
    try:
        await client.ready(timeout=300)
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": original}}})
        text = original + NEW_LINES
        search = {"id": 100, "method": "workspace/executeCommand",
                  "params": {"command": "docbridge.search", "arguments": ["invoice tax rounding", 3]}}
        edit = {"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}}
        requests = requests_about_the_new_text(uri, text, 10)
        client.write(b"".join(encode(m) for m in [search, edit, *requests[:7]]))
        order: list[int] = []

        async def wait(id_: int) -> dict[str, Any]:
            answer = await client.response(id_, 180)
            order.append(id_)
            return answer

        answers = dict(zip([100] + [m["id"] for m in requests[:7]],
                           await asyncio.gather(wait(100), *(wait(m["id"]) for m in requests[:7])), strict=True))
        # every request about the edit was answered before the index build the search started had finished
        assert order.index(100) == len(order) - 1, order
        requests_rest = requests[7:]
        client.write(b"".join(encode(m) for m in requests_rest))
        for m in requests_rest:
            answers[m["id"]] = await client.response(m["id"], 180)
        check_answers(root, answers, 10, text)
    finally:
        await client.stop()


async def test_an_edit_right_after_the_scan_is_answered_before_every_file_is_checked(tmp_path: Path) -> None:
    """When the first scan ends, every file's findings are derived in a worker (seconds on a very large tree)
    and then published. An edit made meanwhile got its diagnostics only after that: its document's own findings
    now come at once, from the new model, before any file of that burst (the padding sorts before `docs/`, so
    the burst reaches it first)."""
    root = copy_fixture("acme", tmp_path)
    generate(root / "a-padding", 2500)
    billing = root / "docs/billing.md"
    uri = billing.as_uri()
    client = await RawClient.start()
    try:
        await client.request(0, "initialize", {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {},
            "initializationOptions": {"diagnostics": {"debounceMs": 0}},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]}, 60)
        client.send({"method": "initialized", "params": {}})
        await client.until(lambda: ready(client), 300, what="the first scan's end")
        text = billing.read_text(encoding="utf-8") + "\nSee [the missing page](./nowhere-at-all.md).\n"
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": billing.read_text(encoding="utf-8")}}})
        client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}})
        line = len(text.split("\n")) - 2
        padding = (root / "a-padding").as_uri()

        def published() -> list[dict[str, Any]]:
            return [n["params"] for n in client.notifications if n["method"] == "textDocument/publishDiagnostics"]

        def names_the_new_link(sent: dict[str, Any]) -> bool:
            return sent["uri"] == uri and any(d["code"] == "LINK_BROKEN" and d["range"]["start"]["line"] == line
                                              for d in sent["diagnostics"])

        await client.until(lambda: any(names_the_new_link(p) for p in published()), 120,
                           what="the edited document's new broken link")
        await client.until(lambda: any(p["uri"].startswith(padding) for p in published()), 120,
                           what="the burst's diagnostics of the padding")
        order = published()
        first_answer = next(i for i, sent in enumerate(order) if names_the_new_link(sent))
        first_of_burst = next(i for i, sent in enumerate(order) if sent["uri"].startswith(padding))
        assert first_answer < first_of_burst, (first_answer, first_of_burst)
    finally:
        await client.stop()
