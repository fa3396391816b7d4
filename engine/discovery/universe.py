"""What exists in a repository, indexed for resolution: an immutable value.

A `Universe` maps paths to their facts and indexes what resolution asks about (which directories exist,
which modules declare a symbol, which files share a name, packages and areas). It never changes once built:
`UniverseBuilder` derives the next universe from one (persistent maps share everything an edit did not
touch) and reports the dependency keys whose answers changed, so that the workspace re-resolves exactly
the files that asked those questions. Every lookup records its dependency key in the caller's set.

Lookups that are costly and asked again and again (fuzzy path matches, suggestions, package names, the
tsconfig governing a directory) are memoised in small caches attached to the value; a successor shares a
cache for as long as what the cache reads did not change.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, ClassVar

from docbridge.engine.base.config import Config
from docbridge.engine.base.heap import OneCopy
from docbridge.engine.base.model import (
    AREA,
    DOCUMENT,
    MODULE,
    PACKAGE,
    MarkdownFacts,
    ModuleFacts,
    NavigationFacts,
    PackageFacts,
    TsconfigFacts,
    entity_id,
)
from docbridge.engine.discovery.files import MODULE_EXTENSIONS, IgnoreRules, file_kind, parent_dirs
from docbridge.engine.discovery.layout import UNIT_PAGES, Layout, build_layout
from docbridge.engine.discovery.markdown import ROUTE_FRONTMATTER, site_slug
from docbridge.engine.discovery.roles import (
    DOCS_GENERATOR_CONFIG,
    DOCS_SITE,
    GENERATED,
    SITE_FRAMEWORK_CONFIG,
    SITE_MIN_PAGES,
    SOURCE,
    configured_role,
    package_role,
    path_role,
)
from immutables import Map
from rapidfuzz import fuzz, process
from rapidfuzz.distance import JaroWinkler

FUZZY_THRESHOLD = 0.92
GLOBAL_SUGGESTIONS = 3000  # up to this many paths, a missing path is compared with every one
NEAR_SUGGESTIONS = 2000  # beyond it, with at most this many paths of its directory
RENAME_SIMILARITY = 60  # rapidfuzz ratio (0-100) above which a new export is taken for a renamed one
MAX_RENAMES = 512
SUFFIX_SEGMENTS = 4  # the longest path tail (in segments) `by_suffix` answers for

Key = tuple[str, ...]
EMPTY: Map[Any, Any] = Map()
# the same few thousand keys (`("sym", name)`, `("slugs", path)`) are asked by every file that resolves against
# them: 1.1 KB a document when each kept its own tuples
_KEYS: OneCopy[Key, Key] = OneCopy(2_000_000)


def shared_keys(keys: list[Key]) -> tuple[Key, ...]:
    """`keys` as the process's one copy of each."""
    return tuple([_KEYS.same(key) for key in keys])


def dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def stem_of(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()


def anchors_of(facts: MarkdownFacts) -> frozenset[str]:
    """Every anchor a document answers to; documents linking into it depend on this set, not on lines."""
    return facts.slugs | {site_slug(h.text) for h in facts.headings}


def _holds(ordered: list[str], value: str) -> bool:
    """Whether the sorted list `ordered` holds `value`."""
    index = bisect.bisect_left(ordered, value)
    return index < len(ordered) and ordered[index] == value


@dataclass(slots=True)
class _Matches:
    """Memoised fuzzy matches over one sorted list of choices."""

    choices: list[str] | None = None
    found: dict[tuple[str, int, float], list[Any]] = field(default_factory=dict)


def members(value: str | frozenset[str] | None) -> tuple[str] | tuple[()] | frozenset[str]:
    """The paths a multi-valued index (owners, re-exporters, base names, stems) holds under a key: one path is
    kept as itself, two or more as a frozenset (a frozenset of one costs 216 bytes, 10 MB per 10,000 files)."""
    if value is None:
        return ()
    return (value,) if type(value) is str else value  # type: ignore[return-value]  # not a str: a frozenset (mypy narrows no else branch of `type(x) is`)


@dataclass(slots=True)
class _RoleMemo:
    """Roles by path and the documentation sites' folders, kept while no path comes or goes and the layout
    stands (a module's own generation marker is read from its facts on every call)."""

    sites: tuple[tuple[str, str], ...] | None = None  # (site folder, its configuration file)
    roles: dict[str, tuple[str, str]] = field(default_factory=dict)
    configured: dict[str, tuple[str, str] | None] = field(default_factory=dict)  # by `analysis.roles`


@dataclass(slots=True)
class _PackageNames:
    full: dict[str, str] | None = None  # manifest name -> package directory
    short: dict[str, str] | None = None  # unambiguous last segment of a scoped name -> directory


@dataclass(frozen=True, slots=True, eq=False)
class Universe:
    config: Config
    rules: IgnoreRules
    documents: Map[str, MarkdownFacts] = EMPTY
    modules: Map[str, ModuleFacts] = EMPTY
    manifests: Map[str, PackageFacts] = EMPTY
    tsconfigs: Map[str, TsconfigFacts] = EMPTY
    navigation: Map[str, NavigationFacts] = EMPTY  # documentation sites' navigation files
    other: Map[str, bool] = EMPTY  # files that exist but are not analyzed (or were skipped)
    dir_counts: Map[str, int] = EMPTY  # directory -> how many files lie under it
    # multi-valued: read through `members` (one path is kept as itself)
    owners: Map[str, str | frozenset[str]] = EMPTY  # symbol -> modules declaring it
    reexporters: Map[str, str | frozenset[str]] = EMPTY  # symbol -> modules only re-exporting it
    basenames: Map[str, str | frozenset[str]] = EMPTY  # file name -> documents and modules with that name
    stems: Map[str, str | frozenset[str]] = EMPTY  # lower-cased document stem -> documents
    renamed: Map[str, tuple[str, str]] = EMPTY  # a vanished export -> (its module, the export that replaced it)
    layout: Layout | None = None
    _fuzzy: _Matches = field(default_factory=_Matches)  # documents, modules and areas
    _suggest: _Matches = field(default_factory=_Matches)  # every path and area
    _packages: _PackageNames = field(default_factory=_PackageNames)
    _tsconfig_for_dir: dict[str, TsconfigFacts | None] = field(default_factory=dict)
    _sorted: dict[str, list[str]] = field(default_factory=dict)  # sorted keys of the path indexes
    _roles: _RoleMemo = field(default_factory=_RoleMemo)
    _surface: dict[str, Any] = field(default_factory=dict)  # docbridge.engine.discovery.surface's memo
    _routes: dict[str, Any] = field(default_factory=dict)  # docbridge.engine.discovery.routes' memo
    _suffixes: dict[str, Any] = field(default_factory=dict)  # `by_suffix`'s index
    # path -> (the document's facts, its anchor index): shared by every resolution that links to the page
    _anchors: dict[str, Any] = field(default_factory=dict)

    # ---- what part a file plays

    partial: ClassVar[bool] = False  # a view of part of the repository (an editor's first moments): no listings

    def doc_sites(self) -> tuple[tuple[str, str], ...]:
        """The folders of documentation sites (never the repository root), each with its configuration file:
        a documentation generator's configuration anywhere, a site framework's where its folder holds pages."""
        memo = self._roles
        if self.partial:
            return ()
        if memo.sites is None:
            found: dict[str, str] = {}
            documents = self.sorted_paths("documents")
            for path in sorted(self.paths()):
                generator = DOCS_GENERATOR_CONFIG.search(path)
                if generator is None and SITE_FRAMEWORK_CONFIG.search(path) is None:
                    continue
                folder = dirname(path)
                if folder.endswith((".vitepress", ".vuepress")):
                    folder = dirname(folder)
                if not folder or folder in found:
                    continue
                if generator is None:
                    start = bisect.bisect_left(documents, folder + "/")
                    pages = documents[start:start + SITE_MIN_PAGES]
                    if len(pages) < SITE_MIN_PAGES or not pages[-1].startswith(folder + "/"):
                        continue
                found[folder] = path
            memo.sites = tuple(sorted(found.items()))
        return memo.sites

    def role_of(self, path: str) -> tuple[str, str]:
        """(role, reason): what part a file plays (see `docbridge.engine.discovery.roles`); the configuration's
        `analysis.roles` first."""
        if self.config.analysis.roles:
            known = self._roles.configured
            if path not in known:
                known[path] = configured_role(self.config.analysis.roles, path)
            configured = known[path]
            if configured is not None:
                return configured
        facts = self.modules.get(path)
        if facts is not None and facts.generated:
            return GENERATED, f"marked `{facts.generated}` in its header"
        memo = self._roles.roles
        found = memo.get(path)
        if found is None:
            found = memo[path] = self._layout_role(path)
        return found

    def _layout_role(self, path: str) -> tuple[str, str]:
        if self.rules.marked_generated(path):
            return GENERATED, "marked linguist-generated in .gitattributes"
        if path in self.rules.committed_ignored and file_kind(path) in (MODULE, DOCUMENT):
            return GENERATED, "committed although a .gitignore lists it (build output)"
        by_path = path_role(path)
        if by_path is not None:
            return by_path
        for folder, config in self.doc_sites():
            if path.startswith(folder + "/"):
                return DOCS_SITE, f"in the documentation site of `{config}`"
        package = self.layout.package_of(path) if self.layout is not None else None
        if package is not None and package.facts is not None and package.facts.private and package.directory != ".":
            role = package_role(package.name, package.directory)
            if role is not None:
                return role, f"in the private package `{package.name}`"
        return SOURCE, "library source"

    def prepare_lookups(self) -> None:
        """Build the repository-wide lookups a scan's resolution builds on its way (documentation sites, packages'
        names, paths by their tails, fuzzy choices): a model resumed from the kept one has none, and the first edit
        after a restart built them on the editor's loop, beside the worker deriving every file's findings."""
        if self.partial:
            return
        self.doc_sites()
        self.package_names()
        self._path_tails()
        self._named_modules()
        self._fuzzy_choices()

    def is_library(self, path: str) -> bool:
        return self.role_of(path)[0] == SOURCE

    # ---- what exists

    def exists(self, path: str) -> bool:
        return path in self.documents or path in self.modules or path in self.manifests or \
            path in self.tsconfigs or path in self.navigation or path in self.other

    def paths(self) -> Iterator[str]:
        """Every file the model knows, analyzed or not (unsorted)."""
        for mapping in (self.documents, self.modules, self.manifests, self.tsconfigs, self.navigation, self.other):
            yield from mapping.keys()

    def sorted_paths(self, index: str) -> list[str]:
        """The sorted keys of `documents`, `modules`, `other` or `dir_counts` (memoised while no path comes
        or goes: the value survives edits that only change a file's content)."""
        found = self._sorted.get(index)
        if found is None:
            found = self._sorted[index] = sorted(getattr(self, index).keys())
        return found

    def facts(self, path: str) -> Any | None:
        return self.documents.get(path) or self.modules.get(path) or self.manifests.get(path) or \
            self.tsconfigs.get(path) or self.navigation.get(path)

    def navigated(self, folder_routes: list[tuple[str, str]]) -> bool:
        """Whether a navigation file kept in `folder` names `route` (for any (folder, route) given): the site
        serves the route though no page of the repository does (its navigation maps it elsewhere)."""
        index = self._routes.get("navigation")
        if index is None:
            built: dict[str, set[str]] = defaultdict(set)
            for path, facts in self.navigation.items():
                folder = dirname(path)
                for route in facts.routes:
                    cleaned = route.strip("/").lower().removesuffix(".mdx").removesuffix(".md")
                    built[folder].add(cleaned)
            index = self._routes["navigation"] = {k: frozenset(v) for k, v in built.items()}
        return any(route in index.get(folder, ()) for folder, route in folder_routes)

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
        if path in self.manifests or path in self.tsconfigs or path in self.navigation or path in self.other:
            return "file"
        if path in self.dir_counts:
            return "directory"
        return None

    def package_names(self) -> tuple[dict[str, str], dict[str, str]]:
        names = self._packages
        if names.full is None or names.short is None:
            assert self.layout is not None
            # a name several manifests claim (a test fixture that fakes a published package) is the library's
            ordered = sorted(((p.facts.name, p) for p in self.layout.packages.values() if p.facts and p.facts.name),
                             key=lambda item: (self.is_library(item[1].manifest or item[1].directory),
                                               item[1].directory))
            full = {name: p.directory for name, p in ordered}
            shorts: dict[str, list[str]] = defaultdict(list)
            for name, directory in full.items():
                shorts[name.rsplit("/", 1)[-1]].append(directory)
            names.short = {s: d[0] for s, d in shorts.items() if len(d) == 1 and s not in full}
            names.full = full
        return names.full, names.short

    def package_for_name(self, token: str, deps: set[Key]) -> str | None:
        full, short = self.package_names()
        directory = full.get(token) or short.get(token)
        if directory is None:
            return None
        assert self.layout is not None
        return self.layout.packages[directory].id

    def symbol_owners(self, name: str, deps: set[Key]) -> list[str]:
        deps.add(("sym", name))
        owners = members(self.owners.get(name))
        if owners:
            return sorted(owners)
        return sorted(members(self.reexporters.get(name)))

    def renamed_symbol(self, name: str, deps: set[Key]) -> tuple[str, str] | None:
        """(module, new name) when `name` stopped being exported because its module renamed it."""
        deps.add(("sym", name))
        return self.renamed.get(name)

    def export_position(self, module: str, name: str) -> tuple[int, int] | None:
        facts = self.modules.get(module)
        if facts is None:
            return None
        for export in facts.exports:
            if export.name == name:
                return export.line, export.column
        return None

    def the_file_named(self, base: str, deps: set[Key]) -> str | None:
        """The one document or module named `base`, if only one is (not sorted: `index.js` names thousands)."""
        deps.add(("base", base))
        named = self.basenames.get(base)
        return named if type(named) is str else None

    def by_suffix(self, suffix: str) -> list[str]:
        """Files and folders whose path ends with `/<suffix>` (a suffix of two to four segments), found by
        bisection in every path reversed, sorted (memoised while no path comes or goes; an index of every path's
        last segments took 20 MB on babel's 27,674 files)."""
        if not 1 <= suffix.count("/") < SUFFIX_SEGMENTS:
            return []
        tails = self._path_tails()
        wanted = suffix[::-1] + "/"
        found = []
        at = bisect.bisect_left(tails, wanted)
        while at < len(tails) and tails[at].startswith(wanted):
            found.append(tails[at][::-1])
            at += 1
        return sorted(found)

    def _path_tails(self) -> list[str]:
        tails = self._suffixes.get("reversed-paths")
        if tails is None:
            tails = self._suffixes["reversed-paths"] = sorted(path[::-1] for path in chain(
                self.paths(), self.dir_counts.keys()))
        return tails

    def named_modules(self, folder: str, stem: str) -> list[str]:
        """Modules named `stem` (any extension) in a folder named `folder`, anywhere (memoised index)."""
        return list(self._named_modules().get((folder, stem), ()))

    def _named_modules(self) -> dict[tuple[str, str], list[str]]:
        index = self._suffixes.get("named-modules")
        if index is None:
            built: dict[tuple[str, str], list[str]] = defaultdict(list)
            for path in self.sorted_paths("modules"):
                parts = path.split("/")
                if len(parts) > 1:
                    built[(parts[-2], parts[-1].split(".", 1)[0])].append(path)
            index = self._suffixes["named-modules"] = dict(built)
        return index

    def by_stem(self, stem: str, deps: set[Key]) -> list[str]:
        deps.add(("stem", stem))
        return sorted(members(self.stems.get(stem)))

    def _fuzzy_choices(self) -> list[str]:
        memo = self._fuzzy
        if memo.choices is None:
            assert self.layout is not None
            memo.choices = sorted(set(self.documents.keys()) | set(self.modules.keys()) | set(self.layout.areas))
        return memo.choices

    def fuzzy(self, token: str, deps: set[Key], limit: int = 3, cutoff: float = FUZZY_THRESHOLD) -> list[
            tuple[str, float]]:
        """Documents, modules and areas whose path is very close to `token` (and of a similar length). In a large
        repository only the likely places are compared, as for suggestions (`_likely_places`): every unresolved
        path-like span was compared with every path (on babel's 27,674 files, half of resolving)."""
        deps.add(("fuzzy",))
        memo = self._fuzzy
        every = self._fuzzy_choices()
        if not every:
            return []
        # memoised: a document's unresolved path-like spans are looked up on every re-resolution
        key = (token, limit, cutoff)
        cached = memo.found.get(key)
        if cached is None:
            low, high = len(token) * 0.6, len(token) * 1.67
            choices = every
            if len(choices) > GLOBAL_SUGGESTIONS:  # (namesakes come from every path: a manifest is no candidate)
                choices = [c for c in self._likely_places(choices, token) if _holds(every, c)]
            matches = process.extract(token, choices, scorer=JaroWinkler.normalized_similarity, limit=limit,
                                      score_cutoff=cutoff) if choices else []
            cached = memo.found[key] = [(c, score) for c, score, _ in matches if low <= len(c) <= high]
        return list(cached)

    def suggest(self, target: str, limit: int = 3, cutoff: float = 0.9) -> list[str]:
        """Paths close to a missing one, best first (for remediation text and quick fixes). In a large
        repository (more than `GLOBAL_SUGGESTIONS` paths) only the likely places are compared: the missing
        path's directory and the files that bear its name elsewhere (a moved file), so that typing a new link
        costs a few comparisons, not one per file of the repository."""
        memo = self._suggest
        if memo.choices is None:
            assert self.layout is not None
            memo.choices = sorted(set(self.paths()) - set(self.manifests.keys()) - set(self.tsconfigs.keys())
                                  | set(self.layout.areas))
        if not memo.choices:
            return []
        # memoised: an edited document's broken links are re-reported on every keystroke
        key = (target, limit, cutoff)
        cached = memo.found.get(key)
        if cached is None:
            choices: list[str] = memo.choices
            if len(choices) > GLOBAL_SUGGESTIONS:
                choices = self._likely_places(memo.choices, target)
            found = process.extract(target, choices, scorer=JaroWinkler.normalized_similarity,
                                    limit=limit, score_cutoff=cutoff) if choices else []
            # a file moved, or converted between JavaScript and TypeScript, keeps its name: when few files bear
            # it, they come first (`test/exports.test.ts` -> `test/units/exports.test.ts`, not `test/expr.test.ts`)
            moved = self._namesakes(target)
            moved = sorted(moved, key=lambda path: -JaroWinkler.normalized_similarity(target, path)) \
                if 0 < len(moved) <= limit else []
            cached = memo.found[key] = (moved + [c for c, _, _ in found if c not in moved])[:limit]
        return list(cached)

    def _namesakes(self, target: str) -> list[str]:
        """The files that bear `target`'s name, or its stem with another JavaScript or TypeScript extension."""
        name = target.rsplit("/", 1)[-1]
        stem, dot, extension = name.rpartition(".")
        names = {name} | ({stem + other for other in MODULE_EXTENSIONS} if dot and f".{extension}" in
                          MODULE_EXTENSIONS else set())
        return sorted({path for each in names for path in members(self.basenames.get(each)) if path != target})

    def _likely_places(self, ordered: list[str], target: str) -> list[str]:
        """The paths in `target`'s directory (and below it), and the files with its name anywhere."""
        directory = dirname(target)
        prefix = f"{directory}/" if directory else ""
        start = bisect.bisect_left(ordered, prefix)
        near = []
        for path in ordered[start:start + NEAR_SUGGESTIONS] if prefix else ordered[:NEAR_SUGGESTIONS]:
            if prefix and not path.startswith(prefix):
                break
            near.append(path)
        named = members(self.basenames.get(target.rsplit("/", 1)[-1]))
        return sorted(set(near) | set(named))

    def conventional_unit(self, path: str, deps: set[Key]) -> tuple[str, str] | None:
        """(entity id, path) of the unit a document documents by where the agent corpus keeps it:
        `<agent root>/packages/<x>.md` or `<agent root>/apps/<x>.md` (`corpus.agent.root`, default
        `docs/for-agents`) covers `<x>`: the package whose manifest name is `<x>`, else the one whose name ends in
        `/<x>`, else the one in a folder named `<x>`; else the area an ownership record `<x>` names, or the area at
        path `<x>`. None when the path is not of that shape or `<x>` names none of these, or several alike (a page
        about something else is no error)."""
        root = (self.config.corpus.agent.root or "docs/for-agents").strip().replace("\\", "/").strip("/")
        prefix = f"{root}/" if root and root != "." else ""
        if not path.startswith(prefix):
            return None
        scope, _, file = path[len(prefix):].partition("/")
        if scope not in ("packages", "apps") or not file or "/" in file:
            return None
        name = file.rsplit(".", 1)[0] if file.lower().endswith((".md", ".mdx")) else ""
        if not name or self.layout is None:
            return None
        deps.add(("all",))  # packages and their names
        packages = sorted(self.layout.packages.values(), key=lambda info: info.directory)
        named = [(info.facts.name if info.facts is not None and info.facts.name else "", info) for info in packages]
        for tier in ([info for full, info in named if full == name],
                     [info for full, info in named if full.endswith("/" + name)],
                     [info for _, info in named if info.directory.rsplit("/", 1)[-1] == name]):
            if len(tier) == 1:
                return tier[0].id, tier[0].directory
            if tier:
                return None  # several packages answer to the name: which one is meant cannot be told
        for record in self.config.ownership:
            if record.id == name:
                deps.add(("path", record.path))
                if record.path in self.layout.areas:
                    return entity_id(AREA, record.path), record.path
        deps.add(("path", name))
        return (entity_id(AREA, name), name) if name in self.layout.areas else None

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
            probe = dirname(probe)
        self._tsconfig_for_dir[directory] = found
        return found


class UniverseBuilder:
    """Derives the next Universe from one: `set_facts` / `set_other` record what changed and return the
    dependency keys whose answers changed; `finish` builds the value (and the layout, when asked)."""

    def __init__(self, base: Universe) -> None:
        self.base = base
        self.documents = base.documents.mutate()
        self.modules = base.modules.mutate()
        self.manifests = base.manifests.mutate()
        self.tsconfigs = base.tsconfigs.mutate()
        self.navigation = base.navigation.mutate()
        self.other = base.other.mutate()
        self.dir_counts = base.dir_counts.mutate()
        self.owners = base.owners.mutate()
        self.reexporters = base.reexporters.mutate()
        self.basenames = base.basenames.mutate()
        self.stems = base.stems.mutate()
        self.renamed = base.renamed.mutate()
        self.names_changed = False  # documents or modules came or went: fuzzy choices change
        self.paths_changed = False  # any file came or went: suggestions change
        self.tsconfigs_changed = False
        self.surface_changed = False  # an export or re-export came, went or changed: public surfaces move
        self.routes_changed = False  # a document or folder came or went, or a page's route frontmatter changed
        self.layout_wanted = base.layout is None

    # ---- paths

    def _add_path(self, path: str, keys: set[Key]) -> None:
        self.paths_changed = True
        keys.add(("path", path))
        keys.add(("dir-files", dirname(path)))
        for directory in parent_dirs(path):
            count = self.dir_counts.get(directory, 0) + 1
            self.dir_counts[directory] = count
            if count == 1:
                keys.add(("path", directory))
                self._routes_moved(keys)

    def _remove_path(self, path: str, keys: set[Key]) -> None:
        self.paths_changed = True
        keys.add(("path", path))
        keys.add(("dir-files", dirname(path)))
        for directory in parent_dirs(path):
            count = self.dir_counts.get(directory, 0) - 1
            if count <= 0:
                self.dir_counts.pop(directory, None)
                keys.add(("path", directory))
                self._routes_moved(keys)
            else:
                self.dir_counts[directory] = count

    def _unit_page(self, path: str) -> None:
        """A page that came or went beside code may make or unmake a unit (an area): rebuild the layout."""
        folder, _, name = path.rpartition("/")
        stem = name.rsplit(".", 1)[0]
        if name.lower() in UNIT_PAGES or any(f"{folder}/{stem}{ext}" in self.modules for ext in MODULE_EXTENSIONS):
            self.layout_wanted = True

    def _routes_moved(self, keys: set[Key]) -> None:
        self.routes_changed = True
        keys.add(("routes",))

    def current(self, path: str) -> Any | None:
        return self.documents.get(path) or self.modules.get(path) or self.manifests.get(path) or \
            self.tsconfigs.get(path) or self.navigation.get(path)

    def set_other(self, path: str, present: bool) -> set[Key]:
        keys: set[Key] = set()
        exists = self.current(path) is not None or path in self.other
        if present and not exists:
            self.other[path] = True
            self._add_path(path, keys)
        elif not present and path in self.other:
            self.other.pop(path, None)
            self._remove_path(path, keys)
        return keys

    def set_facts(self, path: str, facts: Any | None) -> set[Key]:
        """Insert, replace or (with None) remove the facts of one file."""
        keys: set[Key] = set()
        old = self.current(path)
        if old is not None and facts is not None and type(old) is type(facts) and isinstance(
                facts, (MarkdownFacts, ModuleFacts)):
            return self._replace(old, facts)
        was_present = old is not None or path in self.other
        if old is not None:
            self._unindex(old, keys)
        self.other.pop(path, None)
        if facts is None:
            if was_present:
                self._remove_path(path, keys)
        else:
            if not was_present:
                self._add_path(path, keys)
            elif old is None:  # present without facts (skipped, unreadable): what the path is changes
                keys.add(("path", path))
            self._index(facts, keys)
        return keys

    # ---- multi-valued indexes (copy-on-write sets)

    @staticmethod
    def _add(index: Any, key: str, path: str) -> bool:
        current = index.get(key)
        if current is None:
            index[key] = path
            return True
        held = members(current)
        if path in held:
            return False
        index[key] = frozenset(held) | {path}
        return True

    @staticmethod
    def _discard(index: Any, key: str, path: str) -> bool:
        held = members(index.get(key))
        if path not in held:
            return False
        rest = frozenset(held) - {path}
        if len(rest) > 1:
            index[key] = rest
        elif rest:
            index[key] = next(iter(rest))
        else:
            index.pop(key, None)
        return True

    def _replace(self, old: Any, new: Any) -> set[Key]:
        """A new version of a document or module: only what its neighbours can observe changed."""
        keys: set[Key] = set()
        if isinstance(new, MarkdownFacts):
            self.documents[new.path] = new
            if anchors_of(old) != anchors_of(new):
                keys.add(("slugs", new.path))
            if [(k, v) for k, v in old.frontmatter if k in ROUTE_FRONTMATTER] != \
                    [(k, v) for k, v in new.frontmatter if k in ROUTE_FRONTMATTER]:
                self._routes_moved(keys)
            return keys
        self.modules[new.path] = new
        if old.site_mounts != new.site_mounts:  # a site's configuration serves its folders elsewhere
            self._routes_moved(keys)
        if old.exports != new.exports or [i for i in old.imports if i.kind.startswith("re-export")] != \
                [i for i in new.imports if i.kind.startswith("re-export")]:
            self.surface_changed = True
            keys.add(("surface",))
        if old.generated != new.generated:  # its role changed: every mention of its names chooses again
            keys.update(("sym", e.name) for e in (*old.exports, *new.exports) if e.name not in ("*", "default"))
        before = {(e.name, e.declared) for e in old.exports if e.name not in ("*", "default")}
        after = {(e.name, e.declared) for e in new.exports if e.name not in ("*", "default")}
        for name, declared in before - after:
            self._discard(self.owners if declared else self.reexporters, name, new.path)
            keys.add(("sym", name))
        for name, declared in after - before:
            self._add(self.owners if declared else self.reexporters, name, new.path)
            keys.add(("sym", name))
        self._note_renames(new.path, {n for n, d in before - after if d}, {n for n, d in after - before if d})
        return keys

    def _note_renames(self, module: str, gone: set[str], came: set[str]) -> None:
        """Remember which vanished exports a module renamed (one went, a similar one came in the same change),
        so that documents still naming the old one can be offered the new one."""
        for name in came:
            self.renamed.pop(name, None)
        for old in sorted(gone):
            if self.owners.get(old) or not came:
                continue
            scored = sorted(((fuzz.ratio(old.lower(), new.lower()), new) for new in came), reverse=True)
            score, best = scored[0]
            if score >= RENAME_SIMILARITY or (len(gone) == 1 and len(came) == 1):
                if len(self.renamed) >= MAX_RENAMES:
                    break
                self.renamed[old] = (module, best)

    def _index(self, facts: Any, keys: set[Key]) -> None:
        if isinstance(facts, MarkdownFacts):
            self.documents[facts.path] = facts
            self._names_added(facts.path, keys)
            self._routes_moved(keys)
            self._unit_page(facts.path)
            stem = stem_of(facts.path)
            self._add(self.stems, stem, facts.path)
            keys.add(("stem", stem))
            keys.add(("slugs", facts.path))
        elif isinstance(facts, ModuleFacts):
            self.modules[facts.path] = facts
            self._names_added(facts.path, keys)
            if facts.site_mounts:
                self._routes_moved(keys)
            self.layout_wanted = True
            self.surface_changed = True
            keys.add(("surface",))
            for export in facts.exports:
                if export.name in ("*", "default"):
                    continue
                self._add(self.owners if export.declared else self.reexporters, export.name, facts.path)
                keys.add(("sym", export.name))
                if export.declared:
                    self.renamed.pop(export.name, None)
        elif isinstance(facts, PackageFacts):
            self.manifests[facts.path] = facts
            self.layout_wanted = True
            keys.add(("all",))
        elif isinstance(facts, TsconfigFacts):
            self.tsconfigs[facts.path] = facts
            self.tsconfigs_changed = True
            keys.add(("all",))
        elif isinstance(facts, NavigationFacts):
            self.navigation[facts.path] = facts
            self._routes_moved(keys)

    def _unindex(self, facts: Any, keys: set[Key]) -> None:
        if isinstance(facts, MarkdownFacts):
            self.documents.pop(facts.path, None)
            self._names_removed(facts.path, keys)
            self._routes_moved(keys)
            self._unit_page(facts.path)
            stem = stem_of(facts.path)
            self._discard(self.stems, stem, facts.path)
            keys.add(("stem", stem))
            keys.add(("slugs", facts.path))
        elif isinstance(facts, ModuleFacts):
            self.modules.pop(facts.path, None)
            self._names_removed(facts.path, keys)
            if facts.site_mounts:
                self._routes_moved(keys)
            self.layout_wanted = True
            self.surface_changed = True
            keys.add(("surface",))
            for export in facts.exports:
                if export.name in ("*", "default"):
                    continue
                self._discard(self.owners if export.declared else self.reexporters, export.name, facts.path)
                keys.add(("sym", export.name))
        elif isinstance(facts, PackageFacts):
            self.manifests.pop(facts.path, None)
            self.layout_wanted = True
            keys.add(("all",))
        elif isinstance(facts, TsconfigFacts):
            self.tsconfigs.pop(facts.path, None)
            self.tsconfigs_changed = True
            keys.add(("all",))
        elif isinstance(facts, NavigationFacts):
            self.navigation.pop(facts.path, None)
            self._routes_moved(keys)

    def _names_added(self, path: str, keys: set[Key]) -> None:
        base = path.rsplit("/", 1)[-1]
        if self._add(self.basenames, base, path):
            keys.add(("base", base))
            keys.add(("fuzzy",))
            self.names_changed = True

    def _names_removed(self, path: str, keys: set[Key]) -> None:
        base = path.rsplit("/", 1)[-1]
        if self._discard(self.basenames, base, path):
            keys.add(("base", base))
            keys.add(("fuzzy",))
            self.names_changed = True

    # ---- the value

    def finish(self) -> tuple[Universe, set[Key], bool]:
        """The new universe, the keys that changed with its layout, and whether the layout was rebuilt."""
        base = self.base
        keys: set[Key] = set()
        modules = self.modules.finish()
        manifests = self.manifests.finish()
        documents = self.documents.finish()
        layout = base.layout
        rebuilt = False
        if self.layout_wanted:
            layout = build_layout(manifests.values(), modules.keys(), base.config, documents=documents.keys())
            rebuilt = True
            old = base.layout
            if old is None or set(old.areas) != set(layout.areas):
                before = set(old.areas) if old else set()
                for path in before ^ set(layout.areas):
                    keys.add(("path", path))
                keys.add(("fuzzy",))
                self.names_changed = True
            if old is None or {p.id for p in old.packages.values()} != {p.id for p in layout.packages.values()}:
                keys.add(("all",))
        universe = Universe(
            config=base.config, rules=base.rules, documents=documents, modules=modules,
            manifests=manifests, tsconfigs=self.tsconfigs.finish(), navigation=self.navigation.finish(),
            other=self.other.finish(),
            dir_counts=self.dir_counts.finish(), owners=self.owners.finish(), reexporters=self.reexporters.finish(),
            basenames=self.basenames.finish(), stems=self.stems.finish(), renamed=self.renamed.finish(),
            layout=layout,
            _fuzzy=_Matches() if self.names_changed else base._fuzzy,
            _suggest=_Matches() if self.paths_changed or rebuilt else base._suggest,
            _packages=_PackageNames() if rebuilt else base._packages,
            _tsconfig_for_dir={} if self.tsconfigs_changed else base._tsconfig_for_dir,
            _sorted={} if self.paths_changed else base._sorted,
            _roles=_RoleMemo() if self.paths_changed or rebuilt else base._roles,
            _surface={} if self.surface_changed or rebuilt else base._surface,
            _routes={} if self.routes_changed else base._routes,
            _suffixes={} if self.paths_changed else base._suffixes,
            _anchors=base._anchors)
        return universe, keys, rebuilt


def build_universe(config: Config, rules: IgnoreRules, facts: Iterable[tuple[str, Any | None]]) -> Universe:
    """A universe from scratch: `facts` gives every present path with its facts (None: not analyzed)."""
    builder = UniverseBuilder(Universe(config, rules))
    for path, found in facts:
        if found is not None:
            builder.set_facts(path, found)
        else:
            builder.set_other(path, True)
    builder.layout_wanted = True
    return builder.finish()[0]
