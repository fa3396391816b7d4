"""Definition, hover, references, document links and document symbols (Markdown), and code -> docs in
JS/TS files. Everything is read from the engine's resolutions of the open buffer."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as T

from engine.discovery.resolve import DocumentResolution, Reference, find_heading
from engine.model import AREA, DOCUMENT, MODULE, PACKAGE, split_id
from lsp.app import DocBridgeServer, safely, server
from lsp.state import Folder

_INDEX_NAMES = ("index.ts", "index.tsx", "index.js", "index.jsx", "index.mjs")


@dataclass(slots=True)
class Context:
    folder: Folder | None
    relative: str | None
    workspace: Any
    line: int
    column: int


def context(ls: DocBridgeServer, uri: str, position: T.Position | None = None) -> Context:
    folder, relative, _ = ls.state.locate(uri)
    workspace = folder.workspace if folder is not None else None
    line, column = ls.state.from_client(uri, position) if position is not None else (0, 0)
    return Context(folder, relative, workspace, line, column)


_positions: dict[str, tuple[DocumentResolution, list[tuple[int, int]], list[Reference]]] = {}


def reference_at(resolution: DocumentResolution, line: int, column: int) -> Reference | None:
    """The link, mention or declaration under the cursor (binary search over the sorted references)."""
    cached = _positions.get(resolution.path)
    if cached is None or cached[0] is not resolution:
        references = sorted(resolution.references, key=lambda r: (r.span.line, r.span.column))
        cached = (resolution, [(r.span.line, r.span.column) for r in references], references)
        _positions[resolution.path] = cached
    _, starts, references = cached
    index = bisect.bisect_right(starts, (line, column)) - 1
    best = None
    while index >= 0:
        reference = references[index]
        if reference.span.contains(line, column):
            best = reference if best is None or reference.origin == "code" else best
        if reference.span.end_line < line and reference.span.line < line - 1:
            break
        index -= 1
    return best


def resolution_of(ctx: Context) -> DocumentResolution | None:
    if ctx.workspace is None or ctx.relative is None:
        return None
    return ctx.workspace.documents.get(ctx.relative)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ targets


def target_location(ls: DocBridgeServer, folder: Folder, workspace: Any, reference: Reference) -> T.Location | None:
    """Where a resolved reference leads: the file, the heading, the declaration."""
    if reference.status not in ("resolved", "fuzzy", "anchor-missing", "existing") or reference.target_path is None:
        return None
    kind, value = split_id(reference.target) if reference.target else ("", "")
    if reference.symbol and kind == MODULE:
        position = workspace.universe.export_position(value, reference.symbol)
        line, column = position if position else (0, 0)
        return _location(ls, folder, value, line, column, column + len(reference.symbol))
    if kind == AREA:
        return area_location(ls, folder, workspace, value)
    if kind == PACKAGE:
        manifest = value if value.endswith("package.json") else reference.target_path
        if manifest and manifest.endswith("package.json"):
            return _location(ls, folder, manifest, 0, 0, 0)
        info = workspace.universe.layout.package_by_id(reference.target)
        if info is not None and info.manifest:
            return _location(ls, folder, info.manifest, 0, 0, 0)
        return None
    path = reference.target_path
    if (folder.root / path).is_dir():
        return None
    line = reference.line if reference.line is not None and reference.line >= 0 else 0
    target = workspace.universe.documents.get(path) if reference.anchor else None
    if target is not None:  # the heading's line now: edits to that document move it without re-resolving here
        heading = find_heading(target.headings, reference.anchor)
        line = heading.line if heading is not None else line
    return _location(ls, folder, path, line, 0, 0)


def area_location(ls: DocBridgeServer, folder: Folder, workspace: Any, area: str) -> T.Location | None:
    """A directory leads to its index module, else the document that best describes its area."""
    info = workspace.universe.layout.areas.get(area)
    for name in _INDEX_NAMES:
        if f"{area}/{name}" in workspace.universe.modules:
            return _location(ls, folder, f"{area}/{name}", 0, 0, 0)
    if info is not None:
        documents = _area_documents(workspace, info)
        if documents:
            return _location(ls, folder, documents[0], 0, 0, 0)
        if info.modules:
            return _location(ls, folder, info.modules[0], 0, 0, 0)
    return None


def _area_documents(workspace: Any, info: Any) -> list[str]:
    """Documents describing an area, best first: the ownership's agent document, then documents covering it,
    then documents mentioning it, the most linked-to first. (Handoffs rank with PageRank over the projection;
    go-to-definition must stay cheap right after an edit, so it ranks by inbound links.)"""
    index = workspace.documented_by()
    universe = workspace.universe
    picks: list[str] = []
    record = next((r for r in workspace.config.ownership if r.id == info.ownership_id), None) \
        if info.ownership_id else None
    if record is not None and record.agent_doc and record.agent_doc.removeprefix("./") in universe.documents:
        picks.append(record.agent_doc.removeprefix("./"))

    def inbound(path: str) -> int:
        return sum(1 for _, kind, _ in index.get(f"{DOCUMENT}:{path}", ()) if kind == "links-to")

    for kinds in (("covers",), ("mentions", "mentions-symbol")):
        found = {path for path, kind, _ in index.get(info.id, ()) if kind in kinds and path not in picks}
        picks.extend(sorted(found, key=lambda p: (-inbound(p), p)))
    return picks


def _location(ls: DocBridgeServer, folder: Folder, path: str, line: int, column: int, end: int) -> T.Location:
    return T.Location(uri=ls.state.uri_of(folder, path),
                      range=ls.state.range_to_client(folder, path, line, column, line, end))


# ------------------------------------------------------------------------------------------------ definition


@server.feature(T.TEXT_DOCUMENT_DEFINITION)
@safely()
def definition(ls: DocBridgeServer, params: T.DefinitionParams) -> T.Location | None:
    ctx = context(ls, params.text_document.uri, params.position)
    resolution = resolution_of(ctx)
    if resolution is None or ctx.folder is None:
        return None
    reference = reference_at(resolution, ctx.line, ctx.column)
    if reference is None:
        return None
    if reference.origin in ("link", "wiki") and reference.target_path == ctx.relative and reference.line is not None:
        return _location(ls, ctx.folder, ctx.relative, reference.line, 0, 0)  # `#anchor` in the same document
    return target_location(ls, ctx.folder, ctx.workspace, reference)


# ------------------------------------------------------------------------------------------------ hover


def _documents_about(workspace: Any, entity: str, symbol: str | None = None) -> list[tuple[str, str]]:
    """(document, relation) pairs of documents that cover or mention `entity` (or name `symbol` in it)."""
    found: dict[str, str] = {}
    for path, kind, named in workspace.documented_by().get(entity, ()):
        if symbol is not None and kind == "mentions-symbol" and named != symbol:
            continue
        if kind in ("covers", "mentions", "mentions-symbol", "links-to"):
            found.setdefault(path, kind)
    return sorted(found.items())


def hover_text(workspace: Any, reference: Reference) -> str | None:
    if reference.status in ("broken", "outside-root"):
        return f"**Broken link** — {reference.message or 'the target does not exist'}."
    if reference.status == "anchor-missing":
        return f"**Missing anchor** — {reference.message}."
    if reference.status == "ambiguous":
        modules = ", ".join(f"`{split_id(c)[1]}`" for c in reference.candidates)
        return f"`{reference.symbol}` is declared by several modules ({modules}); this mention links to none."
    if reference.status == "unresolved":
        return f"`{reference.text}` looks like a repository path but matches nothing."
    if reference.status not in ("resolved", "fuzzy", "existing") or reference.target is None:
        if reference.status == "existing" and reference.target_path:
            return f"`{reference.target_path}` (a file with no entity in the model)"
        return None
    kind, value = split_id(reference.target)
    lines = []
    if kind == DOCUMENT:
        facts = workspace.universe.documents.get(value)
        title = facts.title if facts and facts.title else value
        lines.append(f"**document** {title} — `{value}`")
        if facts is not None and facts.summary:
            lines.append(facts.summary)
        if reference.anchor:
            heading = next((h for h in facts.headings if h.slug == reference.anchor.lower()), None) if facts else None
            if heading is not None:
                lines.append(f"Section: **{heading.text}** (line {heading.line + 1})")
        content_hash = facts.content_hash if facts else None
    elif kind == MODULE:
        facts = workspace.universe.modules.get(value)
        content_hash = facts.content_hash if facts else None
        if reference.symbol:
            export = next((e for e in facts.exports if e.name == reference.symbol), None) if facts else None
            detail = f" ({export.kind}, line {export.line + 1})" if export else ""
            lines.append(f"**{reference.symbol}** — exported by `{value}`{detail}")
        else:
            exports = [e.name for e in facts.exports if e.declared][:12] if facts else []
            lines.append(f"**module** `{value}`")
            if exports:
                lines.append("Exports: " + ", ".join(f"`{name}`" for name in exports))
        documents = _documents_about(workspace, reference.target, reference.symbol)
        if documents:
            lines.append("Documented in: " + ", ".join(f"`{p}` ({k})" for p, k in documents[:8]))
    elif kind == AREA:
        info = workspace.universe.layout.areas.get(value)
        lines.append(f"**area** `{value}` — {len(info.modules) if info else 0} modules"
                     + (f", owned by `{info.ownership_id}`" if info and info.ownership_id else ""))
        content_hash = None
    elif kind == PACKAGE:
        info = workspace.universe.layout.package_by_id(reference.target)
        lines.append(f"**package** `{split_id(reference.target)[1]}`" + (f" — `{info.directory}`" if info else ""))
        content_hash = info.facts.content_hash if info and info.facts else None
    else:
        return None
    confidence = "fuzzy (a near match of what is written)" if reference.confidence == "fuzzy" else reference.confidence
    evidence = f"`{reference.target_path}`" + (f" (sha256 {content_hash[:12]}…)" if content_hash else "")
    lines.append(f"Confidence: {confidence} · Evidence: {evidence}")
    return "\n\n".join(lines)


@server.feature(T.TEXT_DOCUMENT_HOVER)
@safely()
def hover(ls: DocBridgeServer, params: T.HoverParams) -> T.Hover | None:
    ctx = context(ls, params.text_document.uri, params.position)
    if ctx.workspace is None or ctx.relative is None or ctx.folder is None:
        return None
    if ctx.relative in ctx.workspace.universe.modules:
        return code_hover(ls, ctx)
    resolution = resolution_of(ctx)
    if resolution is None:
        return None
    reference = reference_at(resolution, ctx.line, ctx.column)
    if reference is None:
        return None
    text = hover_text(ctx.workspace, reference)
    if text is None:
        return None
    span = reference.span
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text),
                   range=ls.state.range_to_client(ctx.folder, ctx.relative, span.line, span.column, span.end_line,
                                                  span.end_column, params.text_document.uri))


def export_at(workspace: Any, relative: str, line: int, column: int) -> Any:
    facts = workspace.universe.modules.get(relative)
    if facts is None:
        return None
    for export in facts.exports:
        if export.line == line and export.column <= column <= export.end_column and export.name not in ("*",):
            return export
    return None


def code_hover(ls: DocBridgeServer, ctx: Context) -> T.Hover | None:
    export = export_at(ctx.workspace, ctx.relative, ctx.line, ctx.column)
    if export is None:
        return None
    module_id = f"{MODULE}:{ctx.relative}"
    symbol_docs = [(p, k) for p, k in _documents_about(ctx.workspace, module_id, export.name) if k == "mentions-symbol"]
    module_docs = [(p, k) for p, k in _documents_about(ctx.workspace, module_id) if k != "mentions-symbol"]
    lines = [f"**{export.name}** ({export.kind}) — Doc Bridge"]
    if symbol_docs:
        lines.append("Mentioned in: " + ", ".join(f"`{p}`" for p, _ in symbol_docs[:8]))
    if module_docs:
        lines.append(f"`{ctx.relative}` is documented in: " + ", ".join(f"`{p}` ({k})" for p, k in module_docs[:8]))
    if not symbol_docs and not module_docs:
        lines.append("No document mentions this export or its module yet.")
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value="\n\n".join(lines)),
                   range=ls.state.range_to_client(ctx.folder, ctx.relative, export.line, export.column, export.line,
                                                  export.end_column))


# ------------------------------------------------------------------------------------------------ references


def _reference_locations(ls: DocBridgeServer, folder: Folder, workspace: Any, target: str,
                         anchor: str | None = None, symbol: str | None = None) -> list[T.Location]:
    out = []
    for path in workspace.referenced_by().get(target, ()):
        for reference in workspace.documents[path].references:
            if reference.target != target or reference.status not in ("resolved", "fuzzy", "anchor-missing"):
                continue
            if anchor is not None and (reference.anchor or "").lower() != anchor:
                continue
            if symbol is not None and reference.symbol != symbol:
                continue
            span = reference.span
            out.append(T.Location(uri=ls.state.uri_of(folder, path), range=ls.state.range_to_client(
                folder, path, span.line, span.column, span.end_line, span.end_column)))
    return out


@server.feature(T.TEXT_DOCUMENT_REFERENCES)
@safely(list)
def references(ls: DocBridgeServer, params: T.ReferenceParams) -> list[T.Location]:
    ctx = context(ls, params.text_document.uri, params.position)
    if ctx.workspace is None or ctx.relative is None or ctx.folder is None:
        return []
    if ctx.relative in ctx.workspace.universe.modules:
        export = export_at(ctx.workspace, ctx.relative, ctx.line, ctx.column)
        target = f"{MODULE}:{ctx.relative}"
        if export is not None:
            return _reference_locations(ls, ctx.folder, ctx.workspace, target, symbol=export.name)
        return _reference_locations(ls, ctx.folder, ctx.workspace, target)
    facts = ctx.workspace.universe.documents.get(ctx.relative)
    if facts is None:
        return []
    target = f"{DOCUMENT}:{ctx.relative}"
    heading = next((h for h in facts.headings if h.line == ctx.line), None)
    if heading is not None and heading.level > 1:
        found = _reference_locations(ls, ctx.folder, ctx.workspace, target, anchor=heading.slug)
        own = ctx.workspace.documents.get(ctx.relative)
        if own is not None:  # `[x](#slug)` inside the same document
            for reference in own.references:
                if reference.target_path == ctx.relative and (reference.anchor or "").lower() == heading.slug and \
                        reference.origin in ("link", "wiki"):
                    span = reference.span
                    found.append(T.Location(uri=params.text_document.uri, range=ls.state.range_to_client(
                        ctx.folder, ctx.relative, span.line, span.column, span.end_line, span.end_column)))
        if params.context.include_declaration:
            found.insert(0, _location(ls, ctx.folder, ctx.relative, heading.line, heading.column, heading.end_column))
        return found
    return _reference_locations(ls, ctx.folder, ctx.workspace, target)


# ------------------------------------------------------------------------------------------------ links & symbols


@server.feature(T.TEXT_DOCUMENT_DOCUMENT_LINK)
@safely(list)
def document_links(ls: DocBridgeServer, params: T.DocumentLinkParams) -> list[T.DocumentLink]:
    ctx = context(ls, params.text_document.uri)
    resolution = resolution_of(ctx)
    if resolution is None or ctx.folder is None:
        return []
    out = []
    for reference in resolution.references:
        if reference.origin not in ("link", "wiki", "code", "image"):
            continue
        location = target_location(ls, ctx.folder, ctx.workspace, reference)
        if location is None:
            continue
        target = location.uri + (f"#L{location.range.start.line + 1}" if location.range.start.line else "")
        span = reference.span
        out.append(T.DocumentLink(range=ls.state.range_to_client(
            ctx.folder, ctx.relative, span.line, span.column, span.end_line, span.end_column, params.text_document.uri),
            target=target, tooltip=f"Open {split_id(reference.target)[1] if reference.target else reference.text}"))
    return out


@server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@safely(list)
def document_symbols(ls: DocBridgeServer, params: T.DocumentSymbolParams) -> list[T.DocumentSymbol]:
    uri = params.text_document.uri
    facts = ls.state.buffer_facts(uri)  # from the buffer itself: works before a scan and outside folders
    if facts is None:
        return []
    lines = ls.state.buffer_lines(uri) or [""]
    headings = facts.headings
    # a section ends before the next heading of its level or above (one pass, not one scan per heading)
    ends = [len(lines) - 1] * len(headings)
    waiting: list[int] = []
    for index, heading in enumerate(headings):
        while waiting and headings[waiting[-1]].level >= heading.level:
            ends[waiting.pop()] = heading.line - 1
        waiting.append(index)
    roots: list[T.DocumentSymbol] = []
    stack: list[tuple[int, T.DocumentSymbol]] = []
    for index, heading in enumerate(headings):
        end_line = max(ends[index], heading.line)
        end_text = lines[end_line].rstrip("\r") if end_line < len(lines) else ""
        symbol = T.DocumentSymbol(
            name=heading.text, kind=T.SymbolKind.String, detail=f"#{heading.slug}",
            range=ls.state.range_to_client(None, None, heading.line, 0, end_line, len(end_text), uri),
            selection_range=ls.state.range_to_client(None, None, heading.line, heading.column, heading.line,
                                                     heading.end_column, uri), children=[])
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        if stack:
            stack[-1][1].children.append(symbol)  # type: ignore[union-attr]
        else:
            roots.append(symbol)
        stack.append((heading.level, symbol))
    return roots
