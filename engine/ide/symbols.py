"""The outline of a Markdown document: its headings as nested symbols, each spanning its section."""

from __future__ import annotations

from docbridge.engine.base.model import MarkdownFacts, Span
from docbridge.engine.discovery.analyze import analyze_file
from docbridge.engine.ide.types import Symbol
from docbridge.engine.state.text import split_lines


def document_symbols(facts: MarkdownFacts, lines: list[str]) -> list[Symbol]:
    """Headings nested by level; a section ends before the next heading of its level or above."""
    headings = facts.headings
    last = max(len(lines) - 1, 0)
    ends = [last] * len(headings)
    waiting: list[int] = []
    for index, heading in enumerate(headings):  # one pass, not one scan per heading
        while waiting and headings[waiting[-1]].level >= heading.level:
            ends[waiting.pop()] = heading.line - 1
        waiting.append(index)
    roots: list[Symbol] = []
    stack: list[tuple[int, Symbol]] = []
    for index, heading in enumerate(headings):
        end_line = max(ends[index], heading.line)
        end_text = lines[end_line].rstrip("\r") if end_line < len(lines) else ""
        symbol = Symbol(heading.text, f"#{heading.slug}", Span(heading.line, 0, end_line, len(end_text)),
                        Span(heading.line, heading.column, heading.line, heading.end_column))
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        if stack:
            stack[-1][1].children.append(symbol)
        else:
            roots.append(symbol)
        stack.append((heading.level, symbol))
    return roots


def outline(path: str, text: str, max_chars: int) -> list[Symbol]:
    """The outline of a Markdown buffer outside every scanned folder (nothing over `max_chars`)."""
    if not path.lower().endswith((".md", ".markdown")) or len(text) > max_chars:
        return []
    facts = analyze_file("document", path.rsplit("/", 1)[-1], text)
    assert isinstance(facts, MarkdownFacts)  # a document's analysis
    return document_symbols(facts, split_lines(text))


__all__ = ["document_symbols", "outline"]
