"""Definition, references and document links: where a reference in a document leads, and what leads here."""

from __future__ import annotations

import bisect
import itertools
from typing import Any

from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, PACKAGE, Span, split_id
from docbridge.engine.discovery.references import DocumentResolution, Reference, ReferenceStatus, find_heading
from docbridge.engine.ide.types import DocumentLink, Location
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.views.reverse import documented_by_of, referenced_by_of

INDEX_NAMES = ("index.ts", "index.tsx", "index.js", "index.jsx", "index.mjs")
FOLDER_PAGES = ("README.md", "readme.md", "index.md", "index.mdx", "README.mdx")
FOLDER_SCAN_LIMIT = 5000  # files of a folder looked at for the one to open (a folder has no location of its own)


def reference_at(state: ModelState, resolution: DocumentResolution, line: int, column: int) -> Reference | None:
    """The link, mention or declaration under the cursor (binary search over the sorted references). An inline
    code span inside a link wins over the link, unless the link leads somewhere: the author's explicit target
    (`` [`metadata`](/metadata) `` is a link to the page, whatever else declares `metadata`)."""
    def build() -> tuple[list[tuple[int, int]], list[Reference]]:
        ordered = sorted(resolution.references, key=lambda r: (r.at.line, r.at.column))
        return [(r.at.line, r.at.column) for r in ordered], ordered
    starts, references = state.view(f"references-by-position:{resolution.path}", build)
    index = bisect.bisect_right(starts, (line, column)) - 1
    best = None
    while index >= 0:
        reference = references[index]
        if reference.span.contains(line, column):
            best = reference if best is None or _outranks(reference, best) else best
        if reference.at.end_line < line and reference.at.line < line - 1:
            break
        index -= 1
    return best


def linked_document(state: ModelState, path: str) -> str | None:
    """The document a symbolic link inside the repository shows (None for anything else)."""
    full = state.root / path
    if not full.is_symlink():
        return None
    try:
        target = full.resolve().relative_to(state.root.resolve()).as_posix()
    except (OSError, ValueError):
        return None
    return target if target in state.documents else None


def _outranks(reference: Reference, other: Reference) -> bool:
    def rank(candidate: Reference) -> int:
        if candidate.origin in ("link", "wiki") and candidate.status.navigable:
            return 2
        return 1 if candidate.origin == "code" else 0
    return rank(reference) > rank(other)


def resolution_at(state: ModelState, path: str) -> DocumentResolution | None:
    return state.documents.get(path)


# ------------------------------------------------------------------------------------------------ targets


def target_location(state: ModelState, reference: Reference, document: str | None = None) -> Location | None:
    """Where a reference leads: the file, the heading (its line now), the declaration of a symbol."""
    if not reference.status.navigable or reference.target_path is None:
        return None
    u = state.universe
    kind, value = split_id(reference.target) if reference.target else ("", "")
    if reference.symbol and kind == MODULE:
        position = u.export_position(value, reference.symbol)
        line, column = position if position else (0, 0)
        return Location.at(value, line, column, column + len(reference.symbol))
    if kind == AREA:
        return area_location(state, value)
    if kind == PACKAGE:
        manifest = value if value.endswith("package.json") else reference.target_path
        if manifest and manifest.endswith("package.json"):
            return Location.at(manifest)
        assert u.layout is not None
        info = u.layout.package_by_id(reference.target or "")
        return Location.at(info.manifest) if info is not None and info.manifest else None
    path = reference.target_path
    if path == "":
        return None  # the repository itself: nothing to open
    if path in u.dir_counts:
        return folder_location(state, path)
    line = reference.line if reference.line is not None and reference.line >= 0 else 0
    target = u.documents.get(path) if reference.anchor else None
    if target is not None:  # the heading's line now: edits to that document move it without re-resolving here
        heading = find_heading(target.headings, reference.anchor or "", target.anchors)
        line = heading.line if heading is not None else line
    return Location.at(path, line)


def folder_location(state: ModelState, folder: str) -> Location | None:
    """A folder leads to its own page (README or index document), else its index module, else its first file."""
    u = state.universe
    for name in FOLDER_PAGES:
        if f"{folder}/{name}" in u.documents:
            return Location.at(f"{folder}/{name}")
    for name in INDEX_NAMES:
        if f"{folder}/{name}" in u.modules:
            return Location.at(f"{folder}/{name}")
    # a file of the folder itself before one deep inside it (`src/core` → `src/core/env.js`, not a fixture's
    # `src/core/adapt/fixtures/basic/static/answer.md`); documents, then modules, then anything else
    prefix = folder + "/"
    best: tuple[int, int, str] | None = None
    for rank, index in enumerate(("documents", "modules", "other")):
        paths = u.sorted_paths(index)
        at = bisect.bisect_left(paths, prefix)
        for path in itertools.islice(paths, at, at + FOLDER_SCAN_LIMIT):
            if not path.startswith(prefix):
                break
            candidate = (path.count("/", len(prefix)), rank, path)
            if best is None or candidate < best:
                best = candidate
            if candidate[0] == 0:
                break
    return Location.at(best[2]) if best is not None else None


def area_location(state: ModelState, area: str) -> Location | None:
    """An area leads to its index module, else its own page, else its first file: what is in the folder."""
    for name in INDEX_NAMES:
        if f"{area}/{name}" in state.universe.modules:
            return Location.at(f"{area}/{name}")
    return folder_location(state, area)


def area_documents(state: ModelState, info: Any) -> list[str]:
    """Documents describing an area, best first: the ownership's agent document, then documents covering it,
    then documents mentioning it, the most linked-to first. (Handoffs rank with PageRank over the projection;
    go-to-definition must stay cheap right after an edit, so it ranks by inbound links.)"""
    index = documented_by_of(state)
    universe = state.universe
    picks: list[str] = []
    record = next((r for r in state.config.ownership if r.id == info.ownership_id), None) \
        if info.ownership_id else None
    if record is not None and record.agent_doc and record.agent_doc.removeprefix("./") in universe.documents:
        picks.append(record.agent_doc.removeprefix("./"))

    def inbound(path: str) -> int:
        return sum(1 for _, kind, _ in index.get(f"{DOCUMENT}:{path}", ()) if kind == "links-to")

    for kinds in (("covers",), ("mentions", "mentions-symbol")):
        found = {path for path, kind, _ in index.get(info.id, ()) if kind in kinds and path not in picks}
        picks.extend(sorted(found, key=lambda p: (-inbound(p), p)))
    return picks


def documents_about(state: ModelState, entity: str, symbol: str | None = None) -> list[tuple[str, str]]:
    """(document, relation) pairs of documents that cover or mention `entity` (or name `symbol` in it)."""
    found: dict[str, str] = {}
    for path, kind, named in documented_by_of(state).get(entity, ()):
        if symbol is not None and kind == "mentions-symbol" and named != symbol:
            continue
        if kind in ("covers", "mentions", "mentions-symbol", "links-to"):
            found.setdefault(path, kind)
    return sorted(found.items())


def export_at(state: ModelState, path: str, line: int, column: int) -> Any:
    """The export declared under the cursor in a module."""
    facts = state.universe.modules.get(path)
    if facts is None:
        return None
    for export in facts.exports:
        if export.line == line and export.column <= column <= export.end_column and export.name not in ("*",):
            return export
    return None


# ------------------------------------------------------------------------------------------------ definition


def definition(state: ModelState, path: str, line: int, column: int) -> Location | None:
    resolution = state.documents.get(path)
    if resolution is None:
        return None
    reference = reference_at(state, resolution, line, column)
    if reference is None:
        return None
    if reference.origin in ("link", "wiki") and reference.target_path == path and reference.line is not None:
        return Location.at(path, reference.line)  # `#anchor` in the same document
    return target_location(state, reference, document=path)


def definitions(state: ModelState, path: str, line: int, column: int) -> list[Location]:
    """Every place a reference can lead: one, or (a name several modules declare that the context does not
    settle) each declaration, best first. A link to another document of the repository (`CLAUDE.md` ->
    `AGENTS.md`) answers as the document it shows."""
    resolution = state.documents.get(path)
    if resolution is None:
        target = linked_document(state, path)
        if target is None:
            return []
        path, resolution = target, state.documents[target]
    reference = reference_at(state, resolution, line, column)
    if reference is None:
        return []
    if reference.status in (ReferenceStatus.AMBIGUOUS, ReferenceStatus.SAME_NAME) and reference.symbol:
        out = []
        for candidate in reference.candidates:
            module = split_id(candidate)[1]
            position = state.universe.export_position(module, reference.symbol)
            line_, column_ = position if position else (0, 0)
            out.append(Location.at(module, line_, column_, column_ + len(reference.symbol)))
        return out
    found = definition(state, path, line, column)
    return [found] if found is not None else []


# ------------------------------------------------------------------------------------------------ references


def _references_to(state: ModelState, target: str, anchor: str | None = None,
                   symbol: str | None = None) -> list[Location]:
    out = []
    for path in referenced_by_of(state).get(target, ()):
        resolution = state.documents.get(path)
        if resolution is None:
            continue
        for reference in resolution.references:
            if reference.target != target or not reference.status.names_target:
                continue
            if anchor is not None and (reference.anchor or "").lower() != anchor:
                continue
            if symbol is not None and reference.symbol != symbol:
                continue
            out.append(Location(path, reference.span))
    return out


def references(state: ModelState, path: str, line: int, column: int, include_declaration: bool) -> list[Location]:
    """From a document (or one of its headings), a module (or one of its exports): every Markdown reference
    that points at it."""
    u = state.universe
    if path in u.modules:
        export = export_at(state, path, line, column)
        target = f"{MODULE}:{path}"
        return _references_to(state, target, symbol=export.name if export is not None else None)
    facts = u.documents.get(path)
    if facts is None:
        return []
    target = f"{DOCUMENT}:{path}"
    heading = next((h for h in facts.headings if h.line == line), None)
    if heading is None or heading.level <= 1:
        return _references_to(state, target)
    found = _references_to(state, target, anchor=heading.slug)
    own = state.documents.get(path)
    if own is not None:  # `[x](#slug)` inside the same document
        for reference in own.references:
            if reference.target_path == path and (reference.anchor or "").lower() == heading.slug and \
                    reference.origin in ("link", "wiki"):
                found.append(Location(path, reference.span))
    found = list(dict.fromkeys(found))  # a link to its own document is found both ways
    if include_declaration:
        found.insert(0, Location(path, Span(heading.line, heading.column, heading.line, heading.end_column)))
    return found


# ------------------------------------------------------------------------------------------------ links


def document_links(state: ModelState, path: str) -> list[DocumentLink]:
    resolution = state.documents.get(path)
    if resolution is None:
        return []
    out = []
    for reference in resolution.references:
        if reference.origin not in ("link", "wiki", "code", "image"):
            continue
        location = target_location(state, reference)
        if location is None:
            continue
        shown = split_id(reference.target)[1] if reference.target else reference.text
        out.append(DocumentLink(reference.span, location, f"Open {shown}"))
    return out


def unit_of(state: ModelState, path: str) -> str | None:
    """The area (else package, else document) that a file belongs to, as a handoff reference."""
    layout = state.universe.layout
    if layout is None:
        return None
    area = layout.area_of(path)
    if area is not None:
        return area.path
    if path in state.universe.documents:
        return path
    package = layout.package_of(path)
    return package.id if package is not None else None


__all__ = ["ReferenceStatus", "area_documents", "area_location", "definition", "definitions", "document_links",
           "documents_about", "export_at", "folder_location", "reference_at", "references", "target_location",
           "unit_of"]
