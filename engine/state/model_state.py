"""The model as a value: one immutable state of a repository, with a revision number.

A `ModelState` holds everything resolution produced for one version of the repository's files: the universe
of facts, each document's and module's resolution, the dependency index that says which files to re-resolve
when something changes, and the editor buffers the facts were analyzed from. It never changes: an edit makes
a new state (`engine.state.transitions`), sharing every unchanged part through persistent maps. A worker handed a
state computes on it while edits go on producing newer ones; its result belongs to that state.

Derived views (snapshot, findings, retrieval projection and index, reverse indexes) are memoised per state,
each by the module that derives it, which imports this one (never the other way).
Findings and the reverse indexes are derived incrementally from the last state that computed them: a state
remembers those values ("seeds") together with the files whose resolution changed since.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from docbridge.engine.base.config import CONFIG_FILE, Config
from docbridge.engine.base.hashing import canonical_hash
from docbridge.engine.base.memo import ViewKey
from docbridge.engine.base.model import DOCUMENT, MODULE, entity_id
from docbridge.engine.discovery.files import normalise
from docbridge.engine.discovery.references import DocumentResolution
from docbridge.engine.discovery.resolve import ModuleResolution, analyzer_versions
from docbridge.engine.discovery.universe import EMPTY, Key, Universe
from immutables import Map

V = TypeVar("V")


SEEDED_VIEWS = ("findings-index", "documented-by", "referenced-by", "projection", "retriever:combined",
                "relation-declarers")
MAX_SEED_CHANGES = 4096  # beyond this many changed files, derive a view from scratch


class Structure(NamedTuple):
    """Versions of what repository-level findings read; each moves when that part of the model changed."""

    modules: int = 0  # module relations (imports and their lines): cycles, area imports
    documentation: int = 0  # which entities each document documents: undocumented areas
    layout: int = 0  # packages and areas
    paths: int = 0  # which paths exist: ownership records


@dataclass(frozen=True, slots=True)
class ScanReport:
    parsed: tuple[str, ...] = ()
    reused: int = 0
    seconds: float = 0.0
    resumed: bool = False  # built from the model kept by an earlier scan (`engine.state.resume`)
    applied: int = 0  # when resumed: the files changed, come or gone since that model


class Pending:
    """A view being built on a state: by which thread, and its value once built. A caller on another thread waits
    for it instead of building it a second time (after a scan the server derives every finding in a worker; an
    edit made meanwhile starts from that result instead of deriving them all again, on the event loop)."""

    __slots__ = ("done", "failed", "thread", "value")

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.done = threading.Event()
        self.value: Any = None
        self.failed = False

    def result(self) -> Any:
        """The value, once built; None when the build failed."""
        self.done.wait()
        return None if self.failed else self.value


@dataclass(frozen=True, slots=True)
class Seed:
    """A view computed on an ancestor state (or being computed: `Pending`), and the files re-resolved or removed
    since. Read through `ModelState.seed`."""

    value: Any
    changed: frozenset[str]


class FactsView(Mapping[str, Any]):
    """Every analyzed file's facts (documents, modules, manifests, tsconfigs, navigation), read through the
    universe."""

    __slots__ = ("_u",)

    def __init__(self, universe: Universe) -> None:
        self._u = universe

    def __getitem__(self, path: str) -> Any:
        found = self._u.facts(path)
        if found is None:
            raise KeyError(path)
        return found

    def __iter__(self) -> Iterator[str]:
        u = self._u
        for mapping in (u.documents, u.modules, u.manifests, u.tsconfigs, u.navigation):
            yield from mapping.keys()

    def __len__(self) -> int:
        u = self._u
        return len(u.documents) + len(u.modules) + len(u.manifests) + len(u.tsconfigs) + len(u.navigation)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._u.facts(path) is not None


def paths_of(dependents: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """The paths of a `ModelState.dependents` value (one path, or a tuple of them), as a tuple."""
    if dependents is None:
        return ()
    return (dependents,) if type(dependents) is str else dependents  # type: ignore[return-value]


def with_dependent(dependents: str | tuple[str, ...] | None, path: str) -> str | tuple[str, ...]:
    """A `ModelState.dependents` value with `path` added."""
    if dependents is None or dependents == path:
        return path
    return tuple(sorted({*paths_of(dependents), path}))


def without_dependent(dependents: str | tuple[str, ...] | None, path: str) -> str | tuple[str, ...] | None:
    """A `ModelState.dependents` value with `path` removed (None when none is left)."""
    rest = tuple(p for p in paths_of(dependents) if p != path)
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class ModelState:
    revision: int
    root: Path
    config: Config
    universe: Universe
    skipped: Map[str, str] = EMPTY  # path -> why it is not analyzed
    documents: Map[str, DocumentResolution] = EMPTY
    modules: Map[str, ModuleResolution] = EMPTY
    # dependency key -> the files whose resolution asked it (`dependents_of`): one path where one file asked it (most
    # keys), else a tuple of them, sorted; a set per key costs four times the memory, a tuple of one path 64 bytes
    # a key (455,000 keys on a 100,000-file tree)
    dependents: Map[Key, str | tuple[str, ...]] = EMPTY
    deps: Map[str, tuple[Key, ...]] = EMPTY  # file -> the keys its resolution asked
    structure: Structure = Structure(0, 0, 0, 0)  # noqa: RUF009 (an immutable tuple)
    buffers: Map[str, str] = EMPTY  # path -> editor buffer text its facts were analyzed from
    resolved: bool = True
    scan: ScanReport = ScanReport()
    use_cache: bool = True
    seeds: Map[str, Seed] = EMPTY
    _views: dict[str, Any] = field(default_factory=dict)  # memo of derived values (never the model)

    # ------------------------------------------------------------------ reads

    @property
    def facts(self) -> FactsView:
        return FactsView(self.universe)

    @property
    def present(self) -> _Present:
        return _Present(self.universe)

    def dependents_of(self, key: Key) -> tuple[str, ...]:
        """The files whose resolution asked `key`, sorted."""
        return paths_of(self.dependents.get(key))

    @property
    def generation(self) -> int:  # the name older callers used for the revision
        return self.revision

    def text_of(self, path: str) -> str | None:
        """The editor buffer a file was analyzed from, or None when its facts came from disk."""
        return self.buffers.get(path)

    def entity_for_path(self, path: str) -> str | None:
        """The entity a repository path names: document, module, area or package."""
        clean = normalise(path.removeprefix("./").rstrip("/"))
        if clean is None:
            return None
        u = self.universe
        layout = u.layout
        assert layout is not None
        if clean in u.documents:
            return entity_id(DOCUMENT, clean)
        if clean in u.modules:
            return entity_id(MODULE, clean)
        if clean in layout.areas:
            return layout.areas[clean].id
        key = clean or "."
        if key in layout.packages:
            return layout.packages[key].id
        return None

    def config_line(self, needle: str) -> int | None:
        """The 0-based line of the configuration file where `needle` first appears."""
        lines = self.view("config-lines", self._config_lines)
        for index, line in enumerate(lines):
            if needle in line:
                return index
        return None

    def _config_lines(self) -> list[str]:
        try:
            return (self.root / CONFIG_FILE).read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            return []

    def input_fingerprint(self) -> str:
        """A hash of everything resolution reads: every path with its kind and content hash, skipped files
        and why, the configuration and the analyzer versions. Equal fingerprints give equal snapshots."""
        def build() -> str:
            u = self.universe
            rows = []
            for path in sorted(set(u.paths()) | set(self.skipped.keys())):
                facts = u.facts(path)
                rows.append((path, type(facts).kind if facts is not None else "other",
                             facts.content_hash if facts is not None else self.skipped.get(path, "")))
            return canonical_hash({"files": rows, "config": self.config.content_hash(),
                                   "analyzers": analyzer_versions()})
        return self.view("fingerprint", build)

    def reuse_report(self) -> dict[str, Any]:
        report = self.scan
        total = report.reused + len(report.parsed)
        if report.resumed:
            shown = ", ".join(report.parsed[:8]) + (f" and {len(report.parsed) - 8} more" if len(
                report.parsed) > 8 else "")
            status = "complete" if not report.parsed else "partial"
            reason = (f"Resumed from the model the language server kept: {report.applied} file(s) changed since. "
                      + (f"Re-parsed: {shown}." if report.parsed else "Nothing needed re-parsing."))
        elif total == 0:
            status, reason = "not-applicable", "Nothing was analyzed."
        elif report.reused == 0:
            status, reason = "not-applicable", f"No cached facts were reused; parsed {len(report.parsed)} file(s)."
        else:
            status = "complete" if not report.parsed else "partial"
            shown = ", ".join(report.parsed[:8]) + (f" and {len(report.parsed) - 8} more" if len(
                report.parsed) > 8 else "")
            reason = f"Reused {report.reused} of {total} file(s). " + (
                f"Re-parsed: {shown}." if report.parsed else "Nothing needed re-parsing.")
        return {"status": status, "reused": report.reused, "parsed": len(report.parsed), "reason": reason}

    # ------------------------------------------------------------------ views

    def view(self, key: ViewKey[V] | str, build: Callable[[], V]) -> V:
        """A derived value, built at most once per state (concurrent callers may race to build it; the
        first one stored wins and every caller gets that one). Each derived view's module owns its key and
        the function that reads it (`snapshot_of(state)`, `findings_index_of(state)`...): the state knows no
        view."""
        name = key.name if isinstance(key, ViewKey) else key
        views = self._views
        found = views.get(name, _MISSING)
        if found is _MISSING:
            pending = Pending()
            found = views.setdefault(name, pending)  # atomic: one build per name starts
            if found is pending:
                try:
                    value = build()
                except BaseException:
                    pending.failed = True
                    if views.get(name) is pending:
                        views.pop(name, None)
                    pending.done.set()
                    raise
                pending.value = value
                views[name] = value
                pending.done.set()
                return value
        if type(found) is Pending:
            if found.thread != threading.get_ident():  # another thread builds it: its value, when it has one
                value = found.result()
                if not found.failed:
                    return value
            return build()  # built here: the same thread asks again while building it, or the other build failed
        return found  # type: ignore[no-any-return]  # stored under this key by `build`, so a V

    def replace_view(self, key: ViewKey[V], value: V) -> None:
        """Put an equivalent value in place of a built view (a search index patched after edits, compacted once
        they pause); a view not built yet is left to be built."""
        if self.has_view(key):
            self._views[key.name] = value

    def has_view(self, key: ViewKey[Any] | str) -> bool:
        """Whether the view is built (not merely being built)."""
        found = self._views.get(key.name if isinstance(key, ViewKey) else key, _MISSING)
        return found is not _MISSING and type(found) is not Pending

    def seed(self, name: str) -> Seed | None:
        """The seed of a view, its value built (waiting for an ancestor's build still running); None when there
        is none or that build failed."""
        seed = self.seeds.get(name)
        if seed is None or type(seed.value) is not Pending:
            return seed
        value = seed.value.result()
        return None if value is None else Seed(value, seed.changed)

    # ------------------------------------------------------------------ lineage

    def seeds_for_child(self, changed: frozenset[str]) -> Map[str, Seed]:
        """The seeds a state derived from this one starts with, given the files that change on the way."""
        seeds = self.seeds
        with seeds.mutate() as mutation:
            for name in SEEDED_VIEWS:
                value = self._views.get(name, _MISSING)
                if value is not _MISSING:
                    mutation[name] = Seed(value, changed)
                    continue
                seed = seeds.get(name)
                if seed is None:
                    continue
                merged = seed.changed | changed
                if len(merged) > MAX_SEED_CHANGES:
                    mutation.pop(name, None)
                else:
                    mutation[name] = Seed(seed.value, merged)
            result = mutation.finish()
        return result

    def successor(self, **changes: Any) -> ModelState:
        """A new state with these fields replaced, the next revision and no views."""
        return replace(self, revision=self.revision + 1, _views={}, **changes)


class _Present:
    """Which paths exist (analyzed or not), read through the universe."""

    __slots__ = ("_u",)

    def __init__(self, universe: Universe) -> None:
        self._u = universe

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._u.exists(path)

    def __len__(self) -> int:
        u = self._u
        return len(u.documents) + len(u.modules) + len(u.manifests) + len(u.tsconfigs) + len(u.navigation) + \
            len(u.other)

    def __iter__(self) -> Iterator[str]:
        return self._u.paths()


_MISSING = object()
__all__ = ["FactsView", "ModelState", "ScanReport", "Seed", "Structure"]
