"""The repository inputs that used to abort a scan (tests/test_robust_inputs.py drives them through the CLI),
in a workspace the language server scans: its scan finishes, what it skipped is reported, every other file
is served, and nothing fails inside a handler. A configuration or a `.docbridge` the user must fix is said
in a message, and nothing is written through a link."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from conftest import copy_fixture
from lsp_client import Session, session
from lsprotocol import types as T
from support.positions import find
from support.wait import not_before_async

# docs/architecture.md:58 is `[old deployment notes](./deployment-v1.md)` (0-based 57); docs/billing.md has
# "`createInvoice` is re-exported ..." whose definition is src/billing/invoice.ts.
BROKEN_LINK_LINE = 57
ALIAS_BOMB = "---\n" + "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)) + "---\n# Bomb\n"


def plant_legal_but_unusual_inputs(root: Path) -> None:
    with (root / ".gitignore").open("a", encoding="utf-8") as ignore:
        ignore.write("!\n[z-a]\n")
    deep = root / "packages" / "deep"
    deep.mkdir(parents=True)
    (deep / "package.json").write_text('{"name": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    (root / "docs" / "tagged.md").write_text("---\n0: !!int\n---\n# Tagged\n", encoding="utf-8")
    (root / "docs" / "bomb.md").write_text(ALIAS_BOMB, encoding="utf-8")
    (root / "docs" / "quotes.md").write_text("# Quotes\n\n" + ">" * 40 + " deep\n", encoding="utf-8")


def last_status(s: Session, name: str) -> Any:
    """A field of the newest docbridge/status (the client hands them over as dicts or as objects)."""
    status = s.statuses[-1]
    return status.get(name) if isinstance(status, dict) else getattr(status, name, None)


def errors_logged(s: Session) -> list[str]:
    return [m.message for m in s.client.log_messages if m.type == T.MessageType.Error]


async def test_the_scan_finishes_and_serves_every_other_file(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    plant_legal_but_unusual_inputs(root)
    architecture, billing, tagged = root / "docs/architecture.md", root / "docs/billing.md", root / "docs/tagged.md"
    async with session(root) as s:
        assert last_status(s, "state") == "ready"
        s.open(architecture)
        await s.until(lambda: ("LINK_BROKEN", BROKEN_LINK_LINE) in s.codes(architecture), 30)
        s.open(billing)
        line, _ = find(billing, "`createInvoice` is re-exported")
        found = await asyncio.wait_for(s.definition(billing, line, 3), 20)
        found = found[0] if isinstance(found, list) else found
        assert found is not None and found.uri == (root / "src/billing/invoice.ts").as_uri()
        # frontmatter whose YAML tags cannot be built is malformed frontmatter, said on its line
        s.open(tagged)
        await s.until(lambda: any(d.code == "DOCBRIDGE_BLOCK_INVALID" for d in s.diagnostics(tagged)), 30)
        # the alias bomb is refused, not expanded: the server still answers at once
        bomb = root / "docs/bomb.md"
        s.open(bomb)
        await s.until(lambda: any(d.code == "DOCBRIDGE_BLOCK_INVALID" for d in s.diagnostics(bomb)), 30)
        symbols = await asyncio.wait_for(s.client.text_document_document_symbol_async(
            T.DocumentSymbolParams(text_document=T.TextDocumentIdentifier(uri=bomb.as_uri()))), 20)
        assert [symbol.name for symbol in symbols or []] == ["Bomb"]
        # a document beyond the nesting budget says so when it is opened
        quotes = root / "docs/quotes.md"
        s.open(quotes)
        await s.until(lambda: any(d.code == "FILE_NESTING_TOO_DEEP" for d in s.diagnostics(quotes)), 30)
        seen = len(s.statuses)
        await s.command("docbridge.reindex")
        await s.until(lambda: last_status(s, "state") == "ready" and len(s.statuses) > seen, 60)
        assert last_status(s, "handlerErrors") == 0
        assert errors_logged(s) == []


async def test_an_invalid_configuration_value_is_said_and_the_server_keeps_serving(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    config = root / "doc-bridge.config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data["retrieval"] = {"weights": {"title": 1e999}}
    config.write_text(json.dumps(data).replace("Infinity", "1e999"), encoding="utf-8")
    async with session(root, wait=False) as s:
        await s.until(lambda: any(m.type == T.MessageType.Error for m in s.client.messages), 60)
        (message,) = [m.message for m in s.client.messages if m.type == T.MessageType.Error]
        assert "doc-bridge.config.json" in message and "retrieval.weights.title" in message
        # with no model to answer from, requests answer at once (they used to wait for a scan that never came)
        billing = root / "docs/billing.md"
        assert await asyncio.wait_for(s.hover(billing, 0, 0), 20) is None
        s.open(billing)
        assert await asyncio.wait_for(s.definition(billing, 0, 0), 20) in (None, [])
        # fixing the configuration scans again and serves the folder
        config.write_text(json.dumps({k: v for k, v in data.items() if k != "retrieval"}), encoding="utf-8")
        s.watched((config, T.FileChangeType.Changed))
        await s.until(lambda: last_status(s, "state") == "ready", 60)
        line, _ = find(billing, "`createInvoice` is re-exported")
        found = await asyncio.wait_for(s.definition(billing, line, 3), 20)
        found = found[0] if isinstance(found, list) else found
        assert found is not None and found.uri == (root / "src/billing/invoice.ts").as_uri()


async def test_a_docbridge_folder_that_is_a_link_is_said_and_nothing_is_written_through_it(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    link = root / ".docbridge"
    if link.exists():
        import shutil
        shutil.rmtree(link)
    link.symlink_to(outside, target_is_directory=True)
    async with session(root, wait=False) as s:
        await s.until(lambda: any(m.type == T.MessageType.Error for m in s.client.messages), 60)
        (message,) = [m.message for m in s.client.messages if m.type == T.MessageType.Error]
        assert ".docbridge" in message and "link" in message
        billing = root / "docs/billing.md"
        s.open(billing)
        # what the server writes for an open document comes before it publishes the document's diagnostics (the
        # codes page they link to): once they are here, nothing was written through the link
        await not_before_async(lambda: billing.as_uri() in s.client.diagnostics, lambda: list(outside.iterdir()),
                               20, what="the open document's diagnostics",
                               unwanted_what="a file written through the .docbridge link")
    assert list(outside.iterdir()) == []  # nor at shutdown (the server has exited)


async def test_a_lone_surrogate_in_a_buffer_is_read_as_a_replacement_character(tmp_path: Path) -> None:
    """JSON can carry a lone surrogate (`"\\ud800"`), UTF-8 cannot hold one: the open used to fail (its text could
    not be hashed), every later request then waited for that change forever. The buffer is analysed with each lone
    surrogate read as U+FFFD, one UTF-16 unit for another, so the client's positions still land where they did."""
    root = copy_fixture("acme", tmp_path)
    billing = root / "docs/billing.md"
    link = "./missing-\udfff.md"
    added = f"\n## Odd \ud800 heading\n\nSee [x]({link}) and `create\ud800Invoice`.\n"
    text = billing.read_text(encoding="utf-8") + added
    line = text[:text.index("See [x]")].count("\n")
    async with session(root) as s:
        await s.ready()
        s.open(billing, text)
        await s.until(lambda: ("LINK_BROKEN", line) in s.codes(billing), 20)
        await asyncio.wait_for(s.hover(billing, 0, 2), 20)  # answered, not waited on
        found = await asyncio.wait_for(s.command("docbridge.search", "invoice \ud800", 5), 20)
        assert found["results"]
        start = text.splitlines()[line].index(link)
        s.edit(billing, line, start, start + len(link), "./storage.md")  # after the surrogates, on their line
        await s.until(lambda: ("LINK_BROKEN", line) not in s.codes(billing), 20)
        s.edit(billing, line, 0, 0, "[y](./gone-\udc00.md) ")  # an edit that brings one
        await s.until(lambda: ("LINK_BROKEN", line) in s.codes(billing), 20)
        assert not errors_logged(s)


async def test_a_uri_with_a_lone_surrogate_names_no_file_and_logs_no_error(tmp_path: Path) -> None:
    """No file name holds a lone surrogate: a document opened under such a URI is outside every folder, as a
    file elsewhere is (each request on it used to end in an error message shown to the user)."""
    root = copy_fixture("acme", tmp_path)
    uri = f"{root.as_uri()}/docs/odd\ud800.md"
    architecture = root / "docs/architecture.md"
    async with session(root) as s:
        await s.ready()
        s.client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
            uri=uri, language_id="markdown", version=1, text="# Odd\n\nSee [the billing](./billing.md).\n")))
        where = T.TextDocumentIdentifier(uri=uri)
        assert await asyncio.wait_for(s.client.text_document_hover_async(
            T.HoverParams(text_document=where, position=T.Position(line=2, character=6))), 20) is None
        assert not await asyncio.wait_for(s.client.text_document_definition_async(
            T.DefinitionParams(text_document=where, position=T.Position(line=2, character=20))), 20)
        s.open(architecture)
        await s.until(lambda: ("LINK_BROKEN", BROKEN_LINK_LINE) in s.codes(architecture), 30)
        assert not errors_logged(s)


async def test_a_docbridge_that_becomes_a_link_mid_session_is_no_traceback_at_shutdown(tmp_path: Path) -> None:
    """`.docbridge` replaced by a link while the server runs: keeping the model and the open documents'
    diagnostics for the next start failed with a traceback in the log (the user is told once, in a message);
    nothing is written through the link, and the shutdown answers."""
    from lsp_client import RawClient
    root = copy_fixture("acme", tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    billing = root / "docs/billing.md"
    log_file = tmp_path / "server.log"
    with log_file.open("wb") as stderr:
        client = await RawClient.start(stderr=stderr)
        try:
            await client.serve_folder(root)
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": billing.as_uri(), "languageId": "markdown", "version": 1, "text": billing.read_text()}}})
            await client.until(lambda: any(n["method"] == "textDocument/publishDiagnostics"
                                           and n["params"]["uri"] == billing.as_uri() for n in client.notifications))
            import shutil
            shutil.rmtree(root / ".docbridge")
            (root / ".docbridge").symlink_to(elsewhere, target_is_directory=True)
            client.send({"method": "textDocument/didChange", "params": {
                "textDocument": {"uri": billing.as_uri(), "version": 2},
                "contentChanges": [{"text": billing.read_text() + "\nOne more line.\n"}]}})
            assert (await client.request(2, "shutdown", None, timeout=60))["result"] is None
            client.send({"method": "exit"})
            await asyncio.wait_for(client.process.wait(), 30)
        finally:
            await client.stop()
    assert list(elsewhere.iterdir()) == []
    log = log_file.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log, log
