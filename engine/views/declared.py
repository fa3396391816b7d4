"""Declared against observed: each relation a document declares in its frontmatter (`docbridge.relations`),
matched to the imports the scanner observed (behaviours §8.1).

A declared relation `from -> to` of kind `imports` (or `re-exports`) is observed when a module inside `from`
(the module itself, every module of an area or of a package) has that relation to a module inside `to`.
Detection: an observed `import()` is `dynamic`; every other import form is `static`. One declaration gets one
outcome, located at the declaration:

* `RELATION_CONFIRMED` — observed with the declared detection;
* `DECLARED_RELATION_STALE` — declared `static`, not observed (or observed only dynamically);
* `RELATION_NOT_ANALYZED` — declared `dynamic`/`external` and not observed, or a kind the scanner does not
  observe;
* `CONFLICTING_DECLARATIONS` — one (from, to, kind) declared with several detections, not all observed
  (reported once, at the first of them, instead of an outcome per declaration);
* `UNRESOLVED_ENTITY_REFERENCE` — an endpoint resolves to nothing.

Coverage gate: when a module inside `from` was not analysed (too large, unreadable), a stale outcome is not
reported (a relation no one could observe is not known to be missing).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.findings import RULES, Finding, Location, Range, fingerprint
from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, PACKAGE, Evidence, MarkdownFacts, split_id
from docbridge.engine.base.rule_catalog import RECONCILIATION_RULES as GOVERNANCE_RULES

if TYPE_CHECKING:
    from docbridge.engine.discovery.resolve import DocumentResolution
    from docbridge.engine.state.model_state import ModelState

OBSERVED_KINDS = frozenset({"imports", "re-exports"})



def _finding(code: str, message: str, path: str | None, range_: Range | None, remediation: str, key: str, *,
             entity: str | None = None, evidence: list[Location] | None = None,
             related: list[Location] | None = None, data: dict[str, Any] | None = None) -> Finding:
    return Finding.model_construct(
        code=code, severity=RULES[code].severity, message=message, path=path, range=range_, entity=entity,
        evidence=evidence or [], related=related or [], remediation=remediation,
        fingerprint=fingerprint(code, path, key), data=data or {})


def members(ws: ModelState, entity: str) -> frozenset[str] | None:
    """The modules an entity stands for (None for an entity that holds no modules: a document)."""
    kind, value = split_id(entity)
    if kind == MODULE:
        return frozenset({value})
    layout = ws.universe.layout
    if layout is None:
        return None
    if kind == AREA:
        # every module under an area's path belongs to it or to one of its nested areas (engine.discovery.layout)
        prefix = value + "/"
        return frozenset(m for path, area in layout.areas.items() if path == value or path.startswith(prefix)
                         for m in area.modules)
    if kind == PACKAGE:
        info = layout.package_by_id(entity)
        if info is None:
            return None
        return frozenset(m for m in ws.modules if (p := layout.package_of(m)) is not None and p.id == entity)
    return None


def detection_of(import_kind: str) -> str:
    return "dynamic" if import_kind == "dynamic" else "static"


def observed_between(ws: ModelState, sources: frozenset[str], targets: frozenset[str],
                     kind: str) -> dict[str, list[Evidence]]:
    """Observed `kind` relations from a module of `sources` to a module of `targets` (outside `sources`): the
    evidence per detection."""
    out: dict[str, list[Evidence]] = defaultdict(list)
    for module in sorted(sources):
        resolution = ws.modules.get(module)
        if resolution is None:
            continue
        for relation in resolution.relations:
            if relation.kind != kind:
                continue
            target_kind, target = split_id(relation.target)
            if target_kind != MODULE or target not in targets or target in sources:
                continue
            facts = ws.universe.modules.get(module)
            by_span = {}
            if facts is not None:
                by_span = {(i.line, i.column): i.kind for i in facts.imports}
            for ev in relation.evidence:
                out[detection_of(by_span.get((ev.line, ev.column), "static"))].append(ev)
    return dict(out)


def _not_analysed(ws: ModelState, sources: frozenset[str]) -> bool:
    return any(path in ws.skipped for path in sources)


def _decl_range(declaration: Any) -> Range:
    return Range.of(declaration.line, declaration.column, declaration.line, declaration.end_column)


def _label(entity: str) -> str:
    kind, value = split_id(entity)
    return value if kind in (MODULE, AREA, DOCUMENT) else entity


def declared_findings(ws: ModelState, resolution: DocumentResolution, facts: MarkdownFacts) -> list[Finding]:
    """The reconciliation outcome of every relation the document declares."""
    path = facts.path
    out: list[Finding] = []
    groups: dict[tuple[str, str, str], list[tuple[int, Any]]] = defaultdict(list)
    for index, source, target in resolution.declared_endpoints:
        declaration = facts.declarations[index]
        kind = declaration.relation_kind or "imports"
        if source is None or target is None:
            missing = declaration.ref if source is None else declaration.target
            out.append(_finding(
                "UNRESOLVED_ENTITY_REFERENCE",
                f"Declared relation endpoint `{missing}` matches no module, area, package, document or ownership "
                f"record.", path, _decl_range(declaration),
                "Point the endpoint at an existing path or entity id, or remove the declaration.",
                f"{declaration.ref}->{declaration.target}:{kind}",
                data={"from": declaration.ref, "to": declaration.target, "kind": kind, "missing": missing}))
            continue
        groups[(source, target, kind)].append((index, declaration))
    for (source, target, kind), declarations in groups.items():
        detections = sorted({d.detection or "static" for _, d in declarations})
        sources, targets = members(ws, source), members(ws, target)
        observed: dict[str, list[Evidence]] = {}
        analysable = kind in OBSERVED_KINDS and sources is not None and targets is not None
        if analysable:
            assert sources is not None and targets is not None
            observed = observed_between(ws, sources, targets, kind)
        relation = f"`{_label(source)}` {kind} `{_label(target)}`"
        data = {"from": source, "to": target, "kind": kind}
        key = f"{source}->{target}:{kind}"
        evidence = [Location.model_construct(path=e.path, range=Range.of(e.line, e.column, e.end_line, e.end_column),
                                             message=f"observed ({d})", content_hash=None)
                    for d in sorted(observed) for e in observed[d][:8]]
        first = declarations[0][1]
        if len(detections) > 1 and not all(d in observed for d in detections):
            out.append(_finding(
                "CONFLICTING_DECLARATIONS",
                f"{relation} is declared with detections {', '.join(detections)}; observed: "
                f"{', '.join(sorted(observed)) or 'none'}.", path, _decl_range(first),
                "Keep one declaration, with the detection the code shows.", key,
                evidence=evidence,
                related=[Location.model_construct(path=path, range=_decl_range(d), message="also declared here",
                                                  content_hash=None) for _, d in declarations[1:]],
                data={**data, "detections": detections, "observed": sorted(observed)}))
            continue
        for _, declaration in declarations:
            detection = declaration.detection or "static"
            item_key = f"{key}:{detection}"
            item_data = {**data, "detection": detection, "observed": sorted(observed)}
            if detection in observed:
                out.append(_finding(
                    "RELATION_CONFIRMED", f"Declared relation {relation} ({detection}) is observed.", path,
                    _decl_range(declaration), "Nothing to do.", item_key, evidence=evidence, data=item_data))
            elif not analysable or detection != "static":
                reason = ("the scanner does not observe this kind of relation" if not analysable else
                          f"no analysis observes {detection} relations")
                out.append(_finding(
                    "RELATION_NOT_ANALYZED", f"Declared relation {relation} ({detection}) cannot be verified: "
                    f"{reason}.", path, _decl_range(declaration),
                    "Keep it if it holds at run time; no check can confirm it.", item_key, data=item_data))
            elif sources is not None and _not_analysed(ws, sources):
                continue  # coverage gate
            else:
                message = ("Declared static relation has incompatible observed evidence" if observed else
                           "Declared static relation was not observed")
                out.append(_finding(
                    "DECLARED_RELATION_STALE", f"{message}: {relation}.", path, _decl_range(declaration),
                    "Remove or update the declaration, or restore the import it describes.", item_key,
                    evidence=evidence, data=item_data))
    return out


__all__ = ["GOVERNANCE_RULES", "OBSERVED_KINDS", "declared_findings", "detection_of", "members",
           "observed_between"]
