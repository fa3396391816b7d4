"""Resolving one document against the universe: links, mentions and frontmatter declarations become
references (what each one names, with its status) and relations (the evidence the model keeps).

A pure function of the document's facts and the universe; every universe lookup records a dependency key
(see `docbridge.engine.discovery.universe`), so the workspace knows which documents to re-resolve after a change.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from docbridge.engine.base.heap import sorted_in_runs
from docbridge.engine.base.model import (
    AREA,
    DOCUMENT,
    MODULE,
    PACKAGE,
    Evidence,
    FenceToken,
    Heading,
    MarkdownFacts,
    Positional,
    Positioned,
    Relation,
    Span,
    entity_id,
)
from docbridge.engine.discovery.files import (
    DEFAULT_EXCLUDED_DIRS,
    MARKDOWN_EXTENSIONS,
    MODULE_EXTENSIONS,
    normalise,
    parent_dirs,
)
from docbridge.engine.discovery.imports import manifest_file_module
from docbridge.engine.discovery.layout import UNIT_PAGES
from docbridge.engine.discovery.markdown import site_slug
from docbridge.engine.discovery.roles import DOCS_SITE, GENERATED, SOURCE, UNCHECKED_DOCUMENT_ROLES
from docbridge.engine.discovery.routes import clean_route, route_name, routes_of
from docbridge.engine.discovery.surface import declaration_of, public_declarations
from docbridge.engine.discovery.universe import Key, Universe, dirname, members, shared_keys
from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

MAX_EVIDENCE = 8
MAX_UNIT_MODULES = 16  # modules a README covers in a folder that is no area
CONVENTION_DECLARATIONS = 3  # declarations of one name in one package that make it a convention
INDEX_NAMES = frozenset({"index", "readme", "_index", "intro", "introduction", "overview", "changelog"})
MAX_TOKEN = 256
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_SPACE = re.compile(r"\s")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
_PLAIN_WORD = re.compile(r"^[a-z]+$")  # a package's short name that is also a word (`types`, `utils`, `parser`)
_PACKAGE_WORD = re.compile(r"\b(?:packages?|pacotes?)\b", re.I)
_LOCATION_SUFFIX = re.compile(
    r"^(?P<path>.+?)(?::(?P<line>\d+)(?::\d+)?|#L(?P<hline>\d+)(?:C\d+)?(?:-L?\d+(?:C\d+)?)?)$")
_NOT_A_PATH = re.compile(r"[\s*?\[\]{}()<>|;&$=!\"',`\\^~%]")
_PATH_SEGMENT = re.compile(r"^[\w.@+-]+$")
_LINE_ANCHOR = re.compile(r"^L\d+")
# a file or folder of a GitHub repository at a ref: `https://github.com/<owner>/<name>/blob/<ref>/<path>#L12`
_GITHUB_FILE = re.compile(r"^https?://(?:www\.)?github\.com/(?P<repository>[\w.-]+/[\w.-]+)/(?:blob|tree)/[^/?#]+/"
                          r"(?P<path>[^?#]+)(?:\?[^#]*)?(?:#L(?P<line>\d+)\S*)?$")
SOURCE_EXTENSIONS = (".md", ".markdown", *MODULE_EXTENSIONS, ".json", ".yaml", ".yml", ".toml")
# `getQuery(event)`, `new Hono()`, `defineConfig<T>({ ... })`: a call names its callee
_CALL_FORM = re.compile(r"^(?:new\s+)?(?P<callee>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*(?:<[^()]*>)?\(.*\)$", re.S)
# a name written as code: camelCase, PascalCase, snake_case or `$`; a plain lowercase word may be prose
_CODE_LIKE = re.compile(r"[A-Z_$]|[a-z][0-9]")
_STAND_IN = re.compile(r"^(?:stubs?|noop|shims?|[\w-]+[.-]stub)\.[cm]?[jt]sx?$", re.I)
_METHOD_FORM = re.compile(r"^\.[A-Za-z_$][\w$]*(?:\(.*\))?$")
_CHAINED_CALL = re.compile(r"\)\s*\.\s*[A-Za-z_$]")
_NEW_FORM = re.compile(r"^new\s+(?P<callee>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)$")
_WORDS = re.compile(r"[a-z0-9]+")
_DECLARATION_FILES = (".d.ts", ".d.mts", ".d.cts")
# words of the language and its runtime: never a mention of a repository's export, whoever declares one
NOT_SYMBOLS = frozenset(
    "default string number boolean bigint symbol object undefined null true false void never unknown any this "
    "super new typeof instanceof in of as is keyof readonly async await yield function class const let var return "
    "if else for while do switch case break continue export import from extends implements interface type enum "
    "namespace declare module require Promise Array Object Map Set WeakMap WeakSet Error TypeError RangeError "
    "Date RegExp JSON Math Number String Boolean Symbol Function Proxy Reflect console window document globalThis "
    "process Buffer NaN Infinity".split())


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
    SAME_NAME = "same-name"  # a symbol several packages declare alike, the context not saying which
    UNVERIFIED = "unverified"  # a site route no page here serves: the site may serve it from elsewhere
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


KNOWN_EXTENSIONS = frozenset({"md", "mdx", "markdown", "ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts", "json",
                              "yaml", "yml", "toml", "css", "scss", "html", "svg", "png", "jpg", "txt", "vue",
                              "svelte", "astro"})


_UNSETTLED = frozenset({ReferenceStatus.AMBIGUOUS, ReferenceStatus.SAME_NAME, ReferenceStatus.UNRESOLVED})


def _within(inner: Positioned, outer: Positioned) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and \
        (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _route_like(written: str) -> bool:
    """A link that names a site's route rather than a file: no extension (or `.html`), or a trailing slash."""
    last = written.rstrip("/").rsplit("/", 1)[-1]
    # `eslint-v3.8.0-released` is a route too: only a known file extension makes a file
    return written.endswith("/") or _extension(last) not in KNOWN_EXTENSIONS or last.lower().endswith((".html", ".htm"))


# Folder names every project has: in a documentation site's pages they name the reader's project, not this one
PROJECT_FOLDERS = frozenset({"src", "app", "apps", "lib", "pages", "routes", "components", "public", "static", "test",
                             "tests", "config", "content", "assets", "styles", "server", "client", "api", "utils",
                             "types", "scripts", "dist", "build", "docs", "packages"})
PLACEHOLDER_SEGMENTS = frozenset({"xxx", "foo", "bar", "baz", "qux", "path", "my-app", "my-project", "your-project",
                                  "your-app", "example.com"})
_ABOUT_THIS_REPOSITORY = re.compile(r"contribut|(^|/)(development|hacking|maintain\w*|architecture|agents|claude|"
                                    r"copilot-instructions|internals?)(\.\w+)?$|(^|/)(maintain\w*|internals?)/", re.I)


def about_this_repository(path: str) -> bool:
    """Contributor documentation (CONTRIBUTING, architecture, maintainer and agent notes): every path it names is
    one of this repository's."""
    return bool(_ABOUT_THIS_REPOSITORY.search(path))


_NAMES_TARGET = frozenset({ReferenceStatus.RESOLVED, ReferenceStatus.FUZZY, ReferenceStatus.ANCHOR_MISSING,
                           ReferenceStatus.UNVERIFIED})
_NAVIGABLE = _NAMES_TARGET | {ReferenceStatus.EXISTING}
S = ReferenceStatus


_RARE_NONE = (None, None, None, (), "observed", None)  # anchor, line, column, candidates, confidence, message


class Reference(Positional):
    """What one link, inline code span or declaration in a document resolved to (`status`: see
    `ReferenceStatus`; given as its string value, stored as the enum).

    Fields: origin (link | image | wiki | code | link-text | covers | relation), span, text, status, target,
    target_path, relation, anchor, line and column (a line inside the target: symbol declarations, `path:42`,
    `#L42`), symbol, candidates, confidence, message. A reference holds what its span was read from (the link
    or code span of the facts, itself positioned) instead of a span of its own, and its rarely set fields in one
    tuple: a tenth of a scanned model's memory was references (208 bytes each with their span, 96 now; 575,000
    references on a 100,000-file tree)."""

    __slots__ = ("_rare", "at", "origin", "relation", "status", "symbol", "target", "target_path", "text")
    origin: str
    at: Positioned  # where it is written: its `span` without one made (what it was read from, or a span)
    text: str
    status: ReferenceStatus
    target: str | None
    target_path: str | None
    relation: str | None
    symbol: str | None
    _rare: tuple[Any, ...] | None

    def __init__(self, origin: str, span: Positioned, text: str, status: ReferenceStatus | str,
                 target: str | None = None, target_path: str | None = None, relation: str | None = None,
                 anchor: str | None = None, line: int | None = None, column: int | None = None,
                 symbol: str | None = None, candidates: tuple[str, ...] = (), confidence: str = "observed",
                 message: str | None = None) -> None:
        self.origin, self.at, self.text = origin, span, text
        # a dictionary read, not Enum's call (300,000 per 10,000 documents)
        self.status = status if type(status) is ReferenceStatus else (
            _STATUS_OF.get(status) or ReferenceStatus(status))
        self.target, self.target_path, self.relation, self.symbol = target, target_path, relation, symbol
        rare = (anchor, line, column, candidates, confidence, message)
        self._rare = None if rare == _RARE_NONE else rare

    @property
    def span(self) -> Span:
        at = self.at
        return at if type(at) is Span else Span(at.line, at.column, at.end_line, at.end_column)

    @property
    def anchor(self) -> str | None:
        return None if self._rare is None else self._rare[0]

    @property
    def line(self) -> int | None:
        return None if self._rare is None else self._rare[1]

    @property
    def column(self) -> int | None:
        return None if self._rare is None else self._rare[2]

    @property
    def candidates(self) -> tuple[str, ...]:
        return () if self._rare is None else self._rare[3]

    @property
    def confidence(self) -> str:
        return "observed" if self._rare is None else self._rare[4]

    @property
    def message(self) -> str | None:
        return None if self._rare is None else self._rare[5]

    def _values(self) -> tuple[Any, ...]:
        """The constructor's arguments, in its order (what pickling and equality read)."""
        return (self.origin, self.at, self.text, self.status, self.target, self.target_path, self.relation,
                *(self._rare or _RARE_NONE)[:3], self.symbol, *(self._rare or _RARE_NONE)[3:])

    def __reduce__(self) -> tuple[Any, ...]:
        return (Reference, self._values())

    def _key(self) -> tuple[Any, ...]:
        at = self.at
        return (self.origin, at.line, at.column, at.end_line, at.end_column, *self._values()[2:])

    def __eq__(self, other: object) -> bool:
        if type(other) is not Reference:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        names = ("origin", "span", "text", "status", "target", "target_path", "relation", "anchor", "line", "column",
                 "symbol", "candidates", "confidence", "message")
        values = (self.origin, self.span, *self._values()[2:])
        return f"Reference({', '.join(f'{n}={v!r}' for n, v in zip(names, values, strict=True))})"


_STATUS_OF: dict[str, ReferenceStatus] = {status.value: status for status in ReferenceStatus}


@dataclass(slots=True)
class DocumentResolution(Positional):
    path: str
    references: tuple[Reference, ...]
    notes: tuple[tuple[str, str], ...]
    deps: tuple[Key, ...]  # sorted
    truncated: bool = False
    declared_relations: tuple[tuple[str, str, str], ...] = ()  # (from id, to id, kind)
    # each relation declaration of the facts, in order: (its index in `declarations`, from id, to id), an id
    # None when that endpoint resolves to nothing
    declared_endpoints: tuple[tuple[int, str | None, str | None], ...] = ()
    # symbols only fenced code names (`citationContext: code-fence`): kept in the snapshot, never in ranking,
    # findings, reverse indexes or handoffs, which read `relations` or `relation_keys`
    citations: tuple[Relation, ...] = ()
    relations_cap: int = 64  # `limits.relations_per_document` when resolved

    @property
    def relations(self) -> tuple[Relation, ...]:
        """The relations its references make, derived on each read: kept, they and their evidence were a sixth of
        a 100,000-file tree's model (a relation, its evidence and the tuple holding it, 230 bytes each), and a
        few passes over every document read them."""
        return _document_relations(self.path, self.references, self.relations_cap)[0]

    def bare_relations(self) -> tuple[Relation, ...]:
        """Its relations without their evidence (what the search's graph reads: half their memory, and the
        projection's build holds every relation of the repository at once)."""
        return _document_relations(self.path, self.references, self.relations_cap, with_evidence=False)[0]

    @property
    def relation_keys(self) -> tuple[tuple[str, str, str], ...]:
        """(kind, target, symbol) of each of its relations, in their order: what most readers of the relations
        ask, made without their evidence."""
        return tuple(sorted(_grouped(self.path, self.references, self.relations_cap)[0]))



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
        """The anchor index of a document (this one's own for its path), with the headings of the documents it
        includes, built once per resolution."""
        index = self._headings.get(path)
        if index is None:
            target_facts = self.facts if path == self.facts.path else self.u.documents.get(path)
            if target_facts is not None and not target_facts.includes and not target_facts.fm("ref"):
                # a page's own anchors only: one index per version of the page, whoever links to it
                cached = self.u._anchors.get(path)
                if cached is None or cached[0] is not target_facts:
                    cached = (target_facts, HeadingIndex(target_facts.headings, target_facts.anchors))
                    self.u._anchors[path] = cached
                index = self._headings[path] = cached[1]
                return index
            headings = list(target_facts.headings) if target_facts else []
            anchors = list(target_facts.anchors) if target_facts else []
            folder = dirname(path)
            pages = [normalise(f"{folder}/{w}" if folder else w) for w in (target_facts.includes if target_facts
                                                                           else ())]
            shown = target_facts.fm("ref") if target_facts else None
            if shown:  # `ref:` (a page the site renders in place of this one): a repository path, else beside it
                pages += [normalise(shown.lstrip("/")), normalise(f"{folder}/{shown}" if folder else shown)]
            for included in pages:
                if included and included != path:
                    self.deps.add(("slugs", included))
                    facts = self.u.documents.get(included)
                    if facts is not None:
                        headings.extend(facts.headings)
                        anchors.extend(facts.anchors)
            index = self._headings[path] = HeadingIndex(headings, anchors)
        return index

    # tokens (inline code, link text)

    def token(self, raw: str, span: Positioned, origin: str) -> Reference:  # noqa: C901 (to split)
        text = raw.strip()
        if not text or len(text) > MAX_TOKEN:
            return Reference(origin, span, raw, ReferenceStatus.NONE)
        if "(" in text or text[0] == "." or text.startswith("new "):
            if _METHOD_FORM.match(text) or _CHAINED_CALL.search(text):  # `.safeParse()`, `z.string().min`: a method
                return Reference(origin, span, raw, ReferenceStatus.NONE)
            call = _CALL_FORM.match(text) or _NEW_FORM.match(text)
            if call is not None:  # `getQuery(event)`, `new Hono()`, `defineConfig({ ... })`: the callee is named
                text = call.group("callee")
        if _SPACE.search(text) or text in NOT_SYMBOLS:
            return Reference(origin, span, raw, ReferenceStatus.NONE)
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
        if package is not None and (not _PLAIN_WORD.match(text) or text in self.u.package_names()[0] or
                                    self.speaks_of_packages(package, span.line)):
            return self.to_package(origin, span, raw, package)
        name = text[:-2] if text.endswith("()") else text
        member = None
        if not _IDENT.match(name) and "." in name and "/" not in name:
            head, _, member = name.partition(".")
            last = member.rsplit(".", 1)[-1]
            # `z.treeifyError()`, `vi.fn`: a member written as code that some module exports is what the mention
            # calls (the head is a namespace or a variable); otherwise the head is what is named
            if _IDENT.match(last) and (_CODE_LIKE.search(last) or self.namespace(head)) and \
                    self.u.symbol_owners(last, self.deps) and last not in NOT_SYMBOLS:
                name, member = last, None
            else:
                name = head if _IDENT.match(head) else ""
        if name and _IDENT.match(name) and name not in NOT_SYMBOLS:
            owners = self.u.symbol_owners(name, self.deps)
            declared_as = name
            if owners and not self.u.owners.get(name):  # only barrels export it: follow them to the declaration
                owners, declared_as = self.through_barrels(name, owners)
            if len(owners) == 1 and self.u.is_library(owners[0]):
                chosen, alike = owners, False  # the common case: one library module declares it
            else:
                chosen, alike = self.declarations(declared_as, owners, span.line) if owners else (owners, False)
            if len(chosen) == 1:
                # the declaration's position is looked up when asked (it moves with every edit of the module)
                return Reference(origin, span, raw, ReferenceStatus.RESOLVED, entity_id(MODULE, chosen[0]), chosen[0],
                                 "mentions-symbol", symbol=declared_as)
            if len(chosen) > 1 and member is None:
                # several packages exporting it alike, a plain word, or a name many modules declare (an interface
                # they implement: `locStart` in every language of a formatter) is no ambiguity of the document
                conventional = len(chosen) >= CONVENTION_DECLARATIONS
                status = "same-name" if alike or conventional or not _CODE_LIKE.search(name) else "ambiguous"
                return Reference(origin, span, raw, ReferenceStatus(status), symbol=name,
                                 candidates=tuple(entity_id(MODULE, o) for o in chosen))
            if not owners and member is None:
                renamed = self.u.renamed_symbol(name, self.deps)
                if renamed is not None:
                    module, new_name = renamed
                    return Reference(origin, span, raw, ReferenceStatus.RENAMED, target_path=module, symbol=name,
                                     candidates=(new_name,),
                                     message=f"`{name}` is no longer exported by `{module}`; it was renamed to "
                                             f"`{new_name}`")
        if path_shaped and "/" not in candidate:
            named = self.u.the_file_named(candidate, self.deps)
            # a bare file name names the one file that bears it, unless that file is a test's, an example's, a
            # template's or a demo's away from the document (`webpack.config.js` in a guide is the reader's)
            if named is not None and (named in self.u.documents or self.u.is_library(named) or self.near(named)):
                return self.path_reference(origin, span, raw, named, line_hint, confidence="fuzzy")
        if not path_shaped or "/" not in candidate:
            return Reference(origin, span, raw, ReferenceStatus.NONE)
        cleaned = normalise(candidate.lstrip("/").removeprefix("./"))
        if cleaned is None:
            return Reference(origin, span, raw, ReferenceStatus.NONE)
        if not self.published() or about_this_repository(self.facts.path):
            suffixed = self.unique_suffix(cleaned)
            if suffixed is not None:
                return self.path_reference(origin, span, raw, suffixed, line_hint, confidence="fuzzy")
        # a near path with another real extension is another file (`names.json` is no typo of `names.ts`)
        matches = [m for m in self.u.fuzzy(cleaned, self.deps)
                   if _extension(m[0]) == _extension(cleaned) or _extension(cleaned) not in KNOWN_EXTENSIONS]
        if len(matches) == 1:  # exactly one candidate close enough: convenience never invents a fact
            return self.path_reference(origin, span, raw, matches[0][0], line_hint, confidence="fuzzy")
        if origin == "code" and not candidate.startswith("/") and self.looks_like_repository_path(cleaned):
            return Reference(origin, span, raw, ReferenceStatus.UNRESOLVED, target_path=cleaned)
        return Reference(origin, span, raw, ReferenceStatus.NONE)

    def declarations(self, name: str, owners: list[str], line: int) -> tuple[list[str], bool]:
        """The declarations a mention of a name several modules declare can mean, best first, and whether they
        are alike (in different packages: the same API published twice, not a defect of the document).

        Library source outranks tests, examples and the rest, which outrank generated copies; an implementation
        outranks its hand-written declaration file; then the context of the mention decides: the document's own
        package, else the one candidate whose path or package name has a word that the document's path, title
        or section heading also has (`docs/framework/react/...` means `@tanstack/react-query`); then what a
        package's entry points export outranks internals that share the name; then the package the others depend
        on (the original an adapter re-declares)."""
        u = self.u
        tiers: dict[int, list[str]] = defaultdict(list)
        for owner in owners:
            role = u.role_of(owner)[0]
            if role != SOURCE and not self.near(owner):
                continue  # a test's, example's or demo's name means that code only to documents beside it
            tiers[0 if role == SOURCE else 2 if role == GENERATED else 1].append(owner)
        if not tiers:
            return [], False
        candidates = tiers[min(tiers)]
        implementations = [c for c in candidates if not c.endswith(_DECLARATION_FILES)]
        if implementations:
            candidates = implementations
        real = [c for c in candidates if not _STAND_IN.match(c.rsplit("/", 1)[-1])]
        if real:  # `stub.ts`, `noop.ts`: what a build condition swaps in for the real declaration
            candidates = real
        elif len(candidates) > 1:  # `index.d.ts` beside its CommonJS twin `index.d.cts`: the first is the one
            esm = [c for c in candidates if c.endswith(".d.ts")]
            candidates = esm or candidates
        if len(candidates) == 1 or u.layout is None:
            return candidates, False
        packages = {c: u.layout.package_of(c) for c in candidates}
        own = u.layout.package_of(self.facts.path)
        if own is not None and own.directory != ".":
            mine = [c for c in candidates if packages[c] is own]
            if mine:
                candidates = mine
        if len(candidates) > 1:
            named = self.named_by_context(name, candidates, packages, line)
            if named is not None:
                candidates = [named]
        if len(candidates) > 1:
            self.deps.add(("surface",))
            public = public_declarations(u)
            ranks = {c: public[(c, name)] for c in candidates if (c, name) in public}
            if ranks:  # what the main entry exports, else what a subpath exports
                candidates = [c for c in candidates if ranks.get(c) == min(ranks.values())]
        if len(candidates) > 1:
            base = self.base_package(candidates, packages)
            if base is not None:
                candidates = [base]
        directories = {p.directory if p is not None else "." for p in (packages[c] for c in candidates)}
        return candidates, len(directories) > 1

    def in_another_repository(self, named: str) -> bool:
        """Whether the repository a sentence names (`in the eslint/eslint.org repository`) is another one than this
        (the root manifest's `repository`); a name with no manifest to compare counts as another."""
        return bool(named) and named != self.own_repository()

    def own_repository(self) -> str:
        """`owner/name` of this repository, as the root manifest's `repository` says ('' when it names none)."""
        self.deps.add(("all",))
        root = self.u.layout.packages.get(".") if self.u.layout is not None else None
        return root.facts.repository if root is not None and root.facts is not None else ""

    def heading_at(self, line: int) -> str:
        """The text of the last heading at or above `line` ('' above the first)."""
        return next((h.text for h in reversed(self.facts.headings) if h.line <= line), "")

    def colocated(self) -> list[Reference]:
        """What the document documents by where it is (`covers` observed, not declared): the module beside it
        that bears its name (`Button.md` beside `Button.tsx`); for a README or index page, the area, package or
        modules of its folder; else the one library module of the same name in a folder of the same name
        elsewhere (`docs/rules/no-redeclare.md` for `lib/rules/no-redeclare.js`)."""
        u = self.u
        if u.layout is None or u.partial or u.role_of(self.facts.path)[0] in UNCHECKED_DOCUMENT_ROLES:
            return []
        folder, _, name = self.facts.path.rpartition("/")
        stem = name.rsplit(".", 1)[0]
        span = Span(0, 0, 0, 0)
        # `<agent root>/packages/<x>.md` covers `<x>` (declared by where it is kept) unless it declares `covers`
        unit = None if any(d.kind == "covers" for d in self.facts.declarations) else \
            u.conventional_unit(self.facts.path, self.deps)
        if unit is not None:
            return [Reference("convention", span, unit[1], ReferenceStatus.RESOLVED, unit[0], unit[1], "covers")]
        self.deps.add(("dir-files", folder))
        beside = [f"{folder}/{stem}{ext}" if folder else f"{stem}{ext}" for ext in MODULE_EXTENSIONS]
        found = [m for m in beside if m in u.modules]
        if found:
            return [self.covering(span, "module", found[0])]
        if name.lower() in UNIT_PAGES and folder:
            self.deps.add(("path", folder))
            if folder in u.layout.areas:
                return [self.covering(span, AREA, folder)]
            package = u.layout.packages.get(folder)
            if package is not None:
                return [Reference("colocated", span, package.id, ReferenceStatus.RESOLVED,
                                  package.id, folder, "covers")]
            modules = u.sorted_paths("modules")
            start = bisect.bisect_left(modules, folder + "/")
            own = []
            for module in modules[start:start + MAX_UNIT_MODULES * 4]:
                if not module.startswith(folder + "/"):
                    break
                if "/" not in module[len(folder) + 1:]:
                    own.append(module)
            return [self.covering(span, "module", m) for m in own[:MAX_UNIT_MODULES]]
        parent = folder.rsplit("/", 1)[-1]
        if stem.lower() in INDEX_NAMES or not parent:
            return []
        self.deps.add(("fuzzy",))  # modules coming or going change what bears the name
        same = [p for p in u.named_modules(parent, stem) if u.is_library(p)]
        return [self.covering(span, "module", same[0])] if len(same) == 1 else []

    def covering(self, span: Positioned, kind: str, path: str) -> Reference:
        return Reference("colocated", span, path, ReferenceStatus.RESOLVED, entity_id(kind, path), path, "covers")

    def through_barrels(self, name: str, reexporters: list[str]) -> tuple[list[str], str]:
        """The modules that declare what barrels re-export as `name` (`unstable_RSCRouteConfig`, exported
        `as` from `RSCRouteConfig`), and the name declared there; when the chain leaves the repository (a package
        re-exported whole), the barrels that bring it in."""
        self.deps.add(("surface",))
        found = {declaration_of(self.u, module, name) for module in reexporters}
        declared = {item for item in found if item is not None}
        names = {declared_name for _, declared_name in declared}
        if declared and len(names) == 1:
            return sorted(module for module, _ in declared), names.pop()
        # declared in another package: the barrel that brings it into the repository is where it is defined here
        entering = [module for module in reexporters if any(
            e.name == name and e.source and not e.source.startswith(".")
            for e in self.u.modules[module].exports)]
        return (entering if len(entering) == 1 else reexporters), name

    def fence_symbol(self, token: FenceToken) -> Reference | None:
        """What a name written in fenced code cites: a symbol library source exports, with exactly one declaration
        to choose (as an inline mention chooses among several), else nothing: no path, package, near match or
        ambiguity, and no test's or example's own name (fenced code is full of the example's own names)."""
        name = token.text
        if name in NOT_SYMBOLS or not _IDENT.match(name):
            return None
        owners = self.u.symbol_owners(name, self.deps)
        if not owners:
            return None
        declared_as = name
        if not self.u.owners.get(name):
            owners, declared_as = self.through_barrels(name, owners)
        library = [owner for owner in owners if self.u.is_library(owner)]
        chosen = library if len(library) <= 1 else self.declarations(declared_as, library, token.line)[0]
        if len(chosen) != 1:
            return None
        return Reference("fence", token.span, name, ReferenceStatus.RESOLVED, entity_id(MODULE, chosen[0]), chosen[0],
                         "mentions-symbol", symbol=declared_as)

    def namespace(self, name: str) -> bool:
        """Whether `name` is a namespace (`export * as z from`, or re-exported by every module that has it: an
        `import * as z` passed on): `z.codec` names `codec`."""
        self.deps.add(("sym", name))
        if not self.u.owners.get(name) and self.u.reexporters.get(name):
            return True
        for owner in self.u.symbol_owners(name, self.deps):
            facts = self.u.modules.get(owner)
            if facts is not None and any(e.name == name and e.kind == "namespace" for e in facts.exports):
                return True
        return any(e.name == name and e.kind == "namespace"
                   for module in members(self.u.reexporters.get(name)) for e in self.u.modules[module].exports)

    def near(self, path: str) -> bool:
        """Whether a file is in the document's own package (not the repository root) or under its folder."""
        if self.doc_dir and path.startswith(self.doc_dir + "/"):
            return True
        layout = self.u.layout
        own = layout.package_of(self.facts.path) if layout is not None else None
        return own is not None and own.directory != "." and layout is not None and layout.package_of(path) is own

    def speaks_of_packages(self, package: str, line: int) -> bool:
        """Whether a plain word that is a package's short name (`types` for `@scope/types`) names the package here:
        in the package's own folder, under a heading or title that speaks of packages, or on a line that names
        another package (`parser`, `typescript-estree`, `types`); elsewhere it is an option or a word
        ("Allowed `types`: `array`, `boolean`")."""
        assert self.u.layout is not None
        info = self.u.layout.package_by_id(package)
        if info is not None and info.directory != "." and self.facts.path.startswith(info.directory + "/"):
            return True
        heading = self.heading_at(line)
        if _PACKAGE_WORD.search(f"{self.facts.title or ''} {heading}"):
            return True
        return any(self.u.package_for_name(c.text, self.deps) not in (None, package)
                   for c in self.facts.code_spans if c.line == line)

    def named_by_context(self, name: str, candidates: list[str], packages: dict[str, Any], line: int) -> str | None:
        """The candidate that the document's path, title or section heading names by the most words that are its
        alone (words of its path or package name no other candidate has: `react` for `@tanstack/react-query`
        against `@tanstack/vue-query`), when one has more than every other."""
        words = {c: (set(_WORDS.findall(c.lower())) | set(_WORDS.findall((packages[c].name if packages[c] else "")
                                                                           .lower()))) - {name.lower()}
                 for c in candidates}  # a file named after the symbol says nothing about which one is meant
        seen: Counter[str] = Counter(word for found in words.values() for word in found)
        heading = self.heading_at(line)
        context = set(_WORDS.findall(f"{self.facts.path} {self.facts.title or ''} {heading}".lower()))
        scores = sorted(((len({w for w in found & context if seen[w] == 1}), c) for c, found in words.items()),
                        reverse=True)
        best, runner_up = scores[0], scores[1]
        return best[1] if best[0] > 0 and best[0] > runner_up[0] else None

    def base_package(self, candidates: list[str], packages: dict[str, Any]) -> str | None:
        """The one candidate whose package every other candidate's package depends on: the original that adapters
        re-declare (`QueryCache` in `@tanstack/query-core`, subclassed by `@tanstack/vue-query`)."""
        named = {c: packages[c].name for c in candidates if packages[c] is not None and packages[c].facts}
        if len(named) != len(candidates):
            return None
        bases = [c for c in candidates if all(
            c == other or named[c] in dict(packages[other].facts.dependencies) for other in candidates)]
        return bases[0] if len(bases) == 1 else None

    def existing_path(self, candidate: str) -> str | None:
        """A mention names a path from the repository root, from the document's folder, from its package's folder
        or that package's `src/` (notes kept in a package write paths from there), or from a workspace package
        named first (`vite/client.d.ts`, `hono/tiny`: a package's published paths and `exports` subpaths)."""
        stripped = candidate.removeprefix("./").rstrip("/")
        rooted = normalise(stripped.lstrip("/"))
        if rooted is not None and rooted and self.u.path_kind(rooted, self.deps) is not None:
            return rooted
        if candidate.startswith("/") or not rooted:
            return None
        bases = [self.doc_dir] if self.doc_dir else []
        package = self.u.layout.package_of(self.facts.path) if self.u.layout is not None else None
        if not self.published():
            # a package's notes name its sibling folders (`adapters/` in lib/core/README.md) and write paths from
            # the package's folder or its `src/`; a site's pages name the reader's files, never these
            bases += list(parent_dirs(self.doc_dir + "/x"))[1:] if self.doc_dir else []
            if package is not None and package.directory != ".":
                bases += [package.directory, f"{package.directory}/src"]
        for base in bases:
            local = normalise(f"{base}/{stripped}")
            if local and self.u.path_kind(local, self.deps) is not None:
                return local
        return self.package_path(rooted)

    def package_path(self, path: str) -> str | None:
        """`vite/client.d.ts`, `@scope/pkg/sub`, `hono/tiny`: a path inside a workspace package named first."""
        self.deps.add(("all",))
        full, _ = self.u.package_names()
        parts = path.split("/")
        for width in (2, 1):
            name = "/".join(parts[:width])
            directory = full.get(name)
            if directory is None or len(parts) <= width:
                continue
            rest = "/".join(parts[width:])
            prefix = "" if directory == "." else f"{directory}/"
            info = self.u.layout.packages.get(directory) if self.u.layout is not None else None
            subpaths = dict(info.facts.subpaths) if info is not None and info.facts is not None else {}
            target = subpaths.get(f"./{rest}")  # what the package publishes under that name comes first
            module = manifest_file_module(self.u, directory, target) if target is not None else None
            if module is not None:
                return module
            for guess in (f"{prefix}{rest}", f"{prefix}src/{rest}"):
                if self.u.path_kind(guess, self.deps) is not None:
                    return guess
        return None

    def unique_suffix(self, path: str) -> str | None:
        """The one file whose path ends with `path` (two segments or more): contributor notes often write paths
        from a folder they leave unsaid."""
        if path.count("/") < 1 or self.u.partial:
            return None
        self.deps.add(("fuzzy",))
        found = self.u.by_suffix(path)
        return found[0] if len(found) == 1 else None

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
        if any(s.lower() in PLACEHOLDER_SEGMENTS or s.lower().split(".", 1)[0] in PLACEHOLDER_SEGMENTS
               for s in segments):
            return False  # `playground/xxx`, `path/to/file.ts`: an illustration
        top = segments[0]
        top_exists = self.u.path_kind(top, self.deps) in ("directory", AREA, PACKAGE)
        if about_this_repository(self.facts.path):
            return top_exists or path.lower().endswith(SOURCE_EXTENSIONS)
        if self.published() and top.lower() in PROJECT_FOLDERS:
            return False  # a guide's `src/routes/+page.js` is a file of the reader's project
        return top_exists

    def path_reference(self, origin: str, span: Positioned, raw: str, path: str, line: int | None,
                       confidence: str = "observed") -> Reference:
        kind = self.u.path_kind(path, self.deps)
        status = "fuzzy" if confidence == "fuzzy" else "resolved"
        if kind == DOCUMENT:
            return Reference(origin, span, raw, ReferenceStatus(status),
                             entity_id(DOCUMENT, path), path, "mentions", line=line,
                             confidence=confidence)
        if kind == MODULE:
            return Reference(origin, span, raw, ReferenceStatus(status),
                             entity_id(MODULE, path), path, "mentions", line=line,
                             confidence=confidence)
        if kind == AREA:
            return Reference(origin, span, raw, ReferenceStatus(status), entity_id(AREA, path), path, "mentions",
                             confidence=confidence)
        if kind == PACKAGE:
            assert self.u.layout is not None
            package = self.u.layout.packages[path]
            return Reference(origin, span, raw, ReferenceStatus(status),
                             package.id, path, "mentions", confidence=confidence)
        if path.endswith("package.json") and path in self.u.manifests:
            assert self.u.layout is not None
            directory = dirname(path) or "."
            package_info = self.u.layout.packages.get(directory)
            if package_info is not None:
                return Reference(origin, span, raw, ReferenceStatus(status), package_info.id, path, "mentions",
                                 confidence=confidence)
        return Reference(origin, span, raw, ReferenceStatus.EXISTING, target_path=path, line=line)

    def to_package(self, origin: str, span: Positioned, raw: str, package_id: str) -> Reference:
        assert self.u.layout is not None
        info = self.u.layout.package_by_id(package_id)
        path = info.manifest if info and info.manifest else None
        return Reference(origin, span, raw, ReferenceStatus.RESOLVED, package_id, path, "mentions")

    # links

    def link(self, link: Any) -> Reference:  # noqa: C901 (to split)
        span = link  # the link itself is positioned: its references keep it, not a span of their own
        href = link.target.strip()
        origin = "image" if link.kind == "image" else ("wiki" if link.kind == "wiki" else "link")
        if link.kind == "wiki":
            return self.wiki(link, span)
        if link.kind == "autolink" or not href or href.startswith("//") or _SCHEME.match(href):
            if href.startswith("file:"):
                return Reference(origin, span, href, ReferenceStatus.NONE)
            own = self.own_file_url(href)
            if own is not None:  # this repository's file on GitHub: the file here (never reported missing)
                return self.path_reference(origin, span, href, *own)
            return Reference(origin, span, href, ReferenceStatus.EXTERNAL)
        path_part, _, anchor = href.partition("#")
        path_part = path_part.split("?", 1)[0]
        path_part = urllib.parse.unquote(path_part)
        if not path_part:
            return self.anchor_in(origin, span, href, self.facts.path, anchor)
        base = "" if path_part.startswith("/") else self.doc_dir
        target = normalise(f"{base}/{path_part.lstrip('/')}" if base else path_part.lstrip("/"))
        if target is None:
            return Reference(origin, span, href, ReferenceStatus.OUTSIDE_ROOT,
                             message=f"`{href}` points outside the repository")
        if target == "":
            return Reference(origin, span, href, ReferenceStatus.EXISTING, target_path="")
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
        if kind is None and path_part.startswith("/"):
            for folder, _config in self.u.doc_sites():  # a site serves its `static/` and `public/` at `/`
                for served in ("/static", "/public", ""):
                    found, found_kind = self.probe(normalise(f"{folder}{served}/{path_part.lstrip('/')}") or "")
                    if found_kind is not None:
                        target, kind = found, found_kind
                        break
                if kind is not None:
                    break
        if kind is None and origin != "image":
            page = self.site_page(path_part)
            if page is not None:
                target, kind = page, DOCUMENT
        if kind is None and origin != "image" and _route_like(path_part) and self.in_navigation(path_part):
            # the site's navigation serves it from elsewhere
            return Reference(origin, span, href, ReferenceStatus.EXISTING)
        if kind is None:
            if self.u.rules.is_ignored_anywhere(target):
                return Reference(origin, span, href, ReferenceStatus.IGNORED, target_path=target)
            if origin != "image" and _route_like(path_part) and self.published() and \
                    not self.missing_from_known_folder(path_part):
                return Reference(origin, span, href, ReferenceStatus.UNVERIFIED,
                                 message=f"`{href}` is a route of the documentation site that no page of this "
                                         f"repository serves")
            self.deps.add(("fuzzy",))  # its finding suggests near paths: re-resolve when paths come or go
            return Reference(origin, span, href, ReferenceStatus.BROKEN,
                             target_path=target, message=f"`{href}` does not exist")
        if origin == "image":
            return Reference(origin, span, href, ReferenceStatus.EXISTING, target_path=target)
        if kind == DOCUMENT:
            if target == self.facts.path:
                return self.anchor_in(origin, span, href, target, anchor)
            reference = self.anchor_in(origin, span, href, target, anchor)
            return Reference(origin, span, href, reference.status, entity_id(DOCUMENT, target), target,
                             "links-to", anchor=anchor or None, line=reference.line, candidates=reference.candidates,
                             message=reference.message)
        line = None
        line_anchor = _LINE_ANCHOR.match(anchor) if anchor else None
        if line_anchor:
            line = int(line_anchor.group(0)[1:]) - 1  # `L42`: line 42
        reference = self.path_reference(origin, span, href, target, line)
        return reference

    def in_navigation(self, written: str) -> bool:
        """Whether a navigation file of a folder above the document names the route (`docs/config.json` lists
        `framework/react/examples/simple`, which the site builds from `examples/react/simple`)."""
        self.deps.add(("routes",))
        if self.u.partial or not self.u.navigation:
            return False
        if written.startswith("/"):
            route = clean_route(written)
            pairs = [(folder, candidate) for folder in ("", *parent_dirs(self.facts.path))
                     for candidate in (route, route.split("/", 1)[1] if "/" in route else route)]
        else:
            joined = normalise(f"{self.doc_dir}/{written}" if self.doc_dir else written) or ""
            pairs = [(folder, clean_route(joined[len(folder) + 1:] if folder else joined))
                     for folder in ("", *parent_dirs(self.facts.path)) if not folder or joined.startswith(folder + "/")]
        return self.u.navigated(pairs)

    def own_file_url(self, href: str) -> tuple[str, int | None] | None:
        """(path, 0-based line) of a GitHub URL of a file or folder of this very repository (the root manifest's
        `repository`) that is here: `https://github.com/<owner>/<name>/blob/main/src/x.ts#L12`."""
        match = _GITHUB_FILE.match(href)
        if match is None:
            return None
        own = self.own_repository()
        path = normalise(urllib.parse.unquote(match.group("path")).rstrip("/"))
        if not own or match.group("repository").lower() != own or not path or \
                self.u.path_kind(path, self.deps) is None:
            return None
        line = match.group("line")
        return path, int(line) - 1 if line else None

    def served_relative(self, written: str) -> str | None:
        """A relative link of a page that a site's configuration serves (`routes.mounts`), resolved as a browser
        resolves it: from the page's own route (a folder's index page is served as the folder), never above the
        site's root (`../../packages/parser` from `/troubleshooting/typed-linting` is `/packages/parser`)."""
        routes = routes_of(self.u)
        held = [(folder, base) for base, folder in routes.mounts if self.facts.path.startswith(folder + "/")]
        if not held:
            return None
        folder, base = max(held, key=lambda mount: len(mount[0]))
        *parents, name = self.facts.path[len(folder) + 1:].split("/")
        stem = name.rsplit(".", 1)[0].lower()
        if parents and (stem in ("index", "readme") or stem == parents[-1].lower()):
            parents.pop()  # a folder's index page (`guides/guides.md` too) is served at the folder's route
        return routes.mounted(clean_route(url_join("/".join([base, *parents]), written)))

    def missing_from_known_folder(self, written: str) -> bool:
        """Whether a route names a page inside a folder of a site built from this repository (its generator's
        configuration is here) that holds pages, none of them that one: then the link is broken, not a route the
        site may serve from elsewhere."""
        if self.u.partial:
            return False
        routes = routes_of(self.u)
        if written.startswith("/"):
            route = clean_route(written)
            # a route under a base the site's configuration gives one folder (`/rules/x`): that folder alone
            # serves it
            if any(base and route.startswith(base + "/") and folder in self.u.dir_counts
                   for base, folder in routes.mounts):
                return True
        site = next((folder for folder, _ in self.u.doc_sites() if self.facts.path.startswith(folder + "/")), None)
        if site is None:
            return False
        segments = [s for s in clean_route(written).split("/") if s]
        if len(segments) < 2:
            return False
        if written.startswith("/"):
            bases: list[str] = [*parent_dirs(self.facts.path), site]
            return any(routes.folder(base, segments[:-1]) is not None for base in bases
                       if base == site or base.startswith(site + "/"))
        joined = normalise(f"{self.doc_dir}/{written}" if self.doc_dir else written)
        parent = dirname(joined) if joined else ""
        return bool(parent) and parent.startswith(site + "/") and parent in self.u.dir_counts

    def published(self) -> bool:
        """Whether this document is a page of a documentation site (its links name the site's routes)."""
        return self.u.role_of(self.facts.path)[0] == DOCS_SITE

    def site_page(self, written: str) -> str | None:
        """The page a site-style link names when no file does (see `docbridge.engine.discovery.routes`): from the
        document's folder for a relative link (and from its absolute `permalink`/`slug`, which is where the site
        serves it), from each folder above it and each site's folder for an absolute one; a single name not
        found beside the document is looked for among the pages of the same documentation tree, where it must
        be unique (sites that serve every page of a tree at one level)."""
        self.deps.add(("routes",))
        if self.u.partial:
            return None
        routes = routes_of(self.u)
        cleaned = clean_route(written)
        absolute = written.startswith("/")
        frontmatter = dict(self.facts.frontmatter)
        served_at = frontmatter.get("permalink") or frontmatter.get("slug") or ""
        if not absolute and served_at.startswith("/"):
            url_folder = clean_route(served_at).rsplit("/", 1)[0] if "/" in clean_route(served_at) else ""
            joined_url = url_join(url_folder, written)
            written, cleaned, absolute = f"/{joined_url}", clean_route(joined_url), True
        if absolute:
            for key in (cleaned, cleaned.split("/", 1)[1] if "/" in cleaned else None):
                pages = routes.absolute.get(key) if key is not None else None
                if pages:
                    return pages[0]
            page = routes.mounted(cleaned)
            if page is not None and page != self.facts.path:
                return page
            segments = [s for s in cleaned.split("/") if s]
            if not segments:
                return None
            bases = [*parent_dirs(self.facts.path), "", *(folder for folder, _ in self.u.doc_sites())]
            # `/docs/x`: a site may serve its documentation folder under a prefix of another name
            tails = [segments, segments[1:]] if len(segments) > 1 else [segments]
            for base in dict.fromkeys(bases):
                for tail in tails:
                    page = routes.page(base, tail)
                    if page is not None and page != self.facts.path:
                        return page
            return None
        joined = normalise(f"{self.doc_dir}/{written}" if self.doc_dir else written)
        if not joined:
            return None
        page = routes.page("", [s for s in clean_route(joined).split("/") if s]) or self.served_relative(written)
        if page is not None:
            return page
        single = cleaned.removeprefix("./")
        if "/" not in single and single:
            tree = "/".join(self.facts.path.split("/")[:2]) + "/"
            same_tree = [p for p in routes.names.get(route_name(single), ()) if p.startswith(tree)]
            if len(set(same_tree)) == 1:
                return same_tree[0]
        return None

    def probe(self, target: str) -> tuple[str, str | None]:
        """A link target as written, else the Markdown source a documentation site publishes it from:
        `guide` or `guide.html` -> `guide.md`, a folder `guide/` that holds an index.md -> `guide/index.md`."""
        kind = self.u.path_kind(target, self.deps) if target else None
        if kind == "directory":
            # a documentation site serves a folder (`/guide/browser/`) as the page in it named index.md
            for name in ("index.md", "index.mdx"):
                index = f"{target}/{name}"
                if self.u.path_kind(index, self.deps) == DOCUMENT:
                    return index, DOCUMENT
        if kind is not None or not target or target.lower().endswith((".md", ".markdown", ".mdx")):
            return target, kind
        stem = target[:-5] if target.lower().endswith(".html") else target
        for extension in (".md", ".mdx"):
            if self.u.path_kind(stem + extension, self.deps) == DOCUMENT:
                return stem + extension, DOCUMENT
        return target, kind

    def anchor_in(self, origin: str, span: Positioned, href: str, path: str, anchor: str) -> Reference:
        """Check `#anchor` against the target document's heading slugs (own headings for `#x`)."""
        if path != self.facts.path:
            self.deps.add(("slugs", path))
        index = self.headings(path)
        target_id = entity_id(DOCUMENT, path)
        if not anchor or _LINE_ANCHOR.match(anchor) or not path.lower().endswith(MARKDOWN_EXTENSIONS):
            # a site page a component renders (`src/pages/play.tsx`) has the anchors its code gives it (`#showAST=es`
            # is the playground's state): none that a heading would, nothing to check them against
            return Reference(origin, span, href, ReferenceStatus.RESOLVED, target_id, path)
        heading = index.find(anchor)
        if heading is not None:
            return Reference(origin, span, href, ReferenceStatus.RESOLVED,
                             target_id, path, anchor=anchor, line=heading.line)
        built = self.facts.builds if path == self.facts.path else getattr(self.u.documents.get(path), "builds", "")
        if built:  # the site writes part of that page when it builds: the heading may well be there
            return Reference(origin, span, href, ReferenceStatus.UNVERIFIED, target_id, path, anchor=anchor,
                             message=f"`#{anchor}` is not a heading of {path} as written; the site adds content to "
                                     f"that page when it builds (`{built}`)")
        suggestions = index.suggestions(urllib.parse.unquote(anchor).lower())
        shown = path if path != self.facts.path else "this document"
        return Reference(origin, span, href, ReferenceStatus.ANCHOR_MISSING, target_id, path, anchor=anchor,
                         candidates=suggestions, message=f"`#{anchor}` is not a heading in {shown}")

    def wiki(self, link: Any, span: Positioned) -> Reference:
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
        same = sorted(members(self.u.stems.get(stem)))
        if len(same) == 1:
            return self.wiki_hit(span, raw, same[0], anchor)
        if "/" in name or name.lower().endswith(".md"):
            return Reference("wiki", span, raw, ReferenceStatus.BROKEN, message=f"`[[{raw}]]` matches no document")
        return Reference("wiki", span, raw, ReferenceStatus.NONE)

    def wiki_hit(self, span: Positioned, raw: str, path: str, anchor: str) -> Reference:
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




def url_join(folder: str, relative: str) -> str:
    """A relative URL path resolved from the route `folder` as a browser does: `..` climbs one segment and never
    above the site's root (`url_join("troubleshooting", "../../packages/parser")` is `packages/parser`)."""
    segments = [s for s in folder.split("/") if s]
    for part in relative.split("/"):
        if part == "..":
            segments = segments[:-1]
        elif part not in ("", "."):
            segments.append(part)
    return "/".join(segments)


@functools.lru_cache(maxsize=16384)
def skeleton(text: str) -> str:
    """Letters and digits only, lower-cased and without accents: what every slugger keeps of a heading."""
    if text.isascii():
        return _ASCII_NON_ALNUM.sub("", text.lower())
    return "".join(ch for ch in unicodedata.normalize("NFKD", text).lower()
                   if ch.isalnum() and not unicodedata.combining(ch))


_ASCII_NON_ALNUM = re.compile(r"[^a-z0-9]+")


class HeadingIndex:
    """A document's anchors: its headings by GitHub slug and by site-style slug (the first heading of each), its
    explicit anchors (HTML `id`/`name`, `{#id}`), and, as the last resort, by skeleton (letters and digits only:
    documentation sites slug with their own rules, keeping dots or case, `## localize.ordinalNumber` ->
    `#localize.ordinalnumber`) alone or joined to its parent headings' (`#Environment-variables-PORT`). The
    near-slug suggestions for a missing anchor are memoised: resolving n anchors costs O(n + headings), not
    O(n * headings)."""

    __slots__ = ("_by_site", "_by_skeleton", "_by_slug", "_slugs", "_suggested", "headings")

    def __init__(self, headings: Iterable[Any], anchors: Iterable[tuple[str, int]] = ()) -> None:
        self.headings = tuple(headings)
        self._by_slug: dict[str, Any] = {}
        for heading in self.headings:
            self._by_slug.setdefault(heading.slug, heading)
        for anchor, line in anchors:
            self._by_slug.setdefault(anchor.lower(), Heading(0, anchor, anchor.lower(), line, 0, 0))
        self._by_site: dict[str, Any] | None = None
        self._by_skeleton: dict[str, Any] | None = None
        self._slugs = list(self._by_slug)
        self._suggested: dict[str, tuple[str, ...]] = {}

    def find(self, anchor: str) -> Any | None:
        """The heading an `#anchor` names: its GitHub slug or explicit anchor, else the site-style slug of its text,
        else its skeleton alone or after its parents'."""
        written = urllib.parse.unquote(anchor)
        wanted = written.lower()
        # an explicit id keeps its case (`{#keyPrefix}`), a GitHub slug is lower-case
        found = self._by_slug.get(written) or self._by_slug.get(wanted)
        if found is None:  # documentation sites' slugs turn punctuation into hyphens (`## ssr.external`)
            if self._by_site is None:
                self._by_site = {}
                for heading in self.headings:
                    self._by_site.setdefault(site_slug(heading.text), heading)
            found = self._by_site.get(wanted)
        if found is None:
            if self._by_skeleton is None:
                self._by_skeleton = self._skeletons()
            bare = skeleton(wanted)
            found = self._by_skeleton.get(bare) if bare else None
        return found

    def _skeletons(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        parents: list[tuple[int, str]] = []  # (level, skeleton) of the open ancestors
        for heading in self.headings:
            own = skeleton(heading.text)
            while parents and parents[-1][0] >= heading.level:
                parents.pop()
            if own:
                found.setdefault(own, heading)
                joined = own
                for _, parent in reversed(parents):
                    joined = parent + joined
                    found.setdefault(joined, heading)
            parents.append((heading.level, own))
        for slug, heading in self._by_slug.items():
            if heading.level == 0:
                found.setdefault(skeleton(slug), heading)
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


def find_heading(headings: Iterable[Any], anchor: str, anchors: Iterable[tuple[str, int]] = ()) -> Any | None:
    """The heading (or explicit anchor) an `#anchor` names (see `HeadingIndex.find`)."""
    return HeadingIndex(headings, anchors).find(anchor)


def _slug(text: str) -> str:
    from docbridge.engine.discovery.markdown import slugify
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
            text_ref = resolver.token(link.text, link, "link-text")
            if text_ref.relation and text_ref.target != reference.target:
                references.append(text_ref)
    leading = [r.at for r in references if r.origin in ("link", "wiki") and r.status.navigable]
    for code_span in facts.code_spans:
        reference = Reference("code", code_span, code_span.text, ReferenceStatus.NONE) \
            if code_span.literal or resolver.in_another_repository(code_span.elsewhere) \
            else resolver.token(code_span.text, code_span, "code")
        if reference.status in _UNSETTLED and any(_within(code_span, link) for link in leading):
            # `` [`Router`](../routers/Router) ``: the link says which one is meant
            reference = Reference("code", code_span, code_span.text, ReferenceStatus.NONE)
        references.append(reference)
    references.extend(resolver.colocated())
    declared: list[tuple[str, str, str]] = []
    endpoints: list[tuple[int, str | None, str | None]] = []
    for index, declaration in enumerate(facts.declarations):
        span = Span(declaration.line, declaration.column, declaration.line, declaration.end_column)
        target, path = resolver.declaration_ref(declaration.ref)
        if declaration.kind == "covers":
            if target:
                references.append(Reference("covers", span, declaration.ref, ReferenceStatus.RESOLVED,
                                            target, path, "covers",
                                            confidence="declared"))
            elif target == "":
                references.append(Reference("covers", span, declaration.ref, ReferenceStatus.EXISTING,
                                            target_path=path))
            else:
                references.append(Reference("covers", span, declaration.ref, ReferenceStatus.UNRESOLVED,
                                            message=f"`{declaration.ref}` matches no document, module, area "
                                                    f"or package"))
        else:
            other, _ = resolver.declaration_ref(declaration.target)
            endpoints.append((index, target or None, other or None))
            if target and other:
                declared.append((target, other, declaration.relation_kind))
                references.append(Reference("relation", span, declaration.ref, ReferenceStatus.RESOLVED, target, path,
                                            confidence="declared"))
            else:
                missing = declaration.ref if not target else declaration.target
                references.append(Reference("relation", span, declaration.ref, ReferenceStatus.UNRESOLVED,
                                            message=f"declared relation endpoint `{missing}` does not resolve"))
    references = sorted_in_runs(references, key=lambda r: (r.at.line, r.at.column, r.origin))
    cap = universe.config.limits.relations_per_document
    truncated = _grouped(facts.path, references, cap)[1]
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
    citations, citations_truncated = _fence_citations(resolver, facts, universe.config.limits.relations_per_document)
    if facts.fence_truncated:
        notes.append((f"fence-tokens:{facts.path}",
                      "Document has more names in fenced code than are read; the remaining citations were not "
                      "analyzed."))
    if citations_truncated:
        notes.append((f"fence-relations:{facts.path}",
                      f"Document's fenced code cites more than {universe.config.limits.relations_per_document} "
                      f"symbols; the remainder was not recorded."))
    return DocumentResolution(facts.path, tuple(references), tuple(notes),
                              shared_keys(sorted_in_runs(resolver.deps)), truncated, tuple(sorted(set(declared))),
                              tuple(endpoints), citations, cap)


CODE_FENCE = (("citationContext", "code-fence"),)  # the metadata of a relation only fenced code makes


def _fence_citations(resolver: _DocumentResolver, facts: MarkdownFacts, cap: int) -> tuple[tuple[Relation, ...], bool]:
    """The symbols a document's fenced code names, one relation per symbol (up to `cap` of them, a budget apart
    from the document's other relations), each with the lines that name it. A symbol the document also mentions
    outside code is the same relation: the snapshot merges the two, keeping the mention's metadata and adding
    these lines to its evidence (at most 8 in all)."""
    if not facts.fence_tokens:
        return (), False
    source = entity_id(DOCUMENT, facts.path)
    groups: dict[tuple[str, str], list[Evidence]] = {}
    truncated = False
    # a name is resolved once per section: the heading above it is all of its position that the choice reads
    heading_lines = [heading.line for heading in facts.headings]
    chosen: dict[tuple[str, int], Reference | None] = {}
    for token in facts.fence_tokens:
        section = (token.text, bisect.bisect_right(heading_lines, token.line))
        reference = chosen[section] if section in chosen else chosen.setdefault(section, resolver.fence_symbol(token))
        if reference is None or reference.target is None or reference.target == source:
            continue
        key = (reference.target, reference.symbol or "")
        evidence = groups.get(key)
        if evidence is None:
            if len(groups) >= cap:
                truncated = True
                continue
            evidence = groups[key] = []
        if len(evidence) < MAX_EVIDENCE and all(e.line != token.line for e in evidence):
            span = token.span
            evidence.append(Evidence(facts.path, span.line, span.column, span.end_line, span.end_column))
    relations = [Relation(source, target, "mentions-symbol", tuple(evidence), "observed", "observed", CODE_FENCE,
                          symbol) for (target, symbol), evidence in groups.items()]
    relations.sort(key=lambda r: r.key)
    return tuple(relations), truncated


_RELATING = frozenset({ReferenceStatus.RESOLVED, ReferenceStatus.FUZZY, ReferenceStatus.ANCHOR_MISSING,
                       ReferenceStatus.UNVERIFIED})  # the statuses whose references make relations


def _grouped(path: str, references: Iterable[Reference], cap: int) -> tuple[
        dict[tuple[str, str, str], list[Reference]], bool]:
    """The references of a document that make relations, by relation (kind, target, symbol), in the order they
    first occur, up to `cap` relations; and whether some were left out."""
    source = entity_id(DOCUMENT, path)
    groups: dict[tuple[str, str, str], list[Reference]] = {}
    truncated = False
    for reference in references:
        if not reference.relation or not reference.target or reference.status not in _RELATING or \
                reference.target == source:
            continue
        key = (reference.relation, reference.target, reference.symbol or "")
        refs = groups.get(key)
        if refs is None:
            if len(groups) >= cap:
                truncated = True
                continue
            refs = groups[key] = []
        refs.append(reference)
    return groups, truncated


def _document_relations(path: str, references: Iterable[Reference], cap: int, with_evidence: bool = True) -> tuple[
        tuple[Relation, ...], bool]:
    source = entity_id(DOCUMENT, path)
    groups, truncated = _grouped(path, references, cap)
    relations = []
    for key, refs in sorted(groups.items()):  # in key order, the source being the same
        evidence: list[Evidence] = []
        lines: set[int] = set()
        for ref in refs if with_evidence else ():
            at = ref.at
            if at.line in lines or len(evidence) >= MAX_EVIDENCE:
                continue
            lines.add(at.line)
            evidence.append(Evidence(path, at.line, at.column, at.end_line, at.end_column))
        kind, target, symbol = key
        exact = [r for r in refs if r.confidence in ("observed", "declared")]
        if kind == "covers" and all(r.origin == "colocated" for r in refs):
            confidence, provenance = "observed", "observed"  # documented by where it is kept
        elif kind == "covers":
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
    return tuple(relations), truncated

