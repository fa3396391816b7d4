"""Completion in Markdown: relative paths after `](`, headings after `#`, paths and exported symbols inside
backticks. Ranked (documents before code, shorter and closer first), bounded, and computed from the
workspace's indexes without touching the disk."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from lsprotocol import types as T

from lsp.app import DocBridgeServer, safely, server
from lsp.positions import relative_link

_LINK_TARGET = re.compile(r"\]\(([^()\s]*)$")
_WIKI_TARGET = re.compile(r"\[\[([^\]|#]*)$")
_ANCHOR = re.compile(r"\]\(([^()\s#]*)#([^()\s]*)$")
_CODE = re.compile(r"`([^`\s]*)$")


@server.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=["(", "/", "#", "`", "["]))
@safely(lambda: T.CompletionList(is_incomplete=False, items=[]))
def complete(ls: DocBridgeServer, params: T.CompletionParams) -> T.CompletionList:
    empty = T.CompletionList(is_incomplete=False, items=[])
    uri = params.text_document.uri
    folder, relative, _ = ls.state.locate(uri)
    if folder is None or relative is None or folder.workspace is None:
        return empty
    workspace = folder.workspace
    if not relative.lower().endswith((".md", ".markdown")):
        return empty
    line, column = ls.state.from_client(uri, params.position)
    lines = ls.state.buffer_lines(uri) or [""]
    if line >= len(lines):
        return empty
    before = lines[line][:column]
    limit = ls.state.settings.completion_max_items
    doc_dir = posixpath.dirname(relative)

    def edit_range(typed: str) -> T.Range:
        start = ls.state.to_client(folder, relative, line, column - len(typed), uri)
        end = ls.state.to_client(folder, relative, line, column, uri)
        return T.Range(start=start, end=end)

    anchor = _ANCHOR.search(before)
    if anchor is not None:
        target_text, typed = anchor.group(1), anchor.group(2)
        target = relative if not target_text else posixpath.normpath(posixpath.join(doc_dir, target_text))
        facts = workspace.universe.documents.get(target)
        if facts is None:
            return empty
        items = [T.CompletionItem(label=h.slug, kind=T.CompletionItemKind.Reference, detail=h.text,
                                  sort_text=f"{i:05d}", filter_text=h.slug,
                                  text_edit=T.TextEdit(range=edit_range(typed), new_text=h.slug))
                 for i, h in enumerate(facts.headings) if h.slug.startswith(typed.lower())]
        return T.CompletionList(is_incomplete=False, items=items[:limit])

    link = _LINK_TARGET.search(before) or _WIKI_TARGET.search(before)
    if link is not None:
        typed = link.group(1)
        return T.CompletionList(is_incomplete=True, items=_paths(workspace, doc_dir, typed, edit_range(typed), limit,
                                                                 relative_to_doc=True))
    code = _CODE.search(before)
    if code is not None and before.count("`") % 2 == 1:
        typed = code.group(1)
        items = _paths(workspace, doc_dir, typed, edit_range(typed), limit // 2, relative_to_doc=False) if (
            "/" in typed or "." in typed) else []
        items += _symbols(workspace, typed, edit_range(typed), limit - len(items))
        return T.CompletionList(is_incomplete=True, items=items[:limit])
    return empty


def _paths(workspace: Any, doc_dir: str, typed: str, range_: T.Range, limit: int, relative_to_doc: bool) -> list[
        T.CompletionItem]:
    """Files and directories whose written form starts with what was typed, documents first."""
    universe = workspace.universe
    candidates: list[tuple[tuple[Any, ...], str, str, Any]] = []
    typed_lower = typed.lower()
    sources = [(p, "document") for p in universe.documents] + [(p, "module") for p in universe.modules] + \
              [(p, "file") for p in universe.other] + [(d, "directory") for d in universe.dir_counts]
    for path, kind in sources:
        written = relative_link(doc_dir, path) if relative_to_doc else path
        if kind == "directory":
            written += "/"
        if typed and not (written.lower().startswith(typed_lower) or path.lower().startswith(typed_lower)):
            continue
        rank = {"document": 0, "directory": 1, "module": 2, "file": 3}[kind]
        candidates.append(((rank, written.count("/"), len(written), written), written, path, kind))
        if len(candidates) > 20 * max(limit, 1):
            break
    candidates.sort()
    kinds = {"document": T.CompletionItemKind.File, "module": T.CompletionItemKind.Module,
             "file": T.CompletionItemKind.File, "directory": T.CompletionItemKind.Folder}
    return [T.CompletionItem(label=written, kind=kinds[kind], detail=path if path != written else kind,
                             sort_text=f"{i:05d}", filter_text=written,
                             text_edit=T.TextEdit(range=range_, new_text=written))
            for i, (_, written, path, kind) in enumerate(candidates[:limit])]


def _symbols(workspace: Any, typed: str, range_: T.Range, limit: int) -> list[T.CompletionItem]:
    """Exported symbols (declared ones first), case-insensitive prefix match."""
    if limit <= 0 or not typed:
        return []
    universe = workspace.universe
    typed_lower = typed.lower()
    found = []
    for name, owners in universe.owners.items():
        if owners and name.lower().startswith(typed_lower):
            module = sorted(owners)[0]
            found.append(((0 if name.startswith(typed) else 1, len(name), name), name, module, len(owners)))
    found.sort()
    items = []
    for i, (_, name, module, count) in enumerate(found[:limit]):
        detail = module if count == 1 else f"{count} modules declare it"
        items.append(T.CompletionItem(label=name, kind=T.CompletionItemKind.Function, detail=detail,
                                      sort_text=f"{5000 + i:05d}", filter_text=name,
                                      text_edit=T.TextEdit(range=range_, new_text=name)))
    return items
