"""The block stage re-parses only what an edit changed, and gives exactly the tokens a whole parse gives.

Each test edits a document step by step through `analyze_markdown`'s parser (with the document's path in the
environment, as the analyzer passes it) and compares every step with a whole parse of the same text."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from docbridge.engine.discovery.markdown import analyze_markdown, parser
from docbridge.engine.discovery.markdown_blocks import PATH_KEY, forget
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent

# lines that open, continue, interrupt or close blocks: lists, indented and fenced code, tables, front matter,
# setext underlines, HTML blocks, quotes, reference definitions and their uses
LINES = ["", "", "text [link](a.md#x) and `code`", "- item", "  continued", "    indented code", "```", "```js",
         "~~~", "# Heading", "Heading two", "---", "===", "| a | b |", "| - | - |", "> quote", "lazy line",
         "[ref]: https://example.com/a", "[ref]: b.md 'title'", "see [the ref][ref]", "[ref]", "<div>", "</div>",
         "<!--", "-->", "<pre>", "</pre>", "1. one", "2) two", "* star", "   - nested", "\t- tabbed", "title: x",
         "    ", "> - quoted item", "***"]


def _signature(tokens: list[Any]) -> list[Any]:
    return [(t.type, t.tag, t.nesting, t.map, t.level, t.content, t.markup, t.info, t.hidden, sorted(t.attrs.items()),
             _signature(t.children) if t.children else None) for t in tokens]


def _assert_same_as_whole(text: str, path: str = "docs/doc.md") -> list[Any]:
    env: dict[str, Any] = {PATH_KEY: path}
    tokens = parser().parse(text, env)
    whole_env: dict[str, Any] = {}
    whole = parser().parse(text, whole_env)
    assert _signature(tokens) == _signature(whole), text
    assert env.get("references") == whole_env.get("references"), text
    assert env.get("duplicate_refs") == whole_env.get("duplicate_refs"), text
    return tokens


edits = st.lists(st.tuples(st.sampled_from(["insert", "delete", "replace", "append"]),
                           st.integers(min_value=0, max_value=60), st.sampled_from(LINES)), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.lists(st.sampled_from(LINES), max_size=40), steps=edits)
def test_every_edit_parses_as_the_whole_document(start: list[str], steps: list[tuple[str, int, str]]) -> None:
    forget()
    lines = list(start)
    _assert_same_as_whole("\n".join(lines))
    for action, where, line in steps:
        at = where % (len(lines) + 1)
        if action == "insert":
            lines.insert(at, line)
        elif action == "delete" and lines:
            del lines[min(at, len(lines) - 1)]
        elif action == "replace" and lines:
            lines[min(at, len(lines) - 1)] = line
        else:
            lines[-1:] = [(lines[-1] if lines else "") + line[:3]]
        _assert_same_as_whole("\n".join(lines))


def test_random_edits_of_the_fixture_documents() -> None:
    rng = random.Random(7)
    documents = sorted((ROOT / "fixtures").rglob("*.md"))
    assert len(documents) >= 10
    for document in documents:
        forget()
        text = document.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        for _ in range(25):
            at = rng.randrange(len(lines) + 1)
            choice = rng.random()
            if choice < 0.4:
                lines.insert(at, rng.choice(LINES))
            elif choice < 0.7 and len(lines) > 1:
                del lines[min(at, len(lines) - 1)]
            else:  # typing inside a line
                index = min(at, len(lines) - 1)
                lines[index] += rng.choice(["x", " [a](b.md)", "|", "```", "  ", "]: u", "-"])
            _assert_same_as_whole("\n".join(lines), document.as_posix())


def test_an_edit_keeps_the_blocks_before_it_and_moves_the_blocks_after_it() -> None:
    forget()
    sections = [f"## Section {n}\n\nParagraph {n} links to [page {n}](page{n}.md).\n" for n in range(30)]
    first = _assert_same_as_whole("\n".join(sections))
    # a new paragraph in the middle: the blocks before it are the same objects (inline tokens are copied: their
    # children belong to each parse); the ones after it moved two lines
    edited = [*sections[:15], "A new paragraph.\n", *sections[15:]]
    second = _assert_same_as_whole("\n".join(edited))
    before = [token for token in first if token.map and token.map[1] < 40 and token.type != "inline"]
    assert before and all(any(token is kept for kept in second) for token in before)
    heading = next(t for t in second if t.type == "inline" and t.content == "Section 20")
    assert heading.map == [next(t for t in first if t.type == "inline" and t.content == "Section 20").map[0] + 2,
                           next(t for t in first if t.type == "inline" and t.content == "Section 20").map[1] + 2]


def test_a_reference_definition_moved_by_an_edit_still_applies_everywhere() -> None:
    forget()
    text = "See [the guide][guide].\n\nSome text.\n\n[guide]: docs/guide.md\n"
    _assert_same_as_whole(text)
    _assert_same_as_whole("New first paragraph.\n\n" + text)
    _assert_same_as_whole(text.replace("[guide]: docs/guide.md\n", ""))
    facts = analyze_markdown("docs/a.md", "Intro.\n\n" + text)
    assert [link.target for link in facts.links] == ["docs/guide.md"]


def test_analysis_after_edits_equals_a_fresh_analysis() -> None:
    document = ROOT / "fixtures" / "acme" / "docs" / "architecture.md"
    text = document.read_text(encoding="utf-8")
    forget()
    analyze_markdown("docs/architecture.md", text)
    edited = text.replace("## ", "## Renamed ", 1) + "\nA [new link](missing.md).\n"
    incremental = analyze_markdown("docs/architecture.md", edited)
    forget()
    fresh = analyze_markdown("docs/architecture.md", edited)
    assert incremental == fresh
    assert any(link.target == "missing.md" for link in incremental.links)


TRICKY_EDITS = [
    ("para\n\n    code2\n", "    code\n\n    code2\n"),  # indented code goes on after a blank line
    ("para\n\n  continued\n", "- item\n\n  continued\n"),  # so does a list item
    ("x\n\nfoo\n\n- b\n", "- a\n\n- b\n"),
    ("----\ntitle: x\n\ntext\n\n---\n", "---\ntitle: x\n\ntext\n\n---\n"),  # front matter closes far below
    ("---\ntitle: x\n---\n\ntext\n", "---\ntitle: x\n---x\n\ntext\n\n---\n"),
    ("---\ntitle: x\n\ntext\n\nmore\n", "---\ntitle: x\n\ntext\n\nmore\n---\n"),
    ("a\n\n| a | b |\n\nz\n", "a\n| a | b |\n| - | - |\n\nz\n"),  # a table interrupts the paragraph above
    ("```\ncode\n```\n\nafter\n", "```\ncode\n\nafter\n"),  # an unclosed fence runs to the end
    ("<!--\nx\n-->\n\nafter\n", "<!--\nx\n\nafter\n"),
    ("Title\n\nbody\n", "Title\n===\n\nbody\n"),  # a setext underline makes the paragraph above a heading
]


def test_edits_that_change_blocks_far_from_the_edited_line() -> None:
    for before, after in TRICKY_EDITS:
        forget()
        _assert_same_as_whole(before)
        _assert_same_as_whole(after)
        _assert_same_as_whole(before)
