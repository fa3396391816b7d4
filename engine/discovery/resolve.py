"""Cross-file resolution: links, mentions, declarations and imports become relations.

The `Universe` indexes what exists (files, directories, documents, modules, packages, areas, declared
symbols). Resolving a file is a function of its facts and the universe; every universe lookup records a
dependency key, so that when the universe changes the workspace re-resolves exactly the files whose
lookups could answer differently (see `Workspace.update`).
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

from engine.config import Config
from engine.discovery.analyze import ANALYZER_VERSIONS
from engine.discovery.files import DEFAULT_EXCLUDED_DIRS, MODULE_EXTENSIONS, IgnoreRules, normalise, parent_dirs
from engine.discovery.layout import Layout, build_layout
from engine.model import (
    AREA,
    DOCUMENT,
    EXTERNAL,
    MODULE,
    PACKAGE,
    CodeSpan,
    Evidence,
    Import,
    MarkdownFacts,
    ModuleFacts,
    PackageFacts,
    Relation,
    Span,
    TsconfigFacts,
    entity_id,
)

RESOLVER_VERSION = "1.2.0"


def analyzer_versions() -> dict[str, str]:
    """Every analyzer's version and the resolver's: what snapshots and input fingerprints record."""
    return {**ANALYZER_VERSIONS, "resolve": RESOLVER_VERSION}
FUZZY_THRESHOLD = 0.92
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
_PROBE_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
SOURCE_EXTENSIONS = (".md", ".markdown", *MODULE_EXTENSIONS, ".json", ".yaml", ".yml", ".toml")

Key = tuple[str, ...]


@dataclass(slots=True, unsafe_hash=True)
class Reference:
    """What one link, inline code span or declaration in a document resolved to.

    `status`: resolved | fuzzy | ambiguous | existing (a real path with no entity) | broken | outside-root |
    anchor-missing | unresolved (looks like a repository path, matches nothing) | external | ignored | none.
    """

    origin: str  # link | image | wiki | code | link-text | covers | relation
    span: Span
    text: str
    status: str
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


@dataclass(slots=True)
class DocumentResolution:
    path: str
    relations: tuple[Relation, ...]
    references: tuple[Reference, ...]
    notes: tuple[tuple[str, str], ...]
    deps: frozenset[Key]
    truncated: bool = False
    declared_relations: tuple[tuple[str, str, str], ...] = ()  # (from id, to id, kind)


@dataclass(slots=True)
class ImportOutcome:
    imp: Import
    target: str | None
    status: str  # resolved | package | external | unresolved


@dataclass(slots=True)
class ModuleResolution:
    path: str
    relations: tuple[Relation, ...]
    imports: tuple[ImportOutcome, ...]
    deps: frozenset[Key]


# --------------------------------------------------------------------------------------------------


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


@dataclass(slots=True)
class Universe:
    """Everything that exists, indexed for resolution. Mutated only by the workspace's single writer."""

    config: Config
    rules: IgnoreRules
    documents: dict[str, MarkdownFacts] = field(default_factory=dict)
    modules: dict[str, ModuleFacts] = field(default_factory=dict)
    manifests: dict[str, PackageFacts] = field(default_factory=dict)
    tsconfigs: dict[str, TsconfigFacts] = field(default_factory=dict)
    other: set[str] = field(default_factory=set)
    dir_counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    owners: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    reexporters: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    basenames: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    stems: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    layout: Layout | None = None
    _fuzzy: list[str] | None = None
    _fuzzy_matches: dict[tuple[str, int, float], list[tuple[str, float]]] = field(default_factory=dict)
    _package_names: dict[str, str] | None = None
    _short_names: dict[str, str] | None = None
    _tsconfig_for_dir: dict[str, TsconfigFacts | None] = field(default_factory=dict)
    _suggest_choices: list[str] | None = None
    _suggestions: dict[tuple[str, int, float], list[str]] = field(default_factory=dict)

    # ---- mutation (returns the dependency keys whose answers changed)

    def _add_path(self, path: str, keys: set[Key]) -> None:
        self._suggest_choices = None
        keys.add(("path", path))
        keys.add(("dir-files", _dirname(path)))
        for directory in parent_dirs(path):
            self.dir_counts[directory] += 1
            if self.dir_counts[directory] == 1:
                keys.add(("path", directory))

    def _remove_path(self, path: str, keys: set[Key]) -> None:
        self._suggest_choices = None
        keys.add(("path", path))
        keys.add(("dir-files", _dirname(path)))
        for directory in parent_dirs(path):
            self.dir_counts[directory] -= 1
            if self.dir_counts[directory] <= 0:
                del self.dir_counts[directory]
                keys.add(("path", directory))

    def exists(self, path: str) -> bool:
        return path in self.documents or path in self.modules or path in self.manifests or \
            path in self.tsconfigs or path in self.other

    def set_other(self, path: str, present: bool) -> set[Key]:
        keys: set[Key] = set()
        if present and not self.exists(path):
            self.other.add(path)
            self._add_path(path, keys)
        elif not present and path in self.other:
            self.other.discard(path)
            self._remove_path(path, keys)
        return keys

    def set_facts(self, path: str, facts: Any | None) -> set[Key]:
        """Insert, replace or (with None) remove the facts of one file."""
        keys: set[Key] = set()
        old = (self.documents.get(path) or self.modules.get(path) or self.manifests.get(path)
               or self.tsconfigs.get(path))
        if old is not None and facts is not None and type(old) is type(facts) and isinstance(
                facts, (MarkdownFacts, ModuleFacts)):
            return self._replace(old, facts)
        was_present = old is not None or path in self.other
        if old is not None:
            self._unindex(old, keys)
        self.other.discard(path)
        if facts is None:
            if was_present:
                self._remove_path(path, keys)
        else:
            if not was_present:
                self._add_path(path, keys)
            self._index(facts, keys)
        return keys

    def _replace(self, old: Any, new: Any) -> set[Key]:
        """A new version of a document or module: only what its neighbours can observe changed."""
        keys: set[Key] = set()
        if isinstance(new, MarkdownFacts):
            self.documents[new.path] = new
            if _anchors(old) != _anchors(new):
                keys.add(("slugs", new.path))
            return keys
        self.modules[new.path] = new
        before = {(e.name, e.declared) for e in old.exports if e.name not in ("*", "default")}
        after = {(e.name, e.declared) for e in new.exports if e.name not in ("*", "default")}
        for name, declared in before - after:
            (self.owners if declared else self.reexporters)[name].discard(new.path)
            keys.add(("sym", name))
        for name, declared in after - before:
            (self.owners if declared else self.reexporters)[name].add(new.path)
            keys.add(("sym", name))
        return keys

    def _index(self, facts: Any, keys: set[Key]) -> None:
        if isinstance(facts, MarkdownFacts):
            self.documents[facts.path] = facts
            self._names_added(facts.path, keys)
            stem = facts.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
            self.stems[stem].add(facts.path)
            keys.add(("stem", stem))
            keys.add(("slugs", facts.path))
        elif isinstance(facts, ModuleFacts):
            self.modules[facts.path] = facts
            self._names_added(facts.path, keys)
            for export in facts.exports:
                if export.name in ("*", "default"):
                    continue
                (self.owners if export.declared else self.reexporters)[export.name].add(facts.path)
                keys.add(("sym", export.name))
        elif isinstance(facts, PackageFacts):
            self.manifests[facts.path] = facts
            keys.add(("all",))
        elif isinstance(facts, TsconfigFacts):
            self.tsconfigs[facts.path] = facts
            self._tsconfig_for_dir.clear()
            keys.add(("all",))

    def _unindex(self, facts: Any, keys: set[Key]) -> None:
        if isinstance(facts, MarkdownFacts):
            self.documents.pop(facts.path, None)
            self._names_removed(facts.path, keys)
            stem = facts.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
            self.stems[stem].discard(facts.path)
            keys.add(("stem", stem))
            keys.add(("slugs", facts.path))
        elif isinstance(facts, ModuleFacts):
            self.modules.pop(facts.path, None)
            self._names_removed(facts.path, keys)
            for export in facts.exports:
                if export.name in ("*", "default"):
                    continue
                (self.owners if export.declared else self.reexporters)[export.name].discard(facts.path)
                keys.add(("sym", export.name))
        elif isinstance(facts, PackageFacts):
            self.manifests.pop(facts.path, None)
            keys.add(("all",))
        elif isinstance(facts, TsconfigFacts):
            self.tsconfigs.pop(facts.path, None)
            self._tsconfig_for_dir.clear()
            keys.add(("all",))

    def _names_added(self, path: str, keys: set[Key]) -> None:
        base = path.rsplit("/", 1)[-1]
        if path not in self.basenames[base]:
            self.basenames[base].add(path)
            keys.add(("base", base))
            keys.add(("fuzzy",))
            self._fuzzy = None

    def _names_removed(self, path: str, keys: set[Key]) -> None:
        base = path.rsplit("/", 1)[-1]
        if path in self.basenames[base]:
            self.basenames[base].discard(path)
            keys.add(("base", base))
            keys.add(("fuzzy",))
            self._fuzzy = None

    def refresh_layout(self, root_name: str = "root") -> set[Key]:
        """Recompute packages and areas; the keys name the areas and packages that appeared or went."""
        old = self.layout
        self.layout = build_layout(self.manifests.values(), self.modules.keys(), self.config, root_name)
        self._suggest_choices = None
        self._package_names = None
        self._short_names = None
        keys: set[Key] = set()
        if old is None or set(old.areas) != set(self.layout.areas):
            before = set(old.areas) if old else set()
            for path in before ^ set(self.layout.areas):
                keys.add(("path", path))
            keys.add(("fuzzy",))
            self._fuzzy = None
        if old is None or {p.id for p in old.packages.values()} != {p.id for p in self.layout.packages.values()}:
            keys.add(("all",))
        return keys

    # ---- lookups (each records its dependency key)

    def path_kind(self, path: str, deps: set[Key]) -> str | None:
        """document | module | area | package | directory | file | None."""
        deps.add(("path", path))
        if path in self.documents:
            return DOCUMENT
        if path in self.modules:
            return MODULE
        assert self.layout is not None
        if path in self.layout.areas:
            return AREA
        if path in self.layout.packages and path != ".":
            return PACKAGE
        if path in self.manifests or path in self.tsconfigs or path in self.other:
            return "file"
        if path in self.dir_counts:
            return "directory"
        return None

    def package_names(self) -> tuple[dict[str, str], dict[str, str]]:
        if self._package_names is None:
            assert self.layout is not None
            full = {p.facts.name: p.directory for p in self.layout.packages.values() if p.facts and p.facts.name}
            shorts: dict[str, list[str]] = defaultdict(list)
            for name, directory in full.items():
                shorts[name.rsplit("/", 1)[-1]].append(directory)
            self._package_names = full
            self._short_names = {s: d[0] for s, d in shorts.items() if len(d) == 1 and s not in full}
        assert self._short_names is not None
        return self._package_names, self._short_names

    def package_for_name(self, token: str, deps: set[Key]) -> str | None:
        full, short = self.package_names()
        directory = full.get(token) or short.get(token)
        if directory is None:
            return None
        assert self.layout is not None
        return self.layout.packages[directory].id

    def symbol_owners(self, name: str, deps: set[Key]) -> list[str]:
        deps.add(("sym", name))
        owners = self.owners.get(name)
        if owners:
            return sorted(owners)
        return sorted(self.reexporters.get(name, ()))

    def export_position(self, module: str, name: str) -> tuple[int, int] | None:
        facts = self.modules.get(module)
        if facts is None:
            return None
        for export in facts.exports:
            if export.name == name:
                return export.line, export.column
        return None

    def by_basename(self, base: str, deps: set[Key]) -> list[str]:
        deps.add(("base", base))
        return sorted(self.basenames.get(base, ()))

    def fuzzy_choices(self) -> list[str]:
        if self._fuzzy is None:  # dropped whenever a document, module or area comes or goes
            assert self.layout is not None
            self._fuzzy = sorted(set(self.documents) | set(self.modules) | set(self.layout.areas))
            self._fuzzy_matches = {}
        return self._fuzzy

    def fuzzy(self, token: str, deps: set[Key], limit: int = 3, cutoff: float = FUZZY_THRESHOLD) -> list[
            tuple[str, float]]:
        deps.add(("fuzzy",))
        choices = self.fuzzy_choices()
        if not choices:
            return []
        # memoised like `suggest`: a document's unresolved path-like spans are looked up on every re-resolution
        key = (token, limit, cutoff)
        cached = self._fuzzy_matches.get(key)
        if cached is None:
            low, high = len(token) * 0.6, len(token) * 1.67
            matches = process.extract(token, choices, scorer=JaroWinkler.normalized_similarity, limit=limit,
                                      score_cutoff=cutoff)
            cached = self._fuzzy_matches[key] = [(c, score) for c, score, _ in matches if low <= len(c) <= high]
        return list(cached)

    def suggest(self, target: str, limit: int = 3, cutoff: float = 0.9) -> list[str]:
        """Paths close to a missing one, best first (for remediation text and quick fixes)."""
        assert self.layout is not None
        if self._suggest_choices is None:  # dropped whenever a path or an area comes or goes
            self._suggest_choices = sorted(set(self.documents) | set(self.modules) | set(self.layout.areas)
                                           | self.other)
            self._suggestions = {}
        if not self._suggest_choices:
            return []
        # Memoised: an edited document's broken links are re-reported on every keystroke.
        key = (target, limit, cutoff)
        cached = self._suggestions.get(key)
        if cached is None:
            found = process.extract(target, self._suggest_choices, scorer=JaroWinkler.normalized_similarity,
                                    limit=limit, score_cutoff=cutoff)
            cached = self._suggestions[key] = [c for c, _, _ in found]
        return list(cached)

    def tsconfig_for(self, directory: str) -> TsconfigFacts | None:
        if directory in self._tsconfig_for_dir:
            return self._tsconfig_for_dir[directory]
        found = None
        probe = directory
        while True:
            for name in ("tsconfig.json", "jsconfig.json"):
                candidate = f"{probe}/{name}" if probe else name
                facts = self.tsconfigs.get(candidate)
                if facts is not None and (facts.paths or facts.base_url):
                    found = facts
                    break
            if found is not None or not probe:
                break
            probe = _dirname(probe)
        self._tsconfig_for_dir[directory] = found
        return found


# --------------------------------------------------------------------------------------------------
# Documents


class _DocumentResolver:
    def __init__(self, universe: Universe, facts: MarkdownFacts) -> None:
        self.u = universe
        self.facts = facts
        self.deps: set[Key] = set()
        self.doc_dir = _dirname(facts.path)
        self.notes: list[tuple[str, str]] = []

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
            directory = _dirname(path) or "."
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
        `guide` or `guide.html` -> `guide.md`."""
        kind = self.u.path_kind(target, self.deps) if target else None
        if kind is not None or not target or target.lower().endswith((".md", ".markdown")):
            return target, kind
        source = (target[:-5] if target.lower().endswith(".html") else target) + ".md"
        if self.u.path_kind(source, self.deps) == DOCUMENT:
            return source, DOCUMENT
        return target, kind

    def anchor_in(self, origin: str, span: Span, href: str, path: str, anchor: str) -> Reference:
        """Check `#anchor` against the target document's heading slugs (own headings for `#x`)."""
        if path == self.facts.path:
            headings = self.facts.headings
        else:
            self.deps.add(("slugs", path))
            target_facts = self.u.documents.get(path)
            headings = target_facts.headings if target_facts else ()
        target_id = entity_id(DOCUMENT, path)
        if not anchor or _LINE_ANCHOR.match(anchor):
            return Reference(origin, span, href, "resolved", target_id, path)
        wanted = urllib.parse.unquote(anchor).lower()
        heading = find_heading(headings, anchor)
        if heading is not None:
            return Reference(origin, span, href, "resolved", target_id, path, anchor=anchor, line=heading.line)
        slugs = [h.slug for h in headings]
        suggestions = tuple(c for c, _, _ in process.extract(
            wanted, slugs, scorer=JaroWinkler.normalized_similarity, limit=3, score_cutoff=0.7)) if slugs else ()
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


def find_heading(headings: Iterable[Any], anchor: str) -> Any | None:
    """The heading an `#anchor` names: its GitHub slug, else the site-style slug of its text."""
    wanted = urllib.parse.unquote(anchor).lower()
    headings = tuple(headings)
    found = next((h for h in headings if h.slug == wanted), None)
    if found is None:  # documentation sites' slugs turn punctuation into hyphens (`## ssr.external`)
        found = next((h for h in headings if site_slug(h.text) == wanted), None)
    return found


def _anchors(facts: MarkdownFacts) -> frozenset[str]:
    """Every anchor a document answers to; documents linking into it depend on this set, not on lines."""
    return facts.slugs | {site_slug(h.text) for h in facts.headings}


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
    for declaration in facts.declarations:
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
    return DocumentResolution(facts.path, relations, tuple(references), tuple(notes), frozenset(resolver.deps),
                              truncated, tuple(sorted(set(declared))))


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


# --------------------------------------------------------------------------------------------------
# Modules


class _ModuleResolver:
    def __init__(self, universe: Universe, facts: ModuleFacts) -> None:
        self.u = universe
        self.facts = facts
        self.deps: set[Key] = set()

    def probe(self, path: str) -> str | None:
        """Extension and `index` probing, and `.js` written for a `.ts` source."""
        self.deps.add(("dir-files", _dirname(path)))
        self.deps.add(("dir-files", path))
        modules = self.u.modules
        if path in modules:
            return path
        for ext in _PROBE_EXTENSIONS:
            if path + ext in modules:
                return path + ext
        for ext in _PROBE_EXTENSIONS:
            if f"{path}/index{ext}" in modules:
                return f"{path}/index{ext}"
        stem, dot, ext = path.rpartition(".")
        if dot and "." + ext in _JS_TO_TS:
            for replacement in _JS_TO_TS["." + ext]:
                if stem + replacement in modules:
                    return stem + replacement
        return None

    def resolve(self, specifier: str) -> tuple[str | None, str]:
        if specifier.startswith((".", "/")):
            base = _dirname(self.facts.path) if specifier.startswith(".") else ""
            joined = normalise(f"{base}/{specifier}" if base else specifier.lstrip("/"))
            if joined is None:
                return None, "unresolved"
            found = self.probe(joined)
            return (entity_id(MODULE, found), "resolved") if found else (None, "unresolved")
        package = self.workspace_package(specifier)
        if package is not None:
            return package
        aliased = self.tsconfig_paths(specifier)
        if aliased is not None:
            return entity_id(MODULE, aliased), "resolved"
        name = specifier.split("/")
        external = "/".join(name[:2]) if specifier.startswith("@") and len(name) > 1 else name[0]
        return entity_id(EXTERNAL, external), "external"

    def workspace_package(self, specifier: str) -> tuple[str | None, str] | None:
        self.deps.add(("all",))
        full, _ = self.u.package_names()
        best = None
        for name in full:
            if (specifier == name or specifier.startswith(name + "/")) and (best is None or len(name) > len(best)):
                best = name
        if best is None:
            return None
        assert self.u.layout is not None
        info = self.u.layout.packages[full[best]]
        directory = "" if info.directory == "." else info.directory
        prefix = f"{directory}/" if directory else ""
        subpath = specifier[len(best):].lstrip("/")
        candidates: list[str] = []
        if subpath:
            candidates += [f"{prefix}{subpath}", f"{prefix}src/{subpath}"]
        else:
            for entry in info.facts.entry_points if info.facts else ():
                entry = entry.removeprefix("./")
                candidates.append(f"{prefix}{entry}")
                for built in ("dist/", "build/", "lib/", "out/"):
                    if entry.startswith(built):
                        candidates.append(f"{prefix}src/{entry[len(built):]}")
            candidates += [f"{prefix}src/index", f"{prefix}index"]
        for candidate in candidates:
            normalised = normalise(candidate)
            if normalised:
                for guess in (normalised, normalised.rsplit(".", 1)[0] if "." in normalised.rsplit("/", 1)[-1]
                              else normalised):
                    found = self.probe(guess)
                    if found:
                        return entity_id(MODULE, found), "resolved"
        return info.id, "package"

    def tsconfig_paths(self, specifier: str) -> str | None:
        self.deps.add(("all",))
        tsconfig = self.u.tsconfig_for(_dirname(self.facts.path))
        if tsconfig is None:
            return None
        config_dir = _dirname(tsconfig.path)
        base = normalise(f"{config_dir}/{tsconfig.base_url}" if config_dir else tsconfig.base_url or ".") \
            if tsconfig.base_url else config_dir
        base = base or ""
        for pattern, targets in tsconfig.paths:
            if "*" in pattern:
                prefix, _, suffix = pattern.partition("*")
                if not (specifier.startswith(prefix) and specifier.endswith(suffix)
                        and len(specifier) >= len(prefix) + len(suffix)):
                    continue
                star = specifier[len(prefix):len(specifier) - len(suffix)]
            elif pattern == specifier:
                star = ""
            else:
                continue
            for target in targets:
                joined = normalise(f"{base}/{target.replace('*', star)}" if base else target.replace("*", star))
                if joined:
                    found = self.probe(joined)
                    if found:
                        return found
        if tsconfig.base_url:
            joined = normalise(f"{base}/{specifier}" if base else specifier)
            if joined:
                return self.probe(joined)
        return None


def resolve_module(universe: Universe, facts: ModuleFacts) -> ModuleResolution:
    resolver = _ModuleResolver(universe, facts)
    source = entity_id(MODULE, facts.path)
    outcomes: list[ImportOutcome] = []
    groups: dict[tuple[str, str], list[Import]] = {}
    for imp in facts.imports:
        target, status = resolver.resolve(imp.specifier)
        outcomes.append(ImportOutcome(imp, target, status))
        if target is None or target == source:
            continue
        kind = "re-exports" if imp.kind == "re-export" else "imports"
        groups.setdefault((kind, target), []).append(imp)
    relations = []
    for (kind, target), imports in sorted(groups.items()):
        evidence = tuple(Evidence(facts.path, i.line, i.column, i.end_line, i.end_column)
                         for i in imports[:MAX_EVIDENCE])
        detections = tuple(sorted({i.kind for i in imports}))
        relations.append(Relation(source, target, kind, evidence, "observed", "observed",
                                  (("detection", detections),)))
    return ModuleResolution(facts.path, tuple(relations), tuple(outcomes), frozenset(resolver.deps))


__all__ = ["CodeSpan", "DocumentResolution", "ModuleResolution", "Reference", "Universe", "resolve_document",
           "resolve_module"]
