"""Completion in Markdown: relative paths after `](` and `[[`, headings after `#`, paths and exported symbols
inside backticks. Ranked (documents before code, shorter and closer first), bounded, and computed from the
universe's indexes without touching the disk (the current line comes from the editor buffer)."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from docbridge.engine.base.model import Span
from docbridge.engine.discovery.universe import members
from docbridge.engine.ide.types import Completion
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.text import line_of

_LINK_TARGET = re.compile(r"\]\(([^()\s]*)$")
_WIKI_TARGET = re.compile(r"\[\[([^\]|#]*)$")
_ANCHOR = re.compile(r"\]\(([^()\s#]*)#([^()\s]*)$")
_CODE = re.compile(r"`([^`\s]*)$")
MAX_LINE = 4096  # a cursor further into one line than this gets no completion (nothing sensible to offer)


def relative_link(from_dir: str, target: str) -> str:
    """How a document in `from_dir` links to `target` (repository-relative): `./x.md`, `../y/z.md`."""
    rel = posixpath.relpath(target, from_dir or ".")
    return rel if rel.startswith(".") else f"./{rel}"


def complete(state: ModelState, path: str, line: int, column: int, limit: int) -> tuple[list[Completion], bool]:
    """The completions at the cursor and whether the list is incomplete (typing more may change it)."""
    if not path.lower().endswith((".md", ".markdown")) or column > MAX_LINE:
        return [], False
    text = line_of(state, path, line)
    if text is None:
        return [], False
    before = text[:column]
    doc_dir = posixpath.dirname(path)

    def replacing(typed: str) -> Span:
        return Span(line, column - len(typed), line, column)

    anchor = _ANCHOR.search(before)
    if anchor is not None:
        target_text, typed = anchor.group(1), anchor.group(2)
        target = path if not target_text else posixpath.normpath(posixpath.join(doc_dir, target_text))
        facts = state.universe.documents.get(target)
        if facts is None:
            return [], False
        items = [Completion(h.slug, "heading", h.text, h.slug, replacing(typed), f"{i:05d}")
                 for i, h in enumerate(facts.headings) if h.slug.startswith(typed.lower())]
        return items[:limit], False
    link = _LINK_TARGET.search(before) or _WIKI_TARGET.search(before)
    if link is not None:
        typed = link.group(1)
        return _paths(state, doc_dir, typed, replacing(typed), limit, relative_to_doc=True), True
    code = _CODE.search(before)
    if code is not None and before.count("`") % 2 == 1:
        typed = code.group(1)
        items = _paths(state, doc_dir, typed, replacing(typed), limit // 2, relative_to_doc=False) if (
            "/" in typed or "." in typed) else []
        items += _symbols(state, typed, replacing(typed), limit - len(items))
        return items[:limit], True
    return [], False


def _paths(state: ModelState, doc_dir: str, typed: str, span: Span, limit: int, relative_to_doc: bool) -> list[
        Completion]:
    """Files and directories whose written form starts with what was typed, documents first."""
    universe = state.universe
    candidates: list[tuple[tuple[Any, ...], str, str, str]] = []
    typed_lower = typed.lower()
    sources = (("document", "documents"), ("module", "modules"), ("file", "other"), ("directory", "dir_counts"))
    rank = {"document": 0, "directory": 1, "module": 2, "file": 3}
    for kind, index in sources:
        for candidate in universe.sorted_paths(index):
            written = relative_link(doc_dir, candidate) if relative_to_doc else candidate
            if kind == "directory":
                written += "/"
            if typed and not (written.lower().startswith(typed_lower) or candidate.lower().startswith(typed_lower)):
                continue
            candidates.append(((rank[kind], written.count("/"), len(written), written), written, candidate, kind))
            if len(candidates) > 20 * max(limit, 1):
                break
    candidates.sort()
    return [Completion(written, kind, candidate if candidate != written else kind, written, span, f"{i:05d}")
            for i, (_, written, candidate, kind) in enumerate(candidates[:limit])]


def _symbols(state: ModelState, typed: str, span: Span, limit: int) -> list[Completion]:
    """Exported symbols (declared ones first), case-insensitive prefix match."""
    if limit <= 0 or not typed:
        return []
    typed_lower = typed.lower()
    found = []
    for name, held in state.universe.owners.items():
        owners = members(held)
        if owners and name.lower().startswith(typed_lower):
            module = sorted(owners)[0]
            found.append(((0 if name.startswith(typed) else 1, len(name), name), name, module, len(owners)))
    found.sort()
    items = []
    for i, (_, name, module, count) in enumerate(found[:limit]):
        detail = module if count == 1 else f"{count} modules declare it"
        items.append(Completion(name, "symbol", detail, name, span, f"{5000 + i:05d}"))
    return items


__all__ = ["complete", "relative_link"]
