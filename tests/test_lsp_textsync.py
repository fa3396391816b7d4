"""Incremental edits of very large buffers are spliced (lsp/textsync.py) with exactly pygls's result, in time
that does not grow with the number of lines."""

from __future__ import annotations

import random
import time

import pytest
from lsprotocol import types as T
from pygls.workspace.position_codec import PositionCodec
from pygls.workspace.text_document import TextDocument

from lsp import textsync

ALPHABET = ["a", "b", " ", "\n", "\n", "é", "😋", "`", "#", "中"]


def _document(text: str, encoding: T.PositionEncodingKind) -> TextDocument:
    return TextDocument("file:///x.md", text, sync_kind=T.TextDocumentSyncKind.Incremental,
                        position_codec=PositionCodec(encoding))


def _change(rng: random.Random, lines: int) -> T.TextDocumentContentChangePartial:
    def position() -> T.Position:
        return T.Position(line=rng.randrange(0, lines + 2), character=rng.randrange(0, 30))
    start, end = sorted((position(), position()), key=lambda p: (p.line, p.character))
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 6)))
    return T.TextDocumentContentChangePartial(range=T.Range(start=start, end=end), text=text)


@pytest.mark.parametrize("encoding", [T.PositionEncodingKind.Utf16, T.PositionEncodingKind.Utf8,
                                      T.PositionEncodingKind.Utf32])
def test_a_splice_gives_what_pygls_gives(monkeypatch: pytest.MonkeyPatch, encoding: T.PositionEncodingKind) -> None:
    monkeypatch.setattr(textsync, "SPLICE_CHARS", 0)
    rng = random.Random(5)
    for _ in range(300):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 120)))
        spliced, expected = _document(text, encoding), _document(text, encoding)
        for _ in range(4):
            change = _change(rng, text.count("\n"))
            same = T.TextDocumentContentChangePartial(range=T.Range(
                start=T.Position(line=change.range.start.line, character=change.range.start.character),
                end=T.Position(line=change.range.end.line, character=change.range.end.character)), text=change.text)
            if textsync.splice(spliced, change):
                textsync._original(expected, same)
                assert spliced.source == expected.source, (text, change)


def test_other_line_separators_keep_pygls_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textsync, "SPLICE_CHARS", 0)
    change = T.TextDocumentContentChangePartial(range=T.Range(start=T.Position(line=1, character=0),
                                                              end=T.Position(line=1, character=0)), text="x")
    assert not textsync.splice(_document("a\r\nb\r\n", T.PositionEncodingKind.Utf16), change)
    assert not textsync.splice(_document("a\u2028b\n", T.PositionEncodingKind.Utf16), change)
    assert not textsync.splice(_document("a\nb\n", T.PositionEncodingKind.Utf16),
                               T.TextDocumentContentChangePartial(range=change.range, text="\r\n"))


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
