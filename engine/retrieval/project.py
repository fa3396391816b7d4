"""The retrieval projection: a pure function of the snapshot, the accepted overlay and the configuration.

One entry per document, module, area and package (plus configured intents and changes, and ownership
records that match no path), with the fields the lexical index reads (`title, headings, symbols, path,
aliases, summary, body`), graph data (PageRank, the entries it is linked with), its content hash,
provenance and confidence. The retrieval index has no scanner of its own: everything comes from the
snapshot and the facts it was built from.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.graph import CANONICALITY_KINDS, GRAPH_VERSION, build_digraph, pagerank
from engine.hashing import canonical_hash
from engine.lexicon import LEXICON_VERSION
from engine.model import AREA, CHANGE, DOCUMENT, INTENT, MODULE, PACKAGE, MarkdownFacts, Relation, entity_id

if TYPE_CHECKING:
    from engine.state import ModelState as Workspace

PROJECTION_VERSION = 1
FIELDS = ("title", "headings", "symbols", "path", "aliases", "summary", "body")
FIELD_LIMITS = {"title": 512, "headings": 4096, "path": 1024, "symbols": 8192, "summary": 2048, "body": 16000,
                "aliases": 2048}
EDGE_KINDS = frozenset({"covers", "mentions", "mentions-symbol", "links-to"})
MAX_EDGES = 64
EMPTY_OVERLAY_HASH = canonical_hash({"accepted": []})
_TEST_MARKERS = (".test.", ".spec.", "__tests__/")
# several entities can share a path (a package and an area, say): an ownership record attaches to the first
_ATTACH_ORDER = {PACKAGE: 0, AREA: 1, MODULE: 2, DOCUMENT: 3}


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
    declared_symbols: frozenset[str]
    tags: tuple[str, ...]
    fields: dict[str, str]
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

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "path": self.path, "title": self.title, "summary": self.summary,
            "audience": self.audience, "aliases": list(self.aliases), "symbols": list(self.symbols),
            "declared_symbols": sorted(self.declared_symbols),
            "tags": list(self.tags), "fields": self.fields, "content_hash": self.content_hash,
            "provenance": self.provenance, "confidence": self.confidence, "ownership_id": self.ownership_id,
            "graph": {"pagerank": self.pagerank, "area_id": self.area_id, "package_id": self.package_id,
                      "covered_by": list(self.covered_by), "mentioned_by": list(self.mentioned_by),
                      "inbound_links": sum(1 for e in self.edges if e.direction == "in"),
                      "edges": [[e.kind, e.other, e.direction, e.confidence] for e in self.edges]},
        }


def entry_from_json(data: dict[str, Any]) -> Entry:
    graph = data.get("graph", {})
    declared = data.get("declared_symbols")
    return Entry(
        id=data["id"], kind=data["kind"], path=data["path"], title=data["title"], summary=data.get("summary"),
        audience=data.get("audience"), aliases=tuple(data.get("aliases", ())), symbols=tuple(data.get("symbols", ())),
        declared_symbols=frozenset(declared if declared is not None else data.get("symbols", ())),
        tags=tuple(data.get("tags", ())), fields=dict(data["fields"]), content_hash=data["content_hash"],
        provenance=data["provenance"], confidence=data["confidence"], ownership_id=data.get("ownership_id"),
        pagerank=float(graph.get("pagerank", 0.0)), area_id=graph.get("area_id"), package_id=graph.get("package_id"),
        edges=tuple(Edge(*edge) for edge in graph.get("edges", ())), covered_by=tuple(graph.get("covered_by", ())),
        mentioned_by=tuple(graph.get("mentioned_by", ())))


@dataclass(slots=True)
class Projection:
    entries: list[Entry]
    weights: dict[str, float]
    snapshot_hash_source: Any  # the snapshot (hash computed on demand), or the hash itself when loaded
    configuration_hash: str
    overlay_hash: str = EMPTY_OVERLAY_HASH
    by_id: dict[str, Entry] = field(default_factory=dict)
    _content_hash: str | None = None

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.entries}

    def header(self) -> dict[str, Any]:
        return {"type": "retrieval-index", "schema_version": PROJECTION_VERSION,
                "snapshot_hash": self.snapshot_hash_source if isinstance(self.snapshot_hash_source, str)
                else self.snapshot_hash_source.content_hash, "overlay_hash": self.overlay_hash,
                "configuration_hash": self.configuration_hash, "lexicon_version": LEXICON_VERSION,
                "graph_version": GRAPH_VERSION, "weights": dict(sorted(self.weights.items())),
                "entry_count": len(self.entries)}

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


def _limit(text: str, name: str) -> str:
    limit = FIELD_LIMITS[name]
    return text if len(text) <= limit else text[:limit]


def project(ws: Workspace, snapshot: Any, weights: dict[str, float] | None = None) -> Projection:
    """Build the projection from a resolved workspace and its snapshot."""
    config = ws.config
    entities = snapshot.entities
    layout = ws.universe.layout
    assert layout is not None
    relations: list[Relation] = snapshot.relations
    ranks = pagerank(build_digraph(relations, CANONICALITY_KINDS))

    # ownership records attach to the entity at exactly their path
    by_path: dict[str, list[str]] = defaultdict(list)
    for entity in entities.values():
        if entity.kind in _ATTACH_ORDER and entity.path is not None:
            by_path[entity.path].append(entity.id)
    owners: dict[str, list[Any]] = defaultdict(list)
    orphans = []
    for record in config.ownership:
        candidates = sorted(by_path.get(record.path, []), key=lambda i: (_ATTACH_ORDER[i.split(":", 1)[0]], i))
        if candidates:
            owners[candidates[0]].append(record)
        else:
            orphans.append(record)

    edges: dict[str, dict[tuple[str, str], Edge]] = defaultdict(dict)
    covered_by: dict[str, set[str]] = defaultdict(set)
    mentioned_by: dict[str, set[str]] = defaultdict(set)
    for relation in relations:
        kind = relation.kind
        if kind in EDGE_KINDS or (kind in ("imports", "re-exports") and relation.target.startswith("module:")):
            if relation.source == relation.target:
                continue
            confidence = relation.confidence if relation.confidence == "fuzzy" else relation.provenance
            edges[relation.source].setdefault((kind, relation.target), Edge(kind, relation.target, "out", confidence))
            edges[relation.target].setdefault((kind, relation.source), Edge(kind, relation.source, "in", confidence))
            if kind == "covers":
                covered_by[relation.target].add(relation.source)
            elif kind in ("mentions", "mentions-symbol"):
                mentioned_by[relation.target].add(relation.source)

    def doc_facts(path: str | None) -> MarkdownFacts | None:
        return ws.universe.documents.get(path) if path else None

    entries: list[Entry] = []
    for entity in entities.values():
        if entity.kind not in _ATTACH_ORDER or entity.path is None:
            continue
        records = owners.get(entity.id, [])
        record = records[0] if records else None
        agent = doc_facts(record.agent_doc.removeprefix("./")) if record and record.agent_doc else None
        facts = doc_facts(entity.path) if entity.kind == DOCUMENT else None
        classification = entity.data.get("classification") if entity.kind == DOCUMENT else (
            entities[entity_id(DOCUMENT, agent.path)].data.get("classification") if agent else None)
        title = entity.title or entity.path.rsplit("/", 1)[-1]
        if entity.kind == AREA and agent and agent.title:
            title = agent.title
        headings = [h.text for h in facts.headings] if facts else []
        body = facts.body if facts else ""
        if agent is not None and entity.kind != DOCUMENT and not body:
            # the unit is documented by its agent document: it inherits that text, as body text, so that the
            # document itself stays the stronger answer for what its headings say
            body = " ".join([h.text for h in agent.headings] + [agent.body])
        summary = (record.purpose if record and record.purpose else None) or entity.summary or (
            agent.summary if agent else None)
        aliases: list[str] = [r.id for r in records]
        symbols: list[str] = []
        declared: set[str] = set()
        tags = [entity.kind]
        if entity.kind == PACKAGE:
            name = entity.title or ""
            for alias in (name.rsplit("/", 1)[-1], name):
                if alias and alias not in aliases:
                    aliases.append(alias)
        elif entity.kind == MODULE:
            exports = entity.data.get("exports", [])
            declared = {e["name"] for e in exports if "source" not in e and e["name"] != "*"}
            symbols = sorted(declared) + sorted({e["name"] for e in exports if "source" in e and e["name"] != "*"}
                                                - declared)
            extension = entity.path.rsplit(".", 1)[-1]
            tags.append(extension)
            if any(marker in entity.path for marker in _TEST_MARKERS) or entity.path.startswith(("test/", "tests/")):
                tags.append("test")
            parent = entity.path.rsplit("/", 2)
            if len(parent) == 3:
                tags.append(parent[1])
        elif entity.kind == DOCUMENT:
            tags.append(entity.data.get("classification") or "unclassified")
            if entity.data.get("frontmatter", {}).get("type"):
                tags.append(entity.data["frontmatter"]["type"])
        if record:
            tags.append("ownership")
            for extra in (record.group, record.layer):
                if extra:
                    tags.append(extra)
        tags = list(dict.fromkeys(tags))[:32]
        aliases = list(dict.fromkeys(aliases))[:32]
        area_id, package_id = _containment(entity, layout)
        fields = {
            "title": _limit(title, "title"),
            "headings": _limit(" ".join(headings), "headings"),
            "symbols": _limit(" ".join(symbols[:256]), "symbols"),
            "path": _limit(entity.path, "path"),
            "aliases": _limit(" ".join(aliases + tags), "aliases"),
            "summary": _limit(summary or "", "summary"),
            "body": _limit(body, "body"),
        }
        entry_edges = sorted(edges.get(entity.id, {}).values(), key=lambda e: (e.kind, e.other, e.direction))
        entries.append(Entry(
            id=entity.id, kind=entity.kind, path=entity.path, title=title, summary=summary,
            audience=_audience(classification), aliases=tuple(aliases), symbols=tuple(symbols[:256]),
            declared_symbols=frozenset(declared), tags=tuple(tags), fields=fields,
            content_hash=entity.content_hash or canonical_hash({"id": entity.id, "path": entity.path}),
            provenance=entity.provenance, confidence=entity.confidence,
            ownership_id=record.id if record else None, pagerank=ranks.get(entity.id, 0.0), area_id=area_id,
            package_id=package_id, edges=tuple(entry_edges[:MAX_EDGES]),
            covered_by=tuple(sorted(covered_by.get(entity.id, ()))),
            mentioned_by=tuple(sorted(mentioned_by.get(entity.id, ())))))

    for record in orphans:
        aliases = [a for a in (record.id, record.agent_doc, record.human_doc) if a]
        entries.append(Entry(
            id=f"ownership:{record.id}", kind=PACKAGE, path=record.path, title=record.id, summary=record.purpose,
            audience=None, aliases=tuple(aliases), symbols=(), declared_symbols=frozenset(),
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
            audience=None, aliases=(intent.id,), symbols=(), declared_symbols=frozenset(), tags=("intent",),
            fields={"title": intent.title, "headings": "", "symbols": "", "path": path,
                    "aliases": f"{intent.id} intent", "summary": "", "body": " ".join(intent.paths)},
            content_hash=canonical_hash({"intent": intent.model_dump(mode="json")}), provenance="declared",
            confidence="declared"))
    for change in config.changes:
        path = change.start_here or change.id
        aliases = (change.id, *change.related_packages)
        entries.append(Entry(
            id=entity_id(CHANGE, change.id), kind=CHANGE, path=path, title=change.title, summary=change.title,
            audience=None, aliases=aliases, symbols=(), declared_symbols=frozenset(),
            tags=("change", *change.related_packages),
            fields={"title": change.title, "headings": "", "symbols": "", "path": path,
                    "aliases": " ".join([*aliases, "change"]), "summary": "", "body": ""},
            content_hash=canonical_hash({"change": change.model_dump(mode="json")}), provenance="declared",
            confidence="declared"))
    entries.sort(key=lambda e: e.id)
    return Projection(entries, weights or config.weights(), snapshot, config.content_hash())


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
