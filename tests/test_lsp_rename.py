"""Renames over a real stdio connection: files and folders moved through `workspace/willRenameFiles` and a
heading renamed through `textDocument/rename`. The returned edit is applied the way an editor applies it
(edits first, then the moves), and the oracle is a fresh `docbridge check`: no new broken reference."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import copy_fixture, docbridge_json
from lsp_client import session
from lsprotocol import types as T
from support.positions import apply_range, find

BROKEN = ("LINK_BROKEN", "LINK_ANCHOR_MISSING", "MENTION_UNRESOLVED", "COVERS_TARGET_MISSING",
          "OWNERSHIP_PATH_UNOBSERVED")


def broken(root: Path) -> set[tuple[str, str]]:
    report = docbridge_json("check", "--root", str(root), "--format", "json", "--fail-on", "never", "--no-cache")
    return {(f["code"], f["message"]) for f in report["findings"] if f["code"] in BROKEN}


def path_of(root: Path, uri: str) -> Path:
    return Path(uri.removeprefix("file://"))


def apply(root: Path, edit: T.WorkspaceEdit | None) -> list[tuple[Path, Path]]:
    """Apply a WorkspaceEdit to the files on disk: text edits (last first), then renames. Returns the moves."""
    assert edit is not None
    moves: list[tuple[Path, Path]] = []
    per_file: dict[str, list[T.TextEdit]] = {}
    for uri, edits in (edit.changes or {}).items():
        per_file.setdefault(uri, []).extend(edits)
    for change in edit.document_changes or []:
        if isinstance(change, T.TextDocumentEdit):
            per_file.setdefault(change.text_document.uri, []).extend(change.edits)  # type: ignore[arg-type]
        elif isinstance(change, T.RenameFile):
            moves.append((path_of(root, change.old_uri), path_of(root, change.new_uri)))
    for uri, edits in per_file.items():
        file = path_of(root, uri)
        text = file.read_text(encoding="utf-8")
        for item in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            start, end = item.range.start, item.range.end
            assert start.line == end.line
            # ASCII fixture lines: UTF-16 columns are character columns
            text = apply_range(text, item.range, item.new_text)
        file.write_text(text, encoding="utf-8")
    for old, new in moves:
        new.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(old), str(new))
    return moves


async def move(s: Any, root: Path, old: str, new: str) -> None:
    """What an editor does for a move: ask, apply the edit, move, then tell the server."""
    files = [T.FileRename(old_uri=(root / old).as_uri(), new_uri=(root / new).as_uri())]
    edit = await s.client.workspace_will_rename_files_async(T.RenameFilesParams(files=files))
    apply(root, edit)
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(root / old), str(root / new))
    changed = {path_of(root, uri) for uri in (edit.changes or {})} if edit else set()
    s.watched(*((path, T.FileChangeType.Changed) for path in sorted(changed) if path.exists()))
    s.client.workspace_did_rename_files(T.RenameFilesParams(files=files))


async def test_moving_a_document_and_a_folder_of_code_keeps_everything_linked(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    before = broken(root)
    async with session(root) as s:
        result = s.result
        assert result is not None and result.capabilities.workspace is not None
        operations = result.capabilities.workspace.file_operations
        assert operations is not None and operations.will_rename is not None and operations.did_rename is not None
        await move(s, root, "docs/billing.md", "docs/guides/billing.md")
        await move(s, root, "src/billing", "src/invoicing")
        # the server's model followed the moves without a rescan: a link to the new place resolves
        orders = root / "docs/orders.md"
        s.open(orders)
        line, column = find(orders, "(guides/billing.md#invoices)")
        result = await s.definition(orders, line, column + 3)
        result = result[0] if isinstance(result, list) else result
        assert result.uri == (root / "docs/guides/billing.md").as_uri()
        mention_line, mention_column = find(root / "docs/guides/billing.md", "`src/invoicing/invoice.ts`")
        s.open(root / "docs/guides/billing.md")
        found = await s.definition(root / "docs/guides/billing.md", mention_line, mention_column + 3)
        found = found[0] if isinstance(found, list) else found
        assert found.uri == (root / "src/invoicing/invoice.ts").as_uri()
    assert broken(root) == before


async def test_a_rename_updates_the_model_without_a_rescan(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    async with session(root) as s:
        files = [T.FileRename(old_uri=(root / "docs/storage.md").as_uri(),
                              new_uri=(root / "docs/ops/storage.md").as_uri())]
        apply(root, await s.client.workspace_will_rename_files_async(T.RenameFilesParams(files=files)))
        (root / "docs/ops").mkdir()
        shutil.move(str(root / "docs/storage.md"), str(root / "docs/ops/storage.md"))
        s.client.workspace_did_rename_files(T.RenameFilesParams(files=files))
        deployment = root / "docs/deployment.md"
        s.open(deployment)  # the editor has the edited text
        line, column = find(deployment, "(ops/storage.md#migrations)")
        found = await s.definition(deployment, line, column + 3)
        found = found[0] if isinstance(found, list) else found
        moved = root / "docs/ops/storage.md"
        assert (found.uri, found.range.start.line) == (moved.as_uri(), find(moved, "## Migrations")[0])
        assert not [d for d in s.diagnostics(deployment) if d.code == "LINK_BROKEN"]
        scans = [x for x in s.statuses if (x["state"] if isinstance(x, dict) else x.state) == "scanning"]
        assert len(scans) == 1  # the initial scan only


async def test_renaming_a_heading_follows_every_link_to_it(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    api = root / "docs/api.md"
    api.write_text(api.read_text(encoding="utf-8") + "\nInvoices: [how they are built](billing.md#invoices).\n",
                   encoding="utf-8")
    before = broken(root)
    billing = root / "docs/billing.md"
    async with session(root) as s:
        s.open(billing)
        line, _ = find(billing, "## Invoices")
        document = T.TextDocumentIdentifier(uri=billing.as_uri())
        prepared = await s.client.text_document_prepare_rename_async(T.PrepareRenameParams(
            text_document=document, position=T.Position(line=line, character=5)))
        assert isinstance(prepared, T.PrepareRenamePlaceholder) and prepared.placeholder == "Invoices"
        edit = await s.client.text_document_rename_async(T.RenameParams(
            text_document=document, position=T.Position(line=line, character=5), new_name="Issuing invoices"))
        touched = {path_of(root, uri).relative_to(root).as_posix() for uri in (edit.changes or {})}
        assert touched == {"docs/billing.md", "docs/orders.md", "docs/for-agents/billing.md", "docs/api.md"}
        apply(root, edit)
    assert broken(root) == before
    assert "## Issuing invoices" in billing.read_text(encoding="utf-8")
    assert "(billing.md#issuing-invoices)" in (root / "docs/orders.md").read_text(encoding="utf-8")
