"""Positions in a text as the language server protocol counts them: 0-based lines, ended only by `\\n`, `\\r\\n`
or `\\r` (not by U+2028, a form feed or the other characters `str.splitlines` ends a line at), and columns in
characters, which equal UTF-16 units on the fixtures' lines (no astral characters).

    position(text, needle)           (line, character) of a needle's first occurrence (or its n-th, or on a line)
    find(path, needle)               the same in a file's text, as the tests read a fixture
    one_based(position)              (line, column) as an editor or `docbridge check`'s text output counts them
    lsp_position / lsp_range         the same as the protocol's JSON: {"line", "character"}, {"start", "end"}
    offset(text, line, character)    the inverse: where a position is in the text (past a line's end: its end)
    apply_edit(text, start, end, new)  what a client does with a text edit (apply_range: given a protocol range)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

Position = tuple[int, int]
LINE_END = re.compile(r"\r\n|\r|\n")


def lines(text: str) -> list[str]:
    """The lines of `text` as the client has them (without their line ends)."""
    return LINE_END.split(text)


def position(text: str, needle: str, occurrence: int = 1, *, line: int | None = None) -> Position:
    """0-based (line, character) where the `occurrence`-th `needle` starts (counted through the whole text,
    left to right; overlapping occurrences count); with `line`, the first one on that 0-based line."""
    seen = 0
    for number, content in enumerate(lines(text)):
        if line is not None and number != line:
            continue
        column = content.find(needle)
        while column >= 0:
            seen += 1
            if seen == occurrence or line is not None:
                return number, column
            column = content.find(needle, column + 1)
    where = f" on line {line}" if line is not None else f" {occurrence} times" if occurrence > 1 else ""
    raise AssertionError(f"{needle!r} not found{where}")


def find(path: Path, needle: str, occurrence: int = 1, *, line: int | None = None) -> Position:
    """`position` in the text of the file `path`."""
    try:
        return position(path.read_text(encoding="utf-8"), needle, occurrence, line=line)
    except AssertionError as missing:
        raise AssertionError(f"{missing} in {path}") from None


def one_based(at: Position) -> Position:
    """A 0-based position as an editor shows it: line and column counted from 1."""
    return at[0] + 1, at[1] + 1


def lsp_position(text: str, needle: str, occurrence: int = 1, *, shift: int = 0) -> dict[str, int]:
    """The protocol's position of a needle, `shift` characters into it (a request made inside a link...)."""
    line, character = position(text, needle, occurrence)
    return {"line": line, "character": character + shift}


def lsp_range(text: str, needle: str, occurrence: int = 1) -> dict[str, dict[str, int]]:
    """The protocol's range of a needle that does not span lines."""
    assert not LINE_END.search(needle), f"{needle!r} spans lines"
    start = lsp_position(text, needle, occurrence)
    return {"start": start, "end": {"line": start["line"], "character": start["character"] + len(needle)}}


def offset(text: str, line: int, character: int) -> int:
    """Where the position (`line`, `character`) is in `text`: a line past the last is the text's end, a
    character past its line's end is that end (as the protocol says a client must read them)."""
    starts = [0] + [m.end() for m in LINE_END.finditer(text)]
    if line >= len(starts):
        return len(text)
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    body = LINE_END.sub("", text[starts[line]:end])
    return starts[line] + min(character, len(body))


def apply_edit(text: str, start: Position, end: Position, new_text: str) -> str:
    """`text` with the range from `start` to `end` (0-based positions) replaced by `new_text`."""
    return text[:offset(text, *start)] + new_text + text[offset(text, *end):]


def apply_range(text: str, edit_range: Any, new_text: str) -> str:
    """`apply_edit` for a protocol range (an lsprotocol `Range`: `.start` and `.end` with `.line`, `.character`)."""
    start, end = edit_range.start, edit_range.end
    return apply_edit(text, (start.line, start.character), (end.line, end.character), new_text)


__all__ = ["LINE_END", "Position", "apply_edit", "apply_range", "find", "lines", "lsp_position", "lsp_range", "offset",
           "one_based", "position"]
