"""Definition, hover, references, document links and document symbols: protocol in, engine IDE answers out.

Every handler asks the server for the request's target (the model after the edits sent before it). While a
folder's first scan runs, an open Markdown buffer is answered from its provisional state when that finds
something; when it does not (a symbol only the full scan knows), the request waits for the full model.
"""

from __future__ import annotations

from typing import Any

from docbridge.engine.base.config import LimitsConfig
from docbridge.engine.ide import hover as ide_hover
from docbridge.engine.ide import navigation as ide
from docbridge.engine.ide.symbols import document_symbols, outline
from docbridge.engine.state.text import lines_of
from docbridge.lsp.positions import uri_to_path
from docbridge.lsp.protocol import LATER
from docbridge.lsp.server import DocBridgeServer, Target, safely
from lsprotocol import types as T

DEFAULT_LIMIT = LimitsConfig().max_file_bytes
PROVISIONAL_HOVERS = ("**document**", "**Broken link**", "**Missing anchor**")


def _position(ls: DocBridgeServer, target: Target, position: T.Position) -> tuple[int, int]:
    return ls.convert.from_client(target.uri, position, target.state, target.path)


def _definition(ls: DocBridgeServer, target: Target, params: T.DefinitionParams) -> T.Location | list[
        T.Location] | None:
    line, column = _position(ls, target, params.position)
    found = ide.definitions(target.state, target.path, line, column)
    if not found:
        return None
    if len(found) == 1:
        return ls.convert.location(target.folder, found[0], target.state)
    return [ls.convert.location(target.folder, location, target.state) for location in found]


def _hover(ls: DocBridgeServer, target: Target, params: T.HoverParams) -> T.Hover | None:
    line, column = _position(ls, target, params.position)
    found = ide_hover.hover(target.state, target.path, line, column)
    # provisional answers that are complete: a document's title and summary, a broken link
    if found is None or (target.provisional and not found.markdown.startswith(PROVISIONAL_HOVERS)):
        return None
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=found.markdown),
                   range=ls.convert.range(target.folder, target.path, found.span, target.uri, target.state))


def _references(ls: DocBridgeServer, target: Target, params: T.ReferenceParams) -> list[T.Location]:
    line, column = _position(ls, target, params.position)
    found = ide.references(target.state, target.path, line, column, params.context.include_declaration)
    return [ls.convert.location(target.folder, location, target.state) for location in found]


def _links(ls: DocBridgeServer, target: Target, params: T.DocumentLinkParams) -> list[T.DocumentLink]:
    out = []
    for link in ide.document_links(target.state, target.path):
        location = ls.convert.location(target.folder, link.target, target.state)
        uri = location.uri + (f"#L{location.range.start.line + 1}" if location.range.start.line else "")
        out.append(T.DocumentLink(range=ls.convert.range(target.folder, target.path, link.span, target.uri,
                                                         target.state), target=uri, tooltip=link.tooltip))
    return out


def fast(answer: Any, default: Any = None) -> Any:
    """The synchronous path of a request handler: answered at once from the settled full model (see
    `docbridge.lsp.protocol.DocBridgeProtocol._execute_handler`), else LATER (the handler itself waits)."""
    def run(ls: DocBridgeServer, params: Any) -> Any:
        target = ls.ready_target(params.text_document.uri)
        if target is None:
            return default() if callable(default) else default
        if target is LATER:
            return LATER
        return answer(ls, target, params)
    return safely(default)(run)


def register(server: DocBridgeServer) -> None:
    @server.feature(T.TEXT_DOCUMENT_DEFINITION)
    @safely()
    async def definition(ls: DocBridgeServer, params: T.DefinitionParams) -> T.Location | list[T.Location] | None:
        target = await ls.target(params.text_document.uri)
        for _ in range(2):  # the provisional state, then (when it found nothing) the full model
            if target is None:
                return None
            found = _definition(ls, target, params)
            if found is not None or not target.provisional:
                return found
            target = await ls.full(target)
        return None

    definition.fast = fast(_definition)  # type: ignore[attr-defined]  # the fast path the protocol looks for on handlers

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    @safely()
    async def hover(ls: DocBridgeServer, params: T.HoverParams) -> T.Hover | None:
        target = await ls.target(params.text_document.uri)
        for _ in range(2):  # the provisional state, then (when it found nothing) the full model
            if target is None:
                return None
            found = _hover(ls, target, params)
            if found is not None or not target.provisional:
                return found
            target = await ls.full(target)
        return None

    hover.fast = fast(_hover)  # type: ignore[attr-defined]  # the fast path the protocol looks for on handlers

    @server.feature(T.TEXT_DOCUMENT_REFERENCES)
    @safely(list)
    async def references(ls: DocBridgeServer, params: T.ReferenceParams) -> list[T.Location]:
        target = await ls.target(params.text_document.uri, provisional=False)
        if target is None:
            return []
        target = await ls.full(target)  # references come from every document: the full model
        return _references(ls, target, params) if target is not None else []

    references.fast = fast(_references, list)  # type: ignore[attr-defined]  # the fast path the protocol looks for on handlers

    @server.feature(T.TEXT_DOCUMENT_DOCUMENT_LINK)
    @safely(list)
    async def document_links(ls: DocBridgeServer, params: T.DocumentLinkParams) -> list[T.DocumentLink]:
        target = await ls.target(params.text_document.uri)
        return _links(ls, target, params) if target is not None else []

    document_links.fast = fast(_links, list)  # type: ignore[attr-defined]  # the fast path the protocol looks for on handlers

    @server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @safely(list)
    def symbols(ls: DocBridgeServer, params: T.DocumentSymbolParams) -> list[T.DocumentSymbol]:
        """The outline, from the model's facts of the buffer (or, outside every folder, the buffer itself)."""
        uri = params.text_document.uri
        folder, path = ls.folders.locate(uri)
        state = folder.state if folder is not None else None
        facts = state.universe.documents.get(path) if state is not None and path is not None else None
        if facts is None:
            text = ls.convert.buffer_text(uri)
            file = uri_to_path(uri)
            limit = state.config.limits.max_file_bytes if state is not None else DEFAULT_LIMIT
            if text is None or file is None or (state is not None and path is not None and path in state.skipped):
                return []  # not open, or over the size limit every other analysis follows
            return [_symbol(ls, uri, s) for s in outline(file.name, text, limit)]
        lines = ls.convert.buffer_lines(uri) or (lines_of(state, path) if state is not None and path else None)
        return [_symbol(ls, uri, s) for s in document_symbols(facts, lines or [""])]


def _symbol(ls: DocBridgeServer, uri: str, symbol: object) -> T.DocumentSymbol:
    from docbridge.engine.ide.types import Symbol
    assert isinstance(symbol, Symbol)
    return T.DocumentSymbol(name=symbol.name, kind=T.SymbolKind.String, detail=symbol.detail,
                            range=ls.convert.range(None, None, symbol.span, uri),
                            selection_range=ls.convert.range(None, None, symbol.selection, uri),
                            children=[_symbol(ls, uri, child) for child in symbol.children])


__all__ = ["register"]
