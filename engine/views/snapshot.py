"""The Snapshot: every entity and relation of the repository, with evidence, coverage and a content hash.

Built from the workspace's facts and resolutions; the `content_hash` is semantic: it covers entities,
relations, meaningful coverage, analyzer versions and configuration, never timings or cache reuse, so a
warm scan and a cold scan of the same tree hash alike.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.hashing import canonical_bytes, canonical_list_pieces
from docbridge.engine.base.heap import built
from docbridge.engine.base.memo import ViewKey
from docbridge.engine.base.model import (
    AREA,
    CHANGE,
    DOCUMENT,
    EXTERNAL,
    INTENT,
    MODULE,
    PACKAGE,
    SCHEMA_VERSION,
    UNRESOLVED,
    Evidence,
    Relation,
    entity_id,
    sort_by_key,
    split_id,
)
from docbridge.engine.discovery.files import INVALID_IGNORE_PATTERN
from docbridge.engine.discovery.references import MAX_EVIDENCE
from docbridge.engine.discovery.resolve import analyzer_versions
from docbridge.engine.discovery.roles import TEST
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.transitions import resolved

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState as Workspace

MAX_NOTES = 256
PROJECT_FILES = ("readme", "contributing", "security", "changelog", "agents", "code_of_conduct", "license")
AUDIENCES = ("agent", "human", "human-and-agent", "archive", "project", "internal", "external", "unclassified")


@dataclass(slots=True)
class Entity:
    id: str
    kind: str
    path: str | None
    title: str | None
    summary: str | None = None
    content_hash: str | None = None
    provenance: str = "observed"
    confidence: str = "observed"
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "kind": self.kind, "path": self.path, "title": self.title, "summary": self.summary,
               "content_hash": self.content_hash, "provenance": self.provenance, "confidence": self.confidence}
        out.update(self.data)
        return out


def relation_json(relation: Relation, hashes: dict[str, str]) -> dict[str, Any]:
    return {
        "id": relation.id,
        "source": relation.source,
        "target": relation.target,
        "kind": relation.kind,
        "evidence": [e.to_json(hashes.get(e.path)) for e in relation.evidence],
        "confidence": relation.confidence,
        "provenance": relation.provenance,
        "metadata": {**{k: list(v) if isinstance(v, tuple) else v for k, v in relation.metadata},
                     **({"symbol": relation.symbol} if relation.symbol else {})},
    }


@dataclass(slots=True)
class Snapshot:
    entities: dict[str, Entity]
    relations: list[Relation]
    coverage: dict[str, Any]
    reuse: dict[str, Any]
    config_hash: str
    hashes: dict[str, str]  # file path -> content hash (for evidence)
    _parts: dict[str, list[bytes]] | None = None
    _content_hash: str | None = None

    def entity(self, eid: str) -> Entity | None:
        return self.entities.get(eid)

    def _serialised(self) -> dict[str, list[bytes]]:
        """Canonical JSON (UTF-8) of each top-level member, as pieces. Kept only while the artifact is being
        written (the hash and the file share them), so a long-lived snapshot does not hold its text."""
        if self._parts is not None:
            return self._parts

        return {
            "analyzer_versions": [canonical_bytes(analyzer_versions())],
            "config_hash": [canonical_bytes(self.config_hash)],
            "coverage": [canonical_bytes(self.coverage)],
            # kept as pieces of a few hundred items (never every relation as a dict, nor the whole text twice): a
            # large repository's peak memory stays down, and one encoder call a piece, not one an item
            "entities": canonical_list_pieces(e.to_json() for e in self.entities.values()),
            "relations": canonical_list_pieces(relation_json(r, self.hashes) for r in self.relations),
            "schema_version": [canonical_bytes(SCHEMA_VERSION)],
        }

    @staticmethod
    def _object(parts: dict[str, list[bytes]]) -> Iterator[bytes]:
        """A JSON object of pre-serialised members, in sorted key order, as pieces."""
        yield b"{"
        for index, key in enumerate(sorted(parts)):
            yield (b"," if index else b"") + b'"' + key.encode("utf-8") + b'":'
            yield from parts[key]
        yield b"}"

    @property
    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of every member except `content_hash` and `coverage.reuse`."""
        if self._content_hash is None:
            digest = hashlib.sha256()
            for piece in self._object(self._serialised()):  # transient unless chunks() holds them
                digest.update(piece)
            self._content_hash = digest.hexdigest()
        return self._content_hash

    def chunks(self) -> Iterator[bytes]:
        """The artifact as pieces of UTF-8: canonical JSON plus `content_hash` and `coverage.reuse` (one line,
        sorted keys). Written piece by piece, a large snapshot is never held as one string."""
        self._parts = self._serialised()
        parts = dict(self._parts)
        parts["content_hash"] = [canonical_bytes(self.content_hash)]
        parts["coverage"] = [canonical_bytes({**self.coverage, "reuse": self.reuse})]
        yield from self._object(parts)
        yield b"\n"
        self._parts = None

    def to_json(self) -> str:
        return b"".join(self.chunks()).decode("utf-8")

    def to_json_obj(self) -> dict[str, Any]:
        return json.loads(self.to_json())

    def counts(self) -> tuple[Counter[str], Counter[str]]:
        return Counter(e.kind for e in self.entities.values()), Counter(r.kind for r in self.relations)


def classification(path: str, frontmatter: dict[str, str], agent_root: str | None) -> str:
    """Frontmatter `audience` (or a `type` that names an audience) wins over the path heuristic."""
    audience = (frontmatter.get("audience") or "").strip().lower()
    if audience in AUDIENCES:
        return audience
    kind = (frontmatter.get("type") or "").strip().lower()
    if kind in AUDIENCES:
        return kind
    root = (agent_root or "docs/for-agents").strip("/")
    if path.startswith(root + "/"):
        return "agent"
    if path.startswith("docs-archive/"):
        return "archive"
    if path.startswith("docs/"):
        return "human"
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    if stem in PROJECT_FILES:
        return "project"
    return "unclassified"


def document_entity(ws: Workspace, path: str, facts: Any) -> Entity:
    """A document's entity: its facts and what its resolution found ambiguous."""
    resolution = ws.documents.get(path)
    frontmatter = dict(facts.frontmatter)
    data: dict[str, Any] = {
        "headings": [{"level": h.level, "text": h.text, "slug": h.slug, "line": h.line}
                     for h in facts.headings[:256]],
        "frontmatter": frontmatter,
        "word_count": facts.word_count,
        "generated_regions": [{"start_line": r.start_line, "end_line": r.end_line, "hash": r.recorded_hash,
                               "computed_hash": r.computed_hash, "closed": r.closed} for r in facts.regions],
        "language": facts.language,
        "classification": classification(path, frontmatter, ws.config.corpus.agent.root),
    }
    if resolution is not None:
        if resolution.truncated:
            data["evidence_truncated"] = True
        ambiguous = [r for r in resolution.references if r.status == "ambiguous" and r.symbol]
        if ambiguous:
            by_symbol: dict[str, dict[str, Any]] = {}
            for ref in ambiguous:
                entry = by_symbol.setdefault(ref.symbol or "", {
                    "symbol": ref.symbol, "candidates": list(ref.candidates[:32]),
                    "candidate_count": len(ref.candidates), "lines": []})
                if ref.at.line not in entry["lines"]:
                    entry["lines"].append(ref.at.line)
            data["ambiguous_symbols"] = [by_symbol[k] for k in sorted(by_symbol)][:64]
    return Entity(entity_id(DOCUMENT, path), DOCUMENT, path, facts.title or path.rsplit("/", 1)[-1],
                  facts.summary, facts.content_hash, data=data)


def module_entity(ws: Workspace, path: str, module_facts: Any) -> Entity:
    """A module's entity: its exports, its imports with what each resolved to, its area and package."""
    layout = ws.universe.layout
    assert layout is not None
    module_resolution = ws.modules.get(path)
    targets = {id(o.imp): o.target for o in module_resolution.imports} if module_resolution else {}
    area_path = layout.module_area.get(path)
    package = layout.package_of(path)
    data = {
        "exports": [{"name": e.name, "kind": e.kind, "line": e.line, "column": e.column,
                     **({"source": e.source} if e.source else {})} for e in module_facts.exports],
        "imports": [{"specifier": i.specifier, "kind": i.kind, "line": i.line, "column": i.column,
                     "target": targets.get(id(i))} for i in module_facts.imports],
        "area": entity_id(AREA, area_path) if area_path else None,
        "package": package.id if package else None,
    }
    if module_facts.parse_errors:
        data["parse_errors"] = module_facts.parse_errors
    return Entity(entity_id(MODULE, path), MODULE, path, path.rsplit("/", 1)[-1], None, module_facts.content_hash,
                  data=data)


def package_entity(info: Any) -> Entity:
    package_facts = info.facts
    data = {"directory": info.directory, "manifest": info.manifest,
            "scripts": dict(package_facts.scripts) if package_facts else {},
            "package_manager": package_facts.package_manager if package_facts else None}
    return Entity(info.id, PACKAGE, info.directory, info.name, None,
                  package_facts.content_hash if package_facts else None, data=data)


def area_entity(area: Any) -> Entity:
    return Entity(area.id, AREA, area.path, area.name, None, None, data={
        "package": area.package_id, "parent": area.parent_id, "ownership_id": area.ownership_id,
        "module_count": len(area.modules)})


def build_snapshot(ws: Workspace) -> Snapshot:
    u = ws.universe
    layout = u.layout
    assert layout is not None
    config = ws.config
    entities: dict[str, Entity] = {}
    hashes: dict[str, str] = {}

    for path, facts in u.documents.items():
        hashes[path] = facts.content_hash
        entities[entity_id(DOCUMENT, path)] = document_entity(ws, path, facts)

    externals: set[str] = set()
    for path, module_facts in u.modules.items():
        hashes[path] = module_facts.content_hash
        entities[entity_id(MODULE, path)] = module_entity(ws, path, module_facts)
        module_resolution = ws.modules.get(path)
        if module_resolution:
            externals.update(module_resolution.external_targets())

    for info in layout.packages.values():
        if info.facts is not None:
            hashes[info.facts.path] = info.facts.content_hash
        entities[info.id] = package_entity(info)

    for area in layout.areas.values():
        entities[area.id] = area_entity(area)

    for external in sorted(externals):
        entities[external] = Entity(external, EXTERNAL, None, split_id(external)[1])

    for intent in config.intents:
        eid = entity_id(INTENT, intent.id)
        entities[eid] = Entity(eid, INTENT, intent.paths[0] if intent.paths else None, intent.title, intent.title,
                               provenance="declared", confidence="declared", data={"paths": list(intent.paths)})
    for change in config.changes:
        eid = entity_id(CHANGE, change.id)
        entities[eid] = Entity(eid, CHANGE, change.start_here, change.title, change.title, provenance="declared",
                               confidence="declared", data={"related_packages": list(change.related_packages)})

    relations, unresolved = _relations(ws, hashes)
    entities.update(unresolved)

    coverage = _coverage(ws)
    entities = dict(sorted(entities.items()))
    return Snapshot(entities, relations, coverage, ws.reuse_report(), config.content_hash(), hashes)


def _relations(ws: Workspace, hashes: dict[str, str], with_evidence: bool = True) -> tuple[
        list[Relation], dict[str, Entity]]:
    """Every relation of the snapshot, merged and sorted; and the unresolved names documents declare."""
    relations: list[Relation] = []
    for resolution in ws.documents.values():
        relations.extend(resolution.relations if with_evidence else resolution.bare_relations())
        relations.extend(resolution.citations)  # fenced code's citations (merged into a mention of the same symbol)
    for module_resolution in ws.modules.values():
        relations.extend(module_resolution.relations)
    relations.extend(_wiring(ws))
    relations.extend(_containment(ws))
    relations.extend(_ownership_covers(ws, hashes))
    relations.extend(_dependencies(ws))
    unresolved, declared_covers = _unresolved_declarations(ws)
    relations.extend(declared_covers)
    return _merge(relations), unresolved


def relations_of(ws: Workspace) -> list[Relation]:
    """The snapshot's relations without its entities, its documents' relations without their evidence (what the
    retrieval projection reads)."""
    return _relations(ws, {}, with_evidence=False)[0]


def units_of(ws: Workspace) -> list[tuple[str, str, str, Callable[[], Entity]]]:
    """The documents, modules, packages and areas as (id, kind, path, its entity when asked), in the snapshot's
    order: what the retrieval projection reads of its entities, one entity at a time."""
    universe = ws.universe
    layout = universe.layout
    assert layout is not None
    units: list[tuple[str, str, str, Callable[[], Entity]]] = []
    for path, facts in universe.documents.items():
        units.append((entity_id(DOCUMENT, path), DOCUMENT, path, partial(document_entity, ws, path, facts)))
    for path, module_facts in universe.modules.items():
        units.append((entity_id(MODULE, path), MODULE, path, partial(module_entity, ws, path, module_facts)))
    for info in layout.packages.values():
        units.append((info.id, PACKAGE, info.directory, partial(package_entity, info)))
    for area in layout.areas.values():
        units.append((area.id, AREA, area.path, partial(area_entity, area)))
    return sorted({unit[0]: unit for unit in units}.values(), key=lambda unit: unit[0])


def _merge(relations: list[Relation]) -> list[Relation]:
    """One relation per (source, kind, target, discriminator), sorted; evidence unioned in order. Sorted in place
    (stable: the first of a key stays first) and merged where neighbours share a key: a table of every key was
    the peak of a search index's first build on a large repository (the projection reads every relation)."""
    sort_by_key(relations)
    merged: list[Relation] = []
    previous: tuple[str, str, str, str] | None = None
    for relation in relations:
        key = relation.key
        if key != previous:
            merged.append(relation)
            previous = key
            continue
        existing = merged[-1]
        evidence = tuple(dict.fromkeys(existing.evidence + relation.evidence))[:MAX_EVIDENCE]
        merged[-1] = Relation(existing.source, existing.target, existing.kind, evidence, existing.confidence,
                              existing.provenance, existing.metadata, existing.symbol)
    relations.clear()
    return merged


def _containment(ws: Workspace) -> list[Relation]:
    """What holds what, each with the file that proves it: a module or a document is its own evidence (its first
    line); an area, the first module it holds (an area is a folder of code)."""
    layout = ws.universe.layout
    assert layout is not None
    modules = ws.universe.sorted_paths("modules")

    def file(path: str) -> tuple[Evidence, ...]:
        return (Evidence(path, 0, 0, 0, 0),)

    def first_module(area: Any) -> tuple[Evidence, ...]:
        if area.modules:
            return file(area.modules[0])
        prefix = "" if area.path in ("", ".") else area.path + "/"
        start = bisect.bisect_left(modules, prefix)
        return file(modules[start]) if start < len(modules) and modules[start].startswith(prefix) else ()

    out: list[Relation] = []
    for area in layout.areas.values():
        if area.parent_id:
            out.append(Relation(area.parent_id, area.id, "contains", first_module(area)))
        elif area.package_id:
            out.append(Relation(area.package_id, area.id, "contains", first_module(area)))
        for module in area.modules:
            out.append(Relation(area.id, entity_id(MODULE, module), "contains", file(module)))
    for module in ws.universe.modules:
        if module not in layout.module_area:
            package = layout.package_of(module)
            if package is not None:
                out.append(Relation(package.id, entity_id(MODULE, module), "contains", file(module)))
    for document in ws.universe.documents:
        document_area = layout.area_of(document)
        if document_area is not None:
            out.append(Relation(document_area.id, entity_id(DOCUMENT, document), "contains", file(document)))
        else:
            package = layout.package_of(document)
            if package is not None:
                out.append(Relation(package.id, entity_id(DOCUMENT, document), "contains", file(document)))
    return out


def _wiring(ws: Workspace) -> list[Relation]:
    """`runtime-wiring` of every module but tests' (a test registers fixtures, not the program's structure)."""
    out: list[Relation] = []
    for path in sorted(ws.modules.keys()):
        wiring = ws.modules[path].wiring
        if wiring and ws.universe.role_of(path)[0] != TEST:
            out.extend(wiring)
    return out


def _dependencies(ws: Workspace) -> list[Relation]:
    """`depends-on` between the repository's own packages: a package whose manifest lists another of them in
    `dependencies`, `devDependencies`, `peerDependencies` or `optionalDependencies`, with the line of each entry
    and the fields it is listed in (`metadata.dependency_types`, in that order). Third-party dependencies are
    left to the manifest: the model holds the repository's own structure."""
    universe = ws.universe
    layout = universe.layout
    assert layout is not None
    names, _ = universe.package_names()
    out: list[Relation] = []
    for info in sorted(layout.packages.values(), key=lambda p: p.directory):
        facts = info.facts
        if facts is None or not facts.dependency_lines:
            continue
        found: dict[str, list[tuple[str, Evidence]]] = {}
        for field_name, name, line, column, end_column in facts.dependency_lines:
            directory = names.get(name)
            if directory is None:
                continue
            target = layout.packages[directory].id
            if target != info.id:
                found.setdefault(target, []).append((field_name, Evidence(facts.path, line, column, line, end_column)))
        for target, entries in sorted(found.items()):
            fields = tuple(dict.fromkeys(f for f, _ in entries))
            out.append(Relation(info.id, target, "depends-on", tuple(e for _, e in entries[:MAX_EVIDENCE]),
                                metadata=(("dependency_types", fields),)))
    return out


MAX_ID = 256


def unresolved_id(reference: str) -> str:
    """`unresolved:<reference>`, cut to 256 characters with a hash of the whole when longer (as entity ids are)."""
    eid = f"unresolved:{reference}"
    if len(eid) <= MAX_ID:
        return eid
    digest = hashlib.sha256(eid.encode("utf-8")).hexdigest()[:32]
    return f"{eid[:MAX_ID - 33]}:{digest}"


def _unresolved_declarations(ws: Workspace) -> tuple[dict[str, Entity], list[Relation]]:
    """What documents declare (`covers`, an endpoint of `docbridge.relations`) that names nothing in the
    repository: one `unresolved-reference` entity per name, with every place it is written (≤ 8), and a declared
    `covers` from each document whose `covers` names it. The findings already report each one; the entity lets
    the graph hold what was meant."""
    written: dict[str, list[Evidence]] = {}
    covers: list[Relation] = []
    for path in sorted(ws.documents.keys()):
        resolution = ws.documents[path]
        facts = ws.universe.documents.get(path)
        if facts is None:
            continue
        for text, relation in _declared_covers(path, resolution):
            written.setdefault(text, []).extend(relation.evidence)
            covers.append(relation)
        for index, source, target in resolution.declared_endpoints:
            declaration = facts.declarations[index]
            evidence = Evidence(path, declaration.line, declaration.column, declaration.line, declaration.end_column)
            for name, found in ((declaration.ref, source), (declaration.target, target)):
                if found is None and name:
                    written.setdefault(name, []).append(evidence)
    entities: dict[str, Entity] = {}
    for name, found_at in sorted(written.items()):
        eid = unresolved_id(name)
        places = sorted(set(found_at), key=lambda e: (e.path, e.line, e.column))
        entities[eid] = Entity(eid, UNRESOLVED, None, name, provenance="declared", confidence="declared", data={
            "reference": name, "evidence": [e.to_json(None) for e in places[:MAX_EVIDENCE]],
            "documents": sorted({e.path for e in places})})
    return entities, covers


def _declared_covers(path: str, resolution: Any) -> list[tuple[str, Relation]]:
    """A declared `covers` from the document for each name its `covers` writes that names nothing (with the name)."""
    out = []
    for reference in resolution.references:
        if reference.origin == "covers" and reference.status == "unresolved" and reference.text:
            span = reference.span
            evidence = Evidence(path, span.line, span.column, span.end_line, span.end_column)
            out.append((reference.text, Relation(entity_id(DOCUMENT, path), unresolved_id(reference.text), "covers",
                                                 (evidence,), "declared", "declared")))
    return out


def relations_from(ws: Workspace, path: str) -> list[Relation]:
    """The relations of the snapshot whose source is the entity of the document or module at `path`, merged as
    the snapshot merges them (evidence aside: where the relations are written is not what they say)."""
    resolution = ws.documents.get(path)
    if resolution is not None:
        source = entity_id(DOCUMENT, path)
        own = [*resolution.relations, *resolution.citations,
               *(r for r in _ownership_covers(ws, {}) if r.source == source),
               *(r for _, r in _declared_covers(path, resolution))]
    else:
        module_resolution = ws.modules.get(path)
        own = list(module_resolution.relations) if module_resolution is not None else []
    return _merge(own)


def _ownership_covers(ws: Workspace, hashes: dict[str, str]) -> list[Relation]:
    """An ownership record's agent document covers the unit at the record's path."""
    layout = ws.universe.layout
    assert layout is not None
    out = []
    for record in ws.config.ownership:
        if not record.agent_doc:
            continue
        doc = record.agent_doc.removeprefix("./")
        if doc not in ws.universe.documents:
            continue
        target = ws.entity_for_path(record.path)
        if target is None:
            continue
        line = ws.config_line(f'"{record.id}"')
        evidence = (Evidence("doc-bridge.config.json", line, 0, line, 0),) if line is not None else ()
        out.append(Relation(entity_id(DOCUMENT, doc), target, "covers", evidence, "declared", "declared",
                            (("ownership", record.id),)))
    return out


def _coverage(ws: Workspace) -> dict[str, Any]:
    analyzed = Counter(type(f).kind for f in ws.facts.values())
    present = ws.present
    skipped = sorted(ws.skipped.items())
    unresolved: Counter[str] = Counter()
    notes: list[dict[str, Any]] = []
    parsed_with_errors = 0
    for resolution in ws.documents.values():
        for ref in resolution.references:
            if ref.status in ("broken", "outside-root"):
                unresolved["links"] += 1
            elif ref.status == "anchor-missing":
                unresolved["anchors"] += 1
            elif ref.status == "unresolved" and ref.origin == "code":
                unresolved["mentions"] += 1
            elif ref.status == "unresolved":
                unresolved["declarations"] += 1
            elif ref.status == "ambiguous":
                unresolved["ambiguous_symbols"] += 1
        for scope, reason in resolution.notes:
            notes.append({"scope": scope, "reason": reason})
    for module_resolution in ws.modules.values():
        missing = [o for o in module_resolution.imports if o.status == "unresolved"]
        if missing:
            unresolved["imports"] += len(missing)
            specifiers = ", ".join(sorted({o.imp.specifier for o in missing})[:8])
            notes.append({"scope": f"imports:{module_resolution.path}",
                          "reason": f"{len(missing)} relative import(s) match no scanned module: {specifiers}."})
        facts = ws.universe.modules.get(module_resolution.path)
        if facts is not None and facts.parse_errors:
            parsed_with_errors += 1
            notes.append({"scope": f"parse-errors:{module_resolution.path}",
                          "reason": f"{facts.parse_errors} syntax error(s) the parser recovered from; exports "
                                    f"after them may be missing."})
        if facts is not None and facts.dynamic_unanalyzed:
            notes.append({"scope": f"dynamic-imports:{module_resolution.path}",
                          "reason": f"{facts.dynamic_unanalyzed} dynamic import(s) with a computed specifier "
                                    f"were not analyzed."})
    for path, facts in ws.facts.items():  # a manifest that cannot be read is used as if it were absent
        if type(facts).kind in ("package-manifest", "tsconfig") and facts.issues:
            issue = facts.issues[0]
            notes.append({"scope": f"invalid-json:{path}",
                          "reason": f"{issue.message} Its contents are not used "
                                    f"({issue.code}, line {issue.line + 1})."})
    if not ws.universe.manifests:
        notes.append({"scope": "packages", "reason": "No package.json was found; areas are computed from the "
                                                      "repository root and no package entity exists."})
    roles: Counter[str] = Counter()
    generated: list[dict[str, str]] = []
    for path in sorted(ws.universe.modules.keys()):
        role, reason = ws.universe.role_of(path)
        roles[role] += 1
        if role == "generated":
            generated.append({"path": path, "reason": reason})
    notes.extend(_area_suggestions(ws))
    notes.sort(key=lambda n: n["scope"])
    coverage: dict[str, Any] = {
        "files": {"seen": len(present) + sum(1 for p, r in skipped
                                             if p not in present and r != INVALID_IGNORE_PATTERN),
                  "analyzed": sum(analyzed.values()), "by_kind": dict(sorted(analyzed.items())),
                  "parsed_with_errors": parsed_with_errors},
        "skipped": [{"path": p, "reason": r} for p, r in skipped],
        "skipped_by_reason": dict(sorted(Counter(r for _, r in skipped).items())),
        "unresolved": dict(sorted(unresolved.items())),
        "notes": notes[:MAX_NOTES],
        # what part each module plays (docbridge.engine.discovery.roles): only library source makes structural findings
        "roles": dict(sorted(roles.items())),
        "generated": generated[:MAX_NOTES],
    }
    if len(notes) > MAX_NOTES:
        coverage["notes_truncated"] = len(notes) - MAX_NOTES
    return coverage


def _area_suggestions(ws: Workspace) -> list[dict[str, Any]]:
    """Where the layout is flat, the seeded Louvain communities of the import graph (`check` prints them as
    suggestions) as coverage notes: `area-suggestion:<folder>`, analyzer `graph`, status `not-analyzed` (a
    candidate for a person to promote into `analysis.areas`, never an area by itself), ≤ 8 member modules."""
    from docbridge.engine.views.graph import area_suggestions_of
    return [{"scope": f"area-suggestion:{s['label']}", "reason": s["reason"], "analyzer": "graph",
             "status": "not-analyzed", "evidence": [{"path": path} for path in s["modules"]]}
            for s in area_suggestions_of(ws)]


SNAPSHOT: ViewKey[Snapshot] = ViewKey("snapshot")


def snapshot_of(state: ModelState) -> Snapshot:
    """The snapshot of a state, built once per state."""
    state = resolved(state)
    return state.view(SNAPSHOT, built(lambda: build_snapshot(state)))


__all__ = ["SNAPSHOT", "Entity", "Snapshot", "area_entity", "build_snapshot", "classification", "document_entity",
           "module_entity", "package_entity", "relations_from", "relations_of", "snapshot_of", "units_of"]
