"""One canonical Finding, its codes and default severities, and its renderings (text, JSON, SARIF 2.1.0)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from typing import Any

from docbridge.engine import __version__
from docbridge.engine.base.heap import OneCopy
from docbridge.engine.base.rule import Rule, Severity
from docbridge.engine.base.rule_catalog import GOVERNANCE_RULES
from pydantic import BaseModel, Field

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2, "hint": 3}
FAIL_ON = ("error", "warning", "info", "never")


RULES: dict[str, Rule] = {rule.code: rule for rule in [
    Rule(code="LINK_BROKEN", severity="error", title="Link target does not exist",
         help="A relative link (or wiki link, or image) points at a file that is not in the repository, or "
              "outside it. Fix the path, or remove the link."),
    Rule(code="LINK_UNVERIFIED", severity="info", title="Link names a site route no page here serves",
         help="A link written for the documentation site (no file extension, or a trailing slash) names a route "
              "that no page of this repository produces, by file name, ordering prefix, frontmatter `id`, `slug` "
              "or `permalink`. The site may serve it from elsewhere (another repository, a redirect, a page "
              "generated at build time), which Doc Bridge cannot see; check it on the built site."),
    Rule(code="LINK_ANCHOR_MISSING", severity="warning", title="Link anchor is not a heading",
         help="The link's #anchor matches no heading slug of the target document (GitHub slugs: lowercase, "
              "punctuation removed, spaces as hyphens, duplicates suffixed -1, -2)."),
    Rule(code="MENTION_UNRESOLVED", severity="warning", title="Inline code path matches nothing",
         help="Inline code that plainly names a path inside this repository (it starts in an existing top-level "
              "directory or ends in a source or document extension) matches no file or directory. URLs, "
              "commands, globs and other text are never reported."),
    Rule(code="SYMBOL_AMBIGUOUS", severity="info", title="Mentioned symbol is declared by several modules",
         help="The inline code names an exported symbol that more than one module declares, so the mention "
              "links to none of them. Write the module path next to it, or rename one of the exports."),
    Rule(code="SYMBOL_RENAMED", severity="warning", title="Mentioned export was renamed",
         help="The inline code names an export that its module no longer declares, because the module renamed "
              "it (one export went and a similar one came in the same edit). Update the mention to the new name. "
              "Reported by the language server, which sees the edit happen; a fresh scan has no memory of the "
              "old name."),
    Rule(code="COVERS_TARGET_MISSING", severity="error", title="Declared coverage target does not exist",
         help="A `covers` entry (or a declared relation endpoint) in the frontmatter names no document, module, "
              "area, package or ownership record."),
    Rule(code="DOCBRIDGE_BLOCK_INVALID", severity="error", title="Frontmatter or declaration is malformed",
         help="The YAML frontmatter does not parse, or a known key has the wrong shape. Nothing from a "
              "malformed block is used."),
    Rule(code="AREA_UNDOCUMENTED", severity="info", title="No document covers or mentions this area",
         help="No document covers, mentions or links to the library area, any of its modules or any symbol they "
              "declare, while the documentation does describe most of the areas beside it. Mention the area (for "
              "example its directory in backticks) in the document that describes it."),
    Rule(code="RELATION_UNDOCUMENTED", severity="info", title="Area-to-area import is not documented",
         help="Modules in one library area import modules in another at run time, documents describe each of the "
              "two areas, and none covers or mentions both (or declares the relation under "
              "`docbridge.relations`). Imports of a shared utility area that most areas use do not count."),
    Rule(code="OWNERSHIP_PATH_UNOBSERVED", severity="warning", title="Ownership path does not exist",
         help="An ownership record in doc-bridge.config.json names a path where no file or directory exists "
              "(renamed, moved or mistyped)."),
    Rule(code="IMPORT_CYCLE", severity="info", title="Modules import each other in a cycle",
         help="A chain of runtime imports between library modules returns to where it started. Type-only imports "
              "are not counted, nor are tests, examples and other code that is not library source. Information: "
              "no documentation change fixes a cycle."),
    Rule(code="GENERATED_REGION_EDITED", severity="warning", title="Generated region was edited by hand",
         help="The lines between `<!-- doc-bridge:generated hash=H -->` and `<!-- /doc-bridge:generated -->` no "
              "longer hash to H (SHA-256 of the lines, first 16 hex digits). Regenerate the region, or re-seal "
              "it when the edit is intended."),
    Rule(code="GENERATED_REGION_STALE", severity="warning", title="Generated region is out of date",
         help="A region written by `docbridge render` (its marker names the template and page) still hashes to "
              "its marker, but rendering that template over the current model gives different content: the code "
              "or documentation it describes changed. Regenerate it."),
]}


RULES.update(GOVERNANCE_RULES)

# codes only the language server reports (they need to see an edit happen; a fresh scan cannot know them)
LIVE_ONLY_CODES = frozenset({"SYMBOL_RENAMED"})


class _Constructed(BaseModel):
    """A model the engine builds from its own values (`model_construct`, no validation), made lighter than pydantic
    makes one: every instance shares one set of its field names as the fields it was given, instead of a set of its
    own (a fifth of a finding's memory: a large repository's findings number in the tens of thousands; nothing reads
    which fields were given), and its values are set one by one in the fields' order, so that Python keeps them in a
    dictionary whose keys all instances of the class share (pydantic hands it a dictionary of its own: a finding
    took 552 bytes, 200 now, besides its values)."""

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> Any:
        shared = cls.__dict__.get("_every_field")
        if shared is None:
            shared = set(cls.model_fields)
            type.__setattr__(cls, "_every_field", shared)
        fields = cls.__pydantic_fields__
        if cls.__pydantic_post_init__ or cls.__private_attributes__ or not values.keys() <= fields.keys():
            return super().model_construct(_fields_set if _fields_set is not None else shared, **values)
        made = cls.__new__(cls)
        for name, field in fields.items():
            if name in values:
                object.__setattr__(made, name, values[name])
            elif not field.is_required():
                object.__setattr__(made, name, field.get_default(call_default_factory=True))
        object.__setattr__(made, "__pydantic_fields_set__", _fields_set if _fields_set is not None else shared)
        object.__setattr__(made, "__pydantic_extra__", None)
        object.__setattr__(made, "__pydantic_private__", None)
        return made


class Position(_Constructed):
    line: int  # 0-based
    character: int  # 0-based, Unicode code points


class Range(_Constructed):
    start: Position
    end: Position

    @classmethod
    def of(cls, line: int, column: int, end_line: int, end_column: int) -> Range:
        # built from the engine's own integers: skip validation (findings can number in the thousands)
        return cls.model_construct(start=_position(line, column), end=_position(end_line, end_column))


# one Position per place, shared by the ranges that start or end there (nothing changes a position once made):
# two of them were 600 of a finding's 2,000 bytes
_POSITIONS: OneCopy[tuple[int, int], Position] = OneCopy(200_000)


def _position(line: int, character: int) -> Position:
    return _POSITIONS.made((line, character), lambda: Position.model_construct(line=line, character=character))


class Location(_Constructed):
    path: str
    range: Range
    message: str | None = None
    content_hash: str | None = None


class Finding(_Constructed):
    code: str
    severity: Severity
    message: str
    path: str | None
    range: Range | None
    entity: str | None = None
    evidence: list[Location] = Field(default_factory=list)
    related: list[Location] = Field(default_factory=list)
    remediation: str
    fingerprint: str
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def sort_key(self) -> tuple[Any, ...]:
        start = self.range.start if self.range else Position(line=0, character=0)
        return (self.path or "", start.line, start.character, self.code, self.fingerprint)


class CheckReport(BaseModel):
    """What `docbridge check --format json` prints."""

    version: int = 1
    tool: str = "docbridge"
    findings: list[Finding]
    summary: dict[str, Any]
    suggestions: list[dict[str, Any]] = Field(default_factory=list)


def fingerprint(code: str, path: str | None, key: str) -> str:
    """Stable across line moves: what the finding is about, never where it currently sits."""
    return hashlib.sha256(f"{code}\0{path or ''}\0{key}".encode()).hexdigest()[:32]


def summarise(findings: Iterable[Finding]) -> dict[str, Any]:
    items = list(findings)
    by_severity: Counter[str] = Counter(f.severity for f in items)
    return {"total": len(items),
            "by_severity": {s: by_severity[s] for s in SEVERITY_ORDER if by_severity[s]},
            "by_code": dict(sorted(Counter(f.code for f in items).items()))}


def fails(findings: Iterable[Finding], fail_on: str) -> bool:
    if fail_on == "never":
        return False
    threshold = SEVERITY_ORDER[fail_on]
    return any(SEVERITY_ORDER[f.severity] <= threshold for f in findings)


# ------------------------------------------------------------------------------------------------ text


_LINE_BREAKS = {10: "\\n", 13: "\\r"}


def render_text(findings: list[Finding], suggestions: list[dict[str, Any]] | None = None) -> str:
    lines: list[str] = []
    current: str | None = None
    for finding in findings:
        # a file name may hold a line break (git keeps any byte but NUL and /): escaped, each finding is one line
        path = (finding.path or "(repository)").translate(_LINE_BREAKS)
        if path != current:
            if current is not None:
                lines.append("")
            lines.append(path)
            current = path
        start = finding.range.start if finding.range else Position(line=0, character=0)
        lines.append(f"  {path}:{start.line + 1}:{start.character + 1}  {finding.severity:<7}  "
                     f"{finding.code}  {finding.message}")
        lines.append(f"      → {finding.remediation}")
    summary = summarise(findings)
    if lines:
        lines.append("")
    counts = ", ".join(f"{n} {s}{'s' if n != 1 and s in ('error', 'warning') else ''}"
                       for s, n in summary["by_severity"].items())
    lines.append(f"{summary['total']} finding{'s' if summary['total'] != 1 else ''}" + (f": {counts}" if counts else
                                                                                        ""))
    for suggestion in suggestions or []:
        lines.append(f"suggestion: {suggestion['reason']}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ SARIF

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def _region(range_: Range | None) -> dict[str, int]:
    if range_ is None:
        return {"startLine": 1, "startColumn": 1}
    region = {"startLine": range_.start.line + 1, "startColumn": range_.start.character + 1,
              "endLine": range_.end.line + 1, "endColumn": range_.end.character + 1}
    if (region["endLine"], region["endColumn"]) < (region["startLine"], region["startColumn"]):
        region["endLine"], region["endColumn"] = region["startLine"], region["startColumn"]
    return region


def _physical(path: str, range_: Range | None) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": path, "uriBaseId": "SRCROOT"},
                                 "region": _region(range_)}}


def render_sarif(findings: list[Finding], root_uri: str) -> dict[str, Any]:
    codes = list(RULES)
    rules = [{
        "id": rule.code,
        "name": "".join(part.capitalize() for part in rule.code.lower().split("_")),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.help},
        "help": {"text": rule.help},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
    } for rule in RULES.values()]
    results = []
    for finding in findings:
        result: dict[str, Any] = {
            "ruleId": finding.code,
            "ruleIndex": codes.index(finding.code),
            "level": _SARIF_LEVEL[finding.severity],
            "message": {"text": f"{finding.message} {finding.remediation}"},
            "partialFingerprints": {"docbridgeFingerprint/v1": finding.fingerprint},
        }
        if finding.path:
            result["locations"] = [_physical(finding.path, finding.range)]
        related = [loc for loc in finding.related + finding.evidence if loc.path]
        if related:
            result["relatedLocations"] = [
                {**_physical(loc.path, loc.range), "id": index,
                 **({"message": {"text": loc.message}} if loc.message else {})}
                for index, loc in enumerate(related[:16])]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "docbridge", "version": __version__, "semanticVersion": __version__,
                                "rules": rules}},
            "originalUriBaseIds": {"SRCROOT": {"uri": root_uri}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
