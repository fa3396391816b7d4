"""The language server over a real stdio connection (pytest-lsp) on copies of the fixtures.

Expected positions come from the fixture files: `find(path, needle)` (tests/support/positions.py) returns the
0-based line and column of a needle as written, which equals the UTF-16 column on the (ASCII) lines used here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import copy_fixture
from lsp_client import session
from lsprotocol import types as T
from support.positions import find
from support.wait import not_before_async


def location(result: object) -> tuple[str, int, int]:
    if isinstance(result, list):
        (result,) = result
    assert isinstance(result, T.Location), result
    return result.uri, result.range.start.line, result.range.start.character


async def test_definition_for_every_link_and_mention_form(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    billing, architecture = root / "docs/billing.md", root / "docs/architecture.md"
    async with session(root) as s:
        s.open(billing)
        s.open(architecture)
        # a link with an anchor lands on the heading
        line, column = find(billing, "[why orders and billing import each other]")
        assert location(await s.definition(billing, line, column + 3)) == (
            architecture.as_uri(), *find(architecture, "## Why orders and billing import each other")[:1], 0)
        # after lines are added above that heading in its own document, the link follows it
        # (requests are answered in order, so the definition sees the edit)
        heading_line = find(architecture, "## Why orders and billing import each other")[0]
        original = architecture.read_text(encoding="utf-8")
        heading = "## Why orders and billing"
        s.replace_all(architecture, original.replace(heading, "Moved.\n\n" + heading, 1))
        line, column = find(billing, "[why orders and billing import each other]")
        assert location(await s.definition(billing, line, column + 3)) == (architecture.as_uri(), heading_line + 2, 0)
        s.replace_all(architecture, original)
        # a link without an anchor: the top of the file
        line, column = find(architecture, "[Authentication](auth.md)")
        assert location(await s.definition(architecture, line, column + 2)) == ((root / "docs/auth.md").as_uri(), 0, 0)
        # a same-document anchor
        line, column = find(billing, "[tax section](#taxes)")
        assert location(await s.definition(billing, line, column + 2)) == (billing.as_uri(),
                                                                           find(billing, "## Taxes")[0], 0)
        # a path mention: the file
        line, column = find(billing, "`src/billing/invoice.ts`")
        invoice = root / "src/billing/invoice.ts"
        assert location(await s.definition(billing, line, column + 5)) == (invoice.as_uri(), 0, 0)
        # a directory mention: its area's index module
        line, column = find(billing, "`src/billing` turns")
        assert location(await s.definition(billing, line, column + 3)) == (
            (root / "src/billing/index.ts").as_uri(), 0, 0)
        # a symbol mention: the declaration, line and column
        line, column = find(billing, "`createInvoice` is re-exported")
        declared_line, declared_column = find(invoice, "createInvoice(")
        assert location(await s.definition(billing, line, column + 4)) == (invoice.as_uri(), declared_line,
                                                                           declared_column)
        # plain prose has no definition; neither does a broken link
        assert await s.definition(billing, 0, 0) is None
        line, column = find(architecture, "[old deployment notes]")
        assert await s.definition(architecture, line, column + 2) is None


async def test_wiki_links_and_buffers_that_are_not_on_disk(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    notes = root / "docs/notes.md"  # only in the editor, never saved
    async with session(root) as s:
        s.open(notes, "# Notes\n\nSee [[billing]] and [[architecture#History]] and `calculateTax`.\n")
        assert location(await s.definition(notes, 2, 6)) == ((root / "docs/billing.md").as_uri(), 0, 0)
        architecture = root / "docs/architecture.md"
        assert location(await s.definition(notes, 2, 24)) == (architecture.as_uri(),
                                                              find(architecture, "## History")[0], 0)
        tax = root / "src/billing/tax.ts"
        line, column = find(tax, "calculateTax(")
        assert location(await s.definition(notes, 2, 55)) == (tax.as_uri(), line, column)


async def test_hover_names_the_target_its_confidence_and_evidence(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    billing = root / "docs/billing.md"
    async with session(root) as s:
        s.open(billing)
        line, column = find(billing, "`createInvoice` is re-exported")
        hover = await s.hover(billing, line, column + 3)
        assert hover is not None and isinstance(hover.contents, T.MarkupContent)
        text = hover.contents.value
        assert "**createInvoice** — exported by `src/billing/invoice.ts` (function, line 44)" in text
        assert "Documented in:" in text and "`docs/orders.md` (mentions-symbol)" in text
        assert "Confidence: observed" in text and "sha256" in text
        assert hover.range == T.Range(start=T.Position(line=line, character=column),
                                      end=T.Position(line=line, character=column + len("`createInvoice`")))
        line, column = find(billing, "[why orders and billing")
        text = (await s.hover(billing, line, column + 2)).contents.value  # type: ignore[union-attr]
        assert text.startswith("**document** Architecture overview — `docs/architecture.md`")
        assert "Section: **Why orders and billing import each other**" in text
        faturamento = root / "docs/guias/faturamento.md"
        s.open(faturamento)
        line, column = find(faturamento, "`src/biling/tax.ts`")
        text = (await s.hover(faturamento, line, column + 3)).contents.value  # type: ignore[union-attr]
        assert "Confidence: fuzzy" in text and "src/billing/tax.ts" in text


async def test_a_broken_link_appears_disappears_and_reappears_elsewhere(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture, storage = root / "docs/architecture.md", root / "docs/storage.md"
    async with session(root) as s:
        s.open(architecture)
        s.open(storage)
        broken_line, column = find(architecture, "(./deployment-v1.md)")
        await s.until(lambda: ("LINK_BROKEN", broken_line) in s.codes(architecture))
        (diagnostic,) = [d for d in s.diagnostics(architecture) if d.code == "LINK_BROKEN"]
        assert diagnostic.source == "docbridge" and diagnostic.severity == T.DiagnosticSeverity.Error
        assert diagnostic.code_description is not None and diagnostic.code_description.href.endswith("#link_broken")
        # type the fix
        s.edit(architecture, broken_line, column + 1, column + len("./deployment-v1.md") + 1, "./deployment.md")
        await s.until(lambda: "LINK_BROKEN" not in {c for c, _ in s.codes(architecture)})
        # another document breaks when its target goes away on disk
        (root / "docs/configuration.md").unlink()
        s.watched((root / "docs/configuration.md", T.FileChangeType.Deleted))
        link_line, _ = find(storage, "configuration.md#environment-variabls")
        await s.until(lambda: ("LINK_BROKEN", link_line) in s.codes(storage))
        assert ("LINK_ANCHOR_MISSING", link_line) not in s.codes(storage)
        readme = root / "docs/README.md"  # not open in the editor: published too
        await s.until(lambda: ("LINK_BROKEN", find(readme, "(configuration.md)")[0]) in s.codes(readme))


async def test_an_open_document_gets_its_diagnostics_before_the_scan_ends(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    broken_line, _ = find(architecture, "(./deployment-v1.md)")
    async with session(root, wait=False) as s:
        seen_at_ready: list[list[tuple[str, int]]] = []
        s.on_status = lambda status: seen_at_ready.append(s.codes(architecture)) \
            if status["state"] == "ready" else None
        s.open(architecture)  # before the scan resolves anything: its findings are computed first
        await s.ready()
        await s.until(lambda: bool(seen_at_ready))
        # the client had the document's broken link when the server said the scan was done
        assert ("LINK_BROKEN", broken_line) in seen_at_ready[0]
        # and the full model agrees
        await s.until(lambda: ("LINK_BROKEN", broken_line) in s.codes(architecture))


async def test_quick_fix_repairs_a_broken_link(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    async with session(root) as s:
        s.open(architecture)
        line, _ = find(architecture, "(./deployment-v1.md)")
        await s.until(lambda: ("LINK_BROKEN", line) in s.codes(architecture))
        (diagnostic,) = [d for d in s.diagnostics(architecture) if d.code == "LINK_BROKEN"]
        actions = await s.client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=architecture.as_uri()), range=diagnostic.range,
            context=T.CodeActionContext(diagnostics=[diagnostic])))
        fix = next(a for a in actions if isinstance(a, T.CodeAction) and a.kind == T.CodeActionKind.QuickFix)
        assert fix.title == "Link to docs/deployment.md" and fix.is_preferred
        (edit,) = fix.edit.changes[architecture.as_uri()]  # type: ignore[union-attr, index]
        assert edit.new_text == "./deployment.md"
        s.edit(architecture, edit.range.start.line, edit.range.start.character, edit.range.end.character,
               edit.new_text)
        await s.until(lambda: "LINK_BROKEN" not in {c for c, _ in s.codes(architecture)})
        # the source action (lsprotocol's client may read a code action carrying a command as a Command)
        assert "Show handoff for docs/architecture.md" in [a.title for a in actions]


async def test_quick_fixes_for_anchor_mention_and_generated_region(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    storage, architecture, configuration = (root / "docs/storage.md", root / "docs/architecture.md",
                                            root / "docs/configuration.md")
    async with session(root) as s:
        for path in (storage, architecture, configuration):
            s.open(path)
        await s.until(lambda: s.diagnostics(storage) and s.diagnostics(configuration))

        async def fixes(path: Path, code: str) -> list[T.CodeAction]:
            (diagnostic,) = [d for d in s.diagnostics(path) if d.code == code]
            actions = await s.client.text_document_code_action_async(T.CodeActionParams(
                text_document=T.TextDocumentIdentifier(uri=path.as_uri()), range=diagnostic.range,
                context=T.CodeActionContext(diagnostics=[diagnostic])))
            return [a for a in actions if isinstance(a, T.CodeAction) and a.kind == T.CodeActionKind.QuickFix]

        (anchor,) = await fixes(storage, "LINK_ANCHOR_MISSING")
        assert anchor.title == "Link to #environment-variables"
        assert anchor.edit.changes[storage.as_uri()][0].new_text == "configuration.md#environment-variables"  # type: ignore
        (region,) = await fixes(configuration, "GENERATED_REGION_EDITED")
        (edit,) = region.edit.changes[configuration.as_uri()]  # type: ignore[union-attr, index]
        assert edit.new_text == "b13024e195fee091"
        s.edit(configuration, edit.range.start.line, edit.range.start.character, edit.range.end.character,
               edit.new_text)
        await s.until(lambda: "GENERATED_REGION_EDITED" not in {c for c, _ in s.codes(configuration)})


async def test_completion_for_paths_headings_and_symbols(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    notes = root / "docs/notes.md"
    async with session(root) as s:
        s.open(notes, "# Notes\n\n[x](./bil\n[y](billing.md#ta\n`createI\n`src/billing/ta\n")

        async def labels(line: int, character: int) -> list[str]:
            result = await s.client.text_document_completion_async(T.CompletionParams(
                text_document=T.TextDocumentIdentifier(uri=notes.as_uri()),
                position=T.Position(line=line, character=character)))
            return [item.label for item in result.items]  # type: ignore[union-attr]

        assert (await labels(2, 9))[0] == "./billing.md"
        assert await labels(3, 18) == ["taxes"]
        assert (await labels(4, 8))[0] == "createInvoice"
        assert "src/billing/tax.ts" in await labels(5, 15)


async def test_search_and_handoff_commands(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    async with session(root) as s:
        search = await s.command("docbridge.search", "createInvoice", 3)
        first = search["results"][0]
        assert (first["id"], first["kind"]) == ("module:src/billing/invoice.ts", "module")
        assert first["location"]["uri"] == (root / "src/billing/invoice.ts").as_uri()
        handoff = await s.command("docbridge.handoff", "acme-billing")
        assert handoff["handoff"]["startHere"] == "docs/for-agents/billing.md"
        assert handoff["handoff"]["checks"] == ["npm test -- billing"]
        assert "| **Start here** | [`docs/for-agents/billing.md`]" in handoff["markdown"]
        shown = await s.command("docbridge.handoff", "src/billing", {"show": True})
        assert shown["handoff"]["target"]["id"] == "acme-billing"
        assert s.client.shown_documents[-1].uri.endswith("/.docbridge/handoffs/src-billing.md")
        explained = await s.command("docbridge.explain", "sales tax", 2)
        assert "components" in explained["results"][0]["explain"]
        lookup = await s.command("docbridge.lookup", "src/billing/tax.ts")
        assert lookup["entity"]["id"] == "module:src/billing/tax.ts"
        reindex = await s.command("docbridge.reindex")
        assert reindex["files"] == 51
        symbols = await s.client.workspace_symbol_async(T.WorkspaceSymbolParams(query="calculateTax"))
        assert symbols[0].location.uri == (root / "src/billing/tax.ts").as_uri()


async def test_edits_made_while_the_search_index_builds_are_kept(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    async with session(root) as s:
        s.open(architecture)
        text = architecture.read_text(encoding="utf-8")
        # the index is built in a worker on the first search; the edits are written right after the request
        pending = s.client.protocol.send_request("workspace/executeCommand", T.ExecuteCommandParams(
            command="docbridge.search", arguments=["createInvoice", 3]))
        s.replace_all(architecture, text + "\nSee [the runbook](./runbook-v9.md).\n")
        s.replace_all(architecture, text + "\nSee [the runbook](./runbook-v9.md) and `src/legacy/exporter.ts`; "
                                           "quokkaledger.\n")
        first = await asyncio.wrap_future(pending)
        assert first["results"][0]["id"] == "module:src/billing/invoice.ts"
        last = len(text.split("\n"))
        await s.until(lambda: ("LINK_BROKEN", last) in s.codes(architecture)
                      and ("MENTION_UNRESOLVED", last) in s.codes(architecture))
        # and the next search sees the edited document: a word only the edit wrote finds it
        found = await s.command("docbridge.search", "quokkaledger", 5)
        assert [r["id"] for r in found["results"]][:1] == ["document:docs/architecture.md"]


async def test_a_used_search_index_is_rebuilt_when_edits_pause(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    settings = {"search": {"warmAfterMs": 50}, "log": {"level": "debug"}}

    def rebuilt() -> list[str]:
        return [m.message for m in s.client.log_messages if "rebuilt after edits paused" in m.message]

    async with session(root, settings=settings) as s:
        s.open(architecture)
        text = architecture.read_text(encoding="utf-8")
        s.replace_all(architecture, text + "\nNothing searched yet: wombatledger.\n")
        await s.until(lambda: s.diagnostics(architecture) is not None)
        # kept: what is tested is what happens when the configured quiet period (50 ms) ends before anybody used
        # the index, so that much time must pass before the search below uses it (here six times as much)
        await asyncio.sleep(0.3)
        # an index nobody used is not built: a rebuild started when the quiet period ended would be logged before
        # the answer to a request sent after it (a search finding that build under way waits for it too)
        searched = await not_before_async(lambda: s.command("docbridge.search", "createInvoice", 3), rebuilt, 20,
                                          what="the answer to a search sent after the quiet period",
                                          unwanted_what="a rebuild of the index nobody had used")
        assert searched["results"]  # used from now on
        s.replace_all(architecture, text + "\nSee the quokkaledger.\n")
        await s.until(lambda: len(rebuilt()) == 1)  # built before anybody asked
        found = await s.command("docbridge.search", "quokkaledger", 5)
        assert [r["id"] for r in found["results"]][:1] == ["document:docs/architecture.md"]
        assert len(rebuilt()) == 1  # that search found it ready


async def test_a_search_sent_right_after_the_scan_builds_its_index_after_the_diagnostics_burst(tmp_path: Path) -> None:
    """After a scan the server derives and publishes every file's diagnostics. A search index asked for meanwhile
    is built after that burst, not beside it: both would share one interpreter (the build ends no later), and on a
    large tree their temporaries together were the server's peak memory."""
    from docbridge.bench.synthetic import generate
    root = copy_fixture("acme", tmp_path)
    generate(root / "padding", 400)  # the burst takes a while: 800 more files
    async with session(root, settings={"log": {"level": "debug"}}) as s:
        found = await s.command("docbridge.search", "createInvoice", 3)
        assert found["results"]
        messages = [m.message for m in s.client.log_messages]
        burst = [i for i, m in enumerate(messages) if "diagnostics derived and published after the scan" in m]
        build = [i for i, m in enumerate(messages) if "building the search index of revision" in m]
        assert burst and build, messages
        assert burst[0] < build[0], [messages[i] for i in sorted(burst + build)]


async def test_a_patched_index_is_rebuilt_only_after_a_pause_as_long_as_ten_of_its_builds(tmp_path: Path) -> None:
    """On a large tree a build of the index takes seconds of a core: a patched index (which answers as a build
    would, a few milliseconds slower) is rebuilt only once edits pause REBUILD_PAUSE times as long."""
    import re
    import time

    from docbridge.lsp.commands import REBUILD_PAUSE

    from docbridge.bench.synthetic import generate
    root = copy_fixture("acme", tmp_path)
    generate(root / "padding", 400)  # 800 more files: the index takes a noticeable time to build
    architecture = root / "docs/architecture.md"
    settings = {"search": {"warmAfterMs": 50}, "log": {"level": "debug"}}

    def logged(pattern: str) -> list[re.Match[str]]:
        return [m for message in s.client.log_messages if (m := re.search(pattern, message.message))]

    async with session(root, settings=settings) as s:
        s.open(architecture)
        assert (await s.command("docbridge.search", "createInvoice", 3))["results"]
        [build] = logged(r"search index of revision \d+ built in ([\d.]+)s")
        built_s = float(build.group(1))
        text = architecture.read_text(encoding="utf-8")
        edited = time.perf_counter()
        s.replace_all(architecture, text + "\nSee the quokkaledger.\n")  # prose: the index is patched
        await s.until(lambda: logged("rebuilt after edits paused, in"), timeout=60)
        waited = time.perf_counter() - edited
        # (the build's time is logged to the hundredth of a second: at most 5 ms each way)
        assert waited >= REBUILD_PAUSE * (built_s - 0.005), (waited, built_s)
        found = await s.command("docbridge.search", "quokkaledger", 5)
        assert [r["id"] for r in found["results"]][:1] == ["document:docs/architecture.md"]


async def test_a_search_right_after_an_edit_finds_the_new_text_and_not_the_old(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    billing = root / "docs/billing.md"
    async with session(root) as s:
        s.open(billing)
        text = billing.read_text(encoding="utf-8")
        assert (await s.command("docbridge.search", "createInvoice", 3))["results"]  # the index is built
        # each search follows its edit at once: the index is patched for it (docbridge.engine.retrieval.incremental)
        s.replace_all(billing, text + "\nRefunds settle through the quokkaledger.\n")
        found = await s.command("docbridge.search", "quokkaledger", 5)
        assert [r["id"] for r in found["results"]][:1] == ["document:docs/billing.md"]
        s.replace_all(billing, text + "\nRefunds settle through the wombatledger.\n")
        gone = await s.command("docbridge.search", "quokkaledger", 5)
        assert "document:docs/billing.md" not in [r["id"] for r in gone["results"]]
        found = await s.command("docbridge.search", "wombatledger", 5)
        assert [r["id"] for r in found["results"]][:1] == ["document:docs/billing.md"]
        # what the rest of the tree answers is unchanged by the edits
        again = await s.command("docbridge.search", "createInvoice", 3)
        assert again["results"][0]["id"] == "module:src/billing/invoice.ts"


async def test_unknown_handoff_reference_is_an_error_with_candidates(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    async with session(root) as s:
        try:
            await s.command("docbridge.handoff", "acme-biling")
        except Exception as exc:  # a JSON-RPC error response
            assert "Unknown entity" in str(exc) and "acme-billing" in str(exc)
        else:
            raise AssertionError("an unknown reference must be an error")
        assert (await s.command("docbridge.search", "tax", 1))["results"]  # still serving


async def test_code_to_docs_references_hover_and_lens(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    invoice = root / "src/billing/invoice.ts"
    async with session(root) as s:
        s.open(invoice)
        line, column = find(invoice, "createInvoice(")
        found = await s.client.text_document_references_async(T.ReferenceParams(
            text_document=T.TextDocumentIdentifier(uri=invoice.as_uri()), position=T.Position(line=line,
                                                                                              character=column + 2),
            context=T.ReferenceContext(include_declaration=False)))
        places = {(Path(r.uri.removeprefix("file://")).relative_to(root).as_posix(), r.range.start.line) for r in found}
        expected = {("docs/billing.md", find(root / "docs/billing.md", "`createInvoice` is re-exported")[0]),
                    ("docs/orders.md", find(root / "docs/orders.md", "`createInvoice`")[0]),
                    ("docs/architecture.md", find(root / "docs/architecture.md", "`createInvoice`")[0]),
                    ("docs/guias/faturamento.md", find(root / "docs/guias/faturamento.md", "`createInvoice`")[0])}
        assert expected <= places
        hover = await s.hover(invoice, line, column + 2)
        assert hover is not None and "Mentioned in:" in hover.contents.value  # type: ignore[union-attr]
        lenses = await s.client.text_document_code_lens_async(T.CodeLensParams(
            text_document=T.TextDocumentIdentifier(uri=invoice.as_uri())))
        lens = next(item for item in lenses if item.range.start.line == line)
        assert lens.command is not None and lens.command.title.startswith("documented in ")
        assert int(lens.command.title.split()[2]) >= 4


async def test_references_to_a_heading_and_document_symbols(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    async with session(root) as s:
        s.open(architecture)
        heading_line, _ = find(architecture, "## Why orders and billing import each other")
        found = await s.client.text_document_references_async(T.ReferenceParams(
            text_document=T.TextDocumentIdentifier(uri=architecture.as_uri()),
            position=T.Position(line=heading_line, character=5), context=T.ReferenceContext(include_declaration=True)))
        uris = [r.uri for r in found]
        assert uris[0] == architecture.as_uri()
        assert (root / "docs/billing.md").as_uri() in uris
        symbols = await s.client.text_document_document_symbol_async(T.DocumentSymbolParams(
            text_document=T.TextDocumentIdentifier(uri=architecture.as_uri())))
        (top,) = symbols
        assert top.name == "Architecture"
        assert [child.name for child in top.children] == [
            "Request flow", "Dependency rules", "Why orders and billing import each other", "History"]
        links = await s.client.text_document_document_link_async(T.DocumentLinkParams(
            text_document=T.TextDocumentIdentifier(uri=architecture.as_uri())))
        assert any(link.target and link.target.startswith((root / "docs/auth.md").as_uri()) for link in links)


async def test_multi_root_with_two_fixtures(tmp_path: Path) -> None:
    acme, mono = copy_fixture("acme", tmp_path), copy_fixture("monorepo", tmp_path)
    async with session(acme, mono) as s:
        await s.until(lambda: s.diagnostics(acme / "docs/architecture.md") and s.diagnostics(mono / "docs/web.md"))
        assert ("LINK_ANCHOR_MISSING", find(mono / "docs/web.md", "architecture.md#data-flow")[0]) in s.codes(
            mono / "docs/web.md")
        results = (await s.command("docbridge.search", "AppError", 5))["results"]
        assert results[0]["id"] == "module:packages/core/src/errors/AppError.ts"
        assert results[0]["root"] == mono.as_uri()
        s.client.workspace_did_change_workspace_folders(T.DidChangeWorkspaceFoldersParams(
            event=T.WorkspaceFoldersChangeEvent(added=[], removed=[T.WorkspaceFolder(uri=mono.as_uri(),
                                                                                     name="monorepo")])))
        await s.until(lambda: not s.diagnostics(mono / "docs/web.md"))
        remaining = (await s.command("docbridge.search", "AppError", 5))["results"]
        assert all(not r["id"].startswith("module:packages/") for r in remaining)


async def test_utf8_positions_when_the_client_offers_them(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    faturamento = root / "docs/guias/faturamento.md"
    line, column = find(faturamento, "`calculateTax`")
    text_line = faturamento.read_text(encoding="utf-8").split("\n")[line]
    utf8_column = len(text_line[:column].encode("utf-8"))
    assert utf8_column > column  # the line has accents before the mention
    tax = root / "src/billing/tax.ts"
    declared = find(tax, "calculateTax(")
    async with session(root, encodings=["utf-8", "utf-16"]) as s:
        assert s.result is not None and s.result.capabilities.position_encoding == "utf-8"
        s.open(faturamento)
        assert location(await s.definition(faturamento, line, utf8_column + 3)) == (tax.as_uri(), *declared)
    async with session(root) as s:  # the default: UTF-16
        assert s.result is not None and s.result.capabilities.position_encoding == "utf-16"
        s.open(faturamento)
        assert location(await s.definition(faturamento, line, column + 3)) == (tax.as_uri(), *declared)


async def test_settings_turn_a_code_off_and_change_a_severity(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    settings = {"diagnostics": {"debounceMs": 0, "severity": {"LINK_BROKEN": "hint", "MENTION_UNRESOLVED": "off"}}}
    async with session(root, settings=settings) as s:
        s.open(architecture)
        await s.until(lambda: s.diagnostics(architecture))
        codes = {d.code: d.severity for d in s.diagnostics(architecture)}
        assert codes == {"LINK_BROKEN": T.DiagnosticSeverity.Hint}
        s.client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings={"docbridge": {
            "diagnostics": {"debounceMs": 0}}}))
        await s.until(lambda: {d.code for d in s.diagnostics(architecture)} == {"LINK_BROKEN", "MENTION_UNRESOLVED"})


async def test_home_and_filesystem_root_are_refused(tmp_path: Path) -> None:
    async with session(Path("/"), wait=False) as s:
        await s.until(lambda: s.client.messages)
        assert "does not scan" in s.client.messages[0].message and "filesystem root" in s.client.messages[0].message
        # the open file is still analyzed on its own
        notes = tmp_path / "notes.md"
        notes.write_text("# Title\n\n## Section\n")
        s.open(notes)
        symbols = await s.client.text_document_document_symbol_async(T.DocumentSymbolParams(
            text_document=T.TextDocumentIdentifier(uri=notes.as_uri())))
        assert [sym.name for sym in symbols] == ["Title"]


async def test_the_ignore_file_of_a_folder_never_walked_rescans_nothing(tmp_path: Path) -> None:
    """`.docbridge/.gitignore` is written with the folder (it keeps the caches out of git): the editor's watcher
    reports it, and it must not rescan; a repository's own `.gitignore` does."""
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"

    def scanning() -> int:
        return sum(1 for status in s.statuses
                   if (status["state"] if isinstance(status, dict) else status.state) == "scanning")

    async with session(root) as s:
        assert (root / ".docbridge" / ".gitignore").is_file()
        before = scanning()
        s.watched((root / ".docbridge" / ".gitignore", T.FileChangeType.Created),
                  (root / "node_modules" / "left-pad" / ".gitignore", T.FileChangeType.Changed))
        # an edit sent after the events: once its diagnostics are out, the events were handled before it
        s.open(architecture)
        text = architecture.read_text(encoding="utf-8")
        s.replace_all(architecture, text + "\nSee [the runbook](./runbook-v9.md).\n")
        last = len(text.split("\n"))
        await s.until(lambda: ("LINK_BROKEN", last) in s.codes(architecture))
        assert scanning() == before
        with (root / ".gitignore").open("a", encoding="utf-8") as ignore:
            ignore.write("drafts/\n")
        s.watched((root / ".gitignore", T.FileChangeType.Changed))
        await s.until(lambda: scanning() > before)


async def test_a_malformed_log_level_leaves_the_other_settings_in_force(tmp_path: Path) -> None:
    """A level that is a list or an object is no level (it stays info); the severity set beside it still applies."""
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    settings = {"log": {"level": ["debug"]}, "diagnostics": {"debounceMs": 0, "severity": {"LINK_BROKEN": "hint"}}}
    async with session(root, settings=settings) as s:
        s.open(architecture)
        await s.until(lambda: s.diagnostics(architecture))
        assert {d.code: d.severity for d in s.diagnostics(architecture)}["LINK_BROKEN"] == T.DiagnosticSeverity.Hint


async def test_diagnostics_of_files_not_open_count_columns_in_the_clients_encoding(tmp_path: Path) -> None:
    """After the scan every file's diagnostics are published; a file that is ASCII throughout is not read again
    to convert them (its columns are the same in every encoding), a file with other characters is."""
    from conftest import make_repo
    root = make_repo(tmp_path / "repo", {
        "README.md": "# Notes\n",
        "docs/plain.md": "# Plain\n\nSee [the guide](./missing-guide.md) first.\n",
        "docs/accents.md": "# Acentos\n\nÉ rápido 🙂 — veja [o guia](./guia-ausente.md).\n",
    })
    plain, accents = root / "docs/plain.md", root / "docs/accents.md"

    def broken(path: Path) -> list[T.Diagnostic]:
        return [d for d in session_.diagnostics(path) if d.code == "LINK_BROKEN"]
    for encodings, expect_units in ((None, "utf-16"), (["utf-8"], "utf-8")):
        async with session(root, encodings=encodings) as session_:
            await session_.until(lambda: broken(plain) and broken(accents))
            line = accents.read_text(encoding="utf-8").split("\n")[2]
            start = line.index("[o guia]")
            prefix = line[:start]
            units = len(prefix.encode("utf-16-le")) // 2 if expect_units == "utf-16" else len(prefix.encode("utf-8"))
            assert units > start  # the emoji and the accents count more than one unit each
            (diagnostic,) = broken(accents)
            assert (diagnostic.range.start.line, diagnostic.range.start.character) == (2, units)
            plain_line = plain.read_text(encoding="utf-8").split("\n")[2]
            (diagnostic,) = broken(plain)
            assert (diagnostic.range.start.line, diagnostic.range.start.character) == (2, plain_line.index("[the"))
