"""`.docbridge/index.json`: the DocBridgeIndexV1 artifact (`docbridge index`).

For readers that take an index file rather than a repository (a context provider, `bench retrieval --index`):
`knowledge[]` lists every document and module (`id, type, title, path, description, symbols, tags,
contentHash`, no body), and `projection` is the retrieval projection with the original's header fields (type,
schemaVersion, snapshotHash, overlayHash, configurationHash, lexiconVersion, graphMetricsVersion, weights, params,
lexical) and its entries (fields, graph, contentHash, provenance, confidence, ownershipId). Both carry a
`contentHash` over their canonical JSON without it; a reader recomputes it and refuses a file that does not
match. The file is deterministic: no timestamps, sorted entries, canonical JSON.

BM25 parameters: tantivy fixes k1 = 1.2 and b = 0.75, so `retrieval.params` in the configuration cannot change
the ranking. The index records the parameters the ranking really used, and `paramsNote` says when the
configuration asked for others.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import artifact_dir, write_atomic
from docbridge.engine.base.hashing import canonical_hash, canonical_json
from docbridge.engine.base.lexicon import LEXICON_VERSION, tokens
from docbridge.engine.base.model import DOCUMENT, MODULE
from docbridge.engine.retrieval.lexical import K1, B
from docbridge.engine.retrieval.project import FIELDS, PROJECTION_VERSION, Edge, Entry, Projection
from docbridge.engine.views.graph import GRAPH_VERSION

INDEX_TYPE = "docbridge-index"
SCHEMA_VERSION = 1


class IndexFileError(Exception):
    """An index file that cannot be used; the message names the file and what is wrong."""


def index_path(root: Path) -> Path:
    return artifact_dir(root) / "index.json"


def _params_note(requested: dict[str, float]) -> str | None:
    differing = {k: v for k, v in requested.items() if v != {"k1": K1, "b": B}[k]}
    if not differing:
        return None
    asked = ", ".join(f"{k}={v:g}" for k, v in sorted(differing.items()))
    return (f"retrieval.params asks for {asked}, but the lexical index (tantivy) fixes k1={K1:g} and b={B:g}: "
            "the ranking uses those, and `params` records them.")


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
            "mentionedBy": list(entry.mentioned_by), "areaId": entry.area_id, "packageId": entry.package_id,
            "inbound": inbound, "outbound": outbound},
        "contentHash": entry.content_hash, "provenance": entry.provenance, "confidence": entry.confidence,
    }
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
    return out


def _entry_from_json(data: dict[str, Any]) -> Entry:
    graph = data["graph"]
    edges = [Edge(e["kind"], e["id"], "in", e["confidence"]) for e in graph.get("inbound", ())]
    edges += [Edge(e["kind"], e["id"], "out", e["confidence"]) for e in graph.get("outbound", ())]
    edges.sort(key=lambda e: (e.kind, e.other, e.direction))
    return Entry(id=data["id"], kind=data["kind"], path=data["path"], title=data["title"],
                 summary=data.get("summary"), audience=data.get("audience"), aliases=tuple(data["aliases"]),
                 symbols=tuple(data["symbols"]),
                 declared_symbols=frozenset(data.get("declaredSymbols", data["symbols"])), tags=tuple(data["tags"]),
                 fields={name: str(data["fields"].get(name, "")) for name in FIELDS},
                 content_hash=data["contentHash"], provenance=data["provenance"], confidence=data["confidence"],
                 ownership_id=data.get("ownershipId"), pagerank=float(graph.get("pagerank", 0.0)),
                 area_id=graph.get("areaId"), package_id=graph.get("packageId"), edges=tuple(edges),
                 covered_by=tuple(graph.get("coveredBy", ())), mentioned_by=tuple(graph.get("mentionedBy", ())),
                 surface=data.get("surface"), variant_of=data.get("variantOf"), variants=int(data.get("variants", 0)),
                 dependents=int(data.get("dependents", 0)), agent_signal=float(data.get("agentSignal", 0.0)))


def _lexical(projection: Projection) -> dict[str, Any]:
    names = sorted(name for name, weight in projection.weights.items() if weight > 0)
    count = len(projection.entries)
    lengths = {name: 0 for name in names}
    for entry in projection.entries:
        for name in names:
            lengths[name] += len(tokens(entry.fields.get(name, "")))
    return {"version": 1, "documentCount": count, "fieldNames": names,
            "averageFieldLength": {name: round(lengths[name] / count, 6) if count else 0 for name in names}}


def build_index(state: Any, projection: Projection) -> dict[str, Any]:
    """The DocBridgeIndexV1 document for a resolved state and its projection."""
    requested = state.config.retrieval.params.requested()
    header: dict[str, Any] = {
        "type": "retrieval-index", "schemaVersion": PROJECTION_VERSION,
        "snapshotHash": projection.header()["snapshot_hash"], "overlayHash": projection.overlay_hash,
        "configurationHash": projection.configuration_hash, "lexiconVersion": LEXICON_VERSION,
        "graphMetricsVersion": GRAPH_VERSION, "weights": dict(sorted(projection.weights.items())),
        "params": {"k1": K1, "b": B}, "lexical": _lexical(projection),
    }
    note = _params_note(requested)
    if note:
        header["paramsNote"] = note
    retrieval = {**header, "entries": [_entry_json(e) for e in projection.entries]}
    retrieval["contentHash"] = canonical_hash(retrieval)
    knowledge = [{"id": e.id, "type": e.kind, "title": e.title, "path": e.path, "description": e.summary or "",
                  "symbols": list(e.symbols), "tags": list(e.tags), "contentHash": e.content_hash}
                 for e in projection.entries if e.kind in (DOCUMENT, MODULE)]
    index: dict[str, Any] = {"type": INDEX_TYPE, "schemaVersion": SCHEMA_VERSION,
                             "snapshotHash": header["snapshotHash"], "knowledge": knowledge, "projection": retrieval}
    index["contentHash"] = canonical_hash(index)
    return index


def write_index(state: Any, projection: Projection, target: Path | None = None) -> tuple[Path, dict[str, Any]]:
    index = build_index(state, projection)
    path = target or index_path(state.root)
    write_atomic(path, (canonical_json(index) + "\n").encode("utf-8"))
    return path, index


def _sealed(document: dict[str, Any], where: str) -> None:
    recorded = document.get("contentHash")
    computed = canonical_hash({k: v for k, v in document.items() if k != "contentHash"})
    if recorded != computed:
        raise IndexFileError(f"{where}: contentHash does not match the content (edited or corrupt); regenerate it "
                          "with `docbridge index`.")


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
    if not isinstance(document, dict) or document.get("type") != INDEX_TYPE:
        raise IndexFileError(f"{path}: not a Doc Bridge index (type must be {INDEX_TYPE!r}).")
    if document.get("schemaVersion") != SCHEMA_VERSION:
        raise IndexFileError(f"{path}: schemaVersion {document.get('schemaVersion')!r} is not supported "
                          f"(this version reads {SCHEMA_VERSION}); regenerate it with `docbridge index`.")
    _sealed(document, str(path))
    retrieval = document.get("projection")
    if not isinstance(retrieval, dict):
        raise IndexFileError(f"{path}: projection is missing.")
    _sealed(retrieval, f"{path}: projection")
    if retrieval.get("lexiconVersion") != LEXICON_VERSION:
        raise IndexFileError(f"{path}: projection.lexiconVersion {retrieval.get('lexiconVersion')!r} differs from this "
                          f"version's ({LEXICON_VERSION}); regenerate it with `docbridge index`.")
    try:
        entries = [_entry_from_json(e) for e in retrieval["entries"]]
        projection = Projection(entries, {k: float(v) for k, v in retrieval["weights"].items()},
                                retrieval["snapshotHash"], retrieval["configurationHash"], retrieval["overlayHash"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise IndexFileError(f"{path}: projection entries are malformed ({type(exc).__name__}: {exc}).") from exc
    return document, projection


__all__ = ["IndexFileError", "build_index", "index_path", "read_index", "write_index"]
