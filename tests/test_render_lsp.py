"""The language server keeps generated regions fresh: a `.ts` edit that changes the area a region describes
makes the region stale (a live diagnostic), and the "Regenerate this region" code action's edit clears it,
giving the very text `docbridge render` writes."""

from __future__ import annotations

from pathlib import Path

from lsp_client import session
from lsprotocol import types as T
from support.positions import apply_range

from tests.conftest import copy_fixture, docbridge

CLOSE = "<!-- /doc-bridge:generated -->"


async def test_stale_region_after_a_ts_edit_and_regenerate_clears_it(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    doc = root / "docs" / "billing-area.md"
    doc.write_text(f"# Billing area\n\nBy hand.\n\n<!-- doc-bridge:generated -->\n{CLOSE}\n\nAfter.\n",
                   encoding="utf-8")
    rendered = docbridge("render", "area", "--root", str(root), "--area", "src/billing", "--output", str(doc))
    assert rendered.returncode == 0, rendered.stderr
    tax = root / "src" / "billing" / "tax.ts"
    original = tax.read_text(encoding="utf-8")
    async with session(root) as s:
        s.open(doc)
        s.open(tax)
        await s.until(lambda: s.diagnostics(tax) == [] and "GENERATED_REGION_STALE" not in
                      {c for c, _ in s.codes(doc)}, timeout=30)
        changed = original + "\nexport const VAT_REVIEWED = true;\n"
        s.replace_all(tax, changed)
        await s.until(lambda: "GENERATED_REGION_STALE" in {c for c, _ in s.codes(doc)}, timeout=30)
        (diagnostic,) = [d for d in s.diagnostics(doc) if d.code == "GENERATED_REGION_STALE"]
        assert diagnostic.severity == T.DiagnosticSeverity.Warning
        assert "template `area` for `src/billing`" in diagnostic.message
        assert diagnostic.range.start.line == 4  # the open marker

        actions = await s.client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=doc.as_uri()), range=diagnostic.range,
            context=T.CodeActionContext(diagnostics=[diagnostic])))
        (regenerate,) = [a for a in actions or [] if isinstance(a, T.CodeAction)
                         and a.title == "Regenerate this region"]
        assert regenerate.kind == T.CodeActionKind.QuickFix
        (edit,) = regenerate.edit.changes[doc.as_uri()]  # type: ignore[union-attr, index]
        assert "`VAT_REVIEWED`" in edit.new_text
        text = apply_range(doc.read_text(encoding="utf-8"), edit.range, edit.new_text)
        assert text.startswith("# Billing area\n\nBy hand.\n\n<!-- doc-bridge:generated hash=")
        assert text.endswith(f"{CLOSE}\n\nAfter.\n")
        s.replace_all(doc, text)
        await s.until(lambda: not {"GENERATED_REGION_STALE", "GENERATED_REGION_EDITED"} & {
            c for c, _ in s.codes(doc)}, timeout=30)

    # the editor's edit is exactly what the command line writes for the same files
    tax.write_text(changed, encoding="utf-8")
    doc.write_text(text, encoding="utf-8")
    check = docbridge("render", "area", "--root", str(root), "--area", "src/billing", "--output", str(doc), "--check")
    assert check.returncode == 0, check.stdout + check.stderr


async def test_render_command_writes_what_the_command_line_writes(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    async with session(root) as s:
        payload = await s.command("docbridge.render", "area", {"area": "src/orders"})
        assert payload["template"] == "area" and payload["source"] == "working tree"
        assert [(p["path"], p["status"]) for p in payload["pages"]] == [("docs/areas/src-orders.md", "written")]
        again = await s.command("docbridge.render", "ownership")
        assert [p["path"] for p in again["pages"]] == [f"docs/ownership/{n}.md" for n in (
            "acme-api", "acme-billing", "acme-orders", "acme-shipping")]
        try:
            await s.command("docbridge.render", "area", {"area": "src/nowhere"})
        except Exception as exc:  # the JSON-RPC error carries the sentence
            assert "There is no area 'src/nowhere'" in str(exc)
        else:
            raise AssertionError("an unknown area must be refused")
    for args in (("area", "--area", "src/orders", "--output", "docs/areas/src-orders.md"),
                 ("ownership", "--output", "docs/ownership")):
        check = docbridge("render", *args[:1], "--root", str(root), *args[1:-1], str(root / args[-1]), "--check")
        assert check.returncode == 0, check.stdout + check.stderr
