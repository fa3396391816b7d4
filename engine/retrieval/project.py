"""The retrieval projection: a pure function of the snapshot, the accepted overlay and the configuration.

One entry per document, module, area and package (plus configured intents and changes, ownership records
that match no path, and every directory of two or more files that is neither an area nor a package), with
the fields the lexical index reads (`title, headings, symbols, path, aliases, summary, body`), graph data
(PageRank, the entries it is linked with), its content hash, provenance and confidence. The retrieval index
has no scanner of its own: everything comes from the snapshot and the facts it was built from.

What the projection also records for ranking, each a property of the repository, not of a query:
- a module's own words: the first sentence of its leading comment as summary, the public members of its
  exported classes as headings, its comments and message strings as body (what
  `docbridge.engine.discovery.typescript` keeps);
- `surface`: `public` for a module a package entry exports (directly or through re-exports), `peripheral`
  for anything under a test, fixture, example or playground directory (or a `.test.`/`.spec.` file);
- `variant_of`: documents that are copies of one page (same file name and title in sibling folders, one per
  framework or version) point to their canonical copy: the one the others name in a frontmatter `ref` or
  `canonical`, else the most linked-to, else the one with the most words;
- initials of package and area names as aliases (`react-query-devtools` → `rqd`), and a package's README
  summary as its summary.

Citations are not ranking signals: a relation that only fenced code makes (`citationContext: code-fence`) gives
no edge, no PageRank, no `covered_by`/`mentioned_by` and no public surface. It stays in the snapshot, whose hash
the projection's header carries.
"""

from __future__ import annotations

import hashlib
import re
import sys
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.hashing import canonical_hash
from docbridge.engine.base.heap import OneCopy, built
from docbridge.engine.base.lexicon import LEXICON_VERSION
from docbridge.engine.base.memo import ViewKey
from docbridge.engine.base.model import (
    AREA,
    CHANGE,
    DOCUMENT,
    INTENT,
    MODULE,
    PACKAGE,
    MarkdownFacts,
    ModuleFacts,
    Relation,
    entity_id,
)
from docbridge.engine.base.overlay import (
    CANONICAL_SIGNAL,
    EMPTY_OVERLAY_HASH,
    SIGNAL,
    enabled,
    live_entries,
    live_hash,
    read_overlay,
)
from docbridge.engine.discovery.roles import TEMPLATE_FILE
from docbridge.engine.views.graph import CANONICALITY_KINDS, GRAPH_VERSION, build_digraph, pagerank

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState
    from docbridge.engine.state.model_state import ModelState as Workspace

PROJECTION_VERSION = 11
# a module's tag when all it declares are types and interfaces: it describes shapes, no code that runs (a tag read by
# the ranking, not a word of the entry's text)
TYPES_ONLY = "types-only"
TYPE_KINDS = frozenset({"type", "interface"})
DIRECTORY = "directory"
FIELDS = ("title", "headings", "symbols", "path", "aliases", "summary", "body")
_FIELD_NAMES = frozenset(FIELDS)
FIELD_LIMITS = {"title": 512, "headings": 4096, "path": 1024, "symbols": 8192, "summary": 2048, "body": 16000,
                "aliases": 2048}
EDGE_KINDS = frozenset({"covers", "mentions", "mentions-symbol", "links-to"})
MAX_EDGES = 64
_TEST_MARKERS = (".test.", ".spec.", "__tests__/")
# directories whose files illustrate or exercise a package rather than make it up
PERIPHERAL_DIRS = frozenset({
    "test", "tests", "__tests__", "__test__", "__mocks__", "__fixtures__", "fixtures", "fixture", "e2e", "spec",
    "specs", "examples", "example", "playground", "playgrounds", "demo", "demos", "sandbox", "stories",
    "__snapshots__", "__tests_dts__", "benchmarks", "bench"})
# the hosting site's folders: the project's process (workflows, issue forms, security and contribution policies),
# not the product's documentation
_PROCESS_DIRS = frozenset({"issue_template", ".github", ".gitlab", ".gitea", ".forgejo"})
_PERIPHERAL_FILES = (".test.", ".spec.", ".test-d.", ".bench.", ".stories.", ".e2e.")
_MODULE_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_BUILD_DIRS = ("dist/", "build/", "lib/", "out/")
# several entities can share a path (a package and an area, say): an ownership record attaches to the first
_ATTACH_ORDER = {PACKAGE: 0, AREA: 1, MODULE: 2, DOCUMENT: 3}
README_NAMES = ("README.md", "readme.md", "Readme.md", "index.md")  # a package's page, in this order
INDEX_NAMES = ("readme.md", "index.md", "readme.mdx", "index.mdx")  # a directory's page (lower-cased)


# most entries' tags are one of a few combinations (a module's extension and folder): one tuple of each
_TAGS: OneCopy[tuple[str, ...], tuple[str, ...]] = OneCopy(4096)
NO_SYMBOLS: frozenset[str] = frozenset()  # one empty set for the entries that declare nothing (216 bytes each)


class Fields(Mapping[str, str]):
    """An entry's field texts by name (those of FIELDS it has), in slots: a dictionary of seven was 272 bytes of
    every entry, 20 MB of a 100,000-file tree's projection."""

    __slots__ = FIELDS

    def __init__(self, texts: Mapping[str, str]) -> None:
        for name in FIELDS:
            setattr(self, name, texts.get(name))

    def get(self, name: str, default: Any = None) -> Any:  # what the index build reads, per field and entry
        text = getattr(self, name, None) if name in _FIELD_NAMES else None
        return default if text is None else text

    def __getitem__(self, name: str) -> str:
        text: str | None = self.get(name)
        if text is None:
            raise KeyError(name)
        return text

    def __setitem__(self, name: str, text: str) -> None:
        setattr(self, name, text)

    def __iter__(self) -> Iterator[str]:
        return (name for name in FIELDS if getattr(self, name) is not None)

    def __len__(self) -> int:
        return sum(1 for name in FIELDS if getattr(self, name) is not None)

    def __repr__(self) -> str:
        return repr(dict(self))


@dataclass(slots=True)
class Edge:
    kind: str
    other: str
    direction: str  # "in" (other -> entry) or "out" (entry -> other)
    confidence: str


@dataclass(slots=True)
class Entry:
    id: str
    kind: str
    path: str
    title: str
    summary: str | None
    audience: str | None
    aliases: tuple[str, ...]
    symbols: tuple[str, ...]  # declared exports first
    # the declared exports: how many of `symbols` they are (their first ones), or their set where not all of
    # them are kept in `symbols`; a set per module was 9 MB of a 20,000-file tree's projection
    declared: int | frozenset[str]
    tags: tuple[str, ...]
    fields: Mapping[str, str]  # a dictionary given is kept as Fields
    content_hash: str
    provenance: str
    confidence: str
    ownership_id: str | None = None
    pagerank: float = 0.0
    area_id: str | None = None
    package_id: str | None = None
    edges: tuple[Edge, ...] = ()
    covered_by: tuple[str, ...] = ()
    mentioned_by: tuple[str, ...] = ()
    surface: str | None = None  # "public" | "peripheral" | None
    variant_of: str | None = None  # the canonical copy of the page this document is a variant of
    variants: int = 0  # on a canonical copy: how many variants point to it
    dependents: int = 0  # on a package: how many of the repository's packages depend on it
    agent_signal: float = 0.0  # accepted enrichment (rank hints, canonical marker), 0..1
    # a module's code words (`ModuleFacts.code_words`): indexed apart from the fields, and read only for a question
    # about how something is implemented (`docbridge.engine.retrieval.lexical`)
    code: str = ""

    def __post_init__(self) -> None:
        if type(self.fields) is dict and self.fields.keys() <= _FIELD_NAMES:
            self.fields = Fields(self.fields)

    @property
    def declared_symbols(self) -> frozenset[str]:
        declared = self.declared
        if type(declared) is int:
            return frozenset(self.symbols[:declared]) if declared else NO_SYMBOLS
        return declared  # type: ignore[return-value]  # the set itself

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "kind": self.kind, "path": self.path, "title": self.title, "summary": self.summary,
            "audience": self.audience, "aliases": list(self.aliases), "symbols": list(self.symbols),
            "declared_symbols": sorted(self.declared_symbols),
            "tags": list(self.tags), "fields": dict(self.fields), "content_hash": self.content_hash,
            "provenance": self.provenance, "confidence": self.confidence, "ownership_id": self.ownership_id,
            "surface": self.surface, "variant_of": self.variant_of, "variants": self.variants,
            "dependents": self.dependents,
            "graph": {"pagerank": self.pagerank, "area_id": self.area_id, "package_id": self.package_id,
                      "covered_by": list(self.covered_by), "mentioned_by": list(self.mentioned_by),
                      "inbound_links": sum(1 for e in self.edges if e.direction == "in"),
                      "edges": [[e.kind, e.other, e.direction, e.confidence] for e in self.edges]},
        }
        if self.agent_signal:
            out["agent_signal"] = self.agent_signal
        if self.code:
            out["code"] = self.code
        return out


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("not a string")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _texts(value: Any) -> tuple[str, ...]:
    if type(value) not in (list, tuple):
        raise ValueError("not a list")
    return tuple(_text(item) for item in value)


def _number(value: Any) -> float:
    if type(value) not in (int, float):
        raise ValueError("not a number")
    return float(value)


def _edge(values: tuple[str, ...], made: dict[tuple[str, ...], Edge] | None) -> Edge:
    if made is None:
        return Edge(*values)
    found = made.get(values)
    if found is None:  # its texts shared too: an id is the other end of a few edges, and a kind of thousands
        found = made[values] = Edge(*map(sys.intern, values))
    return found


def declared_count(symbols: tuple[str, ...], declared: Iterable[str] | None) -> int | frozenset[str]:
    """An entry's `declared` for its kept `symbols` and its declared exports (None: every symbol is declared)."""
    if declared is None:
        return len(symbols)
    names = sorted(set(declared))
    return len(names) if list(symbols[:len(names)]) == names else frozenset(names)


def entry_from_json(data: dict[str, Any], edges_made: dict[tuple[str, ...], Edge] | None = None) -> Entry:
    """An entry as `to_json` wrote it; a ValueError (or KeyError, TypeError) for anything of another shape.
    Entries read together share one `edges_made`: one object per distinct edge, as a projection built in memory
    has (read apart, a stored 20,000-file projection's edges were 78 MB, 9 MB built)."""
    if type(data) is not dict:
        raise ValueError("an entry is not an object")
    graph = data.get("graph", {})
    if type(graph) is not dict:
        raise ValueError("an entry's graph is not an object")
    fields = data["fields"]
    if type(fields) is not dict or not all(type(k) is str and type(v) is str for k, v in fields.items()):
        raise ValueError("an entry's fields are not text")
    edges = graph.get("edges", ())
    if type(edges) is not list or not all(type(e) is list and len(e) == 4 for e in edges):
        raise ValueError("an entry's edges are not [kind, other, direction, confidence]")
    for edge in edges:
        _texts(edge)
    for key in ("id", "kind", "path", "title", "content_hash", "provenance", "confidence"):
        _text(data[key])
    for key in ("summary", "audience", "ownership_id", "surface", "variant_of", "code"):
        _optional_text(data.get(key))
    for key in ("area_id", "package_id"):
        _optional_text(graph.get(key))
    for key in ("aliases", "symbols", "tags"):
        _texts(data.get(key, ()))
    for key in ("covered_by", "mentioned_by"):
        _texts(graph.get(key, ()))
    if data.get("declared_symbols") is not None:
        _texts(data["declared_symbols"])
    for value in (graph.get("pagerank", 0.0), data.get("variants", 0), data.get("dependents", 0),
                  data.get("agent_signal", 0.0)):
        _number(value)
    declared = data.get("declared_symbols")
    return Entry(
        id=sys.intern(data["id"]), kind=sys.intern(data["kind"]), path=data["path"], title=data["title"],
        summary=data.get("summary"),
        audience=data.get("audience"), aliases=tuple(data.get("aliases", ())), symbols=tuple(data.get("symbols", ())),
        declared=declared_count(tuple(data.get("symbols", ())), declared),
        tags=_TAGS.same(tuple(data.get("tags", ()))), fields=dict(data["fields"]), content_hash=data["content_hash"],
        provenance=data["provenance"], confidence=data["confidence"], ownership_id=data.get("ownership_id"),
        pagerank=float(graph.get("pagerank", 0.0)), area_id=graph.get("area_id"), package_id=graph.get("package_id"),
        edges=tuple(_edge(tuple(edge), edges_made) for edge in graph.get("edges", ())),
        covered_by=tuple(map(sys.intern, graph.get("covered_by", ()))),
        mentioned_by=tuple(map(sys.intern, graph.get("mentioned_by", ()))), surface=data.get("surface"),
        variant_of=data.get("variant_of"), variants=int(data.get("variants", 0)),
        dependents=int(data.get("dependents", 0)), agent_signal=float(data.get("agent_signal", 0.0)),
        code=data.get("code") or "")


class EntriesById(Mapping[str, "Entry"]):
    """Entry id -> entry, read through a table of positions (id -> index in the entries): one table serves the
    projections patched from one another (an entry keeps its id and place) and their retrievers, where each had
    a dictionary of its own, made again at every patch (4 ms of a search after an edit on 20,000 files)."""

    __slots__ = ("_entries", "positions")

    def __init__(self, entries: list[Entry], positions: dict[str, int]) -> None:
        self._entries, self.positions = entries, positions

    def __getitem__(self, key: str) -> Entry:
        return self._entries[self.positions[key]]

    def get(self, key: str, default: Any = None) -> Any:
        index = self.positions.get(key)
        return default if index is None else self._entries[index]

    def __contains__(self, key: object) -> bool:
        return key in self.positions

    def __iter__(self) -> Iterator[str]:
        return iter(self.positions)

    def __len__(self) -> int:
        return len(self.positions)


@dataclass(slots=True, weakref_slot=True)
class Projection:
    entries: list[Entry]
    weights: dict[str, float]
    snapshot_hash_source: Any  # the snapshot (hash computed on demand), or the hash itself when loaded
    configuration_hash: str
    overlay_hash: str = EMPTY_OVERLAY_HASH
    by_id: EntriesById = field(init=False)
    _content_hash: str | None = None
    params: dict[str, float] = field(default_factory=dict)  # BM25's k1 and b where not the defaults
    # what a later state's projection is patched from (never serialized): the inputs it was built from that a
    # patch does not revisit, the ownership records of each entity, and, on a patched projection, the one it
    # was patched from with the positions of the entries that changed
    basis: tuple[Any, ...] | None = None
    owners: dict[str, list[Any]] | None = None
    origin: tuple[Any, tuple[int, ...]] | None = None
    positions: dict[str, int] | None = None  # entry id -> its index in `entries` (given: the origin's, shared)
    # entity id -> a hash of its outgoing edges, every one (an entry keeps at most MAX_EDGES, and an edge to an
    # entity that also points back is recorded once): what a patch compares an edited file's relations with
    # (stored beside the projection, outside its content hash); an entity without edges has none
    out_hashes: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if self.positions is None:
            self.positions = {e.id: i for i, e in enumerate(self.entries)}
        self.by_id = EntriesById(self.entries, self.positions)

    def header(self) -> dict[str, Any]:
        return {"type": "retrieval-index", "schema_version": PROJECTION_VERSION,
                "snapshot_hash": self.snapshot_hash_source if isinstance(self.snapshot_hash_source, str)
                else self.snapshot_hash_source.content_hash, "overlay_hash": self.overlay_hash,
                "configuration_hash": self.configuration_hash, "lexicon_version": LEXICON_VERSION,
                "graph_version": GRAPH_VERSION, "weights": dict(sorted(self.weights.items())),
                "entry_count": len(self.entries), **({"params": dict(sorted(self.params.items()))} if self.params
                                                      else {})}

    @property
    def content_hash(self) -> str:
        """Equal for equal snapshot, overlay and configuration; changes with the weights."""
        if self._content_hash is None:
            self._content_hash = canonical_hash({"header": self.header(),
                                                 "entries": [e.to_json() for e in self.entries]})
        return self._content_hash


def _audience(classification: str | None) -> str | None:
    if classification in ("agent", "human", "human-and-agent"):
        return classification
    if classification == "project":
        return "human"
    return None


def ranked(relation: Relation) -> bool:
    """Whether a relation may be a ranking signal: not a citation only fenced code makes (the one kind of
    citation the model records; the original excludes its cited facts, `metadata.factKind`, alike)."""
    return not relation.metadata or relation.meta("citationContext") != "code-fence"


def attach_owners(config: Any, units: Iterable[tuple[str, str]]) -> tuple[dict[str, list[Any]], list[Any]]:
    """Entity id -> the ownership records attached to it, and the records attached to none: a record attaches to
    the entity at exactly its path, the first by kind (`_ATTACH_ORDER`) then id. `units`: (id, path) pairs."""
    by_path: dict[str, list[str]] = defaultdict(list)
    for eid, path in units:
        by_path[path].append(eid)
    owners: dict[str, list[Any]] = {}
    orphans = []
    for record in config.ownership:
        candidates = sorted(by_path.get(record.path, []), key=lambda i: (_ATTACH_ORDER[i.split(":", 1)[0]], i))
        if candidates:
            owners.setdefault(candidates[0], []).append(record)
        else:
            orphans.append(record)
    return owners, orphans


def edge_confidence(relation: Relation) -> str | None:
    """The confidence of the edge a relation gives its source and target entries (a fuzzy match, else its
    provenance); None for a relation that gives none (a kind that is no edge, an import of a package, itself)."""
    kind = relation.kind
    if not (kind in EDGE_KINDS or (kind in ("imports", "re-exports") and relation.target.startswith("module:"))):
        return None
    if relation.source == relation.target:
        return None
    return relation.confidence if relation.confidence == "fuzzy" else relation.provenance


def _limit(text: str, name: str) -> str:
    limit = FIELD_LIMITS[name]
    return text if len(text) <= limit else text[:limit]


def project(ws: Workspace, snapshot: Any, weights: dict[str, float] | None = None,
            overlay: bool | None = None) -> Projection:
    """Build the projection from a resolved workspace and its snapshot, or from the workspace alone when
    `snapshot` is None (its entities made one at a time, never all held), with the live accepted enrichment
    while `intelligence.registry.enabled`, or as `overlay` says when given (which needs the snapshot)."""
    from docbridge.engine.views.snapshot import relations_of, units_of  # the model's machinery
    config = ws.config
    layout = ws.universe.layout
    assert layout is not None
    units: list[tuple[str, str, str, Callable[[], Any]]]
    if snapshot is not None:
        units = [(e.id, e.kind, e.path, partial(_same, e)) for e in snapshot.entities.values()
                 if e.kind in _ATTACH_ORDER and e.path is not None]
        relations: list[Relation] = [r for r in snapshot.relations if ranked(r)]
    else:  # from the state, one entity at a time, none kept (a snapshot holds every one)
        units = units_of(ws)
        relations = [r for r in relations_of(ws) if ranked(r)]
    ranks = pagerank(build_digraph(relations, CANONICALITY_KINDS))

    owners, orphans = attach_owners(config, ((eid, path) for eid, _kind, path, _entity in units))

    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    outgoing: dict[str, dict[tuple[str, str], str]] = defaultdict(dict)
    for relation in relations:
        if (confidence := edge_confidence(relation)) is not None:
            key = (relation.kind, relation.target)
            outgoing[relation.source].setdefault(pairs.setdefault(key, key), confidence)
    out_hashes = {eid: edges_hash(found) for eid, found in outgoing.items()}
    del outgoing, pairs
    public = _public_surface({path for _, kind, path, _ in units if kind == MODULE}, relations, layout)
    edges: dict[str, list[Edge]] = defaultdict(list)  # in relation order (`_kept_edges` keeps the first)
    covered_by: dict[str, list[str]] = defaultdict(list)
    mentioned_by: dict[str, list[str]] = defaultdict(list)
    # edges are never changed once made: one object per distinct edge (each relation holds its own copies; on
    # 20,000 files, 220,000 edges are 74,000 distinct ones)
    made: dict[tuple[str, str, str, str], Edge] = {}

    def edge(kind: str, other: str, direction: str, confidence: str) -> Edge:
        key = (kind, other, direction, confidence)
        found = made.get(key)
        if found is None:
            found = made[key] = Edge(*key)
        return found

    # the last pass over the relations takes each from the list as it reads it, in order: the edges' lists grow
    # as the relations go (a document's are made when read, and only the list held them), where both were whole
    # at the build's peak (and a list of the relations that give edges beside them: 7 MB more on 20,000 files)
    relations.reverse()
    while relations:
        relation = relations.pop()
        if (confidence := edge_confidence(relation)) is None:
            continue
        kind = relation.kind
        edges[relation.source].append(edge(kind, relation.target, "out", confidence))
        edges[relation.target].append(edge(kind, relation.source, "in", confidence))
        if kind == "covers":
            covered_by[relation.target].append(relation.source)
        elif kind in ("mentions", "mentions-symbol"):
            mentioned_by[relation.target].append(relation.source)
    # what the graph was read from goes before the entries are made: they then take the memory it held (the
    # relations and edge tables of 20,000 files are 55 MB, which kept the process that much larger after)
    del relations
    made.clear()
    graph = _Graph(ranks, _settled(edges, _kept_edges), _settled(covered_by, _distinct),
                   _settled(mentioned_by, _distinct), public, _dependents(layout))
    entries = [_entity_entry(ws, entity(), owners.get(eid, []), graph) for eid, _kind, _path, entity in units]

    entries.extend(_directories(entries, layout))
    _mark_variants(entries, ws, ranks)

    for record in orphans:
        aliases = [a for a in (record.id, record.agent_doc, record.human_doc) if a]
        entries.append(Entry(
            id=f"ownership:{record.id}", kind=PACKAGE, path=record.path, title=record.id, summary=record.purpose,
            audience=None, aliases=tuple(aliases), symbols=(), declared=0,
            tags=("package", "ownership"), fields={
                "title": record.id, "headings": "", "symbols": "", "path": record.path,
                "aliases": " ".join([*aliases, "package", "ownership"]), "summary": record.purpose or "",
                "body": ""},
            content_hash=canonical_hash({"ownership": record.model_dump(mode="json")}), provenance="declared",
            confidence="declared", ownership_id=record.id))
    for intent in config.intents:
        path = intent.paths[0] if intent.paths else intent.id
        entries.append(Entry(
            id=entity_id(INTENT, intent.id), kind=INTENT, path=path, title=intent.title, summary=intent.title,
            audience=None, aliases=(intent.id,), symbols=(), declared=0, tags=("intent",),
            fields={"title": intent.title, "headings": "", "symbols": "", "path": path,
                    "aliases": f"{intent.id} intent", "summary": "", "body": " ".join(intent.paths)},
            content_hash=canonical_hash({"intent": intent.model_dump(mode="json")}), provenance="declared",
            confidence="declared"))
    for change in config.changes:
        path = change.start_here or change.id
        change_aliases = (change.id, *change.related_packages)
        entries.append(Entry(
            id=entity_id(CHANGE, change.id), kind=CHANGE, path=path, title=change.title, summary=change.title,
            audience=None, aliases=change_aliases, symbols=(), declared=0,
            tags=("change", *change.related_packages),
            fields={"title": change.title, "headings": "", "symbols": "", "path": path,
                    "aliases": " ".join([*change_aliases, "change"]), "summary": "", "body": ""},
            content_hash=canonical_hash({"change": change.model_dump(mode="json")}), provenance="declared",
            confidence="declared"))
    overlay_hash = apply_overlay(ws.root, config, entries, snapshot, overlay)  # live accepted enrichment
    entries.sort(key=lambda e: e.id)
    return Projection(entries, weights or config.weights(), snapshot if snapshot is not None else SnapshotHash(ws),
                      config.content_hash(), overlay_hash,
                      params=config.retrieval.params.tuned(), owners=dict(owners),
                      out_hashes=out_hashes)


@dataclass(slots=True)
class _Graph:
    """What the relations say about each entity, as the projection's entries record it."""

    ranks: dict[str, float]
    edges: dict[str, tuple[Edge, ...]]
    covered_by: dict[str, tuple[str, ...]]
    mentioned_by: dict[str, tuple[str, ...]]
    public: set[str]
    dependents: dict[str, int]


def _settled(table: dict[str, list[Any]], settle: Callable[[list[Any]], tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
    """`table` with each list settled into its tuple, the list dropped as its tuple is made (never both whole)."""
    settled = {}
    for key in list(table):
        settled[key] = settle(table.pop(key))
    return settled


def _distinct(found: list[str]) -> tuple[str, ...]:
    return tuple(sorted(set(found)))


def _kept_edges(found: list[Edge]) -> tuple[Edge, ...]:
    """An entity's edges from those found in relation order: the first of each kind and other end (an entity
    that also points back is one edge)."""
    first: dict[tuple[str, str], Edge] = {}
    for each in found:
        first.setdefault((each.kind, each.other), each)
    # past MAX_EDGES an entry keeps its own outgoing edges first (what it imports and re-exports: a barrel
    # that many import still leads to what it exports), then as many incoming ones as fit
    kept = sorted(first.values(), key=lambda e: (e.direction != "out", e.kind, e.other))[:MAX_EDGES]
    return tuple(sorted(kept, key=lambda e: (e.kind, e.other, e.direction)))


def _entity_entry(ws: Workspace, entity: Any, records: list[Any], graph: _Graph) -> Entry:
    """The entry of a document, module, area or package: its text from its facts (an area or package inherits
    its agent document's), its graph data from `graph`."""
    from docbridge.engine.views.snapshot import classification as document_classification  # the model's machinery
    owner = records[0] if records else None
    agent = _doc_facts(ws, owner.agent_doc.removeprefix("./")) if owner and owner.agent_doc else None
    facts = _doc_facts(ws, entity.path) if entity.kind == DOCUMENT else None
    classification = entity.data.get("classification") if entity.kind == DOCUMENT else (
        document_classification(agent.path, dict(agent.frontmatter), ws.config.corpus.agent.root) if agent else None)
    title = entity.title or entity.path.rsplit("/", 1)[-1]
    if entity.kind == AREA and agent and agent.title:
        title = agent.title
    headings = [h.text for h in facts.headings] if facts else []
    body = facts.body if facts else ""
    module_facts = ws.universe.modules.get(entity.path) if entity.kind == MODULE else None
    own_summary = None
    code = ""
    if isinstance(module_facts, ModuleFacts):
        code = module_facts.code_words
        # a module's outline (the public members of its classes) is what headings are to a document
        body, own_summary = module_facts.prose, module_facts.summary
        headings = list(module_facts.outline)
    # a package (other than the repository itself) is described by its README's opening paragraph, else by its
    # manifest's `description`; the README stays the answer for everything else it says
    readme = _readme(ws, entity.path) if entity.kind == PACKAGE and entity.path not in (".", "") else None
    described = _description(ws, entity.id) if entity.kind == PACKAGE and entity.path not in (".", "") else None
    if agent is not None and entity.kind != DOCUMENT and not body:
        # the unit is documented by its agent document: it inherits that text, as body text, so that the
        # document itself stays the stronger answer for what its headings say
        body = " ".join([h.text for h in agent.headings] + [agent.body])
    summary = (owner.purpose if owner and owner.purpose else None) or entity.summary or own_summary or (
        agent.summary if agent else None) or (readme.summary if readme else None) or described
    aliases: list[str] = [r.id for r in records]
    symbols: list[str] = []
    declared: set[str] = set()
    tags = [entity.kind]
    if entity.kind == PACKAGE:
        name = entity.title or ""
        for alias in (name.rsplit("/", 1)[-1], name, *initials(name.rsplit("/", 1)[-1])):
            if alias and alias not in aliases:
                aliases.append(alias)
    elif entity.kind == AREA:
        aliases.extend(a for a in initials(entity.path.rsplit("/", 1)[-1]) if a not in aliases)
    elif entity.kind == MODULE:
        exports = entity.data.get("exports", [])
        own = [e for e in exports if "source" not in e and e["name"] != "*"]
        declared = {e["name"] for e in own}
        symbols = sorted(declared) + sorted({e["name"] for e in exports if "source" in e and e["name"] != "*"}
                                            - declared)
        extension = entity.path.rsplit(".", 1)[-1]
        tags.append(extension)
        if any(marker in entity.path for marker in _TEST_MARKERS) or entity.path.startswith(("test/", "tests/")):
            tags.append("test")
        parent = entity.path.rsplit("/", 2)
        if len(parent) == 3:
            tags.append(parent[1])
        if own and all(e["kind"] in TYPE_KINDS for e in own):
            tags.append(TYPES_ONLY)
    elif entity.kind == DOCUMENT:
        tags.append(entity.data.get("classification") or "unclassified")
        if entity.data.get("frontmatter", {}).get("type"):
            tags.append(entity.data["frontmatter"]["type"])
    if owner:
        tags.append("ownership")
        for extra in (owner.group, owner.layer):
            if extra:
                tags.append(extra)
    tags = list(dict.fromkeys(tags))[:32]
    aliases = list(dict.fromkeys(aliases))[:32]
    area_id, package_id = _containment(entity, ws.universe.layout)
    fields = {
        "title": _limit(title, "title"),
        "headings": _limit(" ".join(headings), "headings"),
        "symbols": _limit(" ".join(symbols[:256]), "symbols"),
        "path": _limit(entity.path, "path"),
        # every source file is a module: the word says nothing about one, and is a topic of code and pages
        "aliases": _limit(" ".join(aliases + ([t for t in tags[1:] if t != TYPES_ONLY] if entity.kind == MODULE
                                               else tags)), "aliases"),
        "summary": _limit(summary or "", "summary"),
        "body": _limit(body, "body"),
    }
    kept_symbols = tuple(symbols[:256])
    return Entry(
        id=entity.id, kind=entity.kind, path=entity.path, title=title, summary=summary,
        audience=_audience(classification), aliases=tuple(aliases), symbols=kept_symbols,
        declared=declared_count(kept_symbols, declared), tags=_TAGS.same(tuple(tags)), fields=fields,
        content_hash=entity.content_hash or canonical_hash({"id": entity.id, "path": entity.path}),
        provenance=entity.provenance, confidence=entity.confidence, code=code,
        ownership_id=owner.id if owner else None, pagerank=graph.ranks.get(entity.id, 0.0), area_id=area_id,
        package_id=package_id, edges=graph.edges.get(entity.id, ()),
        covered_by=graph.covered_by.get(entity.id, ()), mentioned_by=graph.mentioned_by.get(entity.id, ()),
        surface="peripheral" if on_periphery(entity.path, ws.universe.layout)
        else ("public" if entity.id in graph.public else None),
        dependents=graph.dependents.get(entity.id, 0) if entity.kind == PACKAGE else 0)


def _doc_facts(ws: Workspace, path: str | None) -> MarkdownFacts | None:
    return ws.universe.documents.get(path) if path else None


def _peripheral_dir(name: str) -> bool:
    # `__tests__`, `__mocks__`, `__testfixtures__`: double-underscore directories belong to test tooling
    return name in PERIPHERAL_DIRS or (len(name) > 4 and name.startswith("__") and name.endswith("__"))


def is_peripheral(path: str) -> bool:
    """Under a test, fixture, example or playground directory, a test file, a form to fill in (a pull request
    or issue template answers no question: it asks them), or the hosting site's folder (`.github/`: workflows,
    forms, the security and contribution policies are the project's process, not its documentation)."""
    parts = path.split("/")
    return any(_peripheral_dir(part) for part in parts[:-1]) or any(m in parts[-1] for m in _PERIPHERAL_FILES) \
        or _peripheral_dir(parts[-1]) or TEMPLATE_FILE.match(parts[-1]) is not None \
        or any(part.lower() in _PROCESS_DIRS for part in parts[:-1])


def on_periphery(path: str, layout: Any) -> bool:
    """Peripheral by its path (`is_peripheral`), or inside a package that applies the repository's libraries
    (a starter template, an integration app: `Layout.applications`)."""
    return is_peripheral(path) or (layout is not None and layout.in_application(path))


def initials(name: str) -> list[str]:
    """Initials of a multi-word name and of its leading words: `react-query-devtools` → `rqd`, `rq`
    (`query-core` → `qc`); nothing for a one-word name."""
    words = [w for w in name.replace("_", "-").replace(".", "-").split("-") if w and w[0].isalpha()]
    if len(words) < 2:
        return []
    letters = "".join(w[0].lower() for w in words)
    return [letters[:n] for n in range(len(letters), 1, -1)]


def edges_hash(found: dict[tuple[str, str], str]) -> str:
    """A stable hash of an entity's outgoing edges ((kind, target) -> confidence), whatever their order."""
    text = "\n".join(sorted(f"{kind}\t{target}\t{confidence}" for (kind, target), confidence in found.items()))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


class SnapshotHash:
    """The hash of a state's snapshot, the snapshot built only if a projection's header is asked for (storing it
    does). The state is held weakly: a projection outlives its state as the seed of the next one, and a strong
    reference would keep every earlier state alive through the seeds."""

    __slots__ = ("state",)

    def __init__(self, state: Any) -> None:
        self.state = weakref.ref(state)

    @property
    def content_hash(self) -> str:
        from docbridge.engine.views.snapshot import snapshot_of
        state = self.state()
        if state is None:
            raise RuntimeError("the model state this projection was built from is gone: its header cannot be made")
        return snapshot_of(state).content_hash


def _same(value: Any) -> Any:
    return value


def _public_surface(modules: set[str], relations: list[Relation], layout: Any) -> set[str]:
    """Modules a package's entry module exports, directly or through re-exports: the package's public
    surface. The entry is found as imports of the package name find it (its manifest's entry points, a
    built path mapped back to src/, then src/index and index)."""
    reexports: dict[str, list[str]] = defaultdict(list)
    for relation in relations:
        if relation.kind == "re-exports" and relation.target.startswith("module:"):
            reexports[relation.source].append(relation.target)
    frontier = []
    for info in layout.packages.values():
        prefix = "" if info.directory == "." else info.directory + "/"
        candidates = []
        for entry in (info.facts.entry_points if info.facts else ()):
            entry = entry.removeprefix("./")
            candidates.append(entry)
            candidates.extend("src/" + entry[len(d):] for d in _BUILD_DIRS if entry.startswith(d))
        candidates += ["src/index", "index"]
        for candidate in candidates:
            stem = candidate.rsplit(".", 1)[0] if "." in candidate.rsplit("/", 1)[-1] else candidate
            found = next((prefix + c for c in (candidate, *(stem + x for x in _MODULE_EXTENSIONS))
                          if prefix + c in modules), None)
            if found is not None:
                frontier.append(entity_id(MODULE, found))
                break
    public: set[str] = set()
    while frontier:
        current = frontier.pop()
        if current in public:
            continue
        public.add(current)
        frontier.extend(reexports.get(current, ()))
    return public


def _description(ws: Workspace, package_id: str) -> str | None:
    layout = ws.universe.layout
    info = layout.package_by_id(package_id) if layout is not None else None
    return (info.facts.description or None) if info is not None and info.facts is not None else None


def _readme(ws: Workspace, directory: str) -> MarkdownFacts | None:
    prefix = "" if directory in (".", "") else directory + "/"
    for name in README_NAMES:
        facts = ws.universe.documents.get(prefix + name)
        if facts is not None:
            return facts
    return None


def _dependents(layout: Any) -> dict[str, int]:
    """Package id -> how many other packages of the repository (examples and playgrounds aside) list it
    among their dependencies."""
    by_name = {info.name: info.id for info in layout.packages.values()}
    counts: dict[str, int] = defaultdict(int)
    for info in layout.packages.values():
        if on_periphery(info.directory, layout):
            continue  # examples, playgrounds and starters depend on everything they show
        for name, _field in (info.facts.dependencies if info.facts else ()):
            target = by_name.get(name)
            if target is not None and target != info.id:
                counts[target] += 1
    return dict(counts)


def _directories(entries: list[Entry], layout: Any) -> list[Entry]:
    """One entry per directory holding two or more documents or modules that no area or package names: a
    query can name a directory (`docs/guide`, `src/node/server`) and expect it, not one of its files. Its
    README or index is where it starts: that document's title and summary describe it."""
    taken = {e.path for e in entries if e.kind in (AREA, PACKAGE)}
    files: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        if entry.kind in (DOCUMENT, MODULE):
            parts = entry.path.split("/")
            for depth in range(1, len(parts)):
                files["/".join(parts[:depth])].append(entry)
    out = []
    for path, members in sorted(files.items()):
        if len(members) < 2 or path in taken:
            continue
        name = path.rsplit("/", 1)[-1]
        index = next((m for m in members if m.kind == DOCUMENT and m.path.rsplit("/", 1)[0] == path
                      and m.path.rsplit("/", 1)[-1].lower() in INDEX_NAMES),
                     None)
        documents = sum(1 for m in members if m.kind == DOCUMENT)
        tags = [DIRECTORY, "documentation" if documents * 2 >= len(members) else "source"]
        peripheral = on_periphery(path, layout)
        if peripheral:
            tags.append("peripheral")
        title = index.title if index is not None and index.title and index.title != index.path.rsplit("/", 1)[-1] \
            else name
        summary = index.summary if index is not None else None
        aliases = [name, *initials(name)]
        area, package = layout.area_of(path), layout.package_of(path)
        out.append(Entry(
            id=f"{DIRECTORY}:{path}", kind=DIRECTORY, path=path, title=title, summary=summary, audience=None,
            aliases=tuple(aliases), symbols=(), declared=0, tags=tuple(tags),
            fields={"title": _limit(f"{name} {title}" if title != name else name, "title"), "headings": "",
                    "symbols": "", "path": _limit(path, "path"), "aliases": _limit(" ".join(aliases + tags), "aliases"),
                    "summary": _limit(summary or "", "summary"), "body": ""},
            content_hash=index.content_hash if index is not None else canonical_hash({"id": f"{DIRECTORY}:{path}"}),
            provenance="observed", confidence="observed", area_id=area.id if area else None,
            package_id=package.id if package else None,
            surface="peripheral" if peripheral else None))
    return out


def _mark_variants(entries: list[Entry], ws: Workspace, ranks: dict[str, float],
                   documents: dict[str, Entry] | None = None) -> None:
    """Group documents that are copies of one page (same file name, same title, different folders) and
    point each copy at the canonical one. A frontmatter `ref` or `canonical` is resolved among `documents`
    (every document of the projection, by path; by default those of `entries`)."""
    own = {e.path: e for e in entries if e.kind == DOCUMENT}
    if documents is None:
        documents = own
    groups: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in own.values():
        groups[(entry.path.rsplit("/", 1)[-1].lower(), entry.title.strip().lower())].append(entry)
    for members in groups.values():
        if len(members) < 2:
            continue
        paths = {m.path for m in members}
        pointed: dict[str, int] = defaultdict(int)
        for member in members:
            facts = ws.universe.documents.get(member.path)
            for key in ("ref", "canonical"):
                target = _resolve_page(facts.fm(key) if facts else None, member.path, documents)
                if target is not None and target in paths and target != member.path:
                    pointed[target] += 1
        inbound = {m.path: sum(1 for e in m.edges if e.kind == "links-to" and e.direction == "in") for m in members}
        canonical = min(members, key=lambda m: (-pointed.get(m.path, 0), -inbound[m.path],
                                                 -ranks.get(m.id, 0.0), -len(m.fields.get("body", "")), m.path))
        canonical.variants = len(members) - 1
        for member in members:
            if member is not canonical:
                member.variant_of = canonical.id


def _resolve_page(value: str | None, origin: str, documents: dict[str, Entry]) -> str | None:
    """A page named by a frontmatter value: repository-relative, relative to the document, or site-style
    (without `.md`, with a leading `/`)."""
    if not value or "://" in value:
        return None
    clean = value.strip().split("#", 1)[0]
    base = origin.rsplit("/", 1)[0] if "/" in origin else ""
    for candidate in (clean.lstrip("/"), f"{base}/{clean}" if base else clean):
        parts: list[str] = []
        for part in candidate.split("/"):
            if part == "..":
                if parts:
                    parts.pop()
            elif part and part != ".":
                parts.append(part)
        path = "/".join(parts)
        for guess in (path, path + ".md", path + "/index.md", path + "/README.md"):
            if guess in documents:
                return guess
    return None


def _containment(entity: Any, layout: Any) -> tuple[str | None, str | None]:
    if entity.kind == MODULE:
        area = layout.module_area.get(entity.path)
        package = layout.package_of(entity.path)
        return (entity_id(AREA, area) if area else None), (package.id if package else None)
    if entity.kind == AREA:
        return entity.data.get("parent"), entity.data.get("package")
    if entity.kind == DOCUMENT:
        area = layout.area_of(entity.path)
        package = layout.package_of(entity.path)
        return (area.id if area else None), (package.id if package else None)
    return None, None


# ---------------------------------------------------------------- accepted enrichment (engine/base/overlay.py)


def _intent_slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "intent"


def apply_overlay(root: Path, config: Any, entries: list[Any], snapshot: Any, force: bool | None = None) -> str:
    """Apply the live accepted entries to the projection's entries (in place); the overlay hash.

    Aliases, summaries (only where none), intents (new entries, provenance `proposed`), the canonical
    marker and rank hints (the entry's agent signal, summed and capped at 1), proposed relations (edges of
    confidence `proposed`). Flags and area suggestions change nothing. Observed fields are only added to."""
    if not (enabled(config) if force is None else force):
        return EMPTY_OVERLAY_HASH
    if snapshot is None:
        raise ValueError("the accepted enrichment is applied to a projection built from a snapshot")
    entities = snapshot.entities
    live, _ = live_entries(read_overlay(root), entities)
    if not live:
        return EMPTY_OVERLAY_HASH
    by_id = {e.id: e for e in entries}
    signals: dict[str, float] = {}
    new: list[Any] = []
    for item in sorted(live, key=lambda e: str(e["proposalId"])):
        kind, payload, target = item.get("kind"), item.get("payload", {}), by_id.get(item.get("entity"))
        if target is None and kind != "propose-relation":
            continue
        if kind == "add-alias" and target is not None:
            alias = str(payload["alias"])
            if alias not in target.aliases:
                target.aliases = (*target.aliases, alias)
                target.fields["aliases"] = _limit(f"{target.fields['aliases']} {alias}".strip(), "aliases")
        elif kind == "summarize" and target is not None and not target.summary:
            target.summary = str(payload["summary"])
            target.fields["summary"] = _limit(target.summary, "summary")
        elif kind == "add-intent" and target is not None:
            phrase = str(payload["phrase"])
            new.append(Entry(
                id=f"intent:proposed-{_intent_slug(phrase)}-{str(item['proposalId'])[:8]}", kind="intent",
                path=target.path,
                title=phrase, summary=phrase, audience=None, aliases=(), symbols=(), declared=0,
                tags=("intent", "proposed"), fields={"title": phrase, "headings": "", "symbols": "",
                                                     "path": target.path, "aliases": "intent proposed",
                                                     "summary": "", "body": target.path},
                content_hash=str(item["targetContentHash"]), provenance="proposed", confidence="proposed",
                edges=(Edge("documents", target.id, "out", "proposed"),)))
        elif kind == "mark-canonical" and target is not None:
            if "canonical" not in target.tags:
                target.tags = (*target.tags, "canonical")
            signals[target.id] = signals.get(target.id, 0.0) + CANONICAL_SIGNAL
        elif kind == "rank-hint" and target is not None:
            signals[target.id] = signals.get(target.id, 0.0) + SIGNAL.get(str(payload.get("relevance")), 0.0)
        elif kind == "propose-relation":
            source, other, relation = by_id.get(payload.get("from")), by_id.get(payload.get("to")), payload.get("kind")
            if source is None or other is None or source is other:
                continue
            if not any(e.kind == relation and e.other == other.id for e in source.edges):
                source.edges = tuple(sorted((*source.edges, Edge(relation, other.id, "out", "proposed")),
                                            key=lambda e: (e.kind, e.other, e.direction)))
                other.edges = tuple(sorted((*other.edges, Edge(relation, source.id, "in", "proposed")),
                                           key=lambda e: (e.kind, e.other, e.direction)))
                if relation == "covers" and source.id not in other.covered_by:
                    other.covered_by = tuple(sorted((*other.covered_by, source.id)))
    for entry_id, signal in signals.items():
        by_id[entry_id].agent_signal = round(min(1.0, signal), 6)
    entries.extend(new)
    entries.sort(key=lambda e: e.id)
    return live_hash(live)


PROJECTION: ViewKey[Projection] = ViewKey("projection")


def projection_of(state: ModelState) -> Projection:
    """The retrieval projection of a state, built once per state."""
    from docbridge.engine.retrieval.incremental import basis, patched_projection
    from docbridge.engine.state.transitions import resolved
    from docbridge.engine.views.snapshot import (
        snapshot_of,  # the model's machinery: not loaded by a search of a stored index
    )
    state = resolved(state)

    def whole() -> Projection:
        # the snapshot only when the accepted enrichment reads its entities: otherwise none is built for search
        projection = project(state, snapshot_of(state) if enabled(state.config) else None)
        projection.basis = basis(state)
        return projection
    return state.view(PROJECTION, lambda: patched_projection(state) or built(whole)())
