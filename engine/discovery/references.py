"""Resolving one document against the universe: links, mentions and frontmatter declarations become
references (what each one names, with its status) and relations (the evidence the model keeps).

A pure function of the document's facts and the universe; every universe lookup records a dependency key
(see `engine.discovery.universe`), so the workspace knows which documents to re-resolve after a change.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import urllib.parse
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

from engine.discovery.files import DEFAULT_EXCLUDED_DIRS, MODULE_EXTENSIONS, normalise, parent_dirs
from engine.discovery.universe import Key, Universe, dirname
from engine.model import AREA, DOCUMENT, MODULE, PACKAGE, Evidence, MarkdownFacts, Relation, Span, entity_id

MAX_EVIDENCE = 8
MAX_TOKEN = 256
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_SPACE = re.compile(r"\s")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
_LOCATION_SUFFIX = re.compile(
    r"^(?P<path>.+?)(?::(?P<line>\d+)(?::\d+)?|#L(?P<hline>\d+)(?:C\d+)?(?:-L?\d+(?:C\d+)?)?)$")
_NOT_A_PATH = re.compile(r"[\s*?\[\]{}()<>|;&$=!\"',`\\^~%]")
_PATH_SEGMENT = re.compile(r"^[\w.@+-]+$")
_LINE_ANCHOR = re.compile(r"^L\d+")
SOURCE_EXTENSIONS = (".md", ".markdown", *MODULE_EXTENSIONS, ".json", ".yaml", ".yml", ".toml")


class ReferenceStatus(StrEnum):
    """What a reference came to. Compares equal to its string value."""

    RESOLVED = "resolved"
    FUZZY = "fuzzy"  # a near match of what is written (exactly one candidate close enough)
    AMBIGUOUS = "ambiguous"  # a symbol several modules declare
    EXISTING = "existing"  # a real path with no entity in the model (an image, a directory, a config file)
    BROKEN = "broken"
    OUTSIDE_ROOT = "outside-root"
    ANCHOR_MISSING = "anchor-missing"  # the document exists, the `#anchor` does not
    UNRESOLVED = "unresolved"  # looks like a repository path, matches nothing
    RENAMED = "renamed"  # names an export its module renamed (`candidates` holds the new name)
    EXTERNAL = "external"  # a URL
    IGNORED = "ignored"  # a path the ignore rules exclude
    NONE = "none"  # not a reference after all (prose in backticks)

    @property
    def names_target(self) -> bool:
        """The reference points at an entity of the model: it counts as a reference to that entity."""
        return self in _NAMES_TARGET

    @property
    def navigable(self) -> bool:
        """The reference leads somewhere an editor can open (a file, a heading, a declaration)."""
        return self in _NAVIGABLE

    @property
    def broken(self) -> bool:
        return self in (ReferenceStatus.BROKEN, ReferenceStatus.OUTSIDE_ROOT)


_NAMES_TARGET = frozenset({ReferenceStatus.RESOLVED, ReferenceStatus.FUZZY, ReferenceStatus.ANCHOR_MISSING})
_NAVIGABLE = _NAMES_TARGET | {ReferenceStatus.EXISTING}
S = ReferenceStatus


@dataclass(slots=True, unsafe_hash=True)
class Reference:
    """What one link, inline code span or declaration in a document resolved to (`status`: see
    `ReferenceStatus`; given as its string value, stored as the enum)."""

    origin: str  # link | image | wiki | code | link-text | covers | relation
    span: Span
    text: str
    status: ReferenceStatus
    target: str | None = None
    target_path: str | None = None
    relation: str | None = None
    anchor: str | None = None
    line: int | None = None  # a line inside the target (symbol declarations, `path:42`, `#L42`)
    column: int | None = None
    symbol: str | None = None
    candidates: tuple[str, ...] = ()
    confidence: str = "observed"
    message: str | None = None

    def __post_init__(self) -> None:
        self.status = ReferenceStatus(self.status)


@dataclass(slots=True)
class DocumentResolution:
    path: str
    relations: tuple[Relation, ...]
    references: tuple[Reference, ...]
    notes: tuple[tuple[str, str], ...]
    deps: tuple[Key, ...]  # sorted
    truncated: bool = False
    declared_relations: tuple[tuple[str, str, str], ...] = ()  # (from id, to id, kind)
    # each relation declaration of the facts, in order: (its index in `declarations`, from id, to id), an id
    # None when that endpoint resolves to nothing
    declared_endpoints: tuple[tuple[int, str | None, str | None], ...] = ()



# --------------------------------------------------------------------------------------------------
# Documents


class _DocumentResolver:
    def __init__(self, universe: Universe, facts: MarkdownFacts) -> None:
        self.u = universe
        self.facts = facts
        self.deps: set[Key] = set()
        self.doc_dir = dirname(facts.path)
        self.notes: list[tuple[str, str]] = []
        self._headings: dict[str, HeadingIndex] = {}

    def headings(self, path: str) -> HeadingIndex:
        """The heading index of a document (this one's own for its path), built once per resolution."""
        index = self._headings.get(path)
        if index is None:
            if path == self.facts.path:
                headings = self.facts.headings
            else:
                target_facts = self.u.documents.get(path)
                headings = target_facts.headings if target_facts else ()
            index = self._headings[path] = HeadingIndex(headings)
        return index

    # tokens (inline code, link text)

    def token(self, raw: str, span: Span, origin: str) -> Reference:
        text = raw.strip()
        if not text or len(text) > MAX_TOKEN or _SPACE.search(text):
            return Reference(origin, span, raw, "none")
        line_hint = None
        match = _LOCATION_SUFFIX.match(text)
        candidate = text
        if match and ("/" in match.group("path") or "." in match.group("path")):
            candidate = match.group("path")
            line_hint = int(match.group("line") or match.group("hline")) - 1
        elif "#" in text and ("/" in text or "." in text.split("#", 1)[0]):
            candidate = text.split("#", 1)[0]  # `docs/api.md#auth`: the document is what is named
        path_shaped = ("/" in candidate or "." in candidate) and not _SCHEME.match(candidate)
        if path_shaped:
            found = self.existing_path(candidate)
            if found is not None:
                return self.path_reference(origin, span, raw, found, line_hint)
        package = self.u.package_for_name(text, self.deps)
        if package is not None:
            return self.to_package(origin, span, raw, package)
        name = text[:-2] if text.endswith("()") else text
        member = None
        if not _IDENT.match(name) and "." in name and "/" not in name:
            head, _, member = name.partition(".")
            name = head if _IDENT.match(head) else ""
        if name and _IDENT.match(name) and name not in ("default",):
            owners = self.u.symbol_owners(name, self.deps)
            if len(owners) == 1:
                # the declaration's position is looked up when asked (it moves with every edit of the module)
                return Reference(origin, span, raw, "resolved", entity_id(MODULE, owners[0]), owners[0],
                                 "mentions-symbol", symbol=name)
            if len(owners) > 1 and member is None:
                return Reference(origin, span, raw, "ambiguous", symbol=name,
                                 candidates=tuple(entity_id(MODULE, o) for o in owners))
            if not owners and member is None:
                renamed = self.u.renamed_symbol(name, self.deps)
                if renamed is not None:
                    module, new_name = renamed
                    return Reference(origin, span, raw, "renamed", target_path=module, symbol=name,
                                     candidates=(new_name,),
                                     message=f"`{name}` is no longer exported by `{module}`; it was renamed to "
                                             f"`{new_name}`")
        if path_shaped and "/" not in candidate:
            same = self.u.by_basename(candidate, self.deps)
            if len(same) == 1:
                return self.path_reference(origin, span, raw, same[0], line_hint, confidence="fuzzy")
        if not path_shaped or "/" not in candidate:
            return Reference(origin, span, raw, "none")
        cleaned = normalise(candidate.lstrip("/").removeprefix("./"))
        if cleaned is None:
            return Reference(origin, span, raw, "none")
        matches = self.u.fuzzy(cleaned, self.deps)
        if len(matches) == 1:  # exactly one candidate close enough: convenience never invents a fact
            return self.path_reference(origin, span, raw, matches[0][0], line_hint, confidence="fuzzy")
        if origin == "code" and not candidate.startswith("/") and self.looks_like_repository_path(cleaned):
            return Reference(origin, span, raw, "unresolved", target_path=cleaned)
        return Reference(origin, span, raw, "none")

    def existing_path(self, candidate: str) -> str | None:
        """A mention names a path from the repository root, or (for files next to the doc) its directory."""
        stripped = candidate.removeprefix("./").rstrip("/")
        rooted = normalise(stripped.lstrip("/"))
        if rooted is not None and rooted and self.u.path_kind(rooted, self.deps) is not None:
            return rooted
        if not candidate.startswith("/") and self.doc_dir:
            local = normalise(f"{self.doc_dir}/{stripped}")
            if local and self.u.path_kind(local, self.deps) is not None:
                return local
        return None

    def looks_like_repository_path(self, path: str) -> bool:
        """Conservative: only a token that is plainly a path inside this repository can be 'unresolved'."""
        if _NOT_A_PATH.search(path) or path.startswith(("-", "@", ".")):
            return False
        segments = path.split("/")
        if len(segments) < 2 or not all(_PATH_SEGMENT.match(s) for s in segments):
            return False
        if any(s in DEFAULT_EXCLUDED_DIRS or s.startswith(".") for s in segments):
            return False
        if self.u.rules.is_ignored_anywhere(path):
            return False
        top = segments[0]
        top_exists = self.u.path_kind(top, self.deps) in ("directory", AREA, PACKAGE)
        return top_exists or path.lower().endswith(SOURCE_EXTENSIONS)

    def path_reference(self, origin: str, span: Span, raw: str, path: str, line: int | None,
                       confidence: str = "observed") -> Reference:
        kind = self.u.path_kind(path, self.deps)
        status = "fuzzy" if confidence == "fuzzy" else "resolved"
        if kind == DOCUMENT:
            return Reference(origin, span, raw, status, entity_id(DOCUMENT, path), path, "mentions", line=line,
                             confidence=confidence)
        if kind == MODULE:
            return Reference(origin, span, raw, status, entity_id(MODULE, path), path, "mentions", line=line,
                             confidence=confidence)
        if kind == AREA:
            return Reference(origin, span, raw, status, entity_id(AREA, path), path, "mentions",
                             confidence=confidence)
        if kind == PACKAGE:
            assert self.u.layout is not None
            package = self.u.layout.packages[path]
            return Reference(origin, span, raw, status, package.id, path, "mentions", confidence=confidence)
        if path.endswith("package.json") and path in self.u.manifests:
            assert self.u.layout is not None
            directory = dirname(path) or "."
            package_info = self.u.layout.packages.get(directory)
            if package_info is not None:
                return Reference(origin, span, raw, status, package_info.id, path, "mentions",
                                 confidence=confidence)
        return Reference(origin, span, raw, "existing", target_path=path, line=line)

    def to_package(self, origin: str, span: Span, raw: str, package_id: str) -> Reference:
        assert self.u.layout is not None
        info = self.u.layout.package_by_id(package_id)
        path = info.manifest if info and info.manifest else None
        return Reference(origin, span, raw, "resolved", package_id, path, "mentions")

    # links

    def link(self, link: Any) -> Reference:
        span = link.span
        href = link.target.strip()
        origin = "image" if link.kind == "image" else ("wiki" if link.kind == "wiki" else "link")
        if link.kind == "wiki":
            return self.wiki(link, span)
        if link.kind == "autolink" or not href or href.startswith("//") or _SCHEME.match(href):
            if href.startswith("file:"):
                return Reference(origin, span, href, "none")
            return Reference(origin, span, href, "external")
        path_part, _, anchor = href.partition("#")
        path_part = path_part.split("?", 1)[0]
        path_part = urllib.parse.unquote(path_part)
        if not path_part:
            return self.anchor_in(origin, span, href, self.facts.path, anchor)
        base = "" if path_part.startswith("/") else self.doc_dir
        target = normalise(f"{base}/{path_part.lstrip('/')}" if base else path_part.lstrip("/"))
        if target is None:
            return Reference(origin, span, href, "outside-root",
                             message=f"`{href}` points outside the repository")
        if target == "":
            return Reference(origin, span, href, "existing", target_path="")
        target, kind = self.probe(target)
        if kind is None and path_part.startswith("/"):
            # documentation sites (VitePress, Docusaurus, MkDocs) serve a subdirectory at `/`, and files from
            # its `public/` or `static/`: try the document's ancestors, nearest first
            for ancestor in parent_dirs(self.facts.path):
                for served in ("", "/public", "/static"):
                    found, found_kind = self.probe(normalise(f"{ancestor}{served}/{path_part.lstrip('/')}") or "")
                    if found_kind is not None:
                        target, kind = found, found_kind
                        break
                if kind is not None:
                    break
        if kind is None:
            if self.u.rules.is_ignored_anywhere(target):
                return Reference(origin, span, href, "ignored", target_path=target)
            self.deps.add(("fuzzy",))  # its finding suggests near paths: re-resolve when paths come or go
            return Reference(origin, span, href, "broken", target_path=target, message=f"`{href}` does not exist")
        if origin == "image":
            return Reference(origin, span, href, "existing", target_path=target)
        if kind == DOCUMENT:
            if target == self.facts.path:
                return self.anchor_in(origin, span, href, target, anchor)
            reference = self.anchor_in(origin, span, href, target, anchor)
            return Reference(origin, span, href, reference.status, entity_id(DOCUMENT, target), target,
                             "links-to", anchor=anchor or None, line=reference.line, candidates=reference.candidates,
                             message=reference.message)
        line = None
        if anchor and _LINE_ANCHOR.match(anchor):
            line = int(re.match(r"L(\d+)", anchor).group(1)) - 1  # type: ignore[union-attr]
        reference = self.path_reference(origin, span, href, target, line)
        return reference

    def probe(self, target: str) -> tuple[str, str | None]:
        """A link target as written, else the Markdown source a documentation site publishes it from:
        `guide` or `guide.html` -> `guide.md`, a folder `guide/` that holds an index.md -> `guide/index.md`."""
        kind = self.u.path_kind(target, self.deps) if target else None
        if kind == "directory":
            # a documentation site serves a folder (`/guide/browser/`) as the page in it named index.md
            index = f"{target}/index.md"
            if self.u.path_kind(index, self.deps) == DOCUMENT:
                return index, DOCUMENT
        if kind is not None or not target or target.lower().endswith((".md", ".markdown")):
            return target, kind
        source = (target[:-5] if target.lower().endswith(".html") else target) + ".md"
        if self.u.path_kind(source, self.deps) == DOCUMENT:
            return source, DOCUMENT
        return target, kind

    def anchor_in(self, origin: str, span: Span, href: str, path: str, anchor: str) -> Reference:
        """Check `#anchor` against the target document's heading slugs (own headings for `#x`)."""
        if path != self.facts.path:
            self.deps.add(("slugs", path))
        index = self.headings(path)
        target_id = entity_id(DOCUMENT, path)
        if not anchor or _LINE_ANCHOR.match(anchor):
            return Reference(origin, span, href, "resolved", target_id, path)
        heading = index.find(anchor)
        if heading is not None:
            return Reference(origin, span, href, "resolved", target_id, path, anchor=anchor, line=heading.line)
        suggestions = index.suggestions(urllib.parse.unquote(anchor).lower())
        shown = path if path != self.facts.path else "this document"
        return Reference(origin, span, href, "anchor-missing", target_id, path, anchor=anchor,
                         candidates=suggestions, message=f"`#{anchor}` is not a heading in {shown}")

    def wiki(self, link: Any, span: Span) -> Reference:
        raw = link.target
        name, _, heading = raw.partition("#")
        name = name.strip()
        anchor = _slug(heading) if heading else ""
        if not name:
            return self.anchor_in("wiki", span, raw, self.facts.path, anchor)
        probes = []
        for base in ([self.doc_dir] if self.doc_dir else []) + [""]:
            joined = normalise(f"{base}/{name}" if base else name)
            if joined:
                probes.extend([joined, joined + ".md"])
        for probe in probes:
            if self.u.path_kind(probe, self.deps) == DOCUMENT:
                return self.wiki_hit(span, raw, probe, anchor)
        stem = name.rsplit("/", 1)[-1].lower().removesuffix(".md")
        self.deps.add(("stem", stem))
        same = sorted(self.u.stems.get(stem, ()))
        if len(same) == 1:
            return self.wiki_hit(span, raw, same[0], anchor)
        if "/" in name or name.lower().endswith(".md"):
            return Reference("wiki", span, raw, "broken", message=f"`[[{raw}]]` matches no document")
        return Reference("wiki", span, raw, "none")

    def wiki_hit(self, span: Span, raw: str, path: str, anchor: str) -> Reference:
        if path == self.facts.path:
            return self.anchor_in("wiki", span, raw, path, anchor)
        reference = self.anchor_in("wiki", span, raw, path, anchor)
        return Reference("wiki", span, raw, reference.status, entity_id(DOCUMENT, path), path, "links-to",
                         anchor=anchor or None, line=reference.line, candidates=reference.candidates,
                         message=reference.message)

    # declarations

    def declaration_ref(self, ref: str) -> tuple[str | None, str | None]:
        """Resolve a `covers` reference: entity id, ownership id, path or package name."""
        assert self.u.layout is not None
        ref = ref.strip()
        kind, _, value = ref.partition(":")
        if value and kind in (DOCUMENT, MODULE, AREA):
            path_kind = self.u.path_kind(value.rstrip("/"), self.deps)
            return (ref, value) if path_kind == kind else (None, None)
        if value and kind == PACKAGE:
            self.deps.add(("all",))
            info = self.u.layout.package_by_id(ref)
            return (ref, info.directory) if info else (None, None)
        for record in self.u.config.ownership:
            if record.id == ref:
                ref = record.path
                break
        path = normalise(ref.removeprefix("./").rstrip("/"))
        if path:
            path_kind = self.u.path_kind(path, self.deps)
            if path_kind == DOCUMENT:
                return entity_id(DOCUMENT, path), path
            if path_kind == MODULE:
                return entity_id(MODULE, path), path
            if path_kind == AREA:
                return entity_id(AREA, path), path
            if path_kind == PACKAGE:
                return self.u.layout.packages[path].id, path
            if path_kind in ("directory", "file"):
                return "", path
        package = self.u.package_for_name(ref, self.deps)
        if package is not None:
            info = self.u.layout.package_by_id(package)
            return package, info.directory if info else None
        return None, None


_SITE_SLUG_SPECIAL = re.compile(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"'\u201c\u201d\u2018\u2019<>,.?/]+")
_COMBINING = re.compile(r"[\u0300-\u036f]")


class HeadingIndex:
    """A document's headings by GitHub slug and by site-style slug (the first heading of each), with the
    near-slug suggestions for a missing anchor memoised: resolving n anchors costs O(n + headings), not
    O(n * headings)."""

    __slots__ = ("_by_site", "_by_slug", "_slugs", "_suggested", "headings")

    def __init__(self, headings: Iterable[Any]) -> None:
        self.headings = tuple(headings)
        self._by_slug: dict[str, Any] = {}
        for heading in self.headings:
            self._by_slug.setdefault(heading.slug, heading)
        self._by_site: dict[str, Any] | None = None
        self._slugs = [heading.slug for heading in self.headings]
        self._suggested: dict[str, tuple[str, ...]] = {}

    def find(self, anchor: str) -> Any | None:
        """The heading an `#anchor` names: its GitHub slug, else the site-style slug of its text."""
        wanted = urllib.parse.unquote(anchor).lower()
        found = self._by_slug.get(wanted)
        if found is None:  # documentation sites' slugs turn punctuation into hyphens (`## ssr.external`)
            if self._by_site is None:
                self._by_site = {}
                for heading in self.headings:
                    self._by_site.setdefault(site_slug(heading.text), heading)
            found = self._by_site.get(wanted)
        return found

    def suggestions(self, wanted: str) -> tuple[str, ...]:
        """Up to three slugs close to a missing anchor."""
        found = self._suggested.get(wanted)
        if found is None:
            found = tuple(c for c, _, _ in process.extract(
                wanted, self._slugs, scorer=JaroWinkler.normalized_similarity, limit=3, score_cutoff=0.7)
            ) if self._slugs else ()
            self._suggested[wanted] = found
        return found


def find_heading(headings: Iterable[Any], anchor: str) -> Any | None:
    """The heading an `#anchor` names: its GitHub slug, else the site-style slug of its text."""
    return HeadingIndex(headings).find(anchor)


@functools.lru_cache(maxsize=16384)
def site_slug(text: str) -> str:
    """The heading anchor of VitePress and markdown-it-anchor: accents dropped, runs of punctuation and
    spaces to one hyphen, trimmed, lowercase (a leading digit gets `_`)."""
    slug = _COMBINING.sub("", unicodedata.normalize("NFKD", text))
    slug = _SITE_SLUG_SPECIAL.sub("-", slug).strip("-")
    slug = re.sub(r"^(\d)", r"_\1", slug)
    return slug.lower()


def _slug(text: str) -> str:
    from engine.discovery.markdown import slugify
    return slugify(text)


def resolve_document(universe: Universe, facts: MarkdownFacts) -> DocumentResolution:
    resolver = _DocumentResolver(universe, facts)
    references: list[Reference] = []
    link_spans = set()
    for link in facts.links:
        reference = resolver.link(link)
        references.append(reference)
        link_spans.add((link.line, link.column))
        if link.kind in ("inline", "reference") and link.text and not link.in_code:
            text_ref = resolver.token(link.text, link.span, "link-text")
            if text_ref.relation and text_ref.target != reference.target:
                references.append(text_ref)
    for span in facts.code_spans:
        references.append(resolver.token(span.text, span.span, "code"))
    declared: list[tuple[str, str, str]] = []
    endpoints: list[tuple[int, str | None, str | None]] = []
    for index, declaration in enumerate(facts.declarations):
        span = Span(declaration.line, declaration.column, declaration.line, declaration.end_column)
        target, path = resolver.declaration_ref(declaration.ref)
        if declaration.kind == "covers":
            if target:
                references.append(Reference("covers", span, declaration.ref, "resolved", target, path, "covers",
                                            confidence="declared"))
            elif target == "":
                references.append(Reference("covers", span, declaration.ref, "existing", target_path=path))
            else:
                references.append(Reference("covers", span, declaration.ref, "unresolved",
                                            message=f"`{declaration.ref}` matches no document, module, area "
                                                    f"or package"))
        else:
            other, _ = resolver.declaration_ref(declaration.target)
            endpoints.append((index, target or None, other or None))
            if target and other:
                declared.append((target, other, declaration.relation_kind))
                references.append(Reference("relation", span, declaration.ref, "resolved", target, path,
                                            confidence="declared"))
            else:
                missing = declaration.ref if not target else declaration.target
                references.append(Reference("relation", span, declaration.ref, "unresolved",
                                            message=f"declared relation endpoint `{missing}` does not resolve"))
    references.sort(key=lambda r: (r.span.line, r.span.column, r.origin))
    relations, truncated = _document_relations(facts, references, universe.config.limits.relations_per_document)
    notes = []
    ambiguous: dict[str, list[Reference]] = defaultdict(list)
    for reference in references:
        if reference.status == "ambiguous" and reference.symbol:
            ambiguous[reference.symbol].append(reference)
    for symbol, refs in sorted(ambiguous.items()):
        notes.append((f"mentions-symbol:{facts.path}:{symbol}",
                      f'"{symbol}" is exported by {len(refs[0].candidates)} modules; the reference is '
                      f"ambiguous and produced no relation."))
    if truncated:
        notes.append((f"relations:{facts.path}",
                      f"Document references more than {universe.config.limits.relations_per_document} "
                      f"entities; the remainder was not recorded."))
    return DocumentResolution(facts.path, relations, tuple(references), tuple(notes), tuple(sorted(resolver.deps)),
                              truncated, tuple(sorted(set(declared))), tuple(endpoints))


def _document_relations(facts: MarkdownFacts, references: Iterable[Reference], cap: int) -> tuple[
        tuple[Relation, ...], bool]:
    source = entity_id(DOCUMENT, facts.path)
    groups: dict[tuple[str, str, str], list[Reference]] = {}
    order: list[tuple[str, str, str]] = []
    truncated = False
    for reference in references:
        if not reference.relation or not reference.target or reference.status not in (
                "resolved", "fuzzy", "anchor-missing"):
            continue
        if reference.target == source:
            continue
        key = (reference.relation, reference.target, reference.symbol or "")
        if key not in groups:
            if len(groups) >= cap:
                truncated = True
                continue
            groups[key] = []
            order.append(key)
        groups[key].append(reference)
    relations = []
    for key in order:
        refs = groups[key]
        evidence: list[Evidence] = []
        lines: set[int] = set()
        for ref in refs:
            if ref.span.line in lines or len(evidence) >= MAX_EVIDENCE:
                continue
            lines.add(ref.span.line)
            evidence.append(Evidence(facts.path, ref.span.line, ref.span.column, ref.span.end_line,
                                     ref.span.end_column))
        kind, target, symbol = key
        exact = [r for r in refs if r.confidence in ("observed", "declared")]
        if kind == "covers":
            confidence, provenance = "declared", "declared"
        else:
            confidence, provenance = ("observed" if exact else "fuzzy"), "observed"
        metadata: list[tuple[str, Any]] = []
        anchors = sorted({r.anchor for r in refs if r.anchor})
        if anchors and kind == "links-to":
            metadata.append(("anchors", tuple(anchors)))
        if confidence == "fuzzy":
            metadata.append(("written", tuple(sorted({r.text for r in refs}))))
        relations.append(Relation(source, target, kind, tuple(evidence), confidence, provenance, tuple(metadata),
                                  symbol))
    relations.sort(key=lambda r: r.key)
    return tuple(relations), truncated

