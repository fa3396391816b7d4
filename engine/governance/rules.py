"""Rules modes (behaviours §8.2): findings mapped to rules, whose severity the mode decides.

`check --mode default|recommended|strict` (or `rules.mode` in the configuration) maps each finding code to a
rule and gives every rule-mapped finding the mode's severity: `default` → info, `recommended` → warning
(`not-analyzed-coverage` info), `strict` → error (`not-analyzed-coverage` warning); `rules.overrides` sets one
rule's severity (`error`, `warn`, `info`) or drops it (`off`). A mode also adds `CENTRALITY_RISK` for each
module whose normalised betweenness on the import graph reaches `rules.centralityThreshold` and that no
document names, and a `CRITICAL_PATH_RISK` copy of every rule-mapped finding located in (or with evidence
in) a configured critical path. Each rule-mapped finding gets the id `<diagnosticId>:<ruleId>`.

Codes without a rule (link integrity, malformed frontmatter, cycles, `RELATION_CONFIRMED`,
`DOCUMENTATION_ORPHANED`) keep their severity. Without a mode, findings are left exactly as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pathspec
from docbridge.engine.base.findings import Finding, Location, Range, fingerprint
from docbridge.engine.base.model import MODULE, entity_id, split_id
from docbridge.engine.governance.names import RULES_MODES
from docbridge.engine.views.reverse import documented_by_of

if TYPE_CHECKING:
    from docbridge.engine.base.config import RulesConfig
    from docbridge.engine.state.model_state import ModelState

MODES = RULES_MODES
RULE_OF: dict[str, str] = {
    "RELATION_UNDOCUMENTED": "graph-undocumented-relation",
    "AREA_UNDOCUMENTED": "graph-undocumented-relation",
    "DECLARED_RELATION_STALE": "declared-unobserved-relation",
    "UNRESOLVED_ENTITY_REFERENCE": "unresolved-reference",
    "COVERS_TARGET_MISSING": "unresolved-reference",
    "CONFLICTING_DECLARATIONS": "conflicting-declaration",
    "RELATION_NOT_ANALYZED": "not-analyzed-coverage",
    "GENERATED_REGION_EDITED": "freshness",
    "DOCBRIDGE_BLOCK_INVALID": "documentation-quality",
    "GENERATED_DOCUMENT_FRESHNESS_UNVERIFIED": "freshness",
    "OWNERSHIP_PATH_UNOBSERVED": "ownership",
    "DOCUMENTATION_TITLE_MISSING": "documentation-quality",
    "DOCUMENTATION_TOO_SHORT": "documentation-quality",
    "DOCUMENTATION_EXAMPLE_MISSING": "documentation-quality",
    "DOCUMENTATION_SECTIONS_MISSING": "documentation-quality",
    "DOCUMENTATION_EXACT_DUPLICATE": "documentation-quality",
    "PACKAGE_DOCUMENTATION_MISSING": "stale-documentation",
    "CENTRALITY_RISK": "centrality-risk",
    "CRITICAL_PATH_RISK": "critical-path-risk",
}
RULE_IDS = tuple(sorted(set(RULE_OF.values())))
_OVERRIDE = {"error": "error", "warn": "warning", "info": "info"}
CENTRALITY_SAMPLES = 32


def mode_severity(mode: str, rule: str) -> str:
    if mode == "strict":
        return "warning" if rule == "not-analyzed-coverage" else "error"
    if mode == "recommended":
        return "info" if rule == "not-analyzed-coverage" else "warning"
    return "info"


def diagnostic_id(finding: Finding) -> str:
    from docbridge.engine.governance.reconciliation import RECONCILIATION_CODES
    family = "reconciliation" if finding.code in RECONCILIATION_CODES else "check"
    return f"{family}:{finding.code}:{finding.fingerprint}"


def centrality_findings(ws: ModelState, threshold: float) -> list[Finding]:
    from docbridge.engine.views.graph import _nx
    nx = _nx()
    graph = nx.DiGraph()
    edges = sorted({(path, split_id(r.target)[1]) for path, resolution in ws.modules.items()
                    for r in resolution.relations if r.kind in ("imports", "re-exports")
                    and split_id(r.target)[0] == MODULE and split_id(r.target)[1] != path})
    graph.add_nodes_from(sorted({n for e in edges for n in e}))
    graph.add_edges_from(edges)
    if graph.number_of_nodes() < 3:
        return []
    # exact up to 400 modules; above, estimated from a seeded sample of source modules (a review signal, not a
    # ranking input: 32 sources keep `check --mode` on 5,000 modules within seconds)
    k = CENTRALITY_SAMPLES if graph.number_of_nodes() > 400 else None
    scores = nx.betweenness_centrality(graph, k=k, seed=20260401 if k else None, normalized=True)
    documented = documented_by_of(ws)
    out = []
    for module, score in sorted(scores.items()):
        score = round(score, 6)
        if score < threshold or score == 0:
            continue
        if documented.get(entity_id(MODULE, module)):
            continue
        importers = sorted(graph.predecessors(module))
        out.append(Finding.model_construct(
            code="CENTRALITY_RISK", severity="info",
            message=f"`{module}` lies on many import paths (betweenness {score:.3f}, {len(importers)} importer"
                    f"{'s' if len(importers) != 1 else ''}) and no document describes it.",
            path=module, range=Range.of(0, 0, 0, 0), entity=entity_id(MODULE, module),
            evidence=[Location.model_construct(path=p, range=Range.of(0, 0, 0, 0), message="imports it",
                                               content_hash=None) for p in importers[:8]],
            related=[],
            remediation=f"Describe `{module}` (mention its path or an export) in the document about its area.",
            fingerprint=fingerprint("CENTRALITY_RISK", module, module), data={"betweenness": score}))
    return out


def _critical(finding: Finding, spec: pathspec.GitIgnoreSpec) -> bool:
    paths = [finding.path] if finding.path else []
    paths += [e.path for e in finding.evidence]
    return any(spec.match_file(p) for p in paths if p)


def apply_mode(ws: ModelState, findings: list[Finding], mode: str, settings: RulesConfig) -> list[Finding]:
    """The findings under a rules mode (a new list; findings are never changed in place)."""
    extra = centrality_findings(ws, settings.centrality_threshold)
    spec = pathspec.GitIgnoreSpec.from_lines(list(settings.critical_paths)) if settings.critical_paths else None
    out: list[Finding] = []

    def ruled(finding: Finding, rule: str) -> Finding | None:
        override = settings.overrides.get(rule)
        if override == "off":
            return None
        severity = _OVERRIDE[override] if override else mode_severity(mode, rule)
        ident = f"{diagnostic_id(finding)}:{rule}"
        return finding.model_copy(update={"severity": severity, "data": {**finding.data, "id": ident,
                                                                         "rule": rule}})

    for finding in [*findings, *extra]:
        rule = RULE_OF.get(finding.code)
        if rule is None:
            out.append(finding)
            continue
        mapped = ruled(finding, rule)
        if mapped is not None:
            out.append(mapped)
        if spec is not None and _critical(finding, spec):
            copy = finding.model_copy(update={
                "code": "CRITICAL_PATH_RISK",
                "message": f"On a critical path: {finding.message}",
                "fingerprint": fingerprint("CRITICAL_PATH_RISK", finding.path, finding.fingerprint),
                "data": {**finding.data, "source_code": finding.code}})
            critical = ruled(copy, "critical-path-risk")
            if critical is not None:
                out.append(critical)
    out.sort(key=lambda f: f.sort_key)
    return out


def effective_mode(requested: str | None, settings: RulesConfig) -> str | None:
    return requested or settings.mode


__all__ = ["MODES", "RULE_IDS", "RULE_OF", "apply_mode", "centrality_findings", "effective_mode", "mode_severity"]


def describe() -> dict[str, Any]:
    return {"modes": list(MODES), "rules": {code: rule for code, rule in sorted(RULE_OF.items())}}
