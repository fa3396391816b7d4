"""An open buffer over `limits.maxFileBytes` follows the cap files on disk follow: an information diagnostic
says it is too large, and no request kind analyzes it; each answers at once with an empty result while the
server goes on answering requests on other files."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture
from docbridge.engine.base.config import LimitsConfig
from docbridge.engine.state.transitions import INLINE_CHARS
from lsp_client import Session, session
from lsprotocol import types as T
from support.positions import find

LIMIT = LimitsConfig().max_file_bytes
QUICK = 5.0  # seconds: an answer that analyzed nothing


def just_over(limit: int = LIMIT) -> str:
    """Ordinary Markdown with links, path mentions, headings and code spans, one byte over `limit`."""
    block = "## Part\n\nSee [billing](billing.md#billing), `src/billing/tax.ts` and `calculateTax`.\n\n"
    text = "# Big\n\n" + block * (limit // len(block) + 1)
    return text[:limit + 1]


def one_line(size: int) -> str:
    """One line of `size` bytes full of things the analyzer would resolve (what took documentSymbol 84 s)."""
    piece = "[x](billing.md) `src/billing/tax.ts` "
    return ("# " + piece * (size // len(piece) + 1))[:size]


def _doc(uri: str) -> T.TextDocumentIdentifier:
    return T.TextDocumentIdentifier(uri=uri)


def _at(line: int, character: int) -> T.Position:
    return T.Position(line=line, character=character)


def requests(s: Session, uri: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Every request kind the server offers on a document, at a link on its third line."""
    c, here = s.client, _at(2, 6)
    return {
        "hover": lambda: c.text_document_hover_async(T.HoverParams(text_document=_doc(uri), position=here)),
        "definition": lambda: c.text_document_definition_async(T.DefinitionParams(text_document=_doc(uri),
                                                                                  position=here)),
        "references": lambda: c.text_document_references_async(T.ReferenceParams(
            text_document=_doc(uri), position=here, context=T.ReferenceContext(include_declaration=True))),
        "completion": lambda: c.text_document_completion_async(T.CompletionParams(text_document=_doc(uri),
                                                                           position=_at(2, 5))),
        "documentLink": lambda: c.text_document_document_link_async(T.DocumentLinkParams(text_document=_doc(uri))),
        "documentSymbol": lambda: c.text_document_document_symbol_async(T.DocumentSymbolParams(
            text_document=_doc(uri))),
        "codeAction": lambda: c.text_document_code_action_async(T.CodeActionParams(
            text_document=_doc(uri), range=T.Range(start=here, end=here),
            context=T.CodeActionContext(diagnostics=[]))),
        "codeLens": lambda: c.text_document_code_lens_async(T.CodeLensParams(text_document=_doc(uri))),
        "prepareRename": lambda: c.text_document_prepare_rename_async(T.PrepareRenameParams(text_document=_doc(uri),
                                                                                    position=_at(0, 3))),
        "rename": lambda: c.text_document_rename_async(T.RenameParams(text_document=_doc(uri), position=_at(0, 3),
                                                              new_name="Renamed")),
    }


def _empty(result: Any) -> bool:
    if isinstance(result, T.CompletionList):
        return not result.items
    return result is None or (isinstance(result, list | tuple) and not result)


async def assert_not_analyzed(s: Session, path: Path, code: str = "FILE_TOO_LARGE", says: str = "maxFileBytes") -> None:
    """The notice (too large, by default) is the buffer's only diagnostic, and every request on it answers
    empty, quickly."""
    await s.until(lambda: any(d.code == code for d in s.diagnostics(path)), 60)
    (notice,) = s.diagnostics(path)
    assert notice.severity == T.DiagnosticSeverity.Information
    assert says in notice.message and "does not analyze it" in notice.message
    for kind, request in requests(s, path.as_uri()).items():
        started = time.perf_counter()
        result = await asyncio.wait_for(request(), QUICK * 4)
        seconds = time.perf_counter() - started
        assert seconds < QUICK, f"{kind} took {seconds:.1f} s"
        assert _empty(result), f"{kind} answered {result!r}"
    symbols = await asyncio.wait_for(s.client.workspace_symbol_async(T.WorkspaceSymbolParams(query="Big")), QUICK)
    assert not any(getattr(symbol.location, "uri", None) == path.as_uri() for symbol in symbols or [])


async def assert_still_answering(s: Session, root: Path) -> None:
    billing = root / "docs/billing.md"
    s.open(billing)
    line, _ = find(billing, "`createInvoice` is re-exported")
    found = await asyncio.wait_for(s.definition(billing, line, 3), QUICK)
    found = found[0] if isinstance(found, list) else found
    assert found is not None and found.uri == (root / "src/billing/invoice.ts").as_uri()


@pytest.mark.parametrize("make", [just_over, lambda: one_line(10 * 1024 * 1024)], ids=["just-over", "10mb-one-line"])
async def test_an_open_buffer_over_the_cap_is_never_analyzed(tmp_path: Path, make: Any) -> None:
    root = copy_fixture("acme", tmp_path)
    big = root / "docs/big.md"
    async with session(root) as s:
        s.open(big, make())
        await assert_not_analyzed(s, big)
        await assert_still_answering(s, root)
        assert [m.message for m in s.client.log_messages if m.type == T.MessageType.Error] == []


async def test_a_buffer_that_grows_past_the_cap_stops_being_analyzed(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    guide = root / "docs/billing.md"
    async with session(root) as s:
        s.open(guide)
        symbols = await s.client.text_document_document_symbol_async(T.DocumentSymbolParams(
            text_document=_doc(guide.as_uri())))
        assert symbols  # analyzed while it is small
        s.replace_all(guide, just_over())
        await assert_not_analyzed(s, guide)
        s.replace_all(guide, guide.read_text())  # back under the cap: analyzed again, the notice gone
        await s.until(lambda: not any(d.code == "FILE_TOO_LARGE" for d in s.diagnostics(guide)), 30)
        assert await s.client.text_document_document_symbol_async(T.DocumentSymbolParams(
            text_document=_doc(guide.as_uri())))
        await assert_still_answering(s, root)
        assert [m.message for m in s.client.log_messages if m.type == T.MessageType.Error] == []


async def test_a_huge_buffer_opened_during_the_first_scan_is_not_analyzed(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    big = root / "docs/big.md"
    async with session(root, wait=False) as s:
        s.open(big, just_over())
        await s.ready(timeout=60)
        await assert_not_analyzed(s, big)
        await assert_still_answering(s, root)


@pytest.mark.parametrize(("text", "code", "says"), [
    (one_line(150_000), "FILE_LINE_TOO_LONG", "longer than 100,000 characters"),
    ("# Quotes\n\n[x](billing.md)\n\n" + ">" * 40 + " deep [x](billing.md)\n", "FILE_NESTING_TOO_DEEP",
     "nests more than 16"),
], ids=["line-too-long", "nesting-too-deep"])
async def test_a_buffer_beyond_an_analyzer_budget_says_so_and_is_not_analyzed(tmp_path: Path, text: str, code: str,
                                                                            says: str) -> None:
    """Under the size cap but beyond the Markdown analyzer's budgets (what `scan` counts as `line-too-long` and
    `nesting-too-deep`): the same notice-and-empty-answers as a buffer over the cap, until it is fixed."""
    root = copy_fixture("acme", tmp_path)
    doc = root / "docs/odd.md"
    async with session(root) as s:
        s.open(doc, text)
        await assert_not_analyzed(s, doc, code, says)
        s.replace_all(doc, "# Fine\n\nSee [billing](billing.md).\n")
        await s.until(lambda: not any(d.code == code for d in s.diagnostics(doc)), 30)
        assert await s.client.text_document_document_symbol_async(T.DocumentSymbolParams(
            text_document=_doc(doc.as_uri())))
        await assert_still_answering(s, root)
        assert [m.message for m in s.client.log_messages if m.type == T.MessageType.Error] == []


async def test_a_large_buffer_with_thousands_of_findings_gets_every_diagnostic(tmp_path: Path) -> None:
    """A buffer over the size analyzed inline (its findings derived and encoded off the event loop, a list
    element at a time): every broken anchor arrives as one diagnostic on its own line, non-ASCII intact."""
    root = copy_fixture("acme", tmp_path)
    doc = root / "docs/many.md"
    count = 1500
    text = "# Many — façade\n\n" + "".join(f"Part {n}: [é](billing.md#no-such-part-{n})\n\n" for n in range(count))
    assert len(text) > INLINE_CHARS
    async with session(root) as s:
        s.open(doc, text)
        await s.until(lambda: sum(d.code == "LINK_ANCHOR_MISSING" for d in s.diagnostics(doc)) == count, 60)
        missing = [d for d in s.diagnostics(doc) if d.code == "LINK_ANCHOR_MISSING"]
        assert sorted(d.range.start.line for d in missing) == [2 + 2 * n for n in range(count)]
        assert all(f"no-such-part-{d.range.start.line // 2 - 1}" in d.message for d in missing)
        await assert_still_answering(s, root)
