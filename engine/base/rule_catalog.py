"""The codes of the governance gates (reconciliation, audit, parity, rules modes), merged into
`engine.base.findings.RULES` so every rendering (text, JSON, SARIF, the language server's codes page) knows them."""

from __future__ import annotations

from docbridge.engine.base.rule import Rule

RECONCILIATION_RULES: dict[str, Rule] = {rule.code: rule for rule in [
    Rule(code="RELATION_CONFIRMED", severity="info", title="Declared relation is observed",
         help="A relation declared under `docbridge.relations` is observed in the code with the declared "
              "detection."),
    Rule(code="DECLARED_RELATION_STALE", severity="warning", title="Declared relation is not observed",
         help="A `static` relation declared under `docbridge.relations` has no matching import in the code (or "
              "only a dynamic one). Update the declaration, or restore the import."),
    Rule(code="RELATION_NOT_ANALYZED", severity="info", title="Declared relation cannot be verified",
         help="A `dynamic` or `external` relation (or a relation kind the scanner does not observe) is declared "
              "and not observed; no analysis can confirm or refute it."),
    Rule(code="CONFLICTING_DECLARATIONS", severity="error", title="One relation declared with several detections",
         help="The same relation (from, to, kind) is declared with different `detection` values and not every "
              "one of them is observed. Keep the declaration that matches the code."),
    Rule(code="UNRESOLVED_ENTITY_REFERENCE", severity="error", title="Declared relation names an unknown entity",
         help="An endpoint of a relation under `docbridge.relations` names no module, area, package, document "
              "or ownership record."),
    Rule(code="DOCUMENTATION_ORPHANED", severity="info", title="Document declares no relation",
         help="The document is the source of no declared relation (reported only when asked for: "
              "`reconcile --include-orphaned` or `reconciliation.includeOrphanedDocuments`)."),
]}

MODE_RULES: dict[str, Rule] = {rule.code: rule for rule in [
    Rule(code="CENTRALITY_RISK", severity="info", title="Central module is undocumented",
         help="Under a rules mode: the module's normalised betweenness on the import graph reaches "
              "`rules.centralityThreshold` (many import paths run through it) and no document describes it or its "
              "area."),
    Rule(code="CRITICAL_PATH_RISK", severity="info", title="Finding on a critical path",
         help="Under a rules mode: a copy of a rule-mapped finding located in (or with evidence in) a path listed "
              "in `rules.criticalPaths`."),
]}

AUDIT_RULES: dict[str, Rule] = {rule.code: rule for rule in [
    Rule(code="GENERATED_DOCUMENT_FRESHNESS_UNVERIFIED", severity="info", title="Generated region cannot be verified",
         help="A generated region records no hash, or is never closed: whether it is current cannot be checked."),
    Rule(code="DOCUMENTATION_TITLE_MISSING", severity="warning", title="Document has no title",
         help="No `title:` in the frontmatter and no level-1 heading."),
    Rule(code="DOCUMENTATION_TOO_SHORT", severity="warning", title="Document is too short",
         help="Fewer words than `audit.minWords`."),
    Rule(code="DOCUMENTATION_EXAMPLE_MISSING", severity="warning", title="Document has no example",
         help="No fenced code block (`audit.requireExamples`)."),
    Rule(code="DOCUMENTATION_SECTIONS_MISSING", severity="warning", title="Document lacks required sections",
         help="A heading `audit.requiredSections` asks for (by path glob) is missing."),
    Rule(code="DOCUMENTATION_EXACT_DUPLICATE", severity="warning", title="Document repeats another",
         help="Its body after the frontmatter (whitespace collapsed, lowercased) equals another document's."),
    Rule(code="PACKAGE_DOCUMENTATION_MISSING", severity="warning", title="Package has no covering document",
         help="No document declares `covers` for a non-root package (for an area, in a single-package repository)."),
]}

GOVERNANCE_RULES: dict[str, Rule] = {**RECONCILIATION_RULES, **MODE_RULES, **AUDIT_RULES}
