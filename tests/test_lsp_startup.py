"""Start-up: the server answers `initialize` from the answer it kept for the same client (before its libraries
are loaded), serves normally after that, and corrects a kept answer that is no longer its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import copy_fixture
from lsp_client import RawClient
from support.jsonrpc import encode
from support.positions import find

VSCODE_LIKE = {"general": {"positionEncodings": ["utf-16"]},
               "textDocument": {"synchronization": {"didSave": True, "willSave": True},
                                "hover": {"contentFormat": ["markdown"]}},
               "workspace": {"workspaceFolders": True, "fileOperations": {"didRename": True, "willRename": True}},
               "window": {"workDoneProgress": True}}
UTF8_FIRST = {"general": {"positionEncodings": ["utf-8", "utf-16"]}}


async def initialize(answers: Path, capabilities: dict[str, Any], root: Path | None = None,
                     then: Any = None) -> dict[str, Any]:
    """One server's answer to `initialize` (and whatever `then(client)` returns, run before it stops)."""
    client = await RawClient.start(env={"DOCBRIDGE_INITIALIZE_ANSWERS": str(answers)})
    try:
        params: dict[str, Any] = {"processId": None, "capabilities": capabilities,
                                  "rootUri": root.as_uri() if root else None}
        if root is not None:
            params["workspaceFolders"] = [{"uri": root.as_uri(), "name": root.name}]
        answer = await client.request(1, "initialize", params, 60)
        client.send({"method": "initialized", "params": {}})
        extra = await then(client) if then is not None else None
        return {"result": answer["result"], "then": extra}
    finally:
        await client.stop()


def kept(answers: Path) -> list[Path]:
    return sorted(answers.glob("*.json"))


async def test_a_second_start_answers_initialize_from_the_kept_answer_and_serves(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    root = copy_fixture("acme", tmp_path)
    billing = root / "docs/billing.md"
    line, column = find(billing, "(auth.md#roles-and-permissions)")

    async def definition(client: RawClient) -> Any:
        await client.ready(timeout=120)
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": billing.as_uri(), "languageId": "markdown", "version": 1,
            "text": billing.read_text(encoding="utf-8")}}})
        answer = await client.request(2, "textDocument/definition", {
            "textDocument": {"uri": billing.as_uri()}, "position": {"line": line, "character": column + 3}}, 60)
        result = answer["result"]
        result = result[0] if isinstance(result, list) else result
        return result["uri"], result["range"]["start"]["line"]

    first = await initialize(answers, VSCODE_LIKE, root, definition)
    assert len(kept(answers)) == 1  # the server kept its answer for this client
    second = await initialize(answers, VSCODE_LIKE, root, definition)
    assert second["result"] == first["result"]
    assert first["result"]["capabilities"]["workspace"]["fileOperations"]["didRename"]  # the client's own answer
    auth = root / "docs/auth.md"
    assert second["then"] == first["then"] == (auth.as_uri(), find(auth, "## Roles and permissions")[0])

    # another client's capabilities get their own answer: here the encoding it prefers
    utf8 = await initialize(answers, UTF8_FIRST)
    assert utf8["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert first["result"]["capabilities"]["positionEncoding"] == "utf-16"
    assert len(kept(answers)) == 2
    assert (await initialize(answers, UTF8_FIRST))["result"] == utf8["result"]


async def test_a_kept_answer_that_is_not_the_servers_own_is_corrected_after_one_start(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    real = (await initialize(answers, VSCODE_LIKE))["result"]
    [path] = kept(answers)
    stored = json.loads(path.read_text(encoding="utf-8"))
    stored["result"]["capabilities"]["experimental"] = {"stale": True}
    path.write_text(json.dumps(stored), encoding="utf-8")
    # the start that reads it sends it (that is what makes it fast) and then corrects it
    assert (await initialize(answers, VSCODE_LIKE))["result"]["capabilities"]["experimental"] == {"stale": True}
    assert (await initialize(answers, VSCODE_LIKE))["result"] == real
    # an unreadable kept answer is no answer: the server answers itself and keeps a good one again
    path.write_text("{not json", encoding="utf-8")
    assert (await initialize(answers, VSCODE_LIKE))["result"] == real
    assert json.loads(path.read_text(encoding="utf-8"))["result"] == real


async def test_frames_sent_with_initialize_in_one_write_are_all_handled(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    await initialize(answers, {})
    client = await RawClient.start(env={"DOCBRIDGE_INITIALIZE_ANSWERS": str(answers)})
    try:
        frames = b"".join(encode(message) for message in (
            {"id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}, "rootUri": None}},
            {"method": "initialized", "params": {}},
            {"id": 2, "method": "$/unknown", "params": {}}))
        client.write(frames[:-7])  # the last frame arrives in two pieces
        await client.response(1, 60)
        client.write(frames[-7:])
        assert (await client.response(2, 60))["error"]["code"] == -32601
    finally:
        await client.stop()


async def _session(answers: Path, root: Path, opened: list[tuple[Path, str]]) -> RawClient:
    """A server on `root` that was sent initialize, then initialized and a didOpen per document in one write
    (as an editor restoring its tabs)."""
    client = await RawClient.start(env={"DOCBRIDGE_INITIALIZE_ANSWERS": str(answers)})
    await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": VSCODE_LIKE,
                                           "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]}, 60)
    messages = [{"method": "initialized", "params": {}}] + [
        {"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": path.as_uri(), "languageId": "markdown", "version": 1, "text": text}}} for path, text in opened]
    client.write(b"".join(encode(m) for m in messages))
    return client


def _published(client: RawClient, uri: str) -> list[tuple[int, list[dict[str, Any]]]]:
    """(position among the notifications, diagnostics) of each publish for `uri`."""
    return [(i, n["params"]["diagnostics"]) for i, n in enumerate(client.notifications)
            if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri]


async def test_a_restart_publishes_the_open_documents_kept_diagnostics_before_loading(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    root = copy_fixture("acme", tmp_path)
    # architecture.md mentions a module that is not there, which only the full model reports, and gets a broken
    # link, which a provisional answer reports too: a set with both was kept, not computed before the scan
    document, orders = root / "docs/architecture.md", root / "docs/orders.md"
    text = document.read_text(encoding="utf-8") + "\nSee [the missing page](./nowhere.md).\n"
    clean = orders.read_text(encoding="utf-8")
    client = await _session(answers, root, [(document, text), (orders, clean)])
    try:
        await client.ready(timeout=120)

        def full_model() -> list[dict[str, Any]] | None:
            """The newest diagnostics of the document once they are the full model's (the provisional ones,
            published first, have the broken link only)."""
            published = _published(client, document.as_uri())
            newest = published[-1][1] if published else []
            return newest if {"LINK_BROKEN", "MENTION_UNRESOLVED"} <= {d["code"] for d in newest} else None

        last = await client.until(full_model, 60, what="the full model's LINK_BROKEN and MENTION_UNRESOLVED")
    finally:
        await client.stop()  # shutdown keeps the open documents' diagnostics
    assert (root / ".docbridge/cache/open-diagnostics.json").is_file()

    again = await _session(answers, root, [(document, text), (orders, clean)])
    try:
        await again.until(lambda: _published(again, document.as_uri()) and _published(again, orders.as_uri()), 60,
                          what="diagnostics for both documents")
        ready = await again.ready(timeout=120)
        position = again.notifications.index(next(n for n in again.notifications if n["method"] == "docbridge/status"
                                                   and n["params"] == ready))
        first, diagnostics = _published(again, document.as_uri())[0]
        assert first < position and diagnostics == last, "the kept set, published before the scan ended"
        first, diagnostics = _published(again, orders.as_uri())[0]
        assert first < position and diagnostics == []
        await again.until(lambda: len(_published(again, document.as_uri())) >= 2, 60,
                          what="a second publish for the document")  # the full model's, which agree
        assert _published(again, document.as_uri())[-1][1] == last
    finally:
        await again.stop()

    # stopped before its scan ended (its own diagnostics not sent yet): what it showed is kept for the next start
    for _ in range(2):
        quick = await _session(answers, root, [(document, text)])
        try:
            await quick.until(lambda q=quick: _published(q, document.as_uri()), 60, what="diagnostics for the document")
            assert _published(quick, document.as_uri())[0][1] == last
        finally:
            await quick.stop()

    # another text: nothing kept is shown for it, whatever the model then says
    changed = text + "And [another](./elsewhere.md).\n"
    third = await _session(answers, root, [(document, changed)])
    try:
        await third.ready(timeout=120)
        await third.until(lambda: len(_published(third, document.as_uri())) >= 2, 60,
                          what="a second publish for the document")
        assert all(diagnostics != last for _, diagnostics in _published(third, document.as_uri()))
        broken = sum(d["code"] == "LINK_BROKEN" for d in last)
        assert sum(d["code"] == "LINK_BROKEN" for d in _published(third, document.as_uri())[-1][1]) == broken + 1
    finally:
        await third.stop()


async def test_exit_ends_the_process_while_a_scan_still_runs_in_a_worker_thread(tmp_path: Path) -> None:
    """An editor that stops the server during the first scan of a large tree (or a long search index build) waits
    for the process to end: it ends at once, instead of when the worker thread's work is done."""
    import asyncio

    from docbridge.bench.synthetic import generate
    root = tmp_path / "large"
    generate(root, 6000)  # 12,000 files: the cold scan takes seconds
    facts = root / ".docbridge" / "cache" / "facts.json"
    client = await RawClient.start()
    try:
        await client.request(1, "initialize", {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {"window": {"workDoneProgress": True}},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "large"}]}, 60)
        client.send({"method": "initialized", "params": {}})
        await client.until(lambda: any(n["method"] == "$/progress" and n["params"]["value"].get("kind") == "report"
                                       for n in client.notifications), what="the scan to report progress")
        assert (await client.request(2, "shutdown", None, 60))["result"] is None
        client.send({"method": "exit"})
        status = await asyncio.wait_for(client.process.wait(), 60)
        assert status == 0
        # the scan had not finished (it writes the facts cache at its end) when the process ended
        assert not facts.exists()
    finally:
        await client.stop()
