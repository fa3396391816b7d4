"""`docbridge audit`: the documentation audit (behaviours §8.3).

Per document: title missing, too short (`audit.minWords`), example missing (`audit.requireExamples`: no fenced
code block), sections missing (`audit.requiredSections`: glob -> headings), exact duplicates (the body after
the frontmatter, whitespace collapsed, lowercased), generated regions edited or unverifiable (no recorded
hash, or never closed), and the original's distinct `DOCBRIDGE_*` declaration codes. Per package (per area
when the repository has one package): documentation missing when no document declares `covers` for it. The
reconciliation codes are included under audit categories (UNDOCUMENTED: structure-gap, CONFLICTING and
UNRESOLVED: contradiction, STALE: stale, NOT_ANALYZED: limitation). One repository-level
`DOCUMENTATION_SEMANTICS_NOT_ANALYZED` says what an audit cannot see.

A finding is blocking when its severity is `error`, or when it is high-confidence and it (or its evidence) lies
in a configured critical path (`rules.criticalPaths`; it then becomes an error). Status: `blocked` when any
finding blocks, `needs-review` when any is a warning, else `pass`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

import pathspec
from docbridge.engine.base.findings import Finding, Location, Range, fingerprint
from docbridge.engine.base.model import AREA, PACKAGE, split_id

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState

# code -> (category, status, severity, confidence)
AUDIT_CODES: dict[str, tuple[str, str, str, str]] = {
    "GENERATED_DOCUMENT_FRESHNESS_UNVERIFIED": ("generated-freshness", "not-analyzed", "info", "low"),
    "GENERATED_REGION_EDITED": ("generated-freshness", "stale-or-unverified", "warning", "high"),
    "DOCUMENTATION_TITLE_MISSING": ("quality", "undocumented", "warning", "high"),
    "DOCUMENTATION_TOO_SHORT": ("quality", "undocumented", "warning", "high"),
    "DOCUMENTATION_EXAMPLE_MISSING": ("quality", "undocumented", "warning", "high"),
    "DOCUMENTATION_SECTIONS_MISSING": ("quality", "undocumented", "warning", "high"),
    "DOCUMENTATION_EXACT_DUPLICATE": ("redundancy", "unresolved", "warning", "high"),
    "PACKAGE_DOCUMENTATION_MISSING": ("coverage", "undocumented", "warning", "high"),
    "DOCUMENTATION_SEMANTICS_NOT_ANALYZED": ("limitation", "not-analyzed", "info", "low"),
}
RECONCILIATION_CATEGORY = {
    "RELATION_UNDOCUMENTED": ("structure-gap", "undocumented", "high"),
    "CONFLICTING_DECLARATIONS": ("contradiction", "conflict", "high"),
    "DECLARED_RELATION_STALE": ("stale", "stale-or-unverified", "high"),
    "RELATION_NOT_ANALYZED": ("limitation", "not-analyzed", "low"),
    "UNRESOLVED_ENTITY_REFERENCE": ("contradiction", "unresolved", "high"),
}
DECLARATION_CODES = (
    "DOCBRIDGE_FRONTMATTER_MALFORMED", "DOCBRIDGE_BLOCK_MALFORMED", "DOCBRIDGE_INDENTATION_INVALID",
    "DOCBRIDGE_FIELD_UNKNOWN", "DOCBRIDGE_COVERS_INVALID", "DOCBRIDGE_RELATIONS_INVALID",
    "DOCBRIDGE_REFERENCE_MISSING", "DOCBRIDGE_RELATION_INVALID", "DOCBRIDGE_FIELD_DUPLICATE",
    "DOCBRIDGE_STRUCTURE_INVALID", "DOCBRIDGE_CONTENT_MISSING", "DOCBRIDGE_RELATION_FIELD_MISSING",
    "DOCBRIDGE_DETECTION_INVALID", "DOCBRIDGE_DECLARATION_DUPLICATE", "DOCBRIDGE_DECLARATION_CONFLICT")
_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)
_SPACE = re.compile(r"\s+")


def _make(code: str, message: str, path: str | None, range_: Range | None, remediation: str, key: str,
          category: str, status: str, severity: str, confidence: str, *, related: list[Location] | None = None,
          data: dict[str, Any] | None = None) -> Finding:
    return Finding.model_construct(
        code=code, severity=severity, message=message, path=path, range=range_, entity=None, evidence=[],
        related=related or [], remediation=remediation, fingerprint=fingerprint(code, path, key),
        data={"category": category, "status": status, "confidence": confidence, **(data or {})})


def _audit_code(code: str, message: str, path: str | None, range_: Range | None, remediation: str, key: str,
                **extra: Any) -> Finding:
    category, status, severity, confidence = AUDIT_CODES[code]
    return _make(code, message, path, range_, remediation, key, category, status, severity, confidence, **extra)


def _body(text: str) -> str:
    if text.startswith("---"):
        parts = text.split("\n")
        for index in range(1, len(parts)):
            if parts[index].strip() in ("---", "..."):
                text = "\n".join(parts[index + 1:])
                break
    return _SPACE.sub(" ", text).strip().lower()


def document_audit(ws: ModelState, read: Any) -> list[Finding]:
    settings = ws.config.audit
    sections = [(pathspec.GitIgnoreSpec.from_lines([glob]), tuple(wanted))
                for glob, wanted in sorted(settings.required_sections.items())]
    out: list[Finding] = []
    bodies: dict[str, list[str]] = defaultdict(list)
    for path in sorted(ws.universe.documents.keys()):
        facts = ws.universe.documents[path]
        first_line = Range.of(0, 0, 0, 0)
        for issue in facts.issues:
            out.append(_make(issue.code, issue.message, path, Range.of(issue.line, issue.column, issue.end_line,
                                                                       issue.end_column),
                             "Fix the frontmatter; until then nothing in the block is used.",
                             f"{issue.code}:{issue.message}", "quality", "unresolved", "error", "high"))
        if not facts.title:
            out.append(_audit_code("DOCUMENTATION_TITLE_MISSING", f"`{path}` has no title (no `title:` in its "
                                   "frontmatter and no level-1 heading).", path, first_line,
                                   "Add a `# Title` heading or a `title:` to the frontmatter.", path))
        if facts.word_count < settings.min_words:
            out.append(_audit_code("DOCUMENTATION_TOO_SHORT", f"`{path}` has {facts.word_count} word"
                                   f"{'s' if facts.word_count != 1 else ''}; at least {settings.min_words} are "
                                   f"expected.", path, first_line,
                                   "Say what the reader needs to know, or merge it into a related document.", path,
                                   data={"words": facts.word_count, "minWords": settings.min_words}))
        text = read(path) or ""
        if settings.require_examples and not _FENCE.search(text):
            out.append(_audit_code("DOCUMENTATION_EXAMPLE_MISSING", f"`{path}` has no example (no fenced code "
                                   "block).", path, first_line, "Add a short fenced example of the usage it "
                                   "describes.", path))
        headings = {h.text.strip().lower() for h in facts.headings}
        missing = sorted({s for spec, wanted in sections if spec.match_file(path) for s in wanted
                          if s.strip().lower() not in headings})
        if missing:
            out.append(_audit_code("DOCUMENTATION_SECTIONS_MISSING", f"`{path}` lacks the section"
                                   f"{'s' if len(missing) != 1 else ''} {', '.join(missing)}.", path, first_line,
                                   f"Add the heading{'s' if len(missing) != 1 else ''} "
                                   f"{', '.join(f'`## {s}`' for s in missing)}.", path, data={"missing": missing}))
        for index, region in enumerate(facts.regions):
            where = Range.of(region.start_line, 0, region.end_line, 0)
            if region.edited and region.closed:
                out.append(_audit_code("GENERATED_REGION_EDITED", f"Generated region (lines {region.start_line + 1}"
                                       f"–{region.end_line + 1}) was edited by hand.", path, where,
                                       "Regenerate the region, or re-seal it if the edit is intended.",
                                       f"region#{index}"))
            elif region.recorded_hash is None or not region.closed:
                reason = "records no hash" if region.recorded_hash is None else "is never closed"
                out.append(_audit_code("GENERATED_DOCUMENT_FRESHNESS_UNVERIFIED",
                                       f"Generated region at line {region.start_line + 1} {reason}: whether it is "
                                       f"current cannot be verified.", path, where,
                                       "Regenerate it with its `hash=` and closing marker.", f"region#{index}"))
        body = _body(text)
        if body:
            bodies[body].append(path)
    for paths in bodies.values():
        for duplicate in paths[1:]:
            out.append(_audit_code(
                "DOCUMENTATION_EXACT_DUPLICATE", f"`{duplicate}` repeats `{paths[0]}` word for word.", duplicate,
                Range.of(0, 0, 0, 0), f"Keep one of them and link to it from the other (`{paths[0]}`).",
                f"{paths[0]}={duplicate}",
                related=[Location.model_construct(path=paths[0], range=Range.of(0, 0, 0, 0),
                                                  message="the same text", content_hash=None)],
                data={"original": paths[0]}))
    return out


def package_audit(ws: ModelState) -> list[Finding]:
    layout = ws.universe.layout
    assert layout is not None
    covered: set[str] = set()
    for resolution in ws.documents.values():
        for kind, target, _symbol in resolution.relation_keys:
            if kind == "covers":
                covered.add(target)
    out = []
    packages = [p for p in layout.packages.values() if p.directory != "."]
    if packages:
        for info in sorted(packages, key=lambda p: p.id):
            if info.id in covered:
                continue
            path = info.manifest or info.directory
            out.append(_audit_code("PACKAGE_DOCUMENTATION_MISSING", f"No document declares `covers` for package "
                                   f"`{info.name}`.", path, Range.of(0, 0, 0, 0),
                                   f"Add `covers: [{info.directory}]` to the frontmatter of its documentation.",
                                   info.id, data={"entity": info.id}))
        return out
    for path, area in sorted(layout.areas.items()):  # one package: its areas are the units
        if area.id in covered or any(split_id(c)[0] == AREA and path.startswith(split_id(c)[1] + "/")
                                     for c in covered):
            continue
        first = area.modules[0] if area.modules else path
        out.append(_audit_code("PACKAGE_DOCUMENTATION_MISSING", f"No document declares `covers` for area `{path}`.",
                               first, Range.of(0, 0, 0, 0),
                               f"Add `covers: [{path}]` to the frontmatter of the document that describes it.",
                               area.id, data={"entity": area.id}))
    return out


def reconciliation_audit(ws: ModelState, findings: list[Finding]) -> list[Finding]:
    from docbridge.engine.governance.reconciliation import reconcile
    settings = ws.config.reconciliation
    report = reconcile(ws, findings, settings.scope, settings.required_relation_kinds, False)
    out = []
    for item in report["diagnostics"]:
        mapped = RECONCILIATION_CATEGORY.get(item["code"])
        if mapped is None:
            continue
        category, status, confidence = mapped
        finding = Finding.model_validate({k: v for k, v in item.items() if k not in ("id", "status")})
        out.append(finding.model_copy(update={"data": {**finding.data, "category": category, "status": status,
                                                       "confidence": confidence}}))
    return out


def audit(ws: ModelState, findings: list[Finding], read: Any) -> dict[str, Any]:
    items = document_audit(ws, read) + package_audit(ws) + reconciliation_audit(ws, findings)
    items.append(_audit_code(
        "DOCUMENTATION_SEMANTICS_NOT_ANALYZED", "The audit checks structure, coverage and declarations; whether "
        "the prose is true is not analysed.", None, None, "Review what the documents claim.", "semantics"))
    critical = ws.config.rules.critical_paths
    spec = pathspec.GitIgnoreSpec.from_lines(list(critical)) if critical else None
    out = []
    for finding in items:
        blocking = finding.severity == "error"
        if spec is not None and finding.data.get("confidence") == "high":
            paths = [p for p in [finding.path, *(e.path for e in finding.evidence)] if p]
            if any(spec.match_file(p) for p in paths):
                blocking = True
                finding = finding.model_copy(update={"severity": "error"})
        out.append(finding.model_copy(update={"data": {**finding.data, "blocking": blocking}}))
    out.sort(key=lambda f: f.sort_key)
    if any(f.data["blocking"] for f in out):
        status = "blocked"
    elif any(f.severity in ("error", "warning") for f in out):
        status = "needs-review"
    else:
        status = "pass"
    return {"status": status, "findings": [f.model_dump(mode="json") for f in out],
            "summary": {"total": len(out), "byCode": dict(sorted(Counter(f.code for f in out).items())),
                        "byCategory": dict(sorted(Counter(f.data["category"] for f in out).items())),
                        "blocking": sum(1 for f in out if f.data["blocking"])}}


def documentation_metrics(ws: ModelState, report: dict[str, Any]) -> dict[str, Any]:
    """The counts of the original's `audit documentation` report (its `metrics`) that this audit can state:
    documents (with a title), the coverage units (packages, or areas when the repository has one package) and
    how many a document `covers`, and the findings by the categories the original counts."""
    layout = ws.universe.layout
    assert layout is not None
    packages = [p for p in layout.packages.values() if p.directory != "."]
    unit = "package" if packages else "area"
    units = len(packages) if packages else len(layout.areas)
    missing = sum(1 for f in report["findings"] if f["code"] == "PACKAGE_DOCUMENTATION_MISSING")
    documents = ws.universe.documents
    titled = sum(1 for facts in documents.values() if facts.title)
    categories = report["summary"]["byCategory"]
    return {"documentCount": len(documents), "documentsWithTitle": titled,
            "titleRate": round(titled / len(documents), 6) if documents else None,
            "coverageUnit": unit, "packageCount": units, "coveredPackageCount": units - missing,
            "coverageRate": round((units - missing) / units, 6) if units else None,
            "structureGapCount": categories.get("structure-gap", 0),
            "contradictionCount": categories.get("contradiction", 0), "staleCount": categories.get("stale", 0),
            "notAnalyzedCount": sum(1 for f in report["findings"] if f["data"]["status"] == "not-analyzed"),
            "blockingCount": report["summary"]["blocking"]}


def render_metrics(metrics: dict[str, Any]) -> str:
    """The metrics as the lines `audit documentation --text` prints before its status."""
    units = "Packages" if metrics["coverageUnit"] == "package" else "Areas"
    rate = f" ({metrics['coverageRate']:.1%})" if metrics["coverageRate"] is not None else ""
    return (f"Documents: {metrics['documentCount']} ({metrics['documentsWithTitle']} with a title)\n"
            f"{units} covered: {metrics['coveredPackageCount']}/{metrics['packageCount']}{rate}\n"
            f"Structure gaps: {metrics['structureGapCount']} · contradictions: {metrics['contradictionCount']} · "
            f"stale: {metrics['staleCount']} · not analysed: {metrics['notAnalyzedCount']}\n")


def render_text(report: dict[str, Any]) -> str:
    lines = []
    for f in report["findings"]:
        start = (f["range"] or {}).get("start", {"line": 0, "character": 0})
        where = f"{f['path']}:{start['line'] + 1}:{start['character'] + 1}" if f["path"] else "(repository)"
        mark = "  BLOCKING" if f["data"]["blocking"] else ""
        lines.append(f"{where}  {f['severity']:<7}  {f['code']}  [{f['data']['category']}]{mark}  {f['message']}")
        lines.append(f"      → {f['remediation']}")
    lines.append(f"audit: {report['status']} ({report['summary']['total']} findings, "
                 f"{report['summary']['blocking']} blocking)")
    return "\n".join(lines) + "\n"


__all__ = ["AUDIT_CODES", "DECLARATION_CODES", "PACKAGE", "audit", "documentation_metrics", "render_metrics",
           "render_text"]
