"""Engine values to protocol values and back: repository paths to URIs, code-point columns to the client's
position encoding (UTF-16 unless it offered UTF-8), and the IDE layer's results to their LSP types.

A column converts with the text of its line: the open editor buffer's when the file is open, else the text
the model state has for it (docbridge.engine.state.text). ASCII lines need no conversion and no text.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from docbridge.engine.base.model import Span
from docbridge.engine.ide import types as ide
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.text import line_of as state_line_of
from docbridge.engine.state.text import split_lines
from docbridge.lsp.folders import Folder
from docbridge.lsp.positions import UTF16, from_client, path_to_uri, to_client
from lsprotocol import types as T

COMPLETION_KINDS = {"document": T.CompletionItemKind.File, "module": T.CompletionItemKind.Module,
                    "file": T.CompletionItemKind.File, "directory": T.CompletionItemKind.Folder,
                    "heading": T.CompletionItemKind.Reference, "symbol": T.CompletionItemKind.Function}


# paths whose URIs are remembered, the most recent: a scan's diagnostics convert each file's path twice, close
# together; remembering every file's (100,000 before) was about 7 MB of a 100,000-file tree's server
URI_MEMO = 8192


class Converter:
    def __init__(self) -> None:
        self.encoding: Any = UTF16
        self.buffers: Any = None  # pygls's text documents (set once the server starts)
        self._uris: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._split: dict[str, tuple[str, list[str]]] = {}

    # ---- paths

    def uri(self, folder: Folder, path: str) -> str:
        if not path:
            return folder.uri
        key = (folder.uri, path)
        found = self._uris.get(key)
        if found is None:  # quoting is slow and diagnostics convert thousands of paths after a scan
            found = self._uris[key] = path_to_uri(folder.root / path)
            if len(self._uris) > URI_MEMO:
                self._uris.popitem(last=False)
        return found

    # ---- text

    def buffer_text(self, uri: str) -> str | None:
        if self.buffers is None:
            return None
        document = self.buffers.text_documents.get(uri)
        return document.source if document is not None else None

    def buffer_lines(self, uri: str) -> list[str] | None:
        """The lines of an open buffer (split once per version), or None when it is not open."""
        text = self.buffer_text(uri)
        if text is None:
            return None
        cached = self._split.get(uri)
        if cached is not None and cached[0] is text:
            return cached[1]
        lines = split_lines(text)
        self._split[uri] = (text, lines)
        return lines

    def forget(self, uri: str) -> None:
        self._split.pop(uri, None)

    def line(self, folder: Folder | None, path: str | None, line: int, uri: str | None = None,
             state: ModelState | None = None) -> str | None:
        if uri is None and folder is not None and path is not None:
            uri = self.uri(folder, path)
        lines = self.buffer_lines(uri) if uri is not None else None
        if lines is not None:
            return lines[line].rstrip("\r") if 0 <= line < len(lines) else None
        state = state if state is not None else (folder.state if folder is not None else None)
        if state is not None and path is not None:
            return state_line_of(state, path, line)
        return None

    def known_ascii(self, folder: Folder | None, path: str | None, uri: str | None = None,
                    state: ModelState | None = None) -> bool:
        """Whether `path`'s columns need no conversion: it is not open in the editor, and the text its facts came
        from is ASCII (then its lines need not be read: diagnostics after a scan cover thousands of files)."""
        state = state if state is not None else (folder.state if folder is not None else None)
        if state is None or path is None or state.universe.partial:
            # a provisional universe (during the first scan) reads a document when asked for it, and holds no
            # module facts: its files are read as they are
            return False
        universe = state.universe
        facts = universe.documents.get(path) or universe.modules.get(path)
        if facts is None or not facts.ascii:
            return False
        if uri is None and folder is not None:
            uri = self.uri(folder, path)
        return uri is None or self.buffers is None or uri not in self.buffers.text_documents

    # ---- positions

    def position(self, folder: Folder | None, path: str | None, line: int, column: int, uri: str | None = None,
                 text: str | None = None, state: ModelState | None = None) -> T.Position:
        if column <= 0:  # column 0 is 0 in every encoding: no need to read the line
            return T.Position(line=max(0, line), character=0)
        if text is None:
            text = self.line(folder, path, line, uri, state)
        return T.Position(line=max(0, line), character=max(0, to_client(text, column, self.encoding)))

    def range(self, folder: Folder | None, path: str | None, span: Span, uri: str | None = None,
              state: ModelState | None = None) -> T.Range:
        if self.known_ascii(folder, path, uri, state):
            return T.Range(start=T.Position(line=max(0, span.line), character=max(0, span.column)),
                           end=T.Position(line=max(0, span.end_line), character=max(0, span.end_column)))
        # most ranges sit on one line: read it once for both ends
        shared = self.line(folder, path, span.line, uri, state) if span.line == span.end_line and \
            span.end_column > 0 else None
        return T.Range(start=self.position(folder, path, span.line, span.column, uri, shared, state),
                       end=self.position(folder, path, span.end_line, span.end_column, uri, shared, state))

    def range_json(self, folder: Folder | None, path: str | None, span: Span, state: ModelState | None = None
                   ) -> dict[str, dict[str, int]]:
        """`range` as the JSON it is sent as (diagnostics are published by the thousand: no attrs objects)."""
        if self.known_ascii(folder, path, None, state):
            return {"start": {"line": max(0, span.line), "character": max(0, span.column)},
                    "end": {"line": max(0, span.end_line), "character": max(0, span.end_column)}}
        shared = self.line(folder, path, span.line, None, state) if span.line == span.end_line and \
            span.end_column > 0 else None
        return {"start": self._position_json(folder, path, span.line, span.column, shared, state),
                "end": self._position_json(folder, path, span.end_line, span.end_column, shared, state)}

    def _position_json(self, folder: Folder | None, path: str | None, line: int, column: int, text: str | None,
                       state: ModelState | None) -> dict[str, int]:
        if column <= 0:
            return {"line": max(0, line), "character": 0}
        if text is None:
            text = self.line(folder, path, line, None, state)
        return {"line": max(0, line), "character": max(0, to_client(text, column, self.encoding))}

    def from_client(self, uri: str, position: T.Position, state: ModelState | None = None,
                    path: str | None = None) -> tuple[int, int]:
        lines = self.buffer_lines(uri)
        line = position.line
        if lines is not None:
            text = lines[line].rstrip("\r") if 0 <= line < len(lines) else None
        elif state is not None and path is not None:
            text = state_line_of(state, path, line)
        else:
            text = None
        return line, from_client(text, position.character, self.encoding)

    # ---- IDE values

    def location(self, folder: Folder, location: ide.Location, state: ModelState | None = None) -> T.Location:
        return T.Location(uri=self.uri(folder, location.path),
                          range=self.range(folder, location.path, location.span, state=state))

    def text_edit(self, folder: Folder, edit: ide.TextEdit, state: ModelState | None = None) -> T.TextEdit:
        return T.TextEdit(range=self.range(folder, edit.path, edit.span, state=state), new_text=edit.new_text)

    def workspace_edit(self, folder: Folder, edit: ide.WorkspaceEdit, state: ModelState | None = None,
                       with_moves: bool = False) -> T.WorkspaceEdit:
        """Text edits by document; with `with_moves`, the moves too, as rename operations after the edits
        (the edits address the files where they are before the move)."""
        by_path = edit.by_path()
        if not with_moves or not edit.moves:
            return T.WorkspaceEdit(changes={self.uri(folder, path): [self.text_edit(folder, e, state) for e in edits]
                                            for path, edits in by_path.items()})
        changes: list[Any] = [T.TextDocumentEdit(
            text_document=T.OptionalVersionedTextDocumentIdentifier(uri=self.uri(folder, path), version=None),
            edits=[self.text_edit(folder, e, state) for e in edits]) for path, edits in by_path.items()]
        for move in edit.moves:
            changes.append(T.RenameFile(old_uri=self.uri(folder, move.old), new_uri=self.uri(folder, move.new)))
        return T.WorkspaceEdit(document_changes=changes)


__all__ = ["COMPLETION_KINDS", "Converter"]
