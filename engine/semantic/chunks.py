"""Passages for the semantic index: pure functions of a file's text.

A document is split at its headings, then into runs of paragraphs (blank-line separated blocks, a fenced code
block kept whole) of at most `max_chars` characters; a block longer than that is cut at line ends, and a line
longer than that at the limit. A module contributes its documentation: each doc comment (`/** … */`, or a run
of `//` lines) with the declaration it precedes, and its exported declarations that have none, grouped.

Every chunk knows its path, its entity, the heading trail it sits under (documents) or the declaration it
documents (modules), and its 1-based inclusive line range. `chunk_id` is `"{path}#{n}"`, n counting from 0 in
the file's order, so ids are stable while the file's text is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from docbridge.engine.base.hashing import sha256_bytes

CHUNKER_VERSION = 1  # bump when chunks or what is embedded of them change: every file is cut again
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_EXPORT = re.compile(r"^\s*export\s+(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
                     r"(function\*?|class|const|let|var|interface|type|enum|namespace)\b")
_DECLARATION = re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
                          r"(?:function\*?|class|const|let|var|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)"
                          r"|^\s*(?:public\s+|private\s+|protected\s+|static\s+|readonly\s+|async\s+)*"
                          r"(?!(?:if|for|while|switch|return|catch|await|throw|yield|typeof|new|else|do|try)\b)"
                          r"([A-Za-z_$][\w$]*)\s*[(<:=]")


@dataclass(frozen=True, slots=True)
class Chunk:
    chunk_id: str
    path: str
    entity: str
    heading: str  # the heading trail ("Guide > Caching"), or the declaration a doc comment documents
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str

    def embedding_text(self, title: str) -> str:
        """What is embedded: where the passage sits (title, heading), then the passage."""
        context = " > ".join(part for part in (title, self.heading) if part)
        return f"{context}\n{self.text}" if context else self.text

    def key(self, model_id: str, title: str) -> str:
        """The vector cache key: the model and exactly the text it embeds."""
        return sha256_bytes(f"{model_id}\0{self.embedding_text(title)}".encode())

    def to_json(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, "path": self.path, "entity": self.entity, "heading": self.heading,
                "start_line": self.start_line, "end_line": self.end_line, "text": self.text}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Chunk:
        return cls(str(data["chunk_id"]), str(data["path"]), str(data["entity"]), str(data["heading"]),
                   int(data["start_line"]), int(data["end_line"]), str(data["text"]))


def chunk_markdown(path: str, entity: str, text: str, max_chars: int = 800) -> list[Chunk]:
    lines = text.splitlines()
    start = _frontmatter_end(lines)
    trail: list[tuple[int, str]] = []  # (level, title) of the headings above
    sections: list[tuple[str, list[tuple[int, int]]]] = []  # heading trail, blocks as (first, last) 0-based
    blocks: list[tuple[int, int]] = []
    heading = ""
    block_start: int | None = None
    fence: str | None = None
    index = start

    def close_block(end: int) -> None:
        nonlocal block_start
        if block_start is not None:
            blocks.append((block_start, end))
            block_start = None

    while index < len(lines):
        line = lines[index]
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
                close_block(index)
            index += 1
            continue
        opened = _FENCE.match(line)
        if opened:
            close_block(index - 1)
            block_start, fence = index, opened.group(1)
            index += 1
            continue
        found = _HEADING.match(line)
        if found:
            close_block(index - 1)
            sections.append((heading, blocks))
            level, title = len(found.group(1)), found.group(2).strip()
            trail = [(lv, t) for lv, t in trail if lv < level] + [(level, title)]
            heading = " > ".join(t for _, t in trail)
            blocks = [(index, index)]  # the heading line leads its section's first passage
            index += 1
            continue
        if not line.strip():
            close_block(index - 1)
        elif block_start is None:
            block_start = index
        index += 1
    close_block(len(lines) - 1)
    sections.append((heading, blocks))
    spans = [(trail_text, first, last) for trail_text, section in sections
             for first, last in _pack(lines, section, max_chars)]
    return _number(path, entity, lines, spans, max_chars)


def chunk_module(path: str, entity: str, text: str, max_chars: int = 800) -> list[Chunk]:
    """A module's doc comments with the declarations they document, then its undocumented exports."""
    lines = text.splitlines()
    spans: list[tuple[str, int, int]] = []
    documented: set[int] = set()
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        first = index
        if stripped.startswith("/*"):
            while index < len(lines) and "*/" not in lines[index]:
                index += 1
            last = min(index, len(lines) - 1)
        elif stripped.startswith("//"):
            while index + 1 < len(lines) and lines[index + 1].strip().startswith("//"):
                index += 1
            last = index
        else:
            index += 1
            continue
        body = _comment_text(lines[first:last + 1])
        following = _next_code_line(lines, last + 1)
        name = ""
        if following is not None:
            declared = _DECLARATION.match(lines[following])
            if declared and (following - last) <= 2:
                name = declared.group(1) or declared.group(2) or ""
                documented.add(following)
                last = following
        if len(body) >= 12 and not body.lower().startswith(("eslint", "prettier", "@ts-", "istanbul", "#region",
                                                          "#endregion", "biome-ignore", "oxlint")):
            spans.append((name, first, last))
        index = last + 1
    exports = [i for i, line in enumerate(lines) if i not in documented and _EXPORT.match(line)]
    group: list[int] = []
    for line_index in exports:
        if group and (sum(len(lines[i].strip()) + 1 for i in group) + len(lines[line_index].strip()) > max_chars):
            spans.append(("exports", group[0], group[-1]))
            group = []
        group.append(line_index)
    if group:
        spans.append(("exports", group[0], group[-1]))
    spans.sort(key=lambda s: (s[1], s[2]))
    chunks: list[Chunk] = []
    for heading, first, last in spans:
        if heading == "exports":
            body = "\n".join(lines[i].strip().rstrip("{").strip() for i in range(first, last + 1)
                             if i not in documented and _EXPORT.match(lines[i]))
        else:
            body = _comment_text(lines[first:last + 1]) if not heading else (
                _comment_text(lines[first:last]) + "\n" + lines[last].strip().rstrip("{").strip())
        for piece_first, piece_last, piece in _cut(body, first, last, max_chars):
            chunks.append(Chunk(f"{path}#{len(chunks)}", path, entity, heading, piece_first + 1, piece_last + 1,
                                piece))
    return chunks


def _frontmatter_end(lines: list[str]) -> int:
    if lines and lines[0].strip() == "---":
        for index in range(1, min(len(lines), 400)):
            if lines[index].strip() in ("---", "..."):
                return index + 1
    return 0


def _pack(lines: list[str], blocks: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    """Consecutive blocks joined while they fit in `max_chars`; a block that does not fit alone is its own span
    (cut later)."""
    spans: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    size = 0
    for first, last in blocks:
        length = sum(len(lines[i]) + 1 for i in range(first, last + 1))
        if current is not None and size + length <= max_chars:
            current, size = (current[0], last), size + length
            continue
        if current is not None:
            spans.append(current)
        current, size = (first, last), length
    if current is not None:
        spans.append(current)
    return spans


def _number(path: str, entity: str, lines: list[str], spans: list[tuple[str, int, int]],
            max_chars: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    for heading, first, last in spans:
        body = "\n".join(lines[first:last + 1])
        for piece_first, piece_last, piece in _cut(body, first, last, max_chars):
            chunks.append(Chunk(f"{path}#{len(chunks)}", path, entity, heading, piece_first + 1, piece_last + 1,
                                piece))
    return chunks


def _cut(body: str, first: int, last: int, max_chars: int) -> list[tuple[int, int, str]]:
    """`body` (lines `first`..`last`) as pieces of at most `max_chars`, cut at line ends where a line fits, else
    at the limit; blank pieces are dropped. Line numbers are the span's when the body is not the lines' text."""
    body = body.strip("\n")
    if not body.strip():
        return []
    if len(body) <= max_chars:
        return [(first, last, body)]
    body_lines = body.split("\n")
    aligned = len(body_lines) == last - first + 1
    pieces: list[tuple[int, int, str]] = []
    buffer: list[str] = []
    buffer_first = 0
    size = 0

    def flush(end: int) -> None:
        text = "\n".join(buffer).strip("\n")
        if text.strip():
            pieces.append((first + buffer_first if aligned else first, first + end if aligned else last, text))

    for offset, line in enumerate(body_lines):
        while len(line) > max_chars:  # a line longer than a passage: cut at the limit
            if buffer:
                flush(offset - 1 if offset else 0)
                buffer, size = [], 0
            pieces.append((first + offset if aligned else first, first + offset if aligned else last,
                           line[:max_chars]))
            line = line[max_chars:]
        if buffer and size + len(line) + 1 > max_chars:
            flush(offset - 1)
            buffer, size = [], 0
        if not buffer:
            buffer_first = offset
        buffer.append(line)
        size += len(line) + 1
    if buffer:
        flush(len(body_lines) - 1)
    return pieces


def _comment_text(lines: list[str]) -> str:
    out = []
    for line in lines:
        text = line.strip()
        for prefix in ("/**", "/*", "*/", "//", "*"):
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        text = text.removesuffix("*/").strip()
        if text:
            out.append(text)
    return "\n".join(out)


def _next_code_line(lines: list[str], start: int) -> int | None:
    for index in range(start, min(len(lines), start + 3)):
        stripped = lines[index].strip()
        if stripped and not stripped.startswith(("@", "//")):
            return index
    return None
