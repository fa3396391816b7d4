"""Incremental edits (lsp/textsync.py) give pygls's result wherever pygls follows the protocol (lines ended by
`\\n`, positions inside their line), in time that does not grow with the number of lines. Other separators and
positions past a line's end: tests/test_line_separators.py."""

from __future__ import annotations

import random
import time

import pytest
from docbridge.lsp import textsync
from lsprotocol import types as T
from pygls.workspace.position_codec import PositionCodec
from pygls.workspace.text_document import TextDocument

ALPHABET = ["a", "b", " ", "\n", "\n", "é", "😋", "`", "#", "中"]


def _document(text: str, encoding: T.PositionEncodingKind) -> TextDocument:
    return TextDocument("file:///x.md", text, sync_kind=T.TextDocumentSyncKind.Incremental,
                        position_codec=PositionCodec(encoding))


def _units(text: str, encoding: T.PositionEncodingKind) -> int:
    if encoding == T.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == T.PositionEncodingKind.Utf16:
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def _change(rng: random.Random, text: str, encoding: T.PositionEncodingKind) -> T.TextDocumentContentChangePartial:
    lines = text.split("\n")

    def position() -> T.Position:
        line = rng.randrange(0, len(lines))
        characters = [0]
        for char in lines[line]:  # a boundary between characters, in the encoding's units
            characters.append(characters[-1] + _units(char, encoding))
        return T.Position(line=line, character=rng.choice(characters))
    start, end = sorted((position(), position()), key=lambda p: (p.line, p.character))
    new = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 6)))
    return T.TextDocumentContentChangePartial(range=T.Range(start=start, end=end), text=new)


@pytest.mark.parametrize("encoding", [T.PositionEncodingKind.Utf16, T.PositionEncodingKind.Utf8,
                                      T.PositionEncodingKind.Utf32])
def test_an_edit_gives_what_pygls_gives_where_pygls_follows_the_protocol(encoding: T.PositionEncodingKind) -> None:
    rng = random.Random(5)
    for _ in range(300):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 120)))
        ours, expected = _document(text, encoding), _document(text, encoding)
        for _ in range(4):
            change = _change(rng, ours.source, encoding)
            textsync.apply_change(ours, change)
            textsync._original(expected, change)
            assert ours.source == expected.source, (text, change)


def test_an_edit_of_a_50_mb_buffer_costs_milliseconds() -> None:
    textsync.install()
    document = _document("Line with `src/x.ts` and [y](z.md).\n" * 1_400_000, T.PositionEncodingKind.Utf16)
    started = time.perf_counter()
    for number in range(10):
        document.apply_change(T.TextDocumentContentChangePartial(range=T.Range(
            start=T.Position(line=1_000_000, character=number), end=T.Position(line=1_000_000, character=number)),
            text="x"))
    per_edit = (time.perf_counter() - started) / 10
    assert document.lines[1_000_000].startswith("xxxxxxxxxxLine with")
    assert per_edit < 0.4  # pygls alone: about 0.6 s per edit, on the event loop (generous for a shared machine)
