"""Renames that keep the documentation linked: moving files and folders, renaming headings.

`move_edits` answers "these files or folders are about to move": every relative link, `/`-rooted link, wiki
link, path mention in backticks, frontmatter `covers` entry and configuration path that points at a moved
file (or into a moved folder) is rewritten, in every document, anchors and written style kept; relative links
inside a moved document that point elsewhere are rewritten for its new place. `rename_heading` renames a
heading and rewrites every `#anchor` link to it (and to headings whose duplicate suffix shifts). The edits
address the files where they are now (an editor applies them before it moves anything).
"""

from __future__ import annotations

import posixpath
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from docbridge.engine.base.config import CONFIG_FILE
from docbridge.engine.base.model import DOCUMENT, Heading, MarkdownFacts, Span, split_id
from docbridge.engine.discovery.files import normalise
from docbridge.engine.discovery.markdown import custom_heading_id, slugify
from docbridge.engine.discovery.references import Reference, ReferenceStatus, site_slug
from docbridge.engine.ide.navigation import reference_at
from docbridge.engine.ide.types import FileMove, TextEdit, WorkspaceEdit
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.text import lines_of
from docbridge.engine.views.reverse import referenced_by_of

S = ReferenceStatus
_ATX = re.compile(r"^(\s{0,3}#{1,6}[ \t]+)(.*?)([ \t]+#+[ \t]*)?[ \t]*$")
_LOCATION = re.compile(r"^(?P<path>.+?)(?P<suffix>:\d+(?::\d+)?|#L\d+.*)?$")
_CONFIG_PATH_KEYS = ("path", "agentDoc", "humanDoc", "startHere", "index", "root")
_CONFIG_SCALAR = re.compile(r'"(?P<key>{})"\s*:\s*"(?P<value>[^"\\]*)"'.format("|".join(_CONFIG_PATH_KEYS)))
_CONFIG_LIST = re.compile(r'"paths"\s*:\s*\[(?P<body>[^\]]*)\]')
_STRING = re.compile(r'"([^"\\]*)"')


class RenameError(ValueError):
    """The rename cannot be done (the sentence says why)."""


@dataclass(frozen=True, slots=True)
class RenameTarget:
    """What `prepare_rename` found under the cursor: a heading or a path, with the text to edit."""

    kind: str  # heading | path
    span: Span  # the text a person edits
    placeholder: str


# ------------------------------------------------------------------------------------------------ moves


class _Mover:
    def __init__(self, moves: Sequence[FileMove]) -> None:
        self.moves = [(m.old.strip("/"), m.new.strip("/")) for m in moves if m.old.strip("/") != m.new.strip("/")]

    def __call__(self, path: str | None) -> str | None:
        """Where `path` ends up, or None when it does not move."""
        if path is None:
            return None
        for old, new in self.moves:
            if path == old:
                return new
            if path.startswith(old + "/"):
                return new + path[len(old):]
        return None


def _split_href(href: str) -> tuple[str, str]:
    """A link destination as (path, suffix): the suffix is `?query` and/or `#anchor`, kept as written."""
    cut = len(href)
    for mark in ("?", "#"):
        index = href.find(mark)
        if index >= 0:
            cut = min(cut, index)
    return href[:cut], href[cut:]


def _rewrite_link_path(written: str, old_target: str, new_target: str, old_dir: str, new_dir: str) -> str | None:
    """The new text of a link's path part, in the style it was written in (relative or `/`-rooted, with or
    without `./`, with the extension as written: `.md`, `.html` or none; percent-encoding kept)."""
    encoded = "%" in written
    plain = urllib.parse.unquote(written)
    # the extension style: a link may name `guide.md` as `guide` or `guide.html` (documentation sites)
    suffix = ""
    if old_target.lower().endswith((".md", ".markdown")) and not plain.lower().endswith((".md", ".markdown")):
        old_ext = "." + old_target.rsplit(".", 1)[1]
        suffix = ".html" if plain.lower().endswith(".html") else ""
        old_target = old_target[:-len(old_ext)]
        if not new_target.endswith(old_ext):
            return None  # the new name changes the extension: the written style no longer applies
        new_target = new_target[:-len(old_ext)]
        plain = plain[:-5] if suffix else plain
    trailing = "/" if plain.endswith("/") and len(plain) > 1 else ""
    if plain.startswith("/"):
        written_path = normalise(plain.lstrip("/")) or ""
        base = old_target[:len(old_target) - len(written_path)] if old_target.endswith(written_path) else None
        if base is None or not new_target.startswith(base):
            return None  # served from a site root the new place is not under: leave it
        result = "/" + new_target[len(base):]
    else:
        result = posixpath.relpath(new_target, new_dir or ".")
        if plain.startswith("./") and not result.startswith("."):
            result = "./" + result
    result = result + suffix + (trailing if not result.endswith("/") else "")
    return urllib.parse.quote(result, safe="/#?=&.:@!$'()*+,;~-_") if encoded else result


def _href_span(lines: list[str], reference: Reference) -> tuple[Span, str] | None:
    """Where a link's destination is written (inline: inside the parentheses; reference-style: in its
    definition line; wiki: the name before `#` or `|`), and the destination text."""
    span = reference.span
    if span.line >= len(lines):
        return None
    line = lines[span.line].rstrip("\r")
    source = line[span.column:span.end_column] if span.line == span.end_line else line[span.column:]
    if reference.origin == "wiki":
        if not source.startswith("[["):
            return None
        inner = source[2:source.find("]]")] if "]]" in source else source[2:]
        name = re.split(r"[#|]", inner, maxsplit=1)[0]
        start = span.column + 2 + (len(name) - len(name.lstrip()))
        name = name.strip()
        return Span(span.line, start, span.line, start + len(name)), name
    if span.line == span.end_line and source.endswith(")") and "](" in source:
        start = span.column + source.rindex("](") + 2
        inner = line[start:span.end_column - 1]
        stripped = inner.lstrip()
        start += len(inner) - len(stripped)
        if stripped.startswith("<"):
            close = stripped.find(">")
            if close < 0:
                return None
            return Span(span.line, start + 1, span.line, start + close), stripped[1:close]
        destination = stripped.split()[0] if stripped.split() else ""
        return Span(span.line, start, span.line, start + len(destination)), destination
    label_match = re.match(r"\[([^\]]*)\](?:\[([^\]]*)\])?", source)
    if label_match is None:
        return None
    label = (label_match.group(2) or label_match.group(1) or "").strip()
    wanted = " ".join(label.split()).lower()
    for number, text in enumerate(lines):
        found = re.match(r"^(\s{0,3}\[([^\]]+)\]:[ \t]*)(<[^>]*>|\S+)", text)
        if found is None or " ".join(found.group(2).split()).lower() != wanted:
            continue
        start, destination = found.end(1), found.group(3)
        if destination.startswith("<"):
            return Span(number, start + 1, number, start + len(destination) - 1), destination[1:-1]
        return Span(number, start, number, start + len(destination)), destination
    return None


def _code_path_span(lines: list[str], reference: Reference) -> tuple[Span, str] | None:
    """The path part of a backticked path mention (after any `./`, before any `:42` or `#L42`)."""
    span = reference.span
    if span.line != span.end_line or span.line >= len(lines):
        return None
    line = lines[span.line].rstrip("\r")
    inner_start, inner_end = span.column + 1, span.end_column - 1
    while inner_start < inner_end and line[inner_start] == "`":
        inner_start += 1
    while inner_end > inner_start and line[inner_end - 1] == "`":
        inner_end -= 1
    inner = line[inner_start:inner_end]
    stripped = inner.strip()
    offset = inner_start + (len(inner) - len(inner.lstrip()))
    match = _LOCATION.match(stripped)
    if match is None:
        return None
    path = match.group("path")
    if "#" in path and not path.startswith("#"):
        path = path.split("#", 1)[0]
    return Span(span.line, offset, span.line, offset + len(path)), path


def _mention_rewrite(written: str, old_target: str, new_target: str, old_dir: str, new_dir: str,
                     near: bool = False) -> str | None:
    prefix = "./" if written.startswith("./") else ("/" if written.startswith("/") else "")
    trailing = "/" if written.endswith("/") and len(written) > 1 else ""
    body = written[len(prefix):].rstrip("/")
    if body == old_target:
        return prefix + new_target + trailing  # written from the repository root
    if old_dir and normalise(f"{old_dir}/{body}") == old_target:  # written next to the document
        local = posixpath.relpath(new_target, new_dir or ".")
        if not local.startswith(".."):
            return prefix + local + trailing
        return new_target + trailing
    if "/" not in body and body == old_target.rsplit("/", 1)[-1]:  # a unique file name
        return new_target.rsplit("/", 1)[-1] + trailing
    if near:  # a near match of the moved path (a typo): it names the file, and now names it right
        return prefix + new_target + trailing
    return None


def move_edits(state: ModelState, moves: Sequence[FileMove]) -> WorkspaceEdit:
    """The text edits that keep every reference right once `moves` happen (paths where they are now)."""
    mover = _Mover(moves)
    if not mover.moves:
        return WorkspaceEdit()
    edits: dict[tuple[str, int, int], TextEdit] = {}
    for document in sorted(state.documents.keys()):
        resolution = state.documents[document]
        new_document = mover(document) or document
        document_moves = new_document != document
        old_dir, new_dir = posixpath.dirname(document), posixpath.dirname(new_document)
        lines: list[str] | None = None
        for reference in resolution.references:
            if reference.symbol or reference.status not in (S.RESOLVED, S.FUZZY, S.ANCHOR_MISSING, S.EXISTING):
                continue
            target = reference.target_path
            if target is None:
                continue
            if reference.target and split_id(reference.target)[0] == "package" and not target.endswith(
                    "package.json"):
                continue  # a package named by its name: names do not move
            new_target = mover(target)
            relative_link = reference.origin in ("link", "image") and not reference.text.startswith("/")
            if new_target is None and not (document_moves and relative_link):
                continue
            new_target = new_target or target
            if lines is None:
                lines = lines_of(state, document) or []
            edit = _reference_edit(lines, document, reference, target, new_target, old_dir, new_dir)
            if edit is not None:
                edits.setdefault((edit.path, edit.span.line, edit.span.column), edit)
    for edit in _config_edits(state, mover):
        edits.setdefault((edit.path, edit.span.line, edit.span.column), edit)
    ordered = tuple(sorted(edits.values(), key=lambda e: (e.path, e.span.line, e.span.column)))
    return WorkspaceEdit(ordered, tuple(FileMove(old, new) for old, new in mover.moves))


def _reference_edit(lines: list[str], document: str, reference: Reference, target: str, new_target: str,
                    old_dir: str, new_dir: str) -> TextEdit | None:
    origin = reference.origin
    if origin in ("link", "image"):
        found = _href_span(lines, reference)
        if found is None:
            return None
        span, href = found
        written, _suffix = _split_href(href)
        if not written:
            return None  # `#anchor` in the same document: nothing to rewrite
        new_written = _rewrite_link_path(written, target, new_target, old_dir, new_dir)
        if new_written is None or new_written == written:
            return None
        return TextEdit(document, Span(span.line, span.column, span.line, span.column + len(written)), new_written)
    if origin == "wiki":
        found = _href_span(lines, reference)
        if found is None:
            return None
        span, name = found
        stem = posixpath.basename(new_target).rsplit(".", 1)[0]
        if "/" not in name:  # found by its name: only a new name needs rewriting
            written_stem = name[:-3] if name.lower().endswith(".md") else name
            new_name = stem + (".md" if name.lower().endswith(".md") else "")
            return TextEdit(document, span, new_name) if written_stem != stem else None
        new_name = new_target[:-3] if not name.lower().endswith(".md") and new_target.endswith(".md") else new_target
        return TextEdit(document, span, new_name) if new_name != name else None
    if origin in ("code", "link-text"):
        if origin != "code":
            return None
        found = _code_path_span(lines, reference)
        if found is None:
            return None
        span, written = found
        new_written = _mention_rewrite(written, target, new_target, old_dir, new_dir,
                                       near=reference.status == S.FUZZY)
        if new_written is None or new_written == written:
            return None
        return TextEdit(document, span, new_written)
    if origin in ("covers", "relation"):
        written = reference.text
        kind, _, value = written.partition(":")
        if value and kind in ("document", "module", "area"):
            new_value = _mention_rewrite(value, target, new_target, "", "")
            new_written = f"{kind}:{new_value}" if new_value else None
        else:
            new_written = _mention_rewrite(written, target, new_target, "", "")
        if new_written is None or new_written == written:
            return None
        span = reference.span
        return TextEdit(document, Span(span.line, span.column, span.line, span.column + len(written)), new_written)
    return None


def _config_edits(state: ModelState, mover: _Mover) -> Iterable[TextEdit]:
    """Paths in doc-bridge.config.json (ownership records, routes, the corpus index) that move."""
    lines = lines_of(state, CONFIG_FILE) if (state.root / CONFIG_FILE).is_file() else None
    for number, line in enumerate(lines or []):
        spans = [(m.start("value"), m.group("value")) for m in _CONFIG_SCALAR.finditer(line)]
        for listed in _CONFIG_LIST.finditer(line):
            base = listed.start("body")
            spans += [(base + m.start(1), m.group(1)) for m in _STRING.finditer(listed.group("body"))]
        for start, value in spans:
            clean = value.removeprefix("./").rstrip("/")
            moved = mover(clean)
            if moved is None:
                continue
            new_value = value[:len(value) - len(value.lstrip("./"))] if value.startswith("./") else ""
            new_value += moved + ("/" if value.endswith("/") and len(value) > 1 else "")
            yield TextEdit(CONFIG_FILE, Span(number, start, number, start + len(value)), new_value)


def paths_under(state: ModelState, folder: str) -> list[str]:
    """Every file the model knows at or under `folder` (sorted)."""
    folder = folder.strip("/")
    return sorted(p for p in state.universe.paths() if p == folder or p.startswith(folder + "/"))


# ------------------------------------------------------------------------------------------------ headings


def _slugs(headings: Sequence[Heading], lines: list[str], renamed: int | None = None, text: str = "") -> list[str]:
    """GitHub slugs of every heading, duplicates suffixed -1, -2 (with heading `renamed` given `text`); a heading
    with an explicit `{#id}` keeps it whatever its text."""
    counts: dict[str, int] = {}
    out = []
    for index, heading in enumerate(headings):
        custom = custom_heading_id(lines[heading.line].rstrip("\r")) if heading.line < len(lines) else None
        base = custom.group(1) if custom else slugify(text if index == renamed else heading.text)
        count = counts.get(base, 0)
        counts[base] = count + 1
        out.append(base if count == 0 else f"{base}-{count}")
    return out


def _heading_text_span(lines: list[str], heading: Heading) -> tuple[Span, str] | None:
    if heading.line >= len(lines):
        return None
    line = lines[heading.line].rstrip("\r")
    atx = _ATX.match(line)
    if atx is not None:
        end = atx.end(2)
        custom = custom_heading_id(atx.group(2))
        if custom is not None:  # the explicit id stays; only the text is renamed
            end = atx.start(2) + custom.start()
        return Span(heading.line, atx.start(2), heading.line, end), line[atx.start(2):end]
    stripped = line.strip()
    start = line.find(stripped) if stripped else 0
    return Span(heading.line, start, heading.line, start + len(stripped)), stripped  # setext: the whole line


def prepare_rename(state: ModelState, path: str, line: int, column: int) -> RenameTarget | None:
    """A heading (its text) or a link's path / a backticked path (the path as written) under the cursor."""
    facts = state.universe.documents.get(path)
    if facts is None:
        return None
    lines = lines_of(state, path) or []
    heading = next((h for h in facts.headings if h.line == line), None)
    if heading is not None:
        found = _heading_text_span(lines, heading)
        if found is not None:
            return RenameTarget("heading", found[0], found[1])
    resolution = state.documents.get(path)
    reference = reference_at(state, resolution, line, column) if resolution is not None else None
    if reference is None or reference.symbol or reference.target_path is None or \
            reference.status not in (S.RESOLVED, S.FUZZY, S.ANCHOR_MISSING, S.EXISTING):
        return None
    if reference.origin in ("link", "image"):
        found = _href_span(lines, reference)
        if found is None:
            return None
        span, href = found
        written, _ = _split_href(href)
        if not written:
            return None
        return RenameTarget("path", Span(span.line, span.column, span.line, span.column + len(written)), written)
    if reference.origin == "code":
        code = _code_path_span(lines, reference)
        return RenameTarget("path", code[0], code[1]) if code is not None else None
    return None


def rename(state: ModelState, path: str, line: int, column: int, new_name: str) -> WorkspaceEdit:
    """Rename what is under the cursor: a heading (and every link to it), or the file a link or a path
    mention names (the file moves; every reference to it follows)."""
    target = prepare_rename(state, path, line, column)
    if target is None:
        raise RenameError("There is nothing to rename here: put the cursor on a heading, a link or a path.")
    new_name = new_name.strip()
    if not new_name:
        raise RenameError("The new name is empty.")
    if target.kind == "heading":
        return rename_heading(state, path, target.span.line, new_name)
    resolution = state.documents[path]
    reference = reference_at(state, resolution, line, column)
    assert reference is not None and reference.target_path is not None
    old = reference.target_path
    if reference.origin == "code":
        base = "" if new_name.startswith("/") else posixpath.dirname(path) \
            if normalise(f"{posixpath.dirname(path)}/{target.placeholder}") == old else ""
    else:
        base = "" if new_name.startswith("/") else posixpath.dirname(path)
    written = new_name.split("#", 1)[0].split("?", 1)[0]
    new = normalise(f"{base}/{written.lstrip('/')}" if base else written.lstrip("/").removeprefix("./"))
    if old.lower().endswith(".md") and new and not new.lower().endswith((".md", ".markdown")) and \
            not target.placeholder.lower().endswith((".md", ".markdown")):
        new += old[old.rfind("."):]  # written without the extension, as the link was
    if not new:
        raise RenameError(f"`{new_name}` leaves the repository.")
    if new == old:
        return WorkspaceEdit()
    if state.universe.exists(new) or new in state.universe.dir_counts:
        raise RenameError(f"`{new}` already exists.")
    return move_edits(state, [FileMove(old, new)])


def rename_heading(state: ModelState, path: str, line: int, new_text: str) -> WorkspaceEdit:
    """The heading's new text, and every `#anchor` link to a heading of this document whose slug changes."""
    facts: MarkdownFacts | None = state.universe.documents.get(path)
    if facts is None:
        raise RenameError(f"`{path}` is not a document of the model.")
    index = next((i for i, h in enumerate(facts.headings) if h.line == line), None)
    if index is None:
        raise RenameError("There is no heading on this line.")
    lines = lines_of(state, path) or []
    found = _heading_text_span(lines, facts.headings[index])
    if found is None:
        raise RenameError("The heading's text could not be located.")
    before, after = _slugs(facts.headings, lines), _slugs(facts.headings, lines, index, new_text)
    renamed = {old: new for old, new in zip(before, after) if old != new}
    site_old = site_slug(facts.headings[index].text)
    site_new = site_slug(new_text)
    edits: dict[tuple[str, int, int], TextEdit] = {}
    edits[(path, found[0].line, found[0].column)] = TextEdit(path, found[0], new_text)
    target_id = f"{DOCUMENT}:{path}"
    sources = set(referenced_by_of(state).get(target_id, ())) | {path}
    for source in sorted(sources):
        resolution = state.documents.get(source)
        if resolution is None:
            continue
        source_lines: list[str] | None = None
        for reference in resolution.references:
            if reference.target_path != path or not reference.anchor or reference.origin not in ("link", "wiki"):
                continue
            anchor = urllib.parse.unquote(reference.anchor)
            new_anchor = renamed.get(anchor.lower())
            if new_anchor is None and anchor.lower() == site_old and site_old != site_new:
                new_anchor = site_new
            if new_anchor is None:
                continue
            if source_lines is None:
                source_lines = lines_of(state, source) or []
            edit = _anchor_edit(source_lines, source, reference, new_anchor)
            if edit is not None:
                edits.setdefault((edit.path, edit.span.line, edit.span.column), edit)
    return WorkspaceEdit(tuple(sorted(edits.values(), key=lambda e: (e.path, e.span.line, e.span.column))))


def _anchor_edit(lines: list[str], document: str, reference: Reference, new_anchor: str) -> TextEdit | None:
    span = reference.span
    if span.line >= len(lines):
        return None
    line = lines[span.line].rstrip("\r")
    source = line[span.column:span.end_column] if span.line == span.end_line else line[span.column:]
    if reference.origin == "wiki":
        hash_at = source.find("#")
        if hash_at < 0:
            return None
        end = hash_at + 1
        while end < len(source) and source[end] not in "|]":
            end += 1
        return TextEdit(document, Span(span.line, span.column + hash_at + 1, span.line, span.column + end),
                        new_anchor)
    found = _href_span(lines, reference)
    if found is None:
        return None
    href_span, href = found
    hash_at = href.find("#")
    if hash_at < 0:
        return None
    start = href_span.column + hash_at + 1
    return TextEdit(document, Span(href_span.line, start, href_span.line, href_span.column + len(href)), new_anchor)


__all__ = ["RenameError", "RenameTarget", "move_edits", "paths_under", "prepare_rename", "rename",
           "rename_heading"]
