"""Hover: what a reference resolves to, or which documents describe the export under the cursor."""

from __future__ import annotations

from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, PACKAGE, Span, split_id
from docbridge.engine.discovery.references import Reference, ReferenceStatus
from docbridge.engine.ide.navigation import documents_about, export_at, reference_at
from docbridge.engine.ide.types import Hover
from docbridge.engine.state.model_state import ModelState

S = ReferenceStatus


def hover(state: ModelState, path: str, line: int, column: int) -> Hover | None:
    if path in state.universe.modules:
        return code_hover(state, path, line, column)
    resolution = state.documents.get(path)
    if resolution is None:
        return None
    reference = reference_at(state, resolution, line, column)
    if reference is None:
        return None
    text = hover_text(state, reference)
    return Hover(text, reference.span) if text is not None else None


def hover_text(state: ModelState, reference: Reference) -> str | None:
    status = reference.status
    if status.broken:
        return f"**Broken link** — {reference.message or 'the target does not exist'}."
    if status == S.ANCHOR_MISSING:
        return f"**Missing anchor** — {reference.message}."
    if status == S.AMBIGUOUS:
        modules = ", ".join(f"`{split_id(c)[1]}`" for c in reference.candidates)
        return f"`{reference.symbol}` is declared by several modules ({modules}); this mention links to none."
    if status == S.SAME_NAME:
        modules = ", ".join(f"`{split_id(c)[1]}`" for c in reference.candidates)
        return f"`{reference.symbol}` is declared alike in several places ({modules}); go to definition offers " \
               f"each."
    if status == S.UNRESOLVED:
        return f"`{reference.text}` looks like a repository path but matches nothing."
    if status not in (S.RESOLVED, S.FUZZY, S.EXISTING) or reference.target is None:
        if status == S.EXISTING and reference.target_path:
            return f"`{reference.target_path}` (a file with no entity in the model)"
        return None
    u = state.universe
    kind, value = split_id(reference.target)
    lines = []
    content_hash: str | None
    if kind == DOCUMENT:
        facts = u.documents.get(value)
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
        module = u.modules.get(value)
        content_hash = module.content_hash if module else None
        if reference.symbol:
            export = next((e for e in module.exports if e.name == reference.symbol), None) if module else None
            detail = f" ({export.kind}, line {export.line + 1})" if export else ""
            lines.append(f"**{reference.symbol}** — exported by `{value}`{detail}")
        else:
            exports = [e.name for e in module.exports if e.declared][:12] if module else []
            lines.append(f"**module** `{value}`")
            if exports:
                lines.append("Exports: " + ", ".join(f"`{name}`" for name in exports))
        documents = documents_about(state, reference.target, reference.symbol)
        if documents:
            lines.append("Documented in: " + ", ".join(f"`{p}` ({k})" for p, k in documents[:8]))
    elif kind == AREA:
        assert u.layout is not None
        info = u.layout.areas.get(value)
        lines.append(f"**area** `{value}` — {len(info.modules) if info else 0} modules"
                     + (f", owned by `{info.ownership_id}`" if info and info.ownership_id else ""))
        content_hash = None
    elif kind == PACKAGE:
        assert u.layout is not None
        package = u.layout.package_by_id(reference.target)
        lines.append(f"**package** `{value}`" + (f" — `{package.directory}`" if package else ""))
        content_hash = package.facts.content_hash if package and package.facts else None
    else:
        return None
    confidence = "fuzzy (a near match of what is written)" if reference.confidence == "fuzzy" else reference.confidence
    evidence = f"`{reference.target_path}`" + (f" (sha256 {content_hash[:12]}…)" if content_hash else "")
    lines.append(f"Confidence: {confidence} · Evidence: {evidence}")
    return "\n\n".join(lines)


def code_hover(state: ModelState, path: str, line: int, column: int) -> Hover | None:
    export = export_at(state, path, line, column)
    if export is None:
        return None
    module_id = f"{MODULE}:{path}"
    symbol_docs = [(p, k) for p, k in documents_about(state, module_id, export.name) if k == "mentions-symbol"]
    module_docs = [(p, k) for p, k in documents_about(state, module_id) if k != "mentions-symbol"]
    lines = [f"**{export.name}** ({export.kind}) — Doc Bridge"]
    if symbol_docs:
        lines.append("Mentioned in: " + ", ".join(f"`{p}`" for p, _ in symbol_docs[:8]))
    if module_docs:
        lines.append(f"`{path}` is documented in: " + ", ".join(f"`{p}` ({k})" for p, k in module_docs[:8]))
    if not symbol_docs and not module_docs:
        lines.append("No document mentions this export or its module yet.")
    return Hover("\n\n".join(lines), Span(export.line, export.column, export.line, export.end_column))


__all__ = ["code_hover", "hover", "hover_text"]
