"""Code actions (quick fixes from the findings' candidates, re-sealing a generated region, updating mentions of a
renamed export, showing the handoff) and code lenses on exported declarations."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from docbridge.engine.base.model import MODULE, Span
from docbridge.engine.discovery.references import Reference, ReferenceStatus
from docbridge.engine.ide.completion import relative_link
from docbridge.engine.ide.navigation import reference_at, unit_of
from docbridge.engine.ide.proposals import CODE as PROPOSAL_CODE
from docbridge.engine.ide.proposals import proposal_actions
from docbridge.engine.ide.types import QUICKFIX, SOURCE, Action, Lens, TextEdit, WorkspaceEdit
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.text import lines_of
from docbridge.engine.views.reconcile import findings_index_of
from docbridge.engine.views.reverse import documented_by_of

_HASH = re.compile(r"hash=([A-Za-z0-9]+)")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A finding as the editor sent it back: its code, its data, and where it starts."""

    code: str
    data: dict[str, Any]
    line: int
    column: int


def kind_allowed(kind: str, only: Iterable[str] | None) -> bool:
    """Whether an action of `kind` was asked for: `only` lists kinds or parent kinds (`source` admits
    `source.fixAll`, the empty kind admits every kind); no `only` admits everything, an empty list nothing."""
    if only is None:
        return True
    return any(w == "" or kind == w or kind.startswith(w + ".") for w in only)


def code_actions(state: ModelState, path: str, diagnostics: Sequence[Diagnostic],
                 only: Iterable[str] | None = None, automatic: bool = False) -> list[Action]:
    """The actions for a range of a file: quick fixes for the given diagnostics and, unless `automatic`
    (the editor asked on its own, not the person), the source action that shows the file's handoff.
    `Action.fixes` is the index of the diagnostic a quick fix resolves."""
    only = list(only) if only is not None else None
    actions: list[Action] = []
    if kind_allowed(QUICKFIX, only):
        lines = lines_of(state, path) or []
        resolution = state.documents.get(path)
        for index, diagnostic in enumerate(diagnostics):
            reference = reference_at(state, resolution, diagnostic.line, diagnostic.column) \
                if resolution is not None else None
            actions += _fixes(state, path, lines, index, diagnostic, reference, first=not actions)
    if not automatic and kind_allowed(SOURCE, only):
        unit = unit_of(state, path)
        if unit is not None:
            actions.append(Action(f"Show handoff for {unit}", SOURCE, command="docbridge.handoff",
                                  arguments=(unit, {"show": True})))
    return actions


def _fixes(state: ModelState, path: str, lines: list[str], index: int, diagnostic: Diagnostic,
           reference: Reference | None, first: bool) -> list[Action]:
    code, data = diagnostic.code, diagnostic.data
    if code == PROPOSAL_CODE:  # a pending enrichment proposal: a person approves or rejects it
        return proposal_actions(data, index)
    candidates = [c for c in data.get("candidates", []) if isinstance(c, str)][:3]
    if code == "LINK_BROKEN" and reference is not None:
        found = _link_target(lines, reference)
        if found is None:
            return []
        span, target = found
        anchor = target.split("#", 1)[1] if "#" in target else None
        doc_dir = posixpath.dirname(path)
        return [Action(f"Link to {candidate}", QUICKFIX, _edit(path, span, relative_link(doc_dir, candidate) + (
            f"#{anchor}" if anchor else "")), fixes=index, preferred=first and n == 0)
                for n, candidate in enumerate(candidates)]
    if code == "LINK_ANCHOR_MISSING" and reference is not None:
        found = _link_target(lines, reference)
        if found is None:
            return []
        span, target = found
        document = target.split("#", 1)[0]
        return [Action(f"Link to #{slug}", QUICKFIX, _edit(path, span, f"{document}#{slug}"), fixes=index,
                       preferred=first and n == 0) for n, slug in enumerate(candidates)]
    if code == "MENTION_UNRESOLVED" and reference is not None:
        inner = Span(reference.span.line, reference.span.column + 1, reference.span.end_line,
                     reference.span.end_column - 1)
        return [Action(f"Change to `{candidate}`", QUICKFIX, _edit(path, inner, candidate), fixes=index,
                       preferred=first and n == 0) for n, candidate in enumerate(candidates)]
    if code == "SYMBOL_RENAMED" and reference is not None and reference.status == ReferenceStatus.RENAMED:
        return _renamed_fixes(state, path, lines, index, reference, first)
    if code == "GENERATED_REGION_STALE":
        regenerate = regenerate_region(state, path, lines, data.get("start_line"), data.get("end_line"))
        return [Action("Regenerate this region", QUICKFIX, regenerate, fixes=index, preferred=first)] \
            if regenerate is not None else []
    if code == "GENERATED_REGION_EDITED":
        out = []
        line, computed = data.get("start_line"), data.get("computed_hash")
        if isinstance(line, int) and 0 <= line < len(lines) and isinstance(computed, str) and computed:
            match = _HASH.search(lines[line])
            if match is not None:
                out.append(Action("Re-seal the generated region (keep the hand edit)", QUICKFIX,
                                  _edit(path, Span(line, match.start(1), line, match.end(1)), computed), fixes=index))
        regenerate = regenerate_region(state, path, lines, line, data.get("end_line"))
        if regenerate is not None:
            out.append(Action("Regenerate this region (discard the hand edit)", QUICKFIX, regenerate, fixes=index))
        return out
    return []


def regenerate_region(state: ModelState, path: str, lines: list[str], start: Any, end: Any) -> WorkspaceEdit | None:
    """The edit that replaces a generated region (marker lines `start`..`end`) with what `docbridge render`
    writes there now: the template and page its marker names, rendered over this state. None when the marker
    names no model template or the template cannot be rendered."""
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end < len(lines)):
        return None
    from docbridge.engine.render.pages import MODEL_TEMPLATES, render_region
    from docbridge.engine.render.templating import RenderError, marker_attributes, region_lines
    from docbridge.engine.views.reconcile import apply_config
    attributes = marker_attributes(lines[start])
    template, key = attributes.get("template"), attributes.get("key")
    if template not in MODEL_TEMPLATES:
        return None
    try:
        sealed = render_region(state, template, key, apply_config(state, findings_index_of(state).base_findings()))
    except RenderError:
        return None
    newline = "\r\n" if lines[start].endswith("\r") else "\n"
    last = lines[end].rstrip("\r")
    return _edit(path, Span(start, 0, end, len(last)), newline.join(region_lines(sealed, template, key)))


def _edit(path: str, span: Span, text: str) -> WorkspaceEdit:
    return WorkspaceEdit((TextEdit(path, span, text),))


def _link_target(lines: list[str], reference: Reference) -> tuple[Span, str] | None:
    """The span of a link's target (inside the parentheses) and the target text."""
    span = reference.span
    if span.line != span.end_line or span.line >= len(lines):
        return None
    line = lines[span.line].rstrip("\r")
    source = line[span.column:span.end_column]
    if not source.endswith(")") or "](" not in source:
        return None
    start = span.column + source.rindex("](") + 2
    end = span.end_column - 1
    return Span(span.line, start, span.line, end), line[start:end]


def _name_span(lines: list[str], reference: Reference) -> Span | None:
    """Where the old name sits inside a mention's backticks (`createInvoice()` keeps its parentheses)."""
    span, name = reference.span, reference.symbol or ""
    if span.line != span.end_line or span.line >= len(lines) or not name:
        return None
    source = lines[span.line].rstrip("\r")[span.column:span.end_column]
    found = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", source)
    if found is None:
        return None
    return Span(span.line, span.column + found.start(), span.line, span.column + found.end())


def renamed_mention_edits(state: ModelState, symbol: str, replacement: str) -> list[TextEdit]:
    """Every mention of `symbol` that names a renamed export, in every document, changed to `replacement`."""
    edits = []
    for path in state.dependents_of(("sym", symbol)):
        resolution = state.documents.get(path)
        if resolution is None:
            continue
        lines = lines_of(state, path) or []
        for reference in resolution.references:
            if reference.status == ReferenceStatus.RENAMED and reference.symbol == symbol:
                span = _name_span(lines, reference)
                if span is not None:
                    edits.append(TextEdit(path, span, replacement))
    return edits


def _renamed_fixes(state: ModelState, path: str, lines: list[str], index: int, reference: Reference,
                   first: bool) -> list[Action]:
    replacement, symbol = reference.candidates[0], reference.symbol or ""
    span = _name_span(lines, reference)
    if span is None:
        return []
    actions = [Action(f"Update mention to `{replacement}`", QUICKFIX, _edit(path, span, replacement), fixes=index,
                      preferred=first)]
    everywhere = renamed_mention_edits(state, symbol, replacement)
    if len(everywhere) > 1:
        documents = len({e.path for e in everywhere})
        actions.append(Action(
            f"Update every mention of `{symbol}` to `{replacement}` ({len(everywhere)} in {documents} "
            f"document{'s' if documents != 1 else ''})", QUICKFIX, WorkspaceEdit(tuple(everywhere)), fixes=index))
    return actions


# ------------------------------------------------------------------------------------------------ code lens


def code_lenses(state: ModelState, path: str) -> list[Lens]:
    """"documented in N docs" (or "not documented") on each declared export of a module."""
    facts = state.universe.modules.get(path)
    if facts is None:
        return []
    module_id = f"{MODULE}:{path}"
    # one pass over what documents say about the module: the module itself, and each export by name
    module_docs: set[str] = set()
    by_symbol: dict[str, set[str]] = {}
    for document, kind, symbol in documented_by_of(state).get(module_id, ()):
        if kind == "mentions-symbol" and symbol is not None:
            by_symbol.setdefault(symbol, set()).add(document)
        elif kind in ("covers", "mentions", "links-to"):
            module_docs.add(document)
    lenses = []
    for export in facts.exports:
        if not export.declared or export.name == "default":
            continue
        count = len(module_docs | by_symbol.get(export.name, set()))
        title = f"documented in {count} doc{'s' if count != 1 else ''}" if count else "not documented"
        lenses.append(Lens(Span(export.line, export.column, export.line, export.end_column), title,
                           "docbridge.documents", (path, export.name)))
    return lenses


__all__ = ["Diagnostic", "code_actions", "code_lenses", "kind_allowed", "renamed_mention_edits"]
