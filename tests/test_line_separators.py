"""Lines are what the protocol says they are: only `\\n`, `\\r\\n` and `\\r` end one.

U+2028, U+2029, U+0085, a form feed or a vertical tab are characters inside a line for the client; Python's
`str.splitlines` ends a line at each of them. A server that splits like Python applies an edit to the wrong
line and answers with positions that land elsewhere in the client's text. Every case goes through a real stdio
connection; the client's text is kept by the test, applying edits exactly as the protocol defines them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as T
from support.positions import apply_range, lines, position

from tests.conftest import copy_fixture
from tests.lsp_client import session

pytestmark = pytest.mark.attack("line separators")

ODD = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_fixture("acme", tmp_path_factory.mktemp("separators"))


@pytest.mark.parametrize("separator", ["\u2028", "\x85", "\x0c", "\r"])
async def test_a_quick_fix_after_an_edit_lands_where_the_client_has_the_link(acme: Path, separator: str) -> None:
    page = acme / "docs" / f"separator-{ord(separator):04x}.md"
    text = f"# Notes\n\nIntro{separator}continued on the same line.\n\nSee [the api](./apii.md) for more.\n"
    page.write_text(text, newline="")
    async with session(acme) as s:
        s.open(page, text)
        # the client edits the link's line: "See" becomes "Read"
        line, _ = position(text, "See [")
        s.edit(page, line, 0, 3, "Read")
        text = apply_range(text, T.Range(start=T.Position(line=line, character=0),
                                   end=T.Position(line=line, character=3)), "Read")
        # the diagnostics of the edited text (those of the text as opened may arrive first)
        column = lines(text)[line].index("[the api]")
        await s.until(lambda: any(d.code == "LINK_BROKEN" and (d.range.start.line, d.range.start.character)
                                  == (line, column) for d in s.diagnostics(page)), timeout=30)
        (diagnostic,) = [d for d in s.diagnostics(page) if d.code == "LINK_BROKEN"]
        actions = await s.client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=page.as_uri()), range=diagnostic.range,
            context=T.CodeActionContext(diagnostics=[diagnostic])))
        fix = next(a for a in actions if isinstance(a, T.CodeAction) and a.kind == T.CodeActionKind.QuickFix)
        (edit,) = fix.edit.changes[page.as_uri()]  # type: ignore[union-attr, index]
        fixed = apply_range(text, edit.range, edit.new_text)
        assert lines(fixed)[line] == "Read [the api](./api.md) for more."
        assert f"Intro{separator}continued" in fixed or separator == "\r"


async def test_go_to_definition_after_an_edit_on_a_line_with_a_lone_cr(acme: Path) -> None:
    page = acme / "docs" / "lone-cr.md"
    text = "# Notes\r\rBilling starts at `createInvoice`.\r"
    page.write_text(text, newline="")
    async with session(acme) as s:
        s.open(page, text)
        s.edit(page, 2, 0, 7, "Invoicing")
        text = apply_range(text, T.Range(start=T.Position(line=2, character=0), end=T.Position(line=2, character=7)),
                     "Invoicing")
        line, column = position(text, "createInvoice")
        found = await s.definition(page, line, column + 2)
        found = found[0] if isinstance(found, list) else found
        assert found is not None and found.uri.endswith("src/billing/invoice.ts")


async def test_a_declaration_in_a_module_with_lone_cr_line_ends_is_on_the_clients_line(acme: Path) -> None:
    module = acme / "src" / "legacy.ts"
    module.write_text("// Old Mac line ends\r\r/** Rounds. */\rexport function roundLegacy(x: number) {\r"
                      "  return x;\r}\r", newline="")
    page = acme / "docs" / "legacy.md"
    page.write_text("# Legacy\n\nUse `roundLegacy` for old amounts.\n")
    async with session(acme) as s:
        found = await s.definition(page, 2, 6)
        found = found[0] if isinstance(found, list) else found
        assert found is not None and found.uri.endswith("src/legacy.ts")
        assert (found.range.start.line, found.range.start.character) == (3, 16)  # the client's line 3: `export …`


pieces = st.lists(st.sampled_from(["a", "b", " ", "\n", "\r\n", "\r", *ODD, "`x`"]), max_size=40).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=pieces, edits=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(0, 4),
                                              pieces), min_size=1, max_size=6))
def test_the_server_keeps_the_clients_text_through_any_edits(start: str, edits: list[tuple[int, int, int, str]]
                                                             ) -> None:
    from docbridge.lsp.textsync import apply_change
    from pygls.workspace.text_document import TextDocument
    document = TextDocument("file:///x.md", start, sync_kind=T.TextDocumentSyncKind.Incremental)
    text = start
    for line, character, length, new_text in edits:
        edit_range = T.Range(start=T.Position(line=line, character=character),
                             end=T.Position(line=line, character=character + length))
        apply_change(document, T.TextDocumentContentChangePartial(range=edit_range, text=new_text))
        text = apply_range(text, edit_range, new_text)
        assert document.source == text
