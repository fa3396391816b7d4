"""Code actions (quick fixes from the findings' candidates, re-sealing a generated region, showing the
handoff) and code lenses on exported declarations."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from lsprotocol import types as T

from engine.model import MODULE
from lsp.app import DocBridgeServer, safely, server
from lsp.navigation import context, reference_at, resolution_of
from lsp.positions import relative_link

_HASH = re.compile(r"hash=([A-Za-z0-9]+)")


def _replace(uri: str, range_: T.Range, text: str) -> T.WorkspaceEdit:
    return T.WorkspaceEdit(changes={uri: [T.TextEdit(range=range_, new_text=text)]})


@server.feature(T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(
    code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.Source], resolve_provider=False))
@safely(list)
def code_actions(ls: DocBridgeServer, params: T.CodeActionParams) -> list[T.CodeAction]:
    uri = params.text_document.uri
    ctx = context(ls, uri, params.range.start)
    if ctx.workspace is None or ctx.relative is None or ctx.folder is None:
        return []
    actions: list[T.CodeAction] = []
    lines = ls.state.buffer_lines(uri) or []
    resolution = resolution_of(ctx)
    for diagnostic in params.context.diagnostics:
        if diagnostic.source != "docbridge" or not isinstance(diagnostic.data, dict):
            continue
        code = diagnostic.data.get("code")
        start_line, start_col = ls.state.from_client(uri, diagnostic.range.start)
        reference = reference_at(resolution, start_line, start_col) if resolution is not None else None
        if code == "LINK_BROKEN" and reference is not None:
            actions += _fix_link(ls, ctx, uri, lines, reference, diagnostic)
        elif code == "LINK_ANCHOR_MISSING" and reference is not None:
            actions += _fix_anchor(ls, ctx, uri, lines, reference, diagnostic)
        elif code == "MENTION_UNRESOLVED" and reference is not None:
            for candidate in diagnostic.data.get("candidates", [])[:3]:
                span = reference.span
                range_ = ls.state.range_to_client(ctx.folder, ctx.relative, span.line, span.column + 1,
                                                  span.end_line, span.end_column - 1, uri)
                actions.append(T.CodeAction(title=f"Change to `{candidate}`", kind=T.CodeActionKind.QuickFix,
                                            diagnostics=[diagnostic], is_preferred=len(actions) == 0,
                                            edit=_replace(uri, range_, candidate)))
        elif code == "GENERATED_REGION_EDITED":
            line = diagnostic.data.get("start_line")
            computed = diagnostic.data.get("computed_hash")
            if isinstance(line, int) and 0 <= line < len(lines) and computed:
                match = _HASH.search(lines[line])
                if match is not None:
                    range_ = ls.state.range_to_client(ctx.folder, ctx.relative, line, match.start(1), line,
                                                      match.end(1), uri)
                    actions.append(T.CodeAction(
                        title="Re-seal the generated region (keep the hand edit)", kind=T.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic], edit=_replace(uri, range_, computed)))
    ref = _unit_of(ctx.workspace, ctx.relative)
    if ref is not None:
        actions.append(T.CodeAction(title=f"Show handoff for {ref}", kind=T.CodeActionKind.Source,
                                    command=T.Command(title="Show handoff", command="docbridge.handoff",
                                                      arguments=[ref, {"show": True}])))
    return actions


def _unit_of(workspace: Any, relative: str) -> str | None:
    """The area (else package, else document) that a file belongs to, as a handoff reference."""
    layout = workspace.universe.layout
    area = layout.area_of(relative)
    if area is not None:
        return area.path
    if relative in workspace.universe.documents:
        return relative
    package = layout.package_of(relative)
    return package.id if package is not None else None


def _target_range(ls: DocBridgeServer, ctx: Any, uri: str, lines: list[str], reference: Any) -> tuple[
        T.Range, str] | None:
    """The range of a link's target (inside the parentheses) and the target text."""
    span = reference.span
    if span.line != span.end_line or span.line >= len(lines):
        return None
    source = lines[span.line][span.column:span.end_column]
    if not source.endswith(")") or "](" not in source:
        return None
    start = span.column + source.rindex("](") + 2
    end = span.end_column - 1
    target = lines[span.line][start:end]
    return ls.state.range_to_client(ctx.folder, ctx.relative, span.line, start, span.line, end, uri), target


def _fix_link(ls: DocBridgeServer, ctx: Any, uri: str, lines: list[str], reference: Any,
              diagnostic: T.Diagnostic) -> list[T.CodeAction]:
    found = _target_range(ls, ctx, uri, lines, reference)
    if found is None:
        return []
    range_, target = found
    anchor = target.split("#", 1)[1] if "#" in target else None
    doc_dir = posixpath.dirname(ctx.relative)
    actions = []
    for candidate in diagnostic.data.get("candidates", [])[:3]:
        new = relative_link(doc_dir, candidate) + (f"#{anchor}" if anchor else "")
        actions.append(T.CodeAction(title=f"Link to {candidate}", kind=T.CodeActionKind.QuickFix,
                                    diagnostics=[diagnostic], is_preferred=not actions,
                                    edit=_replace(uri, range_, new)))
    return actions


def _fix_anchor(ls: DocBridgeServer, ctx: Any, uri: str, lines: list[str], reference: Any,
                diagnostic: T.Diagnostic) -> list[T.CodeAction]:
    found = _target_range(ls, ctx, uri, lines, reference)
    if found is None:
        return []
    range_, target = found
    path = target.split("#", 1)[0]
    actions = []
    for slug in diagnostic.data.get("candidates", [])[:3]:
        actions.append(T.CodeAction(title=f"Link to #{slug}", kind=T.CodeActionKind.QuickFix,
                                    diagnostics=[diagnostic], is_preferred=not actions,
                                    edit=_replace(uri, range_, f"{path}#{slug}")))
    return actions


# ------------------------------------------------------------------------------------------------ code lens


@server.feature(T.TEXT_DOCUMENT_CODE_LENS, T.CodeLensOptions(resolve_provider=False))
@safely(list)
def code_lens(ls: DocBridgeServer, params: T.CodeLensParams) -> list[T.CodeLens]:
    if not ls.state.settings.code_lens:
        return []
    ctx = context(ls, params.text_document.uri)
    if ctx.workspace is None or ctx.relative is None or ctx.relative not in ctx.workspace.universe.modules:
        return []
    facts = ctx.workspace.universe.modules[ctx.relative]
    module_id = f"{MODULE}:{ctx.relative}"
    # one pass over what documents say about the module: the module itself, and each export by name
    module_docs: set[str] = set()
    by_symbol: dict[str, set[str]] = {}
    for path, kind, symbol in ctx.workspace.documented_by().get(module_id, ()):
        if kind == "mentions-symbol":
            by_symbol.setdefault(symbol, set()).add(path)
        elif kind in ("covers", "mentions", "links-to"):
            module_docs.add(path)
    lenses = []
    for export in facts.exports:
        if not export.declared or export.name == "default":
            continue
        count = len(module_docs | by_symbol.get(export.name, set()))
        title = f"documented in {count} doc{'s' if count != 1 else ''}" if count else "not documented"
        lenses.append(T.CodeLens(
            range=ls.state.range_to_client(ctx.folder, ctx.relative, export.line, export.column, export.line,
                                           export.end_column, params.text_document.uri),
            command=T.Command(title=title, command="docbridge.documents",
                              arguments=[ctx.relative, export.name])))
    return lenses
