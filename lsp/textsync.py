"""Incremental edits of very large buffers in time proportional to the edit, not to every line.

pygls applies an incremental change by splitting the whole document into lines and writing every one of
them again: about 0.6 s per keystroke in a 50 MB buffer, on the event loop, so nothing else is answered
meanwhile. A buffer over `SPLICE_CHARS` is spliced instead: the offsets of the edit's start and end come
from a C-level scan for their lines, and the text is cut and joined once. Positions convert from the
client's units exactly as pygls converts them (its position codec, on the edit's line only); a buffer with
line separators other than `\\n` (which pygls's line splitting also honours) keeps pygls's way.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types as T
from pygls.workspace.text_document import TextDocument

SPLICE_CHARS = 1024 * 1024
_OTHER_SEPARATORS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_original = TextDocument._apply_incremental_change


def _line_start(source: str, line: int) -> int | None:
    """The offset where `line` starts, None when the source has fewer lines."""
    if line <= 0:
        return 0
    found = re.compile(r"(?:[^\n]*\n){" + str(line) + "}").match(source)  # one C-level scan up to that line
    return found.end() if found is not None else None


def _offset(document: TextDocument, source: str, position: T.Position) -> int:
    start = _line_start(source, position.line)
    if start is None:  # past the last line: pygls puts it at the end of the document
        return len(source)
    end = source.find("\n", start)
    line = source[start:end + 1 if end >= 0 else len(source)]
    converted = document.position_codec.position_from_client_units(
        [line], T.Position(line=0, character=position.character))
    return start + converted.character


def splice(document: TextDocument, change: T.TextDocumentContentChangePartial) -> bool:
    """Apply `change` to a large `document` by cutting and joining its text; False when pygls must."""
    source = document._source
    if len(source) <= SPLICE_CHARS or _OTHER_SEPARATORS.search(change.text):
        return False
    checked = getattr(document, "_docbridge_plain", None) is source  # searched once per text pygls set
    if not checked and _OTHER_SEPARATORS.search(source):
        return False
    start = _offset(document, source, change.range.start)
    end = _offset(document, source, change.range.end)  # before start only past a line end, as pygls has it
    document._source = "".join((source[:start], change.text, source[end:]))
    document._docbridge_plain = document._source  # an edit without other separators keeps the text free of them
    return True


def _apply_incremental_change(self: TextDocument, change: Any) -> None:
    if not splice(self, change):
        _original(self, change)


def install() -> None:
    """Route pygls's incremental changes through `splice` (idempotent)."""
    TextDocument._apply_incremental_change = _apply_incremental_change  # type: ignore[method-assign]


__all__ = ["SPLICE_CHARS", "install", "splice"]
