"""`docbridge reconcile`: declared against observed relations for the whole repository, at a scope.

The declared side is what `engine.views.declared` reports per document (the same findings `check` and the language
server show). The observed side aggregates every observed relation to the scope (`file`/`module`: modules,
`area`: the area of each module, else its package; `package`: packages; self-relations dropped) and reports
`RELATION_UNDOCUMENTED` for an aggregated relation no resolved declaration covers. With
`include_orphaned`, each document that declares no relation is `DOCUMENTATION_ORPHANED`. The summary counts
the diagnostics and gives each package a documentation status: missing, stale, unverified or fresh
(behaviours §8.1).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.findings import Finding, Location, Range, fingerprint
from docbridge.engine.base.model import AREA, MODULE, PACKAGE, Evidence, entity_id, split_id
from docbridge.engine.base.rule_catalog import RECONCILIATION_RULES
from docbridge.engine.governance.names import RECONCILIATION_SCOPES
from docbridge.engine.views.declared import members

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState

SCOPES = RECONCILIATION_SCOPES
RECONCILIATION_CODES = tuple(RECONCILIATION_RULES)
STATUS = {"RELATION_CONFIRMED": "confirmed", "RELATION_UNDOCUMENTED": "undocumented",
          "DECLARED_RELATION_STALE": "stale-or-unverified", "RELATION_NOT_ANALYZED": "not-analyzed",
          "CONFLICTING_DECLARATIONS": "conflict", "UNRESOLVED_ENTITY_REFERENCE": "unresolved",
          "DOCUMENTATION_ORPHANED": "undocumented"}
MAX_EVIDENCE = 64


def diagnostic_id(finding: Finding) -> str:
    return f"reconciliation:{finding.code}:{finding.fingerprint}"


def _container(ws: ModelState, module: str, scope: str) -> str:
    layout = ws.universe.layout
    assert layout is not None
    if scope == "area":
        area = layout.module_area.get(module)
        if area is not None:
            return entity_id(AREA, area)
    if scope in ("area", "package"):
        package = layout.package_of(module)
        if package is not None:
            return package.id
    return entity_id(MODULE, module)


def _label(entity: str) -> str:
    kind, value = split_id(entity)
    return value if kind in (MODULE, AREA) else entity


def _declarations(ws: ModelState) -> list[tuple[frozenset[str], frozenset[str], str]]:
    out = []
    for path, resolution in sorted(ws.documents.items()):
        facts = ws.universe.documents.get(path)
        if facts is None:
            continue
        for index, source, target in resolution.declared_endpoints:
            if source is None or target is None:
                continue
            sources, targets = members(ws, source), members(ws, target)
            if sources and targets:
                out.append((sources, targets, facts.declarations[index].relation_kind or "imports"))
    return out


def undocumented_findings(ws: ModelState, scope: str, required: tuple[str, ...] | None) -> list[Finding]:
    kinds = set(required) if required is not None else {"imports", "re-exports"}
    declared = _declarations(ws)
    groups: dict[tuple[str, str, str], list[tuple[str, str, tuple[Evidence, ...]]]] = defaultdict(list)
    for module in sorted(ws.modules):
        for relation in ws.modules[module].relations:
            target_kind, target = split_id(relation.target)
            if relation.kind not in kinds or target_kind != MODULE:
                continue
            a, b = _container(ws, module, scope), _container(ws, target, scope)
            if a == b:
                continue
            groups[(a, b, relation.kind)].append((module, target, relation.evidence))
    out = []
    for (a, b, kind), edges in sorted(groups.items()):
        if any(m1 in s and m2 in t and kind == k for m1, m2, _ in edges for s, t, k in declared):
            continue
        evidence = sorted((e for _, _, ev in edges for e in ev), key=lambda e: (e.path, e.line, e.column))
        first = evidence[0]
        modules = sorted({m for m, _, _ in edges})
        out.append(Finding.model_construct(
            code="RELATION_UNDOCUMENTED", severity="warning",
            message=f"`{_label(a)}` {kind} `{_label(b)}` ({len(evidence)} import{'s' if len(evidence) != 1 else ''}"
                    f" in {len(modules)} module{'s' if len(modules) != 1 else ''}), and no document declares it.",
            path=first.path, range=Range.of(first.line, first.column, first.end_line, first.end_column),
            entity=a, evidence=[Location.model_construct(path=e.path, range=Range.of(e.line, e.column, e.end_line,
                                                                                      e.end_column),
                                                         message=kind, content_hash=None)
                                for e in evidence[:MAX_EVIDENCE]],
            related=[], remediation=f"Declare it under `docbridge.relations` (from: {_label(a)}, to: {_label(b)}, "
                                    f"kind: {kind}) in the document that describes `{_label(a)}`.",
            fingerprint=fingerprint("RELATION_UNDOCUMENTED", None, f"{scope}:{a}->{b}:{kind}"),
            data={"from": a, "to": b, "kind": kind, "scope": scope, "aggregatedRelationCount": len(edges),
                  "aggregatedEvidenceCount": len(evidence), "evidenceTruncated": len(evidence) > MAX_EVIDENCE}))
    return out


def orphaned_findings(ws: ModelState) -> list[Finding]:
    out = []
    for path, resolution in sorted(ws.documents.items()):
        if any(s is not None and t is not None for _, s, t in resolution.declared_endpoints):
            continue
        out.append(Finding.model_construct(
            code="DOCUMENTATION_ORPHANED", severity="info",
            message=f"`{path}` declares no relation between the things it documents.",
            path=path, range=Range.of(0, 0, 0, 0), entity=None, evidence=[], related=[],
            remediation="Declare the relations it describes under `docbridge.relations` in its frontmatter.",
            fingerprint=fingerprint("DOCUMENTATION_ORPHANED", path, path), data={}))
    return out


def _packages_of(ws: ModelState, entity: str | None) -> set[str]:
    layout = ws.universe.layout
    if entity is None or layout is None:
        return set()
    kind, value = split_id(entity)
    if kind == PACKAGE:
        return {entity}
    if kind in (MODULE, AREA):
        package = layout.package_of(value)
        return {package.id} if package else set()
    return set()


def package_status(ws: ModelState, diagnostics: list[Finding]) -> dict[str, str]:
    layout = ws.universe.layout
    assert layout is not None
    declared: set[str] = set()
    for resolution in ws.documents.values():
        for kind, covered, _symbol in resolution.relation_keys:
            if kind == "covers":
                declared |= _packages_of(ws, covered)
        for _, _source, target in resolution.declared_endpoints:
            if target is not None:
                declared |= _packages_of(ws, target)
    touched: dict[str, set[str]] = defaultdict(set)
    for finding in diagnostics:
        for key in ("from", "to"):
            for package in _packages_of(ws, finding.data.get(key)):
                touched[package].add(STATUS[finding.code])
    out = {}
    for info in sorted(layout.packages.values(), key=lambda p: p.id):
        statuses = touched.get(info.id, set())
        if info.id not in declared:
            out[info.id] = "missing"
        elif statuses & {"conflict", "stale-or-unverified"}:
            out[info.id] = "stale"
        elif statuses & {"undocumented", "unresolved", "not-analyzed"}:
            out[info.id] = "unverified"
        else:
            out[info.id] = "fresh"
    return out


def reconcile(ws: ModelState, findings: list[Finding], scope: str, required: tuple[str, ...] | None,
              include_orphaned: bool) -> dict[str, Any]:
    """The report: `findings` are the workspace's (their declared-side codes are kept as they are)."""
    declared_side = [f for f in findings if f.code in RECONCILIATION_CODES and f.code != "RELATION_UNDOCUMENTED"]
    diagnostics = declared_side + undocumented_findings(ws, scope, required)
    if include_orphaned:
        diagnostics += orphaned_findings(ws)
    diagnostics.sort(key=diagnostic_id)
    by_code = Counter(f.code for f in diagnostics)
    by_status = Counter(STATUS[f.code] for f in diagnostics)
    documented = {f.path for f in declared_side if f.code != "UNRESOLVED_ENTITY_REFERENCE"}
    statuses = package_status(ws, diagnostics)
    summary: dict[str, Any] = {
        "scope": scope,
        "entityCount": len(ws.modules) + len(ws.documents),
        "diagnosticCount": len(diagnostics),
        "diagnosticsByCode": dict(sorted(by_code.items())),
        "diagnosticsByStatus": dict(sorted(by_status.items())),
        "documentation": {"documentCount": len(ws.documents), "documentedDocumentCount": len(documented),
                          "packageCount": len(statuses), "packageStatus": statuses},
    }
    if required is not None:
        summary["requiredRelationKinds"] = list(required)
    return {"diagnostics": [{"id": diagnostic_id(f), "status": STATUS[f.code], **f.model_dump(mode="json")}
                            for f in diagnostics], "summary": summary}


def render_text(report: dict[str, Any]) -> str:
    lines = []
    for d in report["diagnostics"]:
        start = (d["range"] or {}).get("start", {"line": 0, "character": 0})
        lines.append(f"{d['path'] or '(repository)'}:{start['line'] + 1}:{start['character'] + 1}  "
                     f"{d['severity']:<7}  {d['code']}  {d['message']}")
        lines.append(f"      → {d['remediation']}")
    summary = report["summary"]
    lines.append(f"{summary['diagnosticCount']} diagnostic{'s' if summary['diagnosticCount'] != 1 else ''} at "
                 f"{summary['scope']} scope: " + (", ".join(f"{n} {s}" for s, n in
                                                             summary["diagnosticsByStatus"].items()) or "none"))
    docs = summary["documentation"]
    lines.append(f"documents declaring relations: {docs['documentedDocumentCount']}/{docs['documentCount']}")
    for package, status in docs["packageStatus"].items():
        lines.append(f"  {package}: {status}")
    return "\n".join(lines) + "\n"


__all__ = ["RECONCILIATION_CODES", "SCOPES", "STATUS", "diagnostic_id", "reconcile", "render_text"]
