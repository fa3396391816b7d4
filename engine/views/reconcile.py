"""Reconciliation: the findings of a workspace, located in the files a person would fix.

Document findings come from each document's resolution (links, mentions, declarations, regions) and are
memoised per resolution, so after an edit only the re-resolved documents are recomputed. Repository
findings (undocumented areas and area-to-area imports, unobserved ownership paths, import cycles) come
from the graph and are recomputed only when the module graph or the documentation of areas changed.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
import weakref
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pathspec
from docbridge.engine.base.config import CONFIG_FILE
from docbridge.engine.base.findings import RULES, Finding, Location, Range, fingerprint
from docbridge.engine.base.heap import built
from docbridge.engine.base.memo import ViewKey
from docbridge.engine.base.model import AREA, DOCUMENT, MODULE, Evidence, MarkdownFacts, entity_id, split_id
from docbridge.engine.discovery.files import file_kind
from docbridge.engine.discovery.resolve import DocumentResolution, Reference
from docbridge.engine.discovery.roles import (
    CHANGELOG_DOCUMENTS,
    HISTORY_DOCUMENTS,
    OWN_PROJECT_ROLES,
    UNCHECKED_DOCUMENT_ROLES,
)
from docbridge.engine.discovery.universe import EMPTY
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.transitions import resolved
from docbridge.engine.views.declared import declared_findings
from docbridge.engine.views.graph import import_cycles, runtime_import_graph, type_only
from immutables import Map

DOCUMENTING_KINDS = frozenset({"mentions", "mentions-symbol", "covers", "links-to"})


def _range(span: Any) -> Range:
    return Range.of(span.line, span.column, span.end_line, span.end_column)


def _evidence_location(evidence: Evidence, message: str | None = None) -> Location:
    # repository findings name places, not file versions: no content hash, so an edit that moves no import
    # leaves them as they are
    return Location.model_construct(path=evidence.path, range=_range(evidence), message=message, content_hash=None)


def _finding(code: str, message: str, path: str | None, range_: Range | None, remediation: str, key: str, *,
             entity: str | None = None, evidence: list[Location] | None = None,
             related: list[Location] | None = None, data: dict[str, Any] | None = None) -> Finding:
    return Finding.model_construct(
        code=code, severity=RULES[code].severity, message=message, path=path, range=range_, entity=entity,
        evidence=evidence or [], related=related or [], remediation=remediation,
        fingerprint=fingerprint(code, path, key), data=data or {})


def _did_you_mean(candidates: list[str], fallback: str) -> str:
    if not candidates:
        return fallback
    shown = ", ".join(f"`{c}`" for c in candidates[:3])
    return f"Did you mean {shown}? {fallback}"


# ------------------------------------------------------------------------------------------------ documents


@functools.lru_cache(maxsize=8)
def _history_spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(patterns))


def describes_history(ws: ModelState, path: str) -> bool:
    """A changelog, release note, migration guide, blog post or decision record (`check.history`)."""
    patterns = ws.config.check.history
    return bool(_history_spec(tuple(HISTORY_DOCUMENTS if patterns is None else patterns)).match_file(path))


def records_releases(ws: ModelState, path: str) -> bool:
    """A changelog or release notes (the built-in patterns, when `check.history` keeps its default)."""
    return ws.config.check.history is None and bool(_history_spec(CHANGELOG_DOCUMENTS).match_file(path))


MENTION_CODES = frozenset({"MENTION_UNRESOLVED", "SYMBOL_AMBIGUOUS"})


def document_findings(ws: ModelState, resolution: DocumentResolution, facts: MarkdownFacts) -> list[Finding]:
    """A document's findings. Documents that are data (test inputs, templates, generated output) have none;
    examples, demos and documents that describe the past (`describes_history`) have no mention findings."""
    path = facts.path
    role = ws.universe.role_of(path)[0]
    if role in UNCHECKED_DOCUMENT_ROLES:
        return []
    found = _document_findings(ws, resolution, facts)
    if check_scope(ws) == "library":
        # a name several modules declare is a fact about the code, not a defect of the document: go to definition
        # offers each, and the note stays for a repository that declares its architecture
        found = [f for f in found if f.code != "SYMBOL_AMBIGUOUS"]
    if role in OWN_PROJECT_ROLES or (any(f.code in MENTION_CODES for f in found) and describes_history(ws, path)):
        found = [f for f in found if f.code not in MENTION_CODES]
    if any(f.code == "LINK_BROKEN" for f in found) and records_releases(ws, path):
        # a release entry links what existed then (a file renamed since): only a malformed link is a mistake
        found = [f for f in found if f.code != "LINK_BROKEN" or _malformed(f)]
    return found
_MALFORMED = re.compile(r"://|^[@\[%]|^\S+@\S+\.\w+$|^mailto|^www\.")


def _malformed(finding: Finding) -> bool:
    """A link target no file could ever be: a URL without its scheme at the start, an e-mail address, a stray
    bracket (`@https://…`, `jane@example.com`, `%5Bhttps://…`)."""
    return bool(_MALFORMED.search(urllib.parse.unquote(str(finding.data.get("target") or ""))))


def _document_findings(ws: ModelState, resolution: DocumentResolution, facts: MarkdownFacts) -> list[Finding]:
    path = facts.path
    out: list[Finding] = []
    occurrences: dict[tuple[str, str], int] = defaultdict(int)

    def key(code: str, text: str) -> str:
        occurrences[(code, text)] += 1
        return f"{text}#{occurrences[(code, text)]}"

    for ref in resolution.references:
        if ref.status in ("broken", "outside-root"):
            out.append(_link_broken(ws, path, ref, key("LINK_BROKEN", ref.text)))
        elif ref.status == "unverified":
            out.append(_finding(
                "LINK_UNVERIFIED", f"Link {ref.message}." if ref.message else f"Link target `{ref.text}` cannot be "
                f"checked here.", path, _range(ref.span),
                "Check the link on the built site; if no page answers there, point it at an existing page.",
                key("LINK_UNVERIFIED", ref.text), data={"target": ref.text}))
        elif ref.status == "anchor-missing":
            candidates = [f"#{c}" for c in ref.candidates]
            out.append(_finding(
                "LINK_ANCHOR_MISSING", f"Link anchor {ref.message}.", path, _range(ref.span),
                _did_you_mean(candidates, "Point the link at an existing heading, or add the heading."),
                key("LINK_ANCHOR_MISSING", ref.text), entity=ref.target,
                data={"anchor": ref.anchor, "target_path": ref.target_path, "candidates": list(ref.candidates)}))
        elif ref.status == "unresolved" and ref.origin == "code":
            suggestions = ws.universe.suggest(ref.target_path or ref.text)
            out.append(_finding(
                "MENTION_UNRESOLVED", f"`{ref.text}` looks like a repository path but matches no file or directory.",
                path, _range(ref.span),
                _did_you_mean(suggestions, "Fix the path, or remove the backticks if it is not a path."),
                key("MENTION_UNRESOLVED", ref.text), data={"candidates": suggestions}))
        elif ref.status == "ambiguous" and ref.origin == "code":
            out.append(_ambiguous(ws, path, ref, key("SYMBOL_AMBIGUOUS", ref.symbol or ref.text)))
        elif ref.status == "renamed" and ref.origin == "code" and ref.candidates:
            replacement = ref.candidates[0]
            out.append(_finding(
                "SYMBOL_RENAMED", f"{ref.message}.", path, _range(ref.span),
                f"Update the mention to `{replacement}` (a quick fix can update every document at once).",
                key("SYMBOL_RENAMED", ref.symbol or ref.text), entity=f"{MODULE}:{ref.target_path}",
                data={"symbol": ref.symbol, "replacement": replacement, "module": ref.target_path}))
        elif ref.status == "unresolved" and ref.origin == "covers":
            out.append(_finding(
                "COVERS_TARGET_MISSING", f"{ref.message[0].upper()}{ref.message[1:]}." if ref.message else
                f"`{ref.text}` matches nothing.", path, _range(ref.span),
                "Point it at an existing path, entity id, ownership id or package name, or remove the entry.",
                key("COVERS_TARGET_MISSING", ref.text)))
    for issue in facts.issues:
        out.append(_finding("DOCBRIDGE_BLOCK_INVALID", issue.message, path,
                            _range(issue),
                            "Fix the YAML between the `---` lines; until then nothing in the block is used.",
                            key("DOCBRIDGE_BLOCK_INVALID", issue.message),
                            data={"declarationCode": issue.code}))
    out.extend(declared_findings(ws, resolution, facts))
    for index, region in enumerate(facts.regions):
        if not region.edited or not region.closed:
            continue
        out.append(_finding(
            "GENERATED_REGION_EDITED",
            f"Generated region (lines {region.start_line + 1}–{region.end_line + 1}) was edited by hand: it records "
            f"hash {region.recorded_hash} but its content hashes to {region.computed_hash}.",
            path, Range.of(region.start_line, 0, region.end_line, 0),
            f"Regenerate the region, or re-seal it if the edit is intended (hash={region.computed_hash}).",
            f"region#{index}",
            evidence=[Location.model_construct(path=path, range=Range.of(region.start_line + 1, 0,
                                                                         region.end_line - 1, 0),
                                               message="the generated lines", content_hash=facts.content_hash)],
            data={"recorded_hash": region.recorded_hash, "computed_hash": region.computed_hash,
                  "start_line": region.start_line, "end_line": region.end_line}))
    return out


def _link_broken(ws: ModelState, path: str, ref: Reference, key: str) -> Finding:
    if ref.status == "outside-root":
        message = f"Link `{ref.text}` points outside the repository."
        remediation = "Link to a file inside the repository, or use an absolute URL."
        suggestions: list[str] = []
    else:
        kind = {"image": "Image", "wiki": "Wiki link"}.get(ref.origin, "Link")
        message = f"{kind} target `{ref.text}` does not exist."
        suggestions = ws.universe.suggest(ref.target_path) if ref.target_path else []
        remediation = _did_you_mean(suggestions, "Fix the path, or remove the link.")
    return _finding("LINK_BROKEN", message, path, _range(ref.span), remediation, key,
                    data={"target": ref.text, "target_path": ref.target_path, "candidates": suggestions})


def _ambiguous(ws: ModelState, path: str, ref: Reference, key: str) -> Finding:
    related = []
    modules = [split_id(c)[1] for c in ref.candidates]
    for module in modules:
        position = ws.universe.export_position(module, ref.symbol or "")
        line, column = position if position else (0, 0)
        related.append(Location.model_construct(
            path=module, range=Range.of(line, column, line, column + len(ref.symbol or "")),
            message=f"`{ref.symbol}` is declared here",
            content_hash=ws.universe.modules[module].content_hash if module in ws.universe.modules else None))
    return _finding(
        "SYMBOL_AMBIGUOUS",
        f"`{ref.symbol}` is declared by {len(modules)} modules ({', '.join(modules)}); the mention links to none.",
        path, _range(ref.span),
        f"Name the module next to it (for example `{modules[0]}`), or rename one of the exports.",
        key, related=related, data={"symbol": ref.symbol, "candidates": list(ref.candidates)})


# ------------------------------------------------------------------------------------------------ repository


@dataclass(slots=True)
class AreaDocumentation:
    documents: dict[str, set[str]]  # area path -> documents that cover/mention it (or live in it)
    declared: set[tuple[str, str]]  # (from area, to area) declared in frontmatter
    # area path -> documents that name the folder itself (mention its path, cover it, live in it), not only
    # something declared in it
    named: dict[str, set[str]] = field(default_factory=dict)


def area_documentation(ws: ModelState) -> AreaDocumentation:
    layout = ws.universe.layout
    assert layout is not None
    documents: dict[str, set[str]] = defaultdict(set)
    named: dict[str, set[str]] = defaultdict(set)
    declared: set[tuple[str, str]] = set()

    def area_of(entity: str) -> str | None:
        kind, value = split_id(entity)
        if kind == AREA:
            return value
        if kind == MODULE:
            return layout.module_area.get(value)
        return None

    library_scope = check_scope(ws) == "library"
    for doc, resolution in ws.documents.items():
        if library_scope and describes_history(ws, doc):
            continue  # a changelog or a migration guide names what changed; it documents nothing
        for kind, target, _symbol in resolution.relation_keys:
            if kind in DOCUMENTING_KINDS:
                area = area_of(target)
                if area is not None:
                    documents[area].add(doc)
                    if kind != "mentions-symbol":  # its path, not only a name declared in it
                        named[area].add(doc)
                    parent = layout.areas[area].parent_id
                    while parent:  # documenting a nested area documents its parents
                        parent_path = split_id(parent)[1]
                        documents[parent_path].add(doc)
                        parent = layout.areas[parent_path].parent_id
        for reference in resolution.references:  # a folder inside an area, named by its path (`lib/languages/js/`)
            if reference.status == "existing" and reference.target_path and reference.origin in ("code", "link"):
                inside = layout.area_of(reference.target_path)
                if inside is not None:
                    named[inside.path].add(doc)
        doc_area = layout.area_of(doc)
        if doc_area is not None:
            documents[doc_area.path].add(doc)
            named[doc_area.path].add(doc)
        for source, target, _kind in resolution.declared_relations:
            a, b = area_of(source), area_of(target)
            if a and b:
                declared.add((a, b))
    for record in ws.config.ownership:
        if record.agent_doc and record.agent_doc.removeprefix("./") in ws.universe.documents \
                and record.path in layout.areas:
            documents[record.path].add(record.agent_doc.removeprefix("./"))
            named[record.path].add(record.agent_doc.removeprefix("./"))
    return AreaDocumentation(dict(documents), declared, dict(named))


def area_imports(ws: ModelState, runtime_only: bool = False) -> dict[tuple[str, str], list[Evidence]]:
    """Observed area -> area imports with the evidence of every import that crosses. With `runtime_only` (the
    library scope), only what library code uses at run time: no type-only import (erased), no re-export (a
    barrel passes another area's API on, it does not use it), nothing a test, a generated file or other code
    that is not library source imports or is imported."""
    layout = ws.universe.layout
    assert layout is not None
    universe = ws.universe
    pairs: dict[tuple[str, str], list[Evidence]] = defaultdict(list)
    for module in sorted(ws.modules):
        source_area = layout.module_area.get(module)
        if source_area is None or (runtime_only and not universe.is_library(module)):
            continue
        for relation in ws.modules[module].relations:
            kind, target = split_id(relation.target)
            if kind != MODULE or (runtime_only and (type_only(relation) or relation.kind == "re-exports"
                                                    or not universe.is_library(target))):
                continue
            target_area = layout.module_area.get(target)
            if target_area is None or target_area == source_area:
                continue
            # nested areas: an import from a child into its own parent is internal to the parent
            if target_area.startswith(source_area + "/") or source_area.startswith(target_area + "/"):
                continue
            pairs[(source_area, target_area)].extend(relation.evidence)
    return {pair: sorted(ev, key=lambda e: (e.path, e.line, e.column)) for pair, ev in sorted(pairs.items())}


def _import_structure(ws: ModelState, memo: dict[str, Any] | None) -> tuple[dict[tuple[str, str], list[Evidence]],
                                                                           list[Any]]:
    """Area-to-area imports and import cycles: they read only module relations and the layout, so a
    documentation edit reuses them (`memo` keeps the last ones with the versions they were built from)."""
    key = (ws.structure.modules, ws.structure.layout, check_scope(ws))
    if memo is not None and memo.get("key") == key:
        return memo["value"]
    value = (area_imports(ws, runtime_only=check_scope(ws) == "library"), import_cycles(runtime_import_graph(
        [r for resolution in ws.modules.values() for r in resolution.relations])))
    if memo is not None:
        memo["key"], memo["value"] = key, value
    return value


def check_scope(ws: ModelState) -> str:
    """`all` or `library` (`check.scope`; unset: `all` where the repository declares its architecture to Doc
    Bridge, by ownership records or relations declared in frontmatter)."""
    configured = ws.config.check.scope
    if configured is not None:
        return configured
    if ws.config.ownership:
        return "all"

    return "all" if relation_declarers(ws) else "library"


RELATION_DECLARERS = "relation-declarers"  # a seeded view (`engine.state.model_state.SEEDED_VIEWS`)


def relation_declarers(ws: ModelState) -> frozenset[str]:
    """The documents that declare relations in their frontmatter: from an ancestor state's, the files changed since
    read again (every edit asks, and reading every document took 20 ms of an edit on 50,000 documents)."""
    documents = ws.universe.documents

    def declares(path: str) -> bool:
        facts = documents.get(path)  # None: a document a provisional universe has not read yet
        return facts is not None and any(d.kind == "relation" for d in facts.declarations)

    def build() -> frozenset[str]:
        seed = ws.seed(RELATION_DECLARERS)
        if seed is None:
            return frozenset(path for path in documents if declares(path))
        return frozenset({path for path in seed.value if path not in seed.changed} |
                         {path for path in seed.changed if declares(path)})
    return ws.view(RELATION_DECLARERS, build)


def library_areas(ws: ModelState) -> set[str]:
    """Areas that hold library source (at least one module whose role is `source`)."""
    layout = ws.universe.layout
    assert layout is not None
    universe = ws.universe
    return {path for path, area in layout.areas.items() if any(universe.is_library(m) for m in area.modules)}


def _siblings(layout: Any, path: str) -> list[str]:
    area = layout.areas[path]
    return [p for p, other in layout.areas.items()
            if p != path and other.parent_id == area.parent_id and other.package_id == area.package_id]


def expected_documented(ws: ModelState, documentation: AreaDocumentation, library: set[str]) -> set[str]:
    """Library areas that documentation is expected to describe: those whose siblings (the areas beside them in
    the same package) are at least half documented as folders already (their paths named, covered, or a page kept
    in them). Documentation that names none of a package's folders describes its code some other way (by
    feature, by its API, or on a site kept elsewhere), and a finding per folder would be noise."""
    layout = ws.universe.layout
    assert layout is not None
    expected = set()
    for path in library:
        modules = layout.areas[path].modules
        if len(modules) < MIN_AREA_MODULES:
            continue  # a one-module folder is documented through its module, not as an area
        if all(m.endswith((".d.ts", ".d.mts", ".d.cts")) for m in modules):
            continue  # type declarations only: documented through the API they describe
        siblings = [p for p in _siblings(layout, path) if p in library]
        documented = sum(1 for p in siblings if documentation.named.get(p))
        if documented and 2 * documented >= len(siblings):
            expected.add(path)
    return expected


MIN_AREA_MODULES = 2


def shared_areas(imports: dict[tuple[str, str], list[Evidence]], library: set[str], layout: Any) -> set[str]:
    """Areas that most of their siblings import (three or more of them): shared utilities, whose use is no
    relation worth documenting."""
    importers: dict[str, set[str]] = defaultdict(set)
    for source, target in imports:
        importers[target].add(source)
    shared = set()
    for target, sources in importers.items():
        siblings = set(_siblings(layout, target)) & library if target in layout.areas else set()
        users = sources & siblings
        if len(users) >= SHARED_MIN_USERS and 2 * len(users) >= len(siblings):
            shared.add(target)
    return shared


SHARED_MIN_USERS = 3


def repository_findings(ws: ModelState, memo: dict[str, Any] | None = None) -> list[Finding]:
    """Structural findings. In the `library` scope (`check_scope`), about library source only (tests, examples,
    demos, templates, the documentation site's code, scripts and generated files are not what documentation
    describes):

    - AREA_UNDOCUMENTED: a library area of two modules or more no document covers or mentions, where its sibling
      areas mostly are;
    - IMPORT_CYCLE: a runtime import cycle through library modules;
    - OWNERSHIP_PATH_UNOBSERVED: an ownership record naming a path that does not exist.

    RELATION_UNDOCUMENTED (an import between areas no document describes together) only in the `all` scope: which
    folder imports which is an implementation detail until a repository declares its architecture. The `all`
    scope keeps the original's rules for every area and import."""
    layout = ws.universe.layout
    assert layout is not None
    imports, cycles = _import_structure(ws, memo)
    out: list[Finding] = []
    documentation = area_documentation(ws)
    everything = check_scope(ws) == "all"
    library = set(layout.areas) if everything else library_areas(ws)
    expected = library if everything else expected_documented(ws, documentation, library)
    shared = set() if everything else shared_areas(imports, library, layout)
    for path, area in sorted(layout.areas.items()):
        if documentation.documents.get(path) or path not in expected:
            continue
        first = area.modules[0] if area.modules else None
        out.append(_finding(
            "AREA_UNDOCUMENTED",
            f"Area `{path}` ({len(area.modules)} module{'s' if len(area.modules) != 1 else ''}) is not covered or "
            f"mentioned by any document.",
            first, Range.of(0, 0, 0, 0) if first else None,
            f"Mention `{path}` in the document that describes it, or add `covers: [{path}]` to its frontmatter.",
            path, entity=area.id,
            evidence=[Location.model_construct(path=m, range=Range.of(0, 0, 0, 0), message=None,
                                               content_hash=None) for m in area.modules[:8]]))
    for (source, target), evidence in imports.items() if everything else ():
        if source not in library or target not in library or target in shared:
            continue
        if (source, target) in documentation.declared:
            continue
        source_documents = documentation.documents.get(source, set())
        target_documents = documentation.documents.get(target, set())
        if source_documents & target_documents or (not everything and not (source_documents and target_documents)):
            continue
        first_import = evidence[0]
        modules = sorted({e.path for e in evidence})
        out.append(_finding(
            "RELATION_UNDOCUMENTED",
            f"`{source}` imports `{target}` ({len(evidence)} import{'s' if len(evidence) != 1 else ''} in "
            f"{len(modules)} module{'s' if len(modules) != 1 else ''}), and no document covers or mentions both.",
            first_import.path, _range(first_import),
            f"Describe how `{source}` uses `{target}` in a document that mentions both.",
            f"{source}->{target}", entity=entity_id(AREA, source),
            evidence=[_evidence_location(e, "import") for e in evidence[:8]],
            data={"from": entity_id(AREA, source), "to": entity_id(AREA, target), "imports": len(evidence)}))
    for record in ws.config.ownership:
        if ws.universe.path_kind(record.path, set()) is not None:
            continue
        line = ws.config_line(f'"{record.id}"')
        line = line if line is not None else 0
        candidates = ws.universe.suggest(record.path)
        out.append(_finding(
            "OWNERSHIP_PATH_UNOBSERVED",
            f"Ownership record `{record.id}` names `{record.path}`, where no file or directory exists.",
            CONFIG_FILE, Range.of(line, 0, line, 0),
            _did_you_mean(candidates, "Update the record's `path` (renamed or moved?) or remove the record."),
            record.id, entity=f"ownership:{record.id}", data={"candidates": candidates}))
    for cycle in cycles:
        modules = [split_id(node)[1] for node in cycle.nodes]
        if not everything and not all(ws.universe.is_library(module) for module in modules):
            continue
        first = cycle.evidence[0][2][0]
        chain = " → ".join([*modules, modules[0]])
        out.append(_finding(
            "IMPORT_CYCLE", f"Import cycle: {chain}.", first.path,
            _range(first),
            "Break the cycle: move the shared code into a module both can import, or invert one dependency.",
            ",".join(cycle.nodes), entity=cycle.nodes[0],
            evidence=[_evidence_location(ev[0], f"{split_id(a)[1]} imports {split_id(b)[1]}")
                      for a, b, ev in cycle.evidence[:16]],
            data={"modules": modules}))
    return out


# ------------------------------------------------------------------------------------------------ all


@dataclass(frozen=True, slots=True, weakref_slot=True)
class FindingsIndex:
    """Findings by file, for one model state; derived from an ancestor state's index when there is one.

    A document's findings are recomputed when its resolution changed (or, after a module changed, when it
    names an ambiguous symbol, whose related locations follow the declaring modules); repository findings
    are recomputed when the state's structure versions moved. Files whose findings did not change share
    the very same tuple with the ancestor's index (`changed_since` compares by identity).
    """

    # path -> (resolution the findings were computed from, findings, follows module changes)
    documents: Map[str, tuple[DocumentResolution, tuple[Finding, ...], bool]] = EMPTY
    repository: tuple[Finding, ...] = ()
    repository_key: Any = None
    imports: tuple[Any, Any] | None = None  # (key, import structure) the repository findings last read
    by_path: Map[str | None, tuple[Finding, ...]] = EMPTY
    generated: tuple[Finding, ...] = ()  # GENERATED_REGION_STALE (docbridge.engine.render.freshness)
    regioned: frozenset[str] = frozenset()  # documents with sealed generated regions
    base: Any = None  # a weak reference to the index this one was derived from
    touched: frozenset[str | None] = frozenset()  # files whose findings were recomputed since that one
    total: int = 0  # findings in `by_path`, kept from the ancestor's count (a status line reads it per edit)

    @staticmethod
    def derive(ws: ModelState, seed: Any = None) -> FindingsIndex:
        previous: FindingsIndex = seed.value if seed is not None else FindingsIndex()
        if seed is None:
            candidates = set(ws.documents.keys())
        else:
            candidates = set(seed.changed)
            if any(file_kind(p) == "module" for p in seed.changed):
                candidates |= {p for p, cached in previous.documents.items() if cached[2]}
        documents = previous.documents.mutate()
        touched: set[str | None] = set()
        for path in sorted(candidates):
            resolution = ws.documents.get(path)
            cached = documents.get(path)
            if resolution is None:
                if cached is not None:
                    documents.pop(path, None)
                    touched.add(path)
                continue
            if cached is not None and cached[0] is resolution and not cached[2]:
                continue
            facts = ws.universe.documents.get(path)
            findings = tuple(document_findings(ws, resolution, facts)) if facts is not None else ()
            # recomputed after any module change: an ambiguous symbol's related locations, declared relations
            follows = bool(resolution.declared_endpoints) or any(f.code == "SYMBOL_AMBIGUOUS" for f in findings)
            documents[path] = (resolution, findings, follows)
            touched.add(path)
        repository, repository_key, imports = previous.repository, previous.repository_key, previous.imports
        key = tuple(ws.structure)
        if key != repository_key:
            memo = {"key": imports[0], "value": imports[1]} if imports is not None else {}
            fresh = tuple(repository_findings(ws, memo))
            touched |= {f.path for f in repository} | {f.path for f in fresh}
            repository, repository_key, imports = fresh, key, (memo.get("key"), memo.get("value"))
        documents_done = documents.finish()
        regioned, generated = _generated(ws, previous, candidates, documents_done, repository)
        if generated != previous.generated:
            touched |= {f.path for f in previous.generated} | {f.path for f in generated}
        by_path = previous.by_path.mutate()
        total = previous.total
        if touched:
            repository_by_path: dict[str | None, list[Finding]] = defaultdict(list)
            for finding in (*repository, *generated):
                repository_by_path[finding.path].append(finding)
            for touched_path in touched:
                own = documents_done[touched_path][1] \
                    if touched_path is not None and touched_path in documents_done else ()
                combined = list(own) + repository_by_path.get(touched_path, [])
                total += len(combined) - len(previous.by_path.get(touched_path, ()))
                if combined:
                    by_path[touched_path] = tuple(sorted(combined, key=lambda f: f.sort_key))
                else:
                    by_path.pop(touched_path, None)
        base = weakref.ref(previous) if seed is not None else None
        return FindingsIndex(documents_done, repository, repository_key, imports, by_path.finish(), generated,
                             regioned, base, frozenset(touched), total)

    def base_findings(self) -> list[Finding]:
        """Every finding but the stale-region ones (what they are computed from)."""
        return [f for _resolution, found, _ambiguous in self.documents.values() for f in found] + \
            list(self.repository)

    def all(self) -> list[Finding]:
        return [finding for path in sorted(self.by_path.keys(), key=lambda p: p or "")
                for finding in self.by_path[path]]

    def changed_since(self, other: FindingsIndex | None) -> set[str | None]:
        """Files whose findings are not the very ones `other` holds (every file with findings when None)."""
        if other is None:
            return set(self.by_path.keys())
        if other is self:
            return set()
        if self.base is not None and self.base() is other:  # derived from it: only what was recomputed
            paths = set(self.touched)
        else:
            paths = set(self.by_path.keys()) | set(other.by_path.keys())
        return {p for p in paths if self.by_path.get(p) is not other.by_path.get(p)}


def _generated(ws: ModelState, previous: FindingsIndex, candidates: set[str], documents: Any,
               repository: tuple[Finding, ...]) -> tuple[frozenset[str], tuple[Finding, ...]]:
    """Documents with sealed generated regions, and the stale-region findings of those that name a template.
    Rendered again after every change while such documents exist (a page reads the whole model)."""
    from docbridge.engine.render.freshness import has_template_regions, stale_findings
    regioned = set(previous.regioned)
    for path in candidates:
        if has_template_regions(ws, path):
            regioned.add(path)
        else:
            regioned.discard(path)
    if not regioned:
        return frozenset(), ()
    base = [f for _resolution, found, _ambiguous in documents.values() for f in found] + list(repository)
    return frozenset(regioned), tuple(stale_findings(ws, regioned, apply_config(ws, base)))


@functools.lru_cache(maxsize=8)
def _ignore_spec(lines: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(lines))


def apply_config(ws: ModelState, findings: list[Finding], overrides: dict[str, str] | None = None) -> list[Finding]:
    """Per-code severity overrides (`off` drops the code) and ignore globs from configuration."""
    severities = {**ws.config.check.severity, **(overrides or {})}
    ignore = _ignore_spec(tuple(ws.config.check.ignore)) if ws.config.check.ignore else None
    out = []
    for finding in findings:
        level = severities.get(finding.code)
        if level == "off":
            continue
        if ignore is not None and finding.path and ignore.match_file(finding.path):
            continue
        if level and level != finding.severity:
            finding = finding.model_copy(update={"severity": level})
        out.append(finding)
    out.sort(key=lambda f: f.sort_key)
    return out


FINDINGS_INDEX: ViewKey[FindingsIndex] = ViewKey("findings-index")
FINDINGS: ViewKey[list[Finding]] = ViewKey("findings")


def findings_index_of(state: ModelState) -> FindingsIndex:
    """The findings of every file of a state, by path: derived from the last state that computed them when
    there is one (only the files re-resolved since are revisited), else from nothing as a bulk build."""
    state = resolved(state)
    seed = state.seed(FINDINGS_INDEX.name)
    if seed is None:
        return state.view(FINDINGS_INDEX, built(lambda: FindingsIndex.derive(state, None)))
    return state.view(FINDINGS_INDEX, lambda: FindingsIndex.derive(state, seed))


def findings_of(state: ModelState) -> list[Finding]:
    """Every finding, with configured severities and ignores applied, sorted."""
    state = resolved(state)
    return state.view(FINDINGS, lambda: apply_config(state, findings_index_of(state).all()))


__all__ = [
    "DOCUMENT",
    "FINDINGS",
    "FINDINGS_INDEX",
    "FindingsIndex",
    "apply_config",
    "area_documentation",
    "area_imports",
    "document_findings",
    "findings_index_of",
    "findings_of",
    "repository_findings",
]
