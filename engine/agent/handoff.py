"""Handoffs: where to start, what to read, what to edit, what to run, what depends on it — for any entity.

`handoff_for_entity(workspace, ref)` answers for a package, an area, a module or a document, named by entity
id, ownership id, alias or repository-relative path (and for configured intent and change routes). Every
field says which relation produced it (`explain`), and the result is deterministic: equal inputs give
byte-identical JSON.

The payload is the original's AgentHandoffV1 (`engine/data/schemas/agent-handoff-v1.schema.json`), kept field
for field: `type: "agent-handoff"`, `schemaVersion: 1`, `source`, `target {type, id, path?, group?, layer?}`,
`startHere`, `readBeforeEditing`, `editRoots`, `checks`, `humanDoc` (only when the ownership record names one),
`bridge` (how the human guide stands, when there is one or a human corpus is configured) and `notes`; what we add
(`target.entityId`, `target.title`, `related`, `explain`, `evidence`, `metadata`) is an optional addition, as
the contract allows.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.model import AREA, CHANGE, DOCUMENT, INTENT, MODULE, PACKAGE, split_id
from docbridge.engine.base.safe_io import ARTIFACT_DIR
from docbridge.engine.retrieval.project import Entry, Projection, projection_of
from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState as Workspace

HANDOFF_TYPE = "agent-handoff"
SCHEMA_VERSION = 1
INDEX_SOURCE = f"{ARTIFACT_DIR}/index.json"  # `source`: the index the handoff answers from (`docbridge index`)
HUMAN_BOOTSTRAP = "docs/for-agents/human/{id}.md"  # where a missing human guide goes (the original's path)
# target.type is the contract's enum: a directory entry (ours alone) is handed off as the area-like unit it is
TARGET_TYPES = {AREA: "area", DOCUMENT: "document", MODULE: "module", PACKAGE: "package", INTENT: "intent",
                CHANGE: "change"}
MAX_READ = 2
MAX_RELATED = 3
VERIFY_SCRIPTS = ("test", "lint", "typecheck", "check")
LOCK_FILES = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("package-lock.json", "npm"))


class UnknownReference(Exception):
    """A reference that names nothing; the message lists the closest candidates."""

    def __init__(self, ref: str, candidates: list[str]) -> None:
        self.ref, self.candidates = ref, candidates
        hint = f" Closest: {', '.join(candidates)}." if candidates else ""
        super().__init__(f'Unknown entity "{ref}".{hint} Try `docbridge search "{ref}"`.')


# ------------------------------------------------------------------------------------------------ lookup


def resolve_ref(projection: Projection, ref: str) -> Entry:
    """Entry id, then ownership id, then alias, then the path of an area or package, then any path."""
    clean = ref.strip().removeprefix("./").rstrip("/") or ref.strip()
    entries = projection.entries
    if clean in projection.by_id:
        return projection.by_id[clean]
    owned = [e for e in entries if e.ownership_id == clean]
    if owned:
        return owned[0]
    if f"ownership:{clean}" in projection.by_id:
        return projection.by_id[f"ownership:{clean}"]
    aliased = [e for e in entries if clean in e.aliases] or [e for e in entries
                                                             if clean.lower() in {a.lower() for a in e.aliases}]
    if aliased:
        return sorted(aliased, key=_preference)[0]
    by_path = [e for e in entries if e.path == clean and e.kind in (AREA, PACKAGE)]
    if by_path:
        return sorted(by_path, key=_preference)[0]
    by_path = [e for e in entries if e.path == clean]
    if by_path:
        return sorted(by_path, key=_preference)[0]
    raise UnknownReference(ref, _closest(projection, clean))


def _preference(entry: Entry) -> tuple[int, str]:
    order = {PACKAGE: 0, AREA: 1, MODULE: 2, DOCUMENT: 3, INTENT: 4, CHANGE: 5}
    return order.get(entry.kind, 9), entry.id


def _closest(projection: Projection, ref: str) -> list[str]:
    names: dict[str, None] = {}
    for entry in projection.entries:
        names[entry.id] = None
        names[entry.path] = None
        for alias in entry.aliases:
            names[alias] = None
        if entry.ownership_id:
            names[entry.ownership_id] = None
    found = process.extract(ref, list(names), scorer=JaroWinkler.normalized_similarity, limit=5)
    return [name for name, _, _ in found]


# ------------------------------------------------------------------------------------------------ handoff


def handoff_for_entity(ws: Workspace, ref: str, projection: Projection | None = None, *,
                       include_caveats: bool = False) -> dict[str, Any]:
    """The handoff of `ref`; with `include_caveats` (a caller that asked for them, never by default) it carries
    `caveats` too (`handoff_caveats`)."""
    projection = projection or projection_of(ws)
    entry = resolve_ref(projection, ref)
    handoff = _handoff(ws, projection, entry)
    if include_caveats:
        handoff["caveats"] = handoff_caveats(ws, handoff)
    return handoff


def _handoff(ws: Workspace, projection: Projection, entry: Entry) -> dict[str, Any]:
    if entry.kind == INTENT:
        return _route_handoff(ws, entry, intent=True)
    if entry.kind == CHANGE:
        return _route_handoff(ws, entry, intent=False)
    record = next((r for r in ws.config.ownership if r.id == entry.ownership_id), None)

    picks, reasons = _start_here(ws, projection, entry, record)
    start_here = picks[0] if picks else None
    start_reason = reasons[0] if reasons else None
    if start_here is None:
        index = ws.config.corpus.agent.index
        if index and index.removeprefix("./") in ws.universe.documents:
            start_here, start_reason = index.removeprefix("./"), "no document covers or mentions it; the corpus " \
                                                                 "index is the fallback"
        else:
            start_here, start_reason = entry.path, "no document covers or mentions it; the target itself"
    read = picks[1:1 + MAX_READ]
    read_reasons = reasons[1:1 + MAX_READ]
    if "AGENTS.md" in ws.universe.documents and "AGENTS.md" not in read and start_here != "AGENTS.md":
        read.append("AGENTS.md")
        read_reasons.append("repository instructions for agents")

    edit_roots, edit_reason = _edit_roots(ws, entry, record)
    checks, checks_source, checks_reason = _checks(ws, entry, record)
    related = _related(ws, entry) if entry.kind != DOCUMENT else []
    human_doc = record.human_doc if record and record.human_doc else None
    bridge, missing_note = _bridge(ws, record)

    target_id = entry.ownership_id or entry.id
    target_type = "package" if entry.id.startswith("ownership:") else TARGET_TYPES.get(entry.kind, "area")
    target: dict[str, Any] = {"type": target_type, "id": target_id, "entityId": entry.id, "path": entry.path,
                              "title": entry.title}
    if record and record.group:
        target["group"] = record.group
    if record and record.layer:
        target["layer"] = record.layer
    hashes = {p: f.content_hash for p, f in ws.facts.items()}
    evidence: list[dict[str, Any]] = [_evidence(_evidence_source(entry.kind), entry.path, entry.content_hash,
                                                f"{entry.kind} {entry.id}")]
    for path, reason in list(zip(picks, reasons))[:3]:
        evidence.append(_evidence("documentation", path, hashes.get(path), reason))
    notes = [entry.summary] if entry.summary else []
    if missing_note:
        notes.append(missing_note)
    handoff: dict[str, Any] = {
        "type": HANDOFF_TYPE,
        "schemaVersion": SCHEMA_VERSION,
        "source": INDEX_SOURCE,
        "target": target,
        "startHere": start_here,
        "readBeforeEditing": read,
        "editRoots": edit_roots,
        "checks": checks,
    }
    if human_doc:  # the original omits it when there is none
        handoff["humanDoc"] = human_doc
    if bridge:
        handoff["bridge"] = bridge
    handoff.update({
        "notes": notes,
        "related": related,
        "explain": {"startHere": start_reason, "readBeforeEditing": read_reasons, "editRoots": [edit_reason],
                    "checks": [checks_reason],
                    "related": "module imports and re-exports that cross the unit's boundary, strongest first"
                    if entry.kind != DOCUMENT else "documents have no import relations"},
        "evidence": evidence,
        "metadata": {"entityId": entry.id, "kind": entry.kind, "checksSource": checks_source,
                     "confidence": entry.confidence, "areaId": entry.area_id, "packageId": entry.package_id},
    })
    return handoff


# ------------------------------------------------------------------------------------------------ caveats


MAX_CAVEATS = 16  # pending findings, and coverage limitations, each (`totals` counts them all)
MAX_TEXT, MAX_SCOPE = 2048, 1024  # a message or reason, a scope (the schema's bounds)
SEVERITY_ORDER = ("error", "warning", "info", "hint")


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _under(path: str, roots: list[str]) -> bool:
    return any(root in (".", "") or path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def handoff_caveats(ws: Workspace, handoff: dict[str, Any]) -> dict[str, Any]:
    """What an agent should know before it trusts a handoff, negotiated (only when asked for; the index and the
    default answers never carry it): the open findings (`pendingFindings`) in what the handoff sends the agent to
    (its start, what to read before editing, anything under its edit roots, the target entity itself), most
    severe first; the repository and the revision they were analyzed at (`analyzed`: the project's name and the
    snapshot's content hash); and the limits of that analysis there (`coverage`: files left unanalyzed, dynamic
    imports, unresolved relative imports, ambiguous symbols, parse errors...). Each list is bounded (MAX_CAVEATS;
    `totals` counts them all). Caveats only add: every other member of the handoff is the same without them, and
    an empty list says nothing was found, not that everything was checked."""
    from docbridge.engine.artifacts.index_file import project_name
    from docbridge.engine.views.reconcile import findings_of
    from docbridge.engine.views.snapshot import snapshot_of
    files = {p for p in (handoff.get("startHere"), *(handoff.get("readBeforeEditing") or ())) if p}
    roots = [r for r in handoff.get("editRoots") or () if r]
    entity = (handoff.get("metadata") or {}).get("entityId")
    pending = []
    for finding in findings_of(ws):
        path = finding.path or ""
        if not (path in files or (path and _under(path, roots)) or (entity and finding.entity == entity)):
            continue
        item: dict[str, Any] = {"id": f"finding:{finding.fingerprint}", "code": finding.code,
                                "severity": finding.severity, "message": _bounded(finding.message, MAX_TEXT)}
        if finding.path:
            item["path"] = finding.path
        if finding.range is not None:
            item["line"] = finding.range.start.line + 1
        pending.append(item)
    pending.sort(key=lambda f: (SEVERITY_ORDER.index(f["severity"]) if f["severity"] in SEVERITY_ORDER else 9,
                                f.get("path", ""), f.get("line", 0), f["code"], f["id"]))
    snapshot = snapshot_of(ws)
    coverage = []
    for skipped in snapshot.coverage.get("skipped", []):
        if _under(str(skipped.get("path", "")), roots) or skipped.get("path") in files:
            coverage.append({"scope": _bounded(f"skipped:{skipped['path']}", MAX_SCOPE),
                             "reason": _bounded(f"not analyzed: {skipped['reason']}", MAX_TEXT)})
    for note in snapshot.coverage.get("notes", []):
        scope = str(note.get("scope", ""))
        subject = scope.split(":", 1)[1] if ":" in scope else ""
        if subject and (_under(subject.split(":", 1)[0], roots) or subject.split(":", 1)[0] in files
                        or subject in files):
            coverage.append({"scope": _bounded(scope, MAX_SCOPE),
                             "reason": _bounded(str(note.get("reason")), MAX_TEXT)})
    coverage.sort(key=lambda c: c["scope"])
    return {"pendingFindings": pending[:MAX_CAVEATS],
            "analyzed": {"repository": project_name(ws), "revision": snapshot.content_hash,
                         "revisionKind": "snapshot-content-hash"},
            "coverage": coverage[:MAX_CAVEATS],
            "totals": {"pendingFindings": len(pending), "coverage": len(coverage)}}


def _evidence_source(kind: str) -> str:
    return "code" if kind == MODULE else "documentation" if kind == DOCUMENT else "derived"


def _evidence(source: str, path: str, content_hash: str | None, context: str) -> dict[str, Any]:
    """One evidence item: where it comes from (the contract's `code`, `documentation`, `configuration` or
    `derived`), the path, its content hash when known and why it is there."""
    item: dict[str, Any] = {"source": source, "path": path}
    if content_hash:
        item["contentHash"] = content_hash
    item["context"] = context
    return item


def _bridge(ws: Workspace, record: Any) -> tuple[dict[str, str] | None, str | None]:
    """How the unit's human guide stands, and the note that says one is missing: `linked` (the ownership record
    names a file), `external` (an http(s) address), `missing` (none, while a human corpus is configured; for an
    owned unit with the command that writes one at the original's bootstrap path). Nothing without either."""
    human_doc = record.human_doc if record is not None and record.human_doc else None
    if human_doc:
        return {"humanDoc": "external" if re.match(r"https?://", human_doc) else "linked"}, None
    if ws.config.corpus.human is None:
        return None, None
    if record is None:
        return {"humanDoc": "missing"}, None
    bootstrap = HUMAN_BOOTSTRAP.format(id=record.id)
    action = f"docbridge render ownership --record {shlex.quote(record.id)} --output {shlex.quote(bootstrap)}"
    return ({"humanDoc": "missing", "action": action, "bootstrap": bootstrap},
            f"Human guide missing for {record.id}. Run: {action}")


def ranked_documents(projection: Projection, ids: Iterable[str]) -> list[Entry]:
    """Document entries of `ids`, more canonical first (PageRank), then by id."""
    docs = [projection.by_id[i] for i in ids if i in projection.by_id and projection.by_id[i].kind == DOCUMENT]
    return sorted(docs, key=lambda d: (-d.pagerank, d.id))


def _ranked_docs(projection: Projection, ids: Iterable[str]) -> list[str]:
    return [d.path for d in ranked_documents(projection, ids)]


def _start_here(ws: Workspace, projection: Projection, entry: Entry, record: Any) -> tuple[list[str], list[str]]:
    picks: list[str] = []
    reasons: list[str] = []

    def add(path: str | None, reason: str) -> None:
        if path and path not in picks and path in ws.universe.documents:
            picks.append(path)
            reasons.append(reason)

    if record and record.agent_doc:
        add(record.agent_doc.removeprefix("./"), f"ownership {record.id} names it as the agent document")
    for path in _ranked_docs(projection, entry.covered_by):
        add(path, f"covers {entry.id}")
    for path in _ranked_docs(projection, entry.mentioned_by):
        add(path, f"mentions {entry.id}")
    if entry.kind == DOCUMENT:
        add(entry.path, "the target itself")
        for edge in entry.edges:
            if edge.kind == "links-to" and edge.direction == "out":
                add(split_id(edge.other)[1], f"{entry.id} links to it")
    if entry.kind == AREA:  # documents about the area's modules
        for module in (e for e in projection.entries if e.kind == MODULE and e.area_id == entry.id):
            for path in _ranked_docs(projection, module.covered_by + module.mentioned_by):
                add(path, f"mentions {module.id}, in {entry.id}")
    if entry.kind == MODULE and entry.area_id and entry.area_id in projection.by_id:
        area = projection.by_id[entry.area_id]
        for path in _ranked_docs(projection, area.covered_by + area.mentioned_by):
            add(path, f"documents {area.id}, which contains it")
    for pick in list(picks):  # one links-to hop: documents linking into a pick
        document = projection.by_id.get(f"{DOCUMENT}:{pick}")
        if document is None:
            continue
        linking = [e.other for e in document.edges if e.kind == "links-to" and e.direction == "in"]
        for path in _ranked_docs(projection, linking):
            add(path, f"links to {pick}")
    return picks, reasons


def _edit_roots(ws: Workspace, entry: Entry, record: Any) -> tuple[list[str], str]:
    layout = ws.universe.layout
    assert layout is not None
    if entry.kind == MODULE:
        if entry.area_id:
            return [split_id(entry.area_id)[1]], f"contained by area {entry.area_id}"
        package = layout.package_of(entry.path)
        if package is not None:
            return [package.directory], f"contained by package {package.id}"
        directory = entry.path.rsplit("/", 1)[0] if "/" in entry.path else "."
        return [directory], "the module's directory"
    if record is not None:
        return [record.path], f"ownership {record.id} path"
    return [entry.path], f"the {entry.kind} itself"


def _package_manager(ws: Workspace, directory: str, facts: Any) -> str:
    if facts is not None and facts.package_manager:
        return str(facts.package_manager.split("@", 1)[0])
    for probe in ([directory] if directory != "." else []) + ["."]:
        base = ws.root / probe
        for name, manager in LOCK_FILES:
            if (base / name).is_file():
                return manager
    root = ws.universe.layout.packages.get(".") if ws.universe.layout else None
    if root is not None and root.facts is not None and root.facts.package_manager:
        return str(root.facts.package_manager.split("@", 1)[0])
    return "npm"


def _script_command(manager: str, script: str, package: Any, workspace_member: bool) -> str:
    if not workspace_member:
        return f"{manager} test" if script == "test" else f"{manager} run {script}"
    name = package.name
    if manager == "pnpm":
        return f"pnpm --filter {name} {script}"
    if manager == "yarn":
        return f"yarn workspace {name} {script}"
    if manager == "bun":
        return f"bun run --filter {name} {script}"
    return f"npm test --workspace={name}" if script == "test" else f"npm run {script} --workspace={name}"


def _checks(ws: Workspace, entry: Entry, record: Any) -> tuple[list[str], str, str]:
    if record is not None and record.checks:
        return list(record.checks), "ownership", f"routing.options.ownership.{record.id}.checks"
    if entry.kind == DOCUMENT:
        return (["docbridge check"], "documentation",
                "a document is checked for broken links and anchors, unresolved mentions and malformed frontmatter")
    layout = ws.universe.layout
    assert layout is not None
    # an unowned unit inside an owned one inherits its checks
    for other in ws.config.ownership:
        if other.checks and (entry.path == other.path or entry.path.startswith(other.path + "/")):
            return list(other.checks), "ownership", f"inherited from ownership {other.id} ({other.path})"
    package = layout.package_by_id(entry.package_id) if entry.package_id else None
    if package is None and entry.kind == PACKAGE:
        package = layout.package_by_id(entry.id)
    if package is None:
        package = layout.package_of(entry.path)
    if package is None:
        return [], "none", "nothing declares checks: no ownership record and no package.json encloses it"
    facts = package.facts
    manager = _package_manager(ws, package.directory, facts)
    member = package.directory != "."
    scripts = dict(facts.scripts) if facts else {}
    chosen = [s for s in VERIFY_SCRIPTS if s in scripts]
    if chosen:
        return ([_script_command(manager, s, package, member) for s in chosen], "package-scripts",
                f"scripts {', '.join(chosen)} of {package.manifest or 'package.json'} ({manager})")
    return ([_script_command(manager, "test", package, member)], "default",
            f"{package.manifest or 'package.json'} declares no test, lint or typecheck script; {manager}'s default")


def _related(ws: Workspace, entry: Entry) -> list[dict[str, Any]]:
    """The strongest importing and imported units, with the imports that prove each."""
    layout = ws.universe.layout
    assert layout is not None

    def unit_of(module: str) -> str | None:
        if entry.kind == PACKAGE or entry.id.startswith("ownership:"):
            package = layout.package_of(module)
            return package.id if package else None
        area = layout.module_area.get(module)
        return f"{AREA}:{area}" if area else None

    if entry.kind == MODULE:
        unit = entry.area_id
    elif entry.kind == AREA:
        unit = entry.id
    else:
        unit = entry.id
    if unit is None:
        return []
    counts: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module_path, resolution in sorted(ws.modules.items()):
        source_unit = unit_of(module_path)
        for relation in resolution.relations:
            kind, target_path = split_id(relation.target)
            if kind != MODULE:
                continue
            target_unit = unit_of(target_path)
            if source_unit is None or target_unit is None or source_unit == target_unit:
                continue
            first = relation.evidence[0] if relation.evidence else None
            proof = f"{module_path}:{first.line + 1} → {target_path}" if first else f"{module_path} → {target_path}"
            if source_unit == unit:
                counts[(target_unit, "imports")].append(proof)
            elif target_unit == unit:
                counts[(source_unit, "imported-by")].append(proof)
    related = []
    for direction in ("imports", "imported-by"):
        ranked = sorted(((other, proofs) for (other, d), proofs in counts.items() if d == direction),
                        key=lambda item: (-len(item[1]), item[0]))
        for other, proofs in ranked[:MAX_RELATED]:
            kind, value = split_id(other)
            package = layout.package_by_id(other) if kind != AREA else None
            path = package.directory if package is not None else value
            related.append({"id": other, "path": path, "direction": direction, "strength": len(proofs),
                            "evidence": sorted(proofs)[:3]})
    return related


def _route_handoff(ws: Workspace, entry: Entry, intent: bool) -> dict[str, Any]:
    config_id = split_id(entry.id)[1]
    if intent:
        route = next(i for i in ws.config.intents if i.id == config_id)
        paths = list(route.paths)
        start, read, roots = (paths[0] if paths else None), paths[1:], []
    else:
        change = next(c for c in ws.config.changes if c.id == config_id)
        start = change.start_here
        read = [p for p in ("AGENTS.md", ws.config.corpus.agent.index) if p and p in ws.universe.documents]
        roots = [start] if start else []
    return {
        "type": HANDOFF_TYPE, "schemaVersion": SCHEMA_VERSION, "source": INDEX_SOURCE,
        "target": {"type": entry.kind, "id": config_id, "entityId": entry.id, "path": entry.path,
                   "title": entry.title},
        "startHere": start, "readBeforeEditing": read, "editRoots": roots, "checks": [],
        "notes": [entry.title] if entry.title else [],
        "related": [],
        "explain": {"startHere": f"the {entry.kind} route's first path" if intent else "the change route's startHere",
                    "readBeforeEditing": ["the route's other paths"] if intent else ["repository instructions"],
                    "editRoots": [] if intent else ["the change route's startHere"],
                    "checks": ["routes declare no checks"], "related": "routes have no import relations"},
        "evidence": [_evidence("configuration", "doc-bridge.config.json", None, f"{entry.kind} {config_id}")],
        "metadata": {"entityId": entry.id, "kind": entry.kind, "checksSource": "none",
                     "confidence": entry.confidence, "areaId": None, "packageId": None},
    }


def render_handoff_text(handoff: dict[str, Any]) -> str:
    """A readable card for people (`docbridge query REF --text`)."""
    target = handoff["target"]
    lines = [f"{target['title']}  ({target['type']} {target['id']}, {target['path']})"]
    if handoff["notes"]:
        lines.append(f"  {handoff['notes'][0]}")
    lines.append("")
    lines.append(f"Start here:          {handoff['startHere']}")
    lines.append(f"                     ↳ {handoff['explain']['startHere']}")
    for path, reason in zip(handoff["readBeforeEditing"], handoff["explain"]["readBeforeEditing"]):
        lines.append(f"Read before editing: {path}  ({reason})")
    lines.append(f"Edit only under:     {', '.join(handoff['editRoots']) or '—'}")
    lines.append(f"Run to check:        {'; '.join(handoff['checks']) or '—'}  "
                 f"[{handoff['metadata']['checksSource']}]")
    if handoff.get("humanDoc"):
        lines.append(f"Human guide:         {handoff['humanDoc']}")
    for relation in handoff["related"]:
        arrow = "→" if relation["direction"] == "imports" else "←"
        count = relation["strength"]
        lines.append(f"Related:             {arrow} {relation['path']} ({relation['direction']}, {count} "
                     f"import{'s' if count != 1 else ''}; e.g. {relation['evidence'][0]})")
    caveats = handoff.get("caveats")
    if caveats:
        totals, analyzed = caveats["totals"], caveats["analyzed"]
        lines.append(f"Analyzed:            {analyzed['repository']} at {analyzed['revision'][:16]}")
        lines.append(f"Open findings:       {totals['pendingFindings']}")
        for finding in caveats["pendingFindings"]:
            where = f"{finding['path']}:{finding['line']}" if "line" in finding else finding.get("path", "")
            lines.append(f"  {finding['severity']:<8} {where}  {finding['code']}: {finding['message']}")
        lines.append(f"Not analyzed:        {totals['coverage']}")
        lines += [f"  {item['scope']}: {item['reason']}" for item in caveats["coverage"]]
    return "\n".join(lines) + "\n"


__all__ = ["UnknownReference", "handoff_caveats", "handoff_for_entity", "render_handoff_text", "resolve_ref"]
