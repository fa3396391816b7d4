"""A state's retrieval projection patched from an ancestor's after an edit, equal to one built from nothing.

Building the projection reads every entity and relation of the repository (0.8 s on 15,000 files, and the
snapshot it reads another 0.3 s), and a search after an edit waited for it. Most edits change what a file says
and nothing of what it links to: then every entry but the edited file's (and the few that borrow its text) is
what it was, PageRank and edges included. `patched_projection` recognises that case and rebuilds only those
entries; anything else (a relation added or dropped, a title or classification changed, a path added or removed,
the configuration, the layout, a page with copies, the accepted enrichment) builds the projection whole, as
before. The lexical index is then updated in place (`docbridge.engine.retrieval.lexical.LexicalIndex.patched`).

What may be reused is checked, never assumed: an edited file's relations, merged as the snapshot merges them,
must hash as the outgoing edges `project` recorded for its entity (every one, `Projection.out_hashes`: an entry
keeps at most MAX_EDGES, and an edge to an entity that points back is recorded once), so the graph (PageRank,
edges, covered-by, mentioned-by, public surface) is the ancestor's. The hashes are stored beside a projection in
`.docbridge/index`, so one read from there is patched too. `tests/test_search_after_edit.py` compares patched
projections with fresh ones entry by entry, and their searches.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.model import DOCUMENT, MODULE, PACKAGE, entity_id
from docbridge.engine.base.overlay import enabled as overlay_enabled
from docbridge.engine.retrieval.project import (
    _ATTACH_ORDER,
    INDEX_NAMES,
    PROJECTION,
    README_NAMES,
    Entry,
    Projection,
    SnapshotHash,
    _entity_entry,
    _Graph,
    _limit,
    _mark_variants,
    attach_owners,
    edge_confidence,
    edges_hash,
    ranked,
)
from docbridge.engine.views.snapshot import (
    area_entity,
    document_entity,
    module_entity,
    package_entity,
    relations_from,
)

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState

PATCH_LIMIT = 64  # more changed files than this since the ancestor's projection: build it whole


def basis(state: ModelState) -> tuple[Any, ...]:
    """What a patch does not revisit: the configuration, the layout and the set of paths (their counters move
    whenever they change)."""
    return (state.root, state.config.content_hash(), state.structure.layout, state.structure.paths)


def with_basis(projection: Projection | None, state: ModelState) -> Projection | None:
    if projection is not None:
        projection.basis = basis(state)
    return projection


def patched_projection(state: ModelState) -> Projection | None:
    """The state's projection patched from the one an ancestor built, when every change since is one a patch
    covers (see the module's note); None otherwise."""
    seed = state.seed(PROJECTION.name)
    if seed is None or len(seed.changed) > PATCH_LIMIT:
        return None
    old: Projection = seed.value
    config = state.config
    if old.basis is None or old.basis != basis(state) or overlay_enabled(config):
        return None
    if old.weights != config.weights() or old.params != config.retrieval.params.tuned():
        return None
    owners = old.owners if old.owners is not None else _owners(old, config)
    replaced: dict[str, Entry] = {}
    for path in sorted(seed.changed):  # none: only text the model does not analyze changed (an ignored buffer)
        found = _patch_file(state, old, owners, path, replaced)
        if not found:
            return None
    positions = old.by_id.positions  # the same ids in the same places: shared
    entries = list(old.entries)
    changed = []
    for eid, entry in replaced.items():
        index = positions[eid]
        entries[index] = entry
        changed.append(index)
    projection = Projection(entries, old.weights, SnapshotHash(state), old.configuration_hash, old.overlay_hash,
                            params=old.params, basis=old.basis, owners=owners, out_hashes=old.out_hashes,
                            origin=(weakref.ref(old), tuple(sorted(changed))), positions=positions)
    return projection


def _owners(projection: Projection, config: Any) -> dict[str, list[Any]]:
    """Entity id -> the ownership records attached to it, worked out from the entries of a projection read from
    disk (as `project` does from the entities)."""
    units = ((e.id, e.path) for e in projection.entries
             if e.kind in _ATTACH_ORDER and not e.id.startswith("ownership:"))
    return attach_owners(config, units)[0]


def _graph_of(entry: Entry) -> _Graph:
    """The graph data an entry already records, for rebuilding its text alone."""
    return _Graph({entry.id: entry.pagerank}, {entry.id: entry.edges}, {entry.id: entry.covered_by},
                  {entry.id: entry.mentioned_by}, {entry.id} if entry.surface == "public" else set(),
                  {entry.id: entry.dependents})


def _out_hash(state: ModelState, path: str, eid: str) -> str | None:
    """The hash `project` records of an entity's outgoing edges, from the relations of its file."""
    found: dict[tuple[str, str], str] = {}
    for relation in relations_from(state, path):
        confidence = edge_confidence(relation) if ranked(relation) else None
        if confidence is not None:
            found.setdefault((relation.kind, relation.target), confidence)
    return edges_hash(found) if found else None


def _patch_file(state: ModelState, old: Projection, owners: dict[str, list[Any]], path: str,
                replaced: dict[str, Entry]) -> bool:
    """Rebuild the entries a changed file's text feeds into `replaced`; False when the change is one a patch
    does not cover."""
    universe = state.universe
    is_document, is_module = path in universe.documents, path in universe.modules
    document_id, module_id = entity_id(DOCUMENT, path), entity_id(MODULE, path)
    if (document_id in old.by_id) != is_document or (module_id in old.by_id) != is_module:
        return False  # a file became a document or a module, or stopped being one
    if not (is_document or is_module):
        return False  # a manifest, a configuration or a file the model does not analyze
    eid = document_id if is_document else module_id
    before = old.by_id[eid]
    if old.out_hashes is None or old.out_hashes.get(eid) != _out_hash(state, path, eid):
        return False
    entry = _rebuilt(state, owners, _entity(state, eid, before.path), before)
    if entry is None:
        return False  # what groups pages as copies, and what a directory or an area is called, may change
    if entry == before:
        return True  # re-resolved, and nothing it says changed (a page naming an edited module)
    replaced[eid] = entry
    if not is_document:
        return True
    if before.variant_of or before.variants:
        _regroup(state, old, entry, replaced)
    # entries that borrow the page's text: the units it is the agent document of, the package it is the README of,
    # the directory it is the index of
    for record_owner, records in owners.items():
        agent = records[0].agent_doc if records else None
        if agent and agent.removeprefix("./") == path and not _rebuild(state, old, owners, record_owner, replaced):
            return False
    directory, _, name = path.rpartition("/")
    if name in README_NAMES:
        for candidate in old.entries:
            if candidate.kind == PACKAGE and candidate.path == directory and not candidate.id.startswith(
                    "ownership:") and not _rebuild(state, old, owners, candidate.id, replaced):
                return False
    if name.lower() in INDEX_NAMES:
        _patch_directory(old, directory, entry, replaced)
    return True


def _regroup(state: ModelState, old: Projection, page: Entry, replaced: dict[str, Entry]) -> None:
    """Which copy of a page is canonical, chosen again among its copies (its length is one criterion)."""
    key = (page.path.rsplit("/", 1)[-1].lower(), page.title.strip().lower())
    documents = {e.path: e for e in old.entries if e.kind == DOCUMENT}  # where a `ref` or `canonical` may point
    members = [replace(replaced.get(e.id, e), variant_of=None, variants=0) for e in documents.values()
               if (e.path.rsplit("/", 1)[-1].lower(), e.title.strip().lower()) == key]
    _mark_variants(members, state, {m.id: m.pagerank for m in members}, documents)
    for member in members:
        current = replaced.get(member.id) or old.by_id[member.id]
        if (member.variant_of, member.variants) != (current.variant_of, current.variants) or member.id in replaced:
            replaced[member.id] = member


def _rebuild(state: ModelState, old: Projection, owners: dict[str, list[Any]], eid: str,
             replaced: dict[str, Entry]) -> bool:
    """Rebuild the text of another entity's entry (a unit whose agent document or README changed)."""
    before = replaced.get(eid) or old.by_id.get(eid)
    entry = _rebuilt(state, owners, _entity(state, eid, before.path), before) if before is not None else None
    if entry is None:
        return False
    replaced[eid] = entry
    return True


def _entity(state: ModelState, eid: str, path: str) -> Any:
    """The entity of a document, module, package or area as the snapshot would make it; None when gone."""
    universe = state.universe
    layout = universe.layout
    kind = eid.split(":", 1)[0]
    if kind == DOCUMENT:
        return document_entity(state, path, universe.documents[path]) if path in universe.documents else None
    if kind == MODULE:
        return module_entity(state, path, universe.modules[path]) if path in universe.modules else None
    if layout is None:
        return None
    if kind == PACKAGE:
        return next((package_entity(info) for info in layout.packages.values() if info.id == eid), None)
    return next((area_entity(area) for area in layout.areas.values() if area.id == eid), None)


def _rebuilt(state: ModelState, owners: dict[str, list[Any]], entity: Any, before: Entry) -> Entry | None:
    """An entity's entry with its text made again and its graph data and copies as `before` records them; None
    when its title or tags changed."""
    if entity is None:
        return None
    entry = _entity_entry(state, entity, owners.get(entity.id, []), _graph_of(before))
    if entry.title != before.title or entry.tags != before.tags:
        return None
    entry.variant_of, entry.variants = before.variant_of, before.variants
    return entry


def _patch_directory(old: Projection, directory: str, page: Entry,
                     replaced: dict[str, Entry]) -> None:
    """A directory entry's summary and hash are its index page's: the page of an index name in it whose entity
    comes first (project._directories takes the first of its members)."""
    entry = old.by_id.get(f"directory:{directory}")
    if entry is None:
        return
    pages = sorted(e.id for e in old.entries if e.kind == DOCUMENT and e.path.rpartition("/")[0] == directory
                   and e.path.rpartition("/")[2].lower() in INDEX_NAMES)
    if not pages or pages[0] != page.id:
        return
    fields = dict(entry.fields)
    fields["summary"] = _limit(page.summary or "", "summary")
    replaced[entry.id] = replace(entry, summary=page.summary, fields=fields, content_hash=page.content_hash)


__all__ = ["PATCH_LIMIT", "basis", "patched_projection", "with_basis"]
