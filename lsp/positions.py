"""URIs, paths and columns at the protocol boundary.

The engine counts columns in Unicode code points; the client counts in UTF-16 code units (the default) or
UTF-8 bytes (when it offers them). Conversion needs the text of the line, so it happens here, once, for
every position that crosses the boundary.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse

from lsprotocol import types as T

UTF8, UTF16, UTF32 = T.PositionEncodingKind.Utf8, T.PositionEncodingKind.Utf16, T.PositionEncodingKind.Utf32


def uri_to_path(uri: str) -> Path | None:
    """The file a `file:` URI names, or None (another scheme; a NUL character, `%00`, which no file name holds)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if "\x00" in path:
        return None
    if os.name == "nt" and path.startswith("/") and len(path) > 2 and path[2] == ":":
        path = path[1:]
    return Path(path)


def path_to_uri(path: Path) -> str:
    return "file://" + quote(str(path.resolve() if not path.is_absolute() else path).replace(os.sep, "/"))


def _units(text: str, encoding: Any) -> int:
    if encoding == UTF8:
        return len(text.encode("utf-8"))
    if encoding == UTF32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def to_client(line_text: str | None, column: int, encoding: Any) -> int:
    """Code point column -> client units (ASCII lines and UTF-32 need no work)."""
    if line_text is None or encoding == UTF32 or line_text.isascii():
        return column
    return _units(line_text[:column], encoding)


def from_client(line_text: str | None, units: int, encoding: Any) -> int:
    """Client units -> code point column (clamped to the line)."""
    if line_text is None or encoding == UTF32 or line_text.isascii():
        return max(0, min(units, len(line_text) if line_text is not None else units))
    count = 0
    for index, char in enumerate(line_text):
        if count >= units:
            return index
        count += _units(char, encoding)
    return len(line_text)
