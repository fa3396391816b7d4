"""`.docbridge/index.json`: the DocBridgeIndexV1 artifact (`docbridge index`).

For readers that take an index file rather than a repository (a context provider, `bench retrieval --index`),
with every member of the original's DocBridgeIndexV1 (`engine/data/schemas/doc-bridge-index-v1.schema.json`):

- `schemaVersion` 1, `contentHash`, `contentHashAlgo: "sha256-semantic-v1"`, `project {name, root: "."}`;
- `knowledge[]`: every document and module (`id, type, title, path, description, symbols, tags, contentHash`,
  no body);
- `lookup`: `packages` (ownership ids and the workspace packages no record claims, as `package:<name>`),
  `ownership` (one record per package: `id, path, checks, checksSource, purpose, agentDoc, humanDoc, group,
  layer`), `intents` and `changes` (the configured routes);
- `handoffs`: the handoff of every package in `lookup.packages`, keyed by its id (assembled in the agent layer,
  `engine/agent/index_members.py`, and passed in);
- `projection`: the retrieval projection (RetrievalIndexV1, `schemaVersion` 1) with the original's header fields
  (type, contentHashAlgo, snapshotHash, overlayHash, configurationHash, lexiconVersion, graphMetricsVersion,
  weights, params, lexical) and its entries (fields, graph, contentHash, provenance, confidence, ownershipId).

Ours adds `type: "docbridge-index"` and `snapshotHash` to the index, and `projectionVersion` (the projection
builder's version), `paramsNote` and `directory` entries (a documentation directory, ours alone) to the
projection. The index and its projection each carry a `contentHash` over their canonical JSON without it: under
`sha256-semantic-v1` that is every member but `contentHash` (the artifact has no revision or time members to
leave out, and its arrays are written sorted). A reader recomputes it and refuses a file that does not match,
and refuses an identity it does not read, naming the file: the legacy `sha256-normalized-v1` and an index
without `contentHashAlgo` with regeneration guidance, an unknown algorithm with compatible-version guidance.
The file is deterministic: no timestamps, sorted entries, canonical JSON.

BM25 parameters: `params` records the k1 and b the ranking uses: 1.2 and 0.75 (tantivy's) unless
`retrieval.params` asks for others, which the lexical index then rescores with (docbridge.engine.retrieval.lexical);
a reader of the file ranks with the same. (`paramsNote`, which said that a configured value could not apply, is no
longer written.)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import artifact_dir, write_atomic, write_named_file
from docbridge.engine.base.hashing import canonical_hash, canonical_json
from docbridge.engine.base.lexicon import LEXICON_VERSION, tokens
from docbridge.engine.base.model import CHANGE, DOCUMENT, MODULE, PACKAGE, entity_id
from docbridge.engine.retrieval.lexical import K1, B
from docbridge.engine.retrieval.project import FIELDS, PROJECTION_VERSION, Edge, Entry, Projection, declared_count
from docbridge.engine.views.graph import GRAPH_VERSION

INDEX_TYPE = "docbridge-index"
SCHEMA_VERSION = 1
RETRIEVAL_SCHEMA_VERSION = 1  # RetrievalIndexV1; the projection's own version is `projectionVersion`
CONTENT_HASH_ALGO = "sha256-semantic-v1"
LEGACY_HASH_ALGO = "sha256-normalized-v1"
CHECKS_SOURCES = ("ownership", "frontmatter", "package-scripts", "default")  # the original's `checksSource` values


class IndexFileError(Exception):
    """An index file that cannot be used; the message names the file and what is wrong."""


def index_path(root: Path) -> Path:
    return artifact_dir(root) / "index.json"


LINK_KINDS = ("links-to", "covers", "mentions", "mentions-symbol")


def _entry_json(entry: Entry) -> dict[str, Any]:
    inbound = [{"kind": e.kind, "id": e.other, "confidence": e.confidence} for e in entry.edges if e.direction == "in"]
    outbound = [{"kind": e.kind, "id": e.other, "confidence": e.confidence} for e in entry.edges
                if e.direction == "out"]
    out: dict[str, Any] = {
        "id": entry.id, "kind": entry.kind, "path": entry.path, "title": entry.title, "aliases": list(entry.aliases),
        "symbols": list(entry.symbols), "declaredSymbols": sorted(entry.declared_symbols), "tags": list(entry.tags),
        "fields": dict(entry.fields),
        "graph": {"pagerank": entry.pagerank,
                  "inboundLinks": sum(1 for e in entry.edges if e.direction == "in" and e.kind in LINK_KINDS),
                  "coveredBy": list(entry.covered_by),
            "mentionedBy": list(entry.mentioned_by), "inbound": inbound, "outbound": outbound},
        "contentHash": entry.content_hash, "provenance": entry.provenance, "confidence": entry.confidence,
    }
    if entry.area_id:  # optional strings in the original's schema: absent, never null
        out["graph"]["areaId"] = entry.area_id
    if entry.package_id:
        out["graph"]["packageId"] = entry.package_id
    if entry.summary:
        out["summary"] = entry.summary
    if entry.audience:
        out["audience"] = entry.audience
    if entry.ownership_id:
        out["ownershipId"] = entry.ownership_id
    # the ranking's public-surface and page-variant signals, so that an index ranks like its repository
    if entry.surface:
        out["surface"] = entry.surface
    if entry.variant_of:
        out["variantOf"] = entry.variant_of
    if entry.variants:
        out["variants"] = entry.variants
    if entry.dependents:
        out["dependents"] = entry.dependents
    if entry.agent_signal:
        out["agentSignal"] = entry.agent_signal
    if entry.code:
        out["codeWords"] = entry.code  # what ranks a module for a question about how something is implemented
    return out


def _entry_from_json(data: dict[str, Any]) -> Entry:
    graph = data["graph"]
    edges = [Edge(e["kind"], e["id"], "in", e["confidence"]) for e in graph.get("inbound", ())]
    edges += [Edge(e["kind"], e["id"], "out", e["confidence"]) for e in graph.get("outbound", ())]
    edges.sort(key=lambda e: (e.kind, e.other, e.direction))
    return Entry(id=data["id"], kind=data["kind"], path=data["path"], title=data["title"],
                 summary=data.get("summary"), audience=data.get("audience"), aliases=tuple(data["aliases"]),
                 symbols=tuple(data["symbols"]),
                 declared=declared_count(tuple(data["symbols"]), data.get("declaredSymbols")), tags=tuple(data["tags"]),
                 fields={name: str(data["fields"].get(name, "")) for name in FIELDS},
                 content_hash=data["contentHash"], provenance=data["provenance"], confidence=data["confidence"],
                 ownership_id=data.get("ownershipId"), pagerank=float(graph.get("pagerank", 0.0)),
                 area_id=graph.get("areaId"), package_id=graph.get("packageId"), edges=tuple(edges),
                 covered_by=tuple(graph.get("coveredBy", ())), mentioned_by=tuple(graph.get("mentionedBy", ())),
                 surface=data.get("surface"), variant_of=data.get("variantOf"), variants=int(data.get("variants", 0)),
                 dependents=int(data.get("dependents", 0)), agent_signal=float(data.get("agentSignal", 0.0)),
                 code=str(data.get("codeWords") or ""))


def _lexical(projection: Projection) -> dict[str, Any]:
    names = sorted(name for name, weight in projection.weights.items() if weight > 0)
    count = len(projection.entries)
    lengths = {name: 0 for name in names}
    for entry in projection.entries:
        for name in names:
            lengths[name] += len(tokens(entry.fields.get(name, "")))
    return {"version": 1, "documentCount": count, "fieldNames": names,
            "averageFieldLength": {name: round(lengths[name] / count, 6) if count else 0 for name in names}}


def project_name(state: Any) -> str:
    """The project's name: the root package's manifest name, else the root directory's name (`llms.txt` heads
    with it too)."""
    layout = state.universe.layout
    package = layout.packages.get(".") if layout is not None else None
    name = package.name if package is not None and package.manifest and package.name else state.root.name
    return str(name or "project")[:128]


def _path(value: str) -> str:
    return value.strip().replace("\\", "/").removeprefix("./")


def base_lookup(state: Any, projection: Projection) -> tuple[dict[str, Any], dict[str, str]]:
    """`lookup` as the configuration and the model declare it, and the entity reference each package's handoff
    is asked for (package id -> ref).

    `packages`: every ownership record's id, then every workspace package (not the root) that no record claims by
    path, by its entity id (`package:<manifest name>`, the id `list packages` and its handoff's `target.id`
    give). `ownership`: one record per package with what is declared (`checks` from the record, `checksSource:
    "ownership"`; an undeclared `checks` is `[]` here, and the agent layer fills it from the package's handoff).
    `intents` and `changes`: the configured routes (a change without `startHere` starts where its projected
    entry does)."""
    config = state.config
    ownership: dict[str, dict[str, Any]] = {}
    refs: dict[str, str] = {}
    for record in config.ownership:
        item: dict[str, Any] = {"id": record.id, "path": record.path, "checks": list(record.checks or ())}
        if record.checks:
            item["checksSource"] = "ownership"
        for key, value in (("group", record.group), ("layer", record.layer), ("purpose", record.purpose),
                           ("agentDoc", record.agent_doc), ("humanDoc", record.human_doc)):
            if value:
                item[key] = _path(value) if key in ("agentDoc", "humanDoc") else value
        ownership[record.id] = item
        refs[record.id] = record.id
    claimed = {record.path for record in config.ownership}
    for entry in projection.entries:
        if entry.kind != PACKAGE or entry.ownership_id or entry.path in (".", "") or entry.path in claimed:
            continue
        ownership[entry.id] = {"id": entry.id, "path": entry.path, "checks": []}
        refs[entry.id] = entry.id
    intents = {route.id: {"id": route.id, "title": route.title, "paths": list(route.paths)}
               for route in config.intents}
    by_id = {entry.id: entry for entry in projection.entries}
    changes: dict[str, dict[str, Any]] = {}
    for change in config.changes:
        projected = by_id.get(entity_id(CHANGE, change.id))
        start = change.start_here or (projected.path if projected is not None else None)
        item = {"id": change.id, "title": change.title}
        if start:
            item["startHere"] = start
        if change.related_packages:
            item["relatedPackages"] = list(change.related_packages)
        changes[change.id] = item
    lookup = {"packages": sorted(ownership), "ownership": dict(sorted(ownership.items())),
              "intents": dict(sorted(intents.items())), "changes": dict(sorted(changes.items()))}
    return lookup, refs


def build_index(state: Any, projection: Projection, *, lookup: dict[str, Any] | None = None,
                handoffs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The DocBridgeIndexV1 document for a resolved state and its projection.

    `lookup` defaults to `base_lookup` (declared checks only); `handoffs` is written when given (the agent layer
    computes both: `engine/agent/index_members.py`)."""
    header: dict[str, Any] = {
        "type": "retrieval-index", "schemaVersion": RETRIEVAL_SCHEMA_VERSION, "contentHashAlgo": CONTENT_HASH_ALGO,
        "projectionVersion": PROJECTION_VERSION,
        "snapshotHash": projection.header()["snapshot_hash"], "overlayHash": projection.overlay_hash,
        "configurationHash": projection.configuration_hash, "lexiconVersion": LEXICON_VERSION,
        "graphMetricsVersion": GRAPH_VERSION, "weights": dict(sorted(projection.weights.items())),
        "params": {"k1": K1, "b": B, **projection.params}, "lexical": _lexical(projection),
    }
    retrieval = {**header, "entries": [_entry_json(e) for e in projection.entries]}
    retrieval["contentHash"] = canonical_hash(retrieval)
    knowledge = [{"id": e.id, "type": e.kind, "title": e.title, "path": e.path, "description": e.summary or "",
                  "symbols": list(e.symbols), "tags": list(e.tags), "contentHash": e.content_hash}
                 for e in projection.entries if e.kind in (DOCUMENT, MODULE)]
    index: dict[str, Any] = {"type": INDEX_TYPE, "schemaVersion": SCHEMA_VERSION,
                             "contentHashAlgo": CONTENT_HASH_ALGO,
                             "project": {"name": project_name(state), "root": "."},
                             "snapshotHash": header["snapshotHash"], "knowledge": knowledge,
                             "lookup": lookup if lookup is not None else base_lookup(state, projection)[0],
                             "projection": retrieval}
    if handoffs is not None:
        index["handoffs"] = dict(sorted(handoffs.items()))
    index["contentHash"] = canonical_hash(index)
    return index


def write_index(state: Any, projection: Projection, target: Path | None = None, *,
                lookup: dict[str, Any] | None = None,
                handoffs: dict[str, Any] | None = None) -> tuple[Path, dict[str, Any]]:
    index = build_index(state, projection, lookup=lookup, handoffs=handoffs)
    data = (canonical_json(index) + "\n").encode("utf-8")
    if target is None:
        path = index_path(state.root)
        write_atomic(path, data)
    else:  # a file the user named: a device or a FIFO is written into, not replaced
        path = target
        write_named_file(path, data)
    return path, index


def _hash_algo(document: dict[str, Any], where: str) -> None:
    """Refuse an identity this version does not read, before anything is verified against it."""
    algo = document.get("contentHashAlgo")
    if algo == CONTENT_HASH_ALGO:
        return
    if algo is None:
        raise IndexFileError(f"{where}: it carries no contentHashAlgo (written by an earlier Doc Bridge); this "
                             f"version reads only {CONTENT_HASH_ALGO!r} indexes. Regenerate it explicitly with "
                             "`docbridge index`.")
    if algo == LEGACY_HASH_ALGO:
        raise IndexFileError(f"{where}: contentHashAlgo {algo!r} is the legacy index identity, which this version "
                             f"refuses (it reads {CONTENT_HASH_ALGO!r}). Regenerate it explicitly with "
                             "`docbridge index`.")
    raise IndexFileError(f"{where}: unsupported contentHashAlgo {str(algo)[:64]!r} (this version reads "
                         f"{CONTENT_HASH_ALGO!r}). Install a compatible Doc Bridge version, or regenerate the "
                         "index explicitly with `docbridge index`.")


def _sealed(document: dict[str, Any], where: str) -> None:
    recorded = document.get("contentHash")
    computed = canonical_hash({k: v for k, v in document.items() if k != "contentHash"})
    if recorded != computed:
        raise IndexFileError(f"{where}: contentHash does not match the content (edited or corrupt); regenerate it "
                          "with `docbridge index`.")


def _params(params: Any, path: Path) -> dict[str, float]:
    """The BM25 parameters an index records that differ from the defaults (what its ranking used)."""
    if params is None:
        return {}
    ok = isinstance(params, dict) and all(
        k in ("k1", "b") and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        and (v > 0 if k == "k1" else 0 <= v <= 1) for k, v in params.items())
    if not ok:
        raise IndexFileError(f"{path}: projection.params must hold k1 (above 0) and b (from 0 to 1), not "
                             f"{json.dumps(params, default=str)[:120]}.")
    return {k: float(v) for k, v in params.items() if v != {"k1": K1, "b": B}[k]}


def read_index(path: Path) -> tuple[dict[str, Any], Projection]:
    """The index document and its projection, verified by content hash."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise IndexFileError(f"cannot read index {path}: {exc.strerror or exc}.") from exc
    except UnicodeDecodeError as exc:
        raise IndexFileError(f"{path}: the file is not valid UTF-8.") from exc
    except json.JSONDecodeError as exc:
        raise IndexFileError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}.") from exc
    except (RecursionError, ValueError) as exc:  # nesting too deep, a number too long to convert
        raise IndexFileError(f"{path}: invalid JSON: it cannot be read ({type(exc).__name__}).") from exc
    # the original's DocBridgeIndexV1 has no `type`: an index of its own is recognised by its members, so that
    # it is refused for its identity (contentHashAlgo) rather than as a foreign file
    if not isinstance(document, dict) or document.get("type", INDEX_TYPE) != INDEX_TYPE or (
            "type" not in document and not isinstance(document.get("knowledge"), list)):
        raise IndexFileError(f"{path}: not a Doc Bridge index (type must be {INDEX_TYPE!r}).")
    if document.get("schemaVersion") != SCHEMA_VERSION:
        raise IndexFileError(f"{path}: schemaVersion {document.get('schemaVersion')!r} is not supported "
                          f"(this version reads {SCHEMA_VERSION}); regenerate it with `docbridge index`.")
    _hash_algo(document, str(path))
    _sealed(document, str(path))
    retrieval = document.get("projection")
    if not isinstance(retrieval, dict):
        raise IndexFileError(f"{path}: projection is missing.")
    _hash_algo(retrieval, f"{path}: projection")
    _sealed(retrieval, f"{path}: projection")
    if retrieval.get("lexiconVersion") != LEXICON_VERSION:
        raise IndexFileError(f"{path}: projection.lexiconVersion {retrieval.get('lexiconVersion')!r} differs from this "
                          f"version's ({LEXICON_VERSION}); regenerate it with `docbridge index`.")
    try:
        entries = [_entry_from_json(e) for e in retrieval["entries"]]
        projection = Projection(entries, {k: float(v) for k, v in retrieval["weights"].items()},
                                retrieval["snapshotHash"], retrieval["configurationHash"], retrieval["overlayHash"],
                                params=_params(retrieval.get("params"), path))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise IndexFileError(f"{path}: projection entries are malformed ({type(exc).__name__}: {exc}).") from exc
    return document, projection


__all__ = ["CONTENT_HASH_ALGO", "LEGACY_HASH_ALGO", "IndexFileError", "base_lookup", "build_index", "index_path",
           "project_name", "read_index", "write_index"]
