"""`docbridge suggest [--documentation]`: what a person (or an agent) could do next, as advice bound to the model.

The original's `suggest` ran the configured Registry agent over the snapshot and the reconciliation report (and,
with `--documentation`, the bounded documentation-audit context) and stored its typed, advisory proposal, bound to
the hashes of what it read. Here the agent runs in `docbridge enrich` alone (the only command that runs an agent),
so `suggest` lists the suggestions the model already holds, each bound to the same hashes:

- `graph`: seeded Louvain communities offered as areas when the layout is flat (`area_suggestions_of`);
- `overlay`: the enrichment proposals an agent made that wait for a person (`.docbridge/overlay.json`);
- `audit` (with `documentation`): what the documentation audit asks for, one suggestion per thing to do —
  fix a declaration, document an uncovered package or area, merge a duplicate, regenerate a region, improve a
  document (its quality findings together), declare a module's undocumented relations (together). Each names
  the audit findings it answers (`auditFindingIds`, their fingerprints).

Nothing is applied: a suggestion is taken through the usual flows (a person edits, `docbridge fix approve`,
`docbridge render`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.hashing import canonical_hash

if TYPE_CHECKING:
    from docbridge.engine.base.findings import Finding
    from docbridge.engine.state.model_state import ModelState

SCHEMA_VERSION = 1
# the order suggestions are listed in, after the blocking ones
KIND_ORDER = ("fix-declaration", "document-unit", "resolve-contradiction", "update-stale", "merge-duplicate",
              "regenerate", "improve-document", "suggest-area", "pending-proposal", "declare-relations")
QUALITY = {"DOCUMENTATION_TITLE_MISSING", "DOCUMENTATION_TOO_SHORT", "DOCUMENTATION_EXAMPLE_MISSING",
           "DOCUMENTATION_SECTIONS_MISSING"}
EXAMPLES = 5  # targets listed in a grouped suggestion
NOTE = ("Advice only: nothing is applied. Take a suggestion through the usual flows: edit the document, "
        "`docbridge fix approve|reject` a pending proposal, `docbridge render` a generated region.")


def _suggestion(kind: str, source: str, target: str, title: str, reason: str, action: str, *,
                key: str | None = None, blocking: bool = False, evidence: list[str] | None = None,
                **extra: Any) -> dict[str, Any]:
    return {"id": f"{kind}:{key or target}", "kind": kind, "source": source, "target": target, "title": title,
            "reason": reason, "action": action, "blocking": blocking, "evidence": evidence or [], **extra}


def _area_action(label: str) -> str:
    """How the configuration makes `label` an area: its parent folder as an area root (areas are the folders one
    level below a root, `analysis.areas.depth` 1)."""
    parent = label.rpartition("/")[0]
    if not parent:
        return (f"Put `{label}` under an area root (`analysis.areas.roots` in doc-bridge.config.json lists the "
                f"folders whose subfolders are areas).")
    return (f"Add `{parent}` to `analysis.areas.roots` in doc-bridge.config.json: its folders, `{label}` among them, "
            "become areas.")


def graph_suggestions(state: ModelState) -> list[dict[str, Any]]:
    from docbridge.engine.views.graph import area_suggestions_of
    return [_suggestion("suggest-area", "graph", s["label"], f"Make {s['label']} an area", s["reason"],
                        _area_action(s["label"]), evidence=list(s["modules"]), moduleCount=s["module_count"])
            for s in area_suggestions_of(state)]


def overlay_suggestions(state: ModelState) -> list[dict[str, Any]]:
    from docbridge.engine.base.overlay import read_overlay
    overlay = read_overlay(state.root)
    if overlay is None:
        return []
    out = []
    for proposal in overlay.pending:
        ident = str(proposal.get("proposalId", ""))
        kind = str(proposal.get("kind", "proposal"))
        target = str(proposal.get("entity", ""))
        paths = sorted({str(e["path"]) for e in proposal.get("evidence", []) if isinstance(e, dict) and "path" in e})
        out.append(_suggestion(
            "pending-proposal", "overlay", target, f"Decide the agent's {kind} proposal for {target}",
            str(proposal.get("reason", "")),
            f"`docbridge fix approve {ident} --by NAME` or `docbridge fix reject {ident} --by NAME`.",
            key=ident, evidence=paths, proposalId=ident, proposalKind=kind,
            origin=(proposal.get("origin") or {}).get("agentId")))
    return out


def _finding_target(finding: dict[str, Any]) -> str:
    return str(finding.get("path") or (finding.get("data") or {}).get("entity") or "(repository)")


def audit_suggestions(report: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    quality: dict[str, list[dict[str, Any]]] = defaultdict(list)
    gaps: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for finding in report["findings"]:
        code, data = finding["code"], finding["data"]
        category, blocking = data["category"], bool(data["blocking"])
        target = _finding_target(finding)
        ids = [finding["fingerprint"]]
        if category == "limitation":
            continue  # what the audit cannot see: nothing to do about it
        if code in QUALITY:
            quality[target].append(finding)
        elif category == "structure-gap":
            source = str(data.get("from") or "")
            gaps[source.split(":", 1)[-1] if source else target].append(finding)
        elif category == "coverage":
            unit = str(data.get("entity") or target)
            out.append(_suggestion("document-unit", "audit", unit, f"Document {unit.split(':', 1)[-1]}",
                                   finding["message"], finding["remediation"], blocking=blocking,
                                   evidence=[target], auditFindingIds=ids, code=code))
        elif category == "redundancy":
            out.append(_suggestion("merge-duplicate", "audit", target, f"Merge {target} into "
                                   f"{data.get('original', 'its original')}", finding["message"],
                                   finding["remediation"], blocking=blocking,
                                   evidence=[target, *([data["original"]] if data.get("original") else [])],
                                   auditFindingIds=ids, code=code))
        elif category == "generated-freshness":
            out.append(_suggestion("regenerate", "audit", target, f"Regenerate a region of {target}",
                                   finding["message"], finding["remediation"], key=f"{target}#{finding['fingerprint']}",
                                   blocking=blocking, evidence=[target], auditFindingIds=ids, code=code))
        elif category in ("contradiction", "stale"):
            kind = "resolve-contradiction" if category == "contradiction" else "update-stale"
            verb = "Resolve" if kind == "resolve-contradiction" else "Update"
            out.append(_suggestion(kind, "audit", target, f"{verb} a declaration in {target}",
                                   finding["message"], finding["remediation"],
                                   key=f"{target}#{finding['fingerprint']}", blocking=blocking, evidence=[target],
                                   auditFindingIds=ids, code=code))
        else:  # the declaration codes (DOCBRIDGE_*): the block is unusable until it is fixed
            out.append(_suggestion("fix-declaration", "audit", target, f"Fix the declarations of {target}",
                                   finding["message"], finding["remediation"], key=f"{target}#{finding['fingerprint']}",
                                   blocking=blocking, evidence=[target], auditFindingIds=ids, code=code))
    for path, items in sorted(quality.items()):
        codes = sorted({f["code"] for f in items})
        out.append(_suggestion(
            "improve-document", "audit", path, f"Improve {path}", " ".join(f["message"] for f in items),
            " ".join(dict.fromkeys(f["remediation"] for f in items)),
            blocking=any(f["data"]["blocking"] for f in items), evidence=[path],
            auditFindingIds=[f["fingerprint"] for f in items], codes=codes))
    for path, items in sorted(gaps.items()):
        targets = [f"{f['data'].get('kind', 'relation')} {str(f['data'].get('to') or '?').split(':', 1)[-1]}"
                   for f in items]
        shown = ", ".join(targets[:EXAMPLES]) + (f" and {len(targets) - EXAMPLES} more" if len(targets) > EXAMPLES
                                                  else "")
        out.append(_suggestion(
            "declare-relations", "audit", path,
            f"Declare {len(items)} relation{'s' if len(items) != 1 else ''} of {path}",
            f"`{path}` has {len(items)} observed relation{'s' if len(items) != 1 else ''} no document declares: "
            f"{shown}.",
            f"List {'them' if len(items) != 1 else 'it'} under `docbridge.relations` (from: {path}) in the document "
            f"that describes `{path}`.", blocking=any(f["data"]["blocking"] for f in items),
            evidence=sorted({f["path"] for f in items if f["path"]}),
            auditFindingIds=[f["fingerprint"] for f in items], relationCount=len(items)))
    return out


def _order(suggestion: dict[str, Any]) -> tuple[int, int, str, str]:
    kind = suggestion["kind"]
    rank = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
    return (0 if suggestion["blocking"] else 1, rank, suggestion["target"], suggestion["id"])


def suggestions(state: ModelState, findings: list[Finding], read: Callable[[str], str | None], *,
                documentation: bool = False, limit: int | None = None) -> dict[str, Any]:
    """Every suggestion the model holds (with `documentation`, the audit's too), most pressing first."""
    from docbridge.engine.views.snapshot import snapshot_of
    listed = graph_suggestions(state) + overlay_suggestions(state)
    payload: dict[str, Any] = {"type": "suggestions", "schemaVersion": SCHEMA_VERSION,
                               "baseSnapshotHash": snapshot_of(state).content_hash, "documentation": documentation}
    if documentation:
        from docbridge.engine.governance.audit import audit
        report = audit(state, findings, read)
        payload["baseDocumentationAuditHash"] = canonical_hash(report)
        payload["auditStatus"] = report["status"]
        listed += audit_suggestions(report)
    listed.sort(key=_order)
    shown = listed if limit is None else listed[:limit]
    by_source: dict[str, int] = {"graph": 0, "overlay": 0, **({"audit": 0} if documentation else {})}
    for item in listed:
        by_source[item["source"]] += 1
    layout = state.universe.layout
    payload.update({"total": len(listed), "count": len(shown), "truncated": len(shown) < len(listed),
                    "bySource": by_source, "areas": len(layout.areas) if layout is not None else 0,
                    "suggestions": shown, "note": NOTE})
    return payload


def render_text(payload: dict[str, Any]) -> str:
    lines = []
    for number, item in enumerate(payload["suggestions"], start=1):
        mark = "  BLOCKING" if item["blocking"] else ""
        lines.append(f"{number:>2}. [{item['kind']}] {item['title']}{mark}")
        if item["reason"]:
            lines.append(f"    {item['reason']}")
        lines.append(f"    → {item['action']}")
    if not payload["suggestions"]:
        lines.append("No suggestions.")
        lines.append(f"  graph: the layout has {payload['areas']} area{'s' if payload['areas'] != 1 else ''}; "
                     "communities are offered as areas only when it is flat.")
        lines.append("  overlay: no enrichment proposal waits for a person (`docbridge enrich` asks the configured "
                     "agent).")
        if not payload["documentation"]:
            lines.append("  `docbridge suggest --documentation` adds what the documentation audit asks for.")
    counts = ", ".join(f"{n} from the {source}" for source, n in payload["bySource"].items())
    more = f", {payload['total'] - payload['count']} more not shown (--limit)" if payload["truncated"] else ""
    lines.append(f"suggest: {payload['total']} suggestion{'s' if payload['total'] != 1 else ''} ({counts}){more}. "
                 "Advice only: nothing is applied.")
    return "\n".join(lines) + "\n"


__all__ = ["audit_suggestions", "graph_suggestions", "overlay_suggestions", "render_text", "suggestions"]
