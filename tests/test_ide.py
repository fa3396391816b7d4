"""The engine's IDE layer below the protocol: definition, hover, references, completion, code actions, the
provisional answers of a first scan, and renames checked against a fresh `docbridge check` of the result.

Expected positions come from the fixture files as written (`find`); rename results are checked with the
oracle a person would use: apply the edit, move the files, and `check` reports no new broken reference.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import copy_fixture, docbridge_json
from docbridge.engine.base.model import Span
from docbridge.engine.ide import actions, completion, hover, navigation, rename
from docbridge.engine.ide.provisional import is_complete, provisional_findings, provisional_state
from docbridge.engine.ide.types import FileMove, WorkspaceEdit
from docbridge.engine.workspace import Workspace
from support.positions import apply_edit, find

BROKEN = ("LINK_BROKEN", "LINK_ANCHOR_MISSING", "MENTION_UNRESOLVED", "COVERS_TARGET_MISSING",
          "OWNERSHIP_PATH_UNOBSERVED")


def scanned(root: Path) -> Workspace:
    workspace = Workspace(root, use_cache=False)
    workspace.scan()
    return workspace


def apply(root: Path, edit: WorkspaceEdit) -> None:
    """Apply text edits to the files on disk (last edit first in each file), then make the moves."""
    for path, edits in edit.by_path().items():
        file = root / path
        text = file.read_text(encoding="utf-8")
        for item in sorted(edits, key=lambda e: (e.span.line, e.span.column), reverse=True):
            assert item.span.line == item.span.end_line, item
            text = apply_edit(text, (item.span.line, item.span.column), (item.span.end_line, item.span.end_column),
                              item.new_text)
        file.write_text(text, encoding="utf-8")
    for move in edit.moves:
        (root / move.new).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(root / move.old), str(root / move.new))


def broken(root: Path) -> set[tuple[str, str]]:
    """(code, message) of every finding that says a reference leads nowhere (paths vary with the move)."""
    report = docbridge_json("check", "--root", str(root), "--format", "json", "--fail-on", "never", "--no-cache")
    return {(f["code"], f["message"]) for f in report["findings"] if f["code"] in BROKEN}


# ------------------------------------------------------------------------------------------------ navigation


def test_definition_hover_and_references_in_engine_coordinates(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    state = scanned(root).state
    billing, invoice = root / "docs/billing.md", root / "src/billing/invoice.ts"
    line, column = find(billing, "`createInvoice` is re-exported")
    found = navigation.definition(state, "docs/billing.md", line, column + 3)
    declared_line, declared_column = find(invoice, "createInvoice(")
    assert found is not None and (found.path, found.span.line, found.span.column) == (
        "src/billing/invoice.ts", declared_line, declared_column)
    text = hover.hover(state, "docs/billing.md", line, column + 3)
    assert text is not None and text.markdown.startswith("**createInvoice** — exported by `src/billing/invoice.ts`")
    assert text.span == Span(line, column, line, column + len("`createInvoice`"))
    # references to the export, from its declaration: the documents that name it
    found_refs = navigation.references(state, "src/billing/invoice.ts", declared_line, declared_column, False)
    # the four documents that name it in backticks (the fenced example in billing.md is not a mention)
    assert sorted({r.path for r in found_refs}) == ["docs/architecture.md", "docs/billing.md",
                                                    "docs/guias/faturamento.md", "docs/orders.md"]
    for reference in found_refs:
        source = (root / reference.path).read_text(encoding="utf-8").split("\n")[reference.span.line]
        assert "createInvoice" in source[reference.span.column:reference.span.end_column]
    # plain prose leads nowhere
    assert navigation.definition(state, "docs/billing.md", 0, 0) is None


def test_completion_offers_headings_paths_and_symbols(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    workspace = scanned(root)
    workspace.update("docs/notes.md", "# Notes\n\nSee [x](billing.md#inv\nand `calc\nand [y](../src/bi\n")
    state = workspace.state
    headings, _ = completion.complete(state, "docs/notes.md", 2, len("See [x](billing.md#inv"), 20)
    assert [c.label for c in headings] == ["invoices"]
    symbols, _ = completion.complete(state, "docs/notes.md", 3, len("and `calc"), 20)
    assert "calculateTax" in [c.label for c in symbols]
    paths, _ = completion.complete(state, "docs/notes.md", 4, len("and [y](../src/bi"), 20)
    assert "../src/billing/" in [c.label for c in paths]


# ------------------------------------------------------------------------------------------------ actions


def test_code_actions_honour_the_requested_kinds(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    state = scanned(root).state
    everything = actions.code_actions(state, "docs/billing.md", [])
    assert [a.kind for a in everything] == ["source"]  # the handoff, when nothing is to be fixed
    assert actions.code_actions(state, "docs/billing.md", [], only=["quickfix"]) == []
    assert actions.code_actions(state, "docs/billing.md", [], only=["source.fixAll"]) == []
    assert actions.code_actions(state, "docs/billing.md", [], only=["source"]) == everything
    assert actions.code_actions(state, "docs/billing.md", [], only=[""]) == everything  # the empty kind: all
    assert actions.code_actions(state, "docs/billing.md", [], only=[]) == []  # no kind asked: nothing
    assert actions.code_actions(state, "docs/billing.md", [], automatic=True) == []


def test_a_renamed_export_is_reported_and_every_mention_can_follow_it(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    workspace = scanned(root)
    # what the TypeScript rename does: the declaration and the barrel's re-export, one file at a time
    for module in ("src/billing/invoice.ts", "src/billing/index.ts"):
        workspace.update(module, (root / module).read_text(encoding="utf-8").replace("createInvoice", "issueInvoice"))
    findings = [f for f in workspace.findings() if f.code == "SYMBOL_RENAMED"]
    assert {f.path for f in findings} >= {"docs/billing.md", "docs/orders.md"}
    first = next(f for f in findings if f.path == "docs/billing.md")
    assert "renamed to `issueInvoice`" in first.message
    start = first.range.start  # type: ignore[union-attr]
    diagnostic = actions.Diagnostic(first.code, first.data, start.line, start.character)
    offered = actions.code_actions(workspace.state, "docs/billing.md", [diagnostic], only=["quickfix"])
    assert [a.title.split(" (")[0] for a in offered] == [
        "Update mention to `issueInvoice`", "Update every mention of `createInvoice` to `issueInvoice`"]
    everywhere = offered[1].edit
    assert everywhere is not None and all(e.new_text == "issueInvoice" for e in everywhere.edits)
    assert len({e.path for e in everywhere.edits}) == len({f.path for f in findings})
    apply(root, everywhere)
    for path in {e.path for e in everywhere.edits}:
        workspace.update(path)
    assert [f for f in workspace.findings() if f.code == "SYMBOL_RENAMED"] == []
    line, column = find(root / "docs/billing.md", "`issueInvoice` is re-exported")
    found = navigation.definition(workspace.state, "docs/billing.md", line, column + 2)
    assert found is not None and found.path == "src/billing/invoice.ts"


# ------------------------------------------------------------------------------------------------ provisional


def test_a_provisional_state_answers_from_the_file_system(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    text = (root / "docs/billing.md").read_text(encoding="utf-8") + (
        "\nSee [missing](./nowhere.md), [auth](auth.md#no-such-heading) and [orders](orders.md#checkout).\n")
    state = provisional_state(root, Workspace(root).config, "docs/billing.md", text)
    assert state is not None
    codes = sorted((f.code, f.message) for f in provisional_findings(state, "docs/billing.md"))
    assert ("LINK_BROKEN", "Link target `./nowhere.md` does not exist.") in codes
    assert ("LINK_ANCHOR_MISSING", "Link anchor `#no-such-heading` is not a heading in docs/auth.md.") in codes
    assert all(code in ("LINK_BROKEN", "LINK_ANCHOR_MISSING") for code, _ in codes)
    last = len(text.split("\n")) - 2
    orders = text.split("\n")[last].index("[orders]")
    found = navigation.definition(state, "docs/billing.md", last, orders + 2)
    assert found is not None and (found.path, found.span.line) == (
        "docs/orders.md", find(root / "docs/orders.md", "## Checkout")[0])
    # a symbol needs the full scan: the provisional state does not pretend to know it
    line, column = find(root / "docs/billing.md", "`createInvoice` is re-exported")
    assert navigation.definition(state, "docs/billing.md", line, column + 3) is None
    assert is_complete(state)


def test_a_provisional_state_without_linked_documents_leaves_their_anchors_to_the_complete_one(
        tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    text = (root / "docs/billing.md").read_text(encoding="utf-8") + (
        "\nSee [missing](./nowhere.md), [auth](auth.md#no-such-heading) and [here](#no-such-section).\n")
    config = Workspace(root).config
    quick = provisional_state(root, config, "docs/billing.md", text, linked=False)
    complete = provisional_state(root, config, "docs/billing.md", text)
    assert quick is not None and complete is not None
    assert not is_complete(quick) and "docs/auth.md" in quick.universe.unread  # type: ignore[attr-defined]
    first = sorted((f.code, f.message) for f in provisional_findings(quick, "docs/billing.md"))
    both = sorted((f.code, f.message) for f in provisional_findings(complete, "docs/billing.md"))
    assert ("LINK_BROKEN", "Link target `./nowhere.md` does not exist.") in first  # the file system decides
    assert any(code == "LINK_ANCHOR_MISSING" and "#no-such-section" in message for code, message in first)
    assert ("LINK_ANCHOR_MISSING", "Link anchor `#no-such-heading` is not a heading in docs/auth.md.") in both
    assert set(first) < set(both)  # the quick findings are a subset: nothing is reported, then withdrawn


# ------------------------------------------------------------------------------------------------ renames


def test_moving_a_document_into_another_folder_keeps_every_link(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    before = broken(root)
    state = scanned(root).state
    edit = rename.move_edits(state, [FileMove("docs/billing.md", "docs/guides/billing.md")])
    rewritten = {(e.path, e.new_text) for e in edit.edits}
    assert ("docs/guias/faturamento.md", "../guides/billing.md") in rewritten
    assert ("docs/orders.md", "guides/billing.md") in rewritten  # `billing.md#invoices`: the anchor stays
    assert ("docs/billing.md", "../architecture.md") in rewritten  # a link inside the moved document
    assert ("doc-bridge.config.json", "docs/guides/billing.md") in rewritten  # the ownership's humanDoc
    apply(root, edit)
    assert broken(root) == before
    orders = (root / "docs/orders.md").read_text(encoding="utf-8")
    assert "[Billing](guides/billing.md#invoices)" in orders


def test_moving_a_folder_of_code_keeps_mentions_covers_and_ownership(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    before = broken(root)
    state = scanned(root).state
    edit = rename.move_edits(state, [FileMove("src/billing", "src/invoicing")])
    rewritten = {(e.path, e.new_text) for e in edit.edits}
    assert ("docs/billing.md", "src/invoicing") in rewritten  # `covers` and the `src/billing` mention
    assert ("docs/billing.md", "src/invoicing/invoice.ts") in rewritten
    assert ("doc-bridge.config.json", "src/invoicing") in rewritten
    assert all("createInvoice" not in e.new_text for e in edit.edits)  # symbol mentions are names, not paths
    apply(root, edit)
    after = broken(root)
    assert after == before, after - before


def test_renaming_a_heading_rewrites_the_anchors_of_every_linking_document(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    api = root / "docs/api.md"
    api.write_text(api.read_text(encoding="utf-8") + "\nInvoices: [how they are built](billing.md#invoices).\n",
                   encoding="utf-8")
    before = broken(root)
    state = scanned(root).state
    line = find(root / "docs/billing.md", "## Invoices")[0]
    target = rename.prepare_rename(state, "docs/billing.md", line, 4)
    assert target is not None and (target.kind, target.placeholder) == ("heading", "Invoices")
    edit = rename.rename(state, "docs/billing.md", line, 4, "Issuing invoices")
    assert {e.path for e in edit.edits} == {"docs/billing.md", "docs/orders.md", "docs/for-agents/billing.md",
                                            "docs/api.md"}
    assert {e.new_text for e in edit.edits if e.path != "docs/billing.md"} == {"issuing-invoices"}
    apply(root, edit)
    assert broken(root) == before
    assert "[how they are built](billing.md#issuing-invoices)" in api.read_text(encoding="utf-8")


def test_renaming_a_heading_with_an_explicit_id_keeps_the_id_and_every_anchor(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    billing = root / "docs/billing.md"
    billing.write_text(billing.read_text(encoding="utf-8").replace("## Invoices", "## Invoices {#invoicing}"),
                       encoding="utf-8")
    api = root / "docs/api.md"
    api.write_text(api.read_text(encoding="utf-8") + "\nInvoices: [how they are built](billing.md#invoicing).\n",
                   encoding="utf-8")
    before = broken(root)
    state = scanned(root).state
    line = find(billing, "## Invoices")[0]
    target = rename.prepare_rename(state, "docs/billing.md", line, 4)
    assert target is not None and (target.kind, target.placeholder) == ("heading", "Invoices")
    edit = rename.rename(state, "docs/billing.md", line, 4, "Issuing invoices")
    # the explicit id stays; links written against the heading's text (as sites also serve it) follow the text
    assert {(e.path, e.new_text) for e in edit.edits} == {
        ("docs/billing.md", "Issuing invoices"), ("docs/orders.md", "issuing-invoices"),
        ("docs/for-agents/billing.md", "issuing-invoices")}
    apply(root, edit)
    assert "## Issuing invoices {#invoicing}" in billing.read_text(encoding="utf-8")
    assert "[how they are built](billing.md#invoicing)" in api.read_text(encoding="utf-8")
    assert broken(root) == before


def test_renaming_a_linked_file_from_the_link_moves_it(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    before = broken(root)
    state = scanned(root).state
    orders = root / "docs/orders.md"
    line, column = find(orders, "(billing.md#invoices)")
    target = rename.prepare_rename(state, "docs/orders.md", line, column + 2)
    assert target is not None and (target.kind, target.placeholder) == ("path", "billing.md")
    edit = rename.rename(state, "docs/orders.md", line, column + 2, "invoicing.md")
    assert edit.moves == (FileMove("docs/billing.md", "docs/invoicing.md"),)
    apply(root, edit)
    assert (root / "docs/invoicing.md").is_file() and not (root / "docs/billing.md").exists()
    assert broken(root) == before
