"""The view model each template receives: plain dicts, lists and strings (the sandbox gets nothing callable).

Every list is sorted and nothing carries a time, so equal models give equal views. `llms.txt`, `area` and
`ownership` read the model state; `change-digest` compares two snapshots; `overlay-review` reads an overlay
file's `pending` proposals."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from docbridge.engine.artifacts.index_file import project_name as index_project_name
from docbridge.engine.base.findings import Finding
from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, entity_id, split_id
from docbridge.engine.base.safe_io import MAX_ARTIFACT_BYTES, read_regular
from docbridge.engine.discovery.layout import AreaInfo
from docbridge.engine.render.templating import RenderError
from docbridge.engine.state.model_state import ModelState

MAX_SYMBOLS = 12
GENERATED_CODES = frozenset({"GENERATED_REGION_EDITED", "GENERATED_REGION_STALE"})
_PAGE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def page_file_name(value: str) -> str:
    """`src/query` → `src-query.md`: runs outside `[A-Za-z0-9._-]` become `-`, leading `-`/`.` and trailing
    `-` trimmed, `root` when nothing is left."""
    name = _PAGE_NAME.sub("-", value).lstrip("-.").rstrip("-")
    return (name or "root") + ".md"


def project_name(state: ModelState) -> str:
    """The name `llms.txt` heads with: the index's `project.name` (the root manifest's name, else the root
    directory's)."""
    return index_project_name(state)


def _one_line(text: str | None) -> str | None:
    if not text:
        return None
    return " ".join(text.split())


# ------------------------------------------------------------------------------------------ llms.txt


DEFAULT_AGENT_ROOT = "docs/for-agents"  # the agent corpus when `corpus.agent.root` is not set (as classification)


def agent_corpus(state: ModelState) -> list[str]:
    """The agent reading list: every document under `corpus.agent.root` (default `docs/for-agents`), by path.
    A root of `.` is the whole repository."""
    root = (state.config.corpus.agent.root or DEFAULT_AGENT_ROOT).strip().replace("\\", "/")
    root = root.removeprefix("./").strip("/")
    if root in ("", "."):
        return sorted(state.universe.documents)
    return sorted(path for path in state.universe.documents if path.startswith(root + "/"))


def llms_view(state: ModelState) -> dict[str, Any]:
    """The agent corpus (`agent_corpus`), as `docbridge index` writes `llms.txt`: title (its title, else the
    file name) and summary of each document under the agent root. The rest of the documentation is in
    `.docbridge/index.json` (`knowledge[]`), not here."""
    documents = []
    for path in agent_corpus(state):
        facts = state.universe.documents[path]
        documents.append({"path": path, "title": _one_line(facts.title) or path.rsplit("/", 1)[-1],
                          "description": _one_line(facts.summary)})
    return {"project": project_name(state), "documents": documents}


# ------------------------------------------------------------------------------------------ area


_REASONS = {("covers", AREA): "covers area", ("covers", MODULE): "covers module",
            ("mentions", AREA): "mentions area", ("mentions", MODULE): "mentions module"}
_REASON_ORDER = ("covers area", "covers module", "mentions area", "mentions module")


def _documenting(state: ModelState) -> dict[str, list[tuple[str, str]]]:
    """Entity id -> (document, relation kind) of every covers/mentions relation: read once per state."""
    def build() -> dict[str, list[tuple[str, str]]]:
        index: dict[str, list[tuple[str, str]]] = {}
        for document, resolution in state.documents.items():
            for kind, target, _symbol in resolution.relation_keys:
                if kind in ("covers", "mentions"):
                    index.setdefault(target, []).append((document, kind))
        return index
    return state.view("render:documenting", build)


def _documents_of(state: ModelState, paths: dict[str, str]) -> list[dict[str, Any]]:
    """Documents that cover or mention one of `paths` (entity id -> kind), the first reason winning (covers
    area, covers module, mentions area, mentions module), sorted by path."""
    found: dict[str, str] = {}

    def add(document: str, reason: str) -> None:
        current = found.get(document)
        if current is None or _REASON_ORDER.index(reason) < _REASON_ORDER.index(current):
            found[document] = reason

    index = _documenting(state)
    for target, kind in paths.items():
        for document, relation_kind in index.get(target, ()):
            add(document, _REASONS[(relation_kind, kind)])
    for record in state.config.ownership:  # an ownership record's agent document covers its unit
        doc = (record.agent_doc or "").removeprefix("./")
        owned = state.entity_for_path(record.path)
        if doc in state.universe.documents and owned in paths:
            add(doc, _REASONS[("covers", paths[owned])])
    out = []
    for document in sorted(found):
        facts = state.universe.documents.get(document)
        out.append({"path": document, "title": _one_line(facts.title if facts else None) or document,
                    "reason": found[document]})
    return out


def _enclosing_areas(areas: Any, path: str | None) -> list[str]:
    """Every area path that is `path` or one of its directories."""
    if not path:
        return []
    parts = path.split("/")
    return [prefix for prefix in ("/".join(parts[:n]) for n in range(1, len(parts) + 1)) if prefix in areas]


def _findings_by_area(state: ModelState, findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """Area path -> the findings touching it (its entity or one of its modules, a path or evidence under it),
    built once per state (the findings listed are a function of the state)."""
    def build() -> dict[str, list[Finding]]:
        layout = state.universe.layout
        assert layout is not None
        areas = layout.areas
        index: dict[str, list[Finding]] = {}
        for finding in findings:
            if finding.code in GENERATED_CODES:
                continue
            touched: set[str] = set()
            if finding.entity:
                kind, value = split_id(finding.entity)
                if kind == AREA and value in areas:
                    touched.add(value)
                elif kind == MODULE and value in layout.module_area:
                    touched.add(layout.module_area[value])
            for path in [finding.path, *(e.path for e in finding.evidence)]:
                touched.update(_enclosing_areas(areas, path))
            for area in touched:
                index.setdefault(area, []).append(finding)
        return index
    return state.view("render:findings-by-area", build)


def _open_findings(state: ModelState, findings: Iterable[Finding], directory: str) -> list[dict[str, Any]]:
    out = []
    for finding in _findings_by_area(state, findings).get(directory, ()):
        line = finding.range.start.line + 1 if finding.range is not None else None
        location = (f"{finding.path}:{line}" if line is not None else finding.path) if finding.path else None
        out.append({"code": finding.code, "severity": finding.severity, "message": finding.message,
                    "path": finding.path, "line": line, "location": location})
    out.sort(key=lambda f: (f["path"] or "", f["line"] or 0, f["code"], f["message"]))
    return out


def _unit(kind: str, eid: str, path: str, package_id: str | None) -> SimpleNamespace:
    return SimpleNamespace(kind=kind, id=eid, path=path, package_id=package_id, area_id=eid if kind == AREA else None)


def _area_imports(state: ModelState) -> dict[str, dict[tuple[str, str], list[str]]]:
    """Area id -> (other area id, "imports" | "imported-by") -> proofs, read once per state; the same counts
    the handoff's related units give for an area."""
    def build() -> dict[str, dict[tuple[str, str], list[str]]]:
        layout = state.universe.layout
        assert layout is not None
        index: dict[str, dict[tuple[str, str], list[str]]] = {}
        for module_path, resolution in sorted(state.modules.items()):
            source_area = layout.module_area.get(module_path)
            for relation in resolution.relations:
                kind, target_path = split_id(relation.target)
                if kind != MODULE:
                    continue
                target_area = layout.module_area.get(target_path)
                if source_area is None or target_area is None or source_area == target_area:
                    continue
                first = relation.evidence[0] if relation.evidence else None
                proof = f"{module_path}:{first.line + 1} → {target_path}" if first else f"{module_path} → {target_path}"
                source, target = f"{AREA}:{source_area}", f"{AREA}:{target_area}"
                index.setdefault(source, {}).setdefault((target, "imports"), []).append(proof)
                index.setdefault(target, {}).setdefault((source, "imported-by"), []).append(proof)
        return index
    return state.view("render:area-imports", build)


def _related(state: ModelState, unit: SimpleNamespace) -> list[dict[str, Any]]:
    from docbridge.engine.agent.handoff import MAX_RELATED
    from docbridge.engine.agent.handoff import _related as related
    if unit.kind != AREA:
        return [{"id": r["id"], "path": r["path"], "direction": r["direction"], "strength": r["strength"],
                 "evidence": list(r["evidence"])} for r in related(state, unit)]  # type: ignore[arg-type]  # rows of `related` carry their fields as JSON values
    counts = _area_imports(state).get(unit.id, {})
    out = []
    for direction in ("imports", "imported-by"):
        ranked = sorted(((other, proofs) for (other, d), proofs in counts.items() if d == direction),
                        key=lambda item: (-len(item[1]), item[0]))
        for other, proofs in ranked[:MAX_RELATED]:
            out.append({"id": other, "path": split_id(other)[1], "direction": direction, "strength": len(proofs),
                        "evidence": sorted(proofs)[:3]})
    return out


def _checks(state: ModelState, unit: SimpleNamespace, record: Any) -> list[str]:
    from docbridge.engine.agent.handoff import _checks as checks
    return list(checks(state, unit, record)[0])  # type: ignore[arg-type]  # a record of the ownership table, as `checks` reads it


def area_keys(state: ModelState) -> list[str]:
    layout = state.universe.layout
    return sorted(layout.areas) if layout is not None else []


def area_view(state: ModelState, path: str, findings: Iterable[Finding]) -> dict[str, Any]:
    layout = state.universe.layout
    assert layout is not None
    area: AreaInfo | None = layout.areas.get(path)
    if area is None:
        raise RenderError(f"There is no area {path!r}; the areas are: {', '.join(sorted(layout.areas)) or 'none'}.")
    record = next((r for r in state.config.ownership if r.id == area.ownership_id), None)
    modules = []
    for module in sorted(area.modules):
        facts = state.universe.modules.get(module)
        names = sorted({e.name for e in facts.exports if e.name != "*"}) if facts is not None else []
        more = max(0, len(names) - MAX_SYMBOLS)
        text = ", ".join(f"`{n}`" for n in names[:MAX_SYMBOLS]) + (f" and {more} more" if more else "")
        modules.append({"path": module, "symbols": names[:MAX_SYMBOLS], "more": more, "symbols_text": text})
    targets = {area.id: AREA, **{entity_id(MODULE, m): MODULE for m in area.modules}}
    purpose = (record.purpose if record is not None and record.purpose else None) or \
        f"Code area grouping {len(area.modules)} module(s) under `{area.path}`."
    unit = _unit(AREA, area.id, area.path, area.package_id)
    return {
        "project": project_name(state),
        "area": {"id": area.id, "path": area.path, "name": area.name, "package": area.package_id,
                 "ownership": area.ownership_id},
        "purpose": purpose,
        "modules": modules,
        "documents": _documents_of(state, targets),
        "related": _related(state, unit),
        "checks": _checks(state, unit, record),
        "findings": _open_findings(state, findings, area.path),
    }


# ------------------------------------------------------------------------------------------ ownership


def ownership_keys(state: ModelState) -> list[str]:
    return sorted(r.id for r in state.config.ownership)


def ownership_view(state: ModelState, record_id: str) -> dict[str, Any]:
    record = next((r for r in state.config.ownership if r.id == record_id), None)
    if record is None:
        raise RenderError(f"There is no ownership record {record_id!r}; the records are: "
                          f"{', '.join(ownership_keys(state)) or 'none'}.")
    layout = state.universe.layout
    assert layout is not None
    target = state.entity_for_path(record.path)
    area = layout.areas.get(record.path)
    targets: dict[str, str] = {}
    if area is not None:
        targets = {area.id: AREA, **{entity_id(MODULE, m): MODULE for m in area.modules}}
    elif target is not None and split_id(target)[0] == MODULE:
        targets = {target: MODULE}
    documents = _documents_of(state, targets)
    agent_doc = (record.agent_doc or "").removeprefix("./") or None
    human_doc = record.human_doc
    start = agent_doc if agent_doc in state.universe.documents else None
    if start is None and documents:
        start = documents[0]["path"]
    if start is None:
        index = (state.config.corpus.agent.index or "").removeprefix("./")
        start = index if index in state.universe.documents else None
    read = [d for d in documents if d["path"] != start]
    package = layout.package_of(record.path)
    unit = _unit(AREA if area is not None else (split_id(target)[0] if target else AREA),
                 target or entity_id(AREA, record.path), record.path,
                 area.package_id if area is not None else (package.id if package else None))
    return {
        "project": project_name(state),
        "record": {"id": record.id, "path": record.path, "purpose": record.purpose, "group": record.group,
                   "layer": record.layer, "agentDoc": agent_doc, "humanDoc": human_doc},
        "observed": target is not None,
        "startHere": start,
        "read": read,
        "editRoots": [record.path],
        "checks": _checks(state, unit, record),
        "related": _related(state, unit) if target is not None else [],
    }


# ------------------------------------------------------------------------------------------ change digest


REVIEW_KINDS = ("covers", "mentions", "mentions-symbol", "links-to")


def change_digest_view(previous: dict[str, Any], current: dict[str, Any], previous_name: str) -> dict[str, Any]:
    """Entities whose content hash moved between two snapshots (as JSON objects), and the documents that
    cover, mention or link to something that moved without moving themselves."""
    def file_backed(snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out = {}
        for entity in snapshot.get("entities", []):
            if isinstance(entity, dict) and entity.get("content_hash") and entity.get("path") \
                    and entity.get("kind") in (DOCUMENT, MODULE, "package"):
                out[str(entity["id"])] = entity
        return out

    before, after = file_backed(previous), file_backed(current)

    def row(entity: dict[str, Any]) -> dict[str, Any]:
        return {"id": entity["id"], "kind": entity["kind"], "path": entity["path"]}

    changed = [row(e) for i, e in after.items() if i in before and before[i]["content_hash"] != e["content_hash"]]
    added = [row(e) for i, e in after.items() if i not in before]
    removed = [row(e) for i, e in before.items() if i not in after]
    for rows in (changed, added, removed):
        rows.sort(key=lambda r: (r["path"], r["id"]))
    moved = {r["id"]: r["path"] for r in changed + added}
    reasons: dict[str, list[str]] = {}
    for relation in current.get("relations", []):
        source, target, kind = relation.get("source"), relation.get("target"), relation.get("kind")
        if kind not in REVIEW_KINDS or target not in moved or source in moved:
            continue
        if not isinstance(source, str) or not source.startswith(DOCUMENT + ":"):
            continue
        reason = f"{kind} `{moved[target]}`"
        found = reasons.setdefault(split_id(source)[1], [])
        if reason not in found:
            found.append(reason)
    review = [{"path": path, "reason": "; ".join(sorted(reasons[path]))} for path in sorted(reasons)]
    return {
        "previous": {"name": previous_name, "revision": str(previous.get("content_hash", ""))[:16]},
        "current": {"revision": str(current.get("content_hash", ""))[:16]},
        "total": len(after),
        "changed": changed, "added": added, "removed": removed,
        "review": review,
    }


# ------------------------------------------------------------------------------------------ overlay review


def _evidence_link(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item["path"]:
        raise RenderError(f"{where}: each evidence item must be an object with a `path` string.")
    path = item["path"]
    start, end = item.get("lineStart"), item.get("lineEnd")
    for name, value in (("lineStart", start), ("lineEnd", end)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise RenderError(f"{where}: `{name}` must be a positive integer.")
    if start is not None and end is not None and end != start:
        label, anchor = f"{path}:{start}-{end}", f"{path}#L{start}-L{end}"
    elif start is not None or end is not None:
        line = start if start is not None else end
        label, anchor = f"{path}:{line}", f"{path}#L{line}"
    else:
        label, anchor = path, path
    return {"path": path, "lineStart": start, "lineEnd": end, "label": label, "target": anchor,
            "link": f"[{label}]({anchor})"}


def overlay_review_view(overlay: Path, shown: str) -> dict[str, Any]:
    """The pending proposals of an overlay file, sorted by kind then entity; `exists` false when there is no
    file. Only `pending` is read: it must be an array of objects with `proposalId`, `kind` and `entity`."""
    if not overlay.is_file():
        return {"overlay": shown, "exists": False, "pending": []}
    try:
        raw = json.loads(read_regular(overlay, MAX_ARTIFACT_BYTES).decode("utf-8"))  # never through a link
    except (OSError, UnicodeDecodeError) as exc:
        raise RenderError(f"{shown} cannot be read: {exc}.") from None
    except json.JSONDecodeError as exc:
        raise RenderError(f"{shown}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}.") from None
    if not isinstance(raw, dict):
        raise RenderError(f"{shown}: the top level must be a JSON object.")
    pending = raw.get("pending", [])
    if not isinstance(pending, list):
        raise RenderError(f"{shown}: `pending` must be an array.")
    items = []
    for index, item in enumerate(pending):
        where = f"{shown}: pending[{index}]"
        if not isinstance(item, dict):
            raise RenderError(f"{where} must be an object.")
        for key in ("proposalId", "kind", "entity"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise RenderError(f"{where}: `{key}` must be a non-empty string.")
        confidence = item.get("confidence")
        if confidence is not None and not isinstance(confidence, (str, int, float)):
            raise RenderError(f"{where}: `confidence` must be a string or a number.")
        reason = item.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise RenderError(f"{where}: `reason` must be a string.")
        evidence = item.get("evidence", [])
        if not isinstance(evidence, list):
            raise RenderError(f"{where}: `evidence` must be an array.")
        items.append({"proposalId": item["proposalId"], "kind": item["kind"], "entity": item["entity"],
                      "reason": _one_line(reason), "confidence": confidence,
                      "evidence": [_evidence_link(e, f"{where}.evidence[{n}]") for n, e in enumerate(evidence)]})
    items.sort(key=lambda p: (p["kind"], p["entity"], p["proposalId"]))
    return {"overlay": shown, "exists": True, "pending": items}
