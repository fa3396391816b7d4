"""Configuration: zero-config defaults, or the compatible subset of `doc-bridge.config.json`, and the user's own
settings.

The file format is the established one of the original tool (`routing.options.ownership` keyed by id,
`corpus.agent.index`, ...). Keys we do not use are ignored; keys we use are validated, and a bad value is a
`ConfigError` that names the key.

A repository is untrusted input: whoever clones it did not write its configuration. What sends text or
credentials off the machine or runs a program (an embeddings endpoint and the variable holding its key, an
enrichment agent's command) is the user's decision, taken in their own settings file (`user_config_path()`):
there they set those keys themselves, or list the repositories whose configuration may set them
(`trustedRepositories`). An untrusted repository's request is kept as a sentence that the surfaces show.
"""

from __future__ import annotations

import json
import math
import os
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

from docbridge.engine.base.globs import glob_error
from docbridge.engine.base.hashing import canonical_hash
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

CONFIG_FILE = "doc-bridge.config.json"
DEFAULT_AREA_ROOTS = ("src", "lib", "app", "source", "server", "client", "packages", "apps")
DEFAULT_WEIGHTS = {"title": 4.0, "headings": 3.0, "symbols": 3.0, "path": 2.0, "aliases": 2.0, "summary": 2.0,
                   "body": 1.0}
Severity = Literal["error", "warning", "info", "hint", "off"]
MAX_WEIGHT = 100.0
BM25_DEFAULTS = {"k1": 1.2, "b": 0.75}  # `retrieval.params` unset (tantivy's own, docbridge.engine.retrieval.lexical)


def _valid_glob(value: str) -> str:
    reason = glob_error(value)
    if reason is not None:
        raise ValueError(f"{json.dumps(value)} is not a valid glob ({reason})")
    return value


Glob = Annotated[str, AfterValidator(_valid_glob)]  # a gitignore-style pattern pathspec compiles


def _numeric(annotation: Any) -> bool:
    """Whether a field's type is a number (int or float, optionally with None) but not a bool."""
    if annotation in (int, float):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(args) and all(a in (int, float) for a in args)
    return False


class ConfigError(Exception):
    """A configuration problem a person must fix; the message names the file and the key."""


class _Model(BaseModel):
    # no NaN or infinity anywhere: `1e999` parses to inf, and neither survives canonical JSON hashing
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True,
                              allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_as_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic's lax mode takes `true` for 1; a person who wrote `"maxFileBytes": true` meant something else
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            if field is not None and _numeric(field.annotation):
                raise ValueError(f"must be a number, not {json.dumps(value)}")
        return value


class OwnershipRecord(_Model):
    id: str
    path: str
    purpose: str | None = None
    checks: tuple[str, ...] | None = None
    agent_doc: str | None = None
    human_doc: str | None = None
    group: str | None = None
    layer: str | None = None

    @field_validator("path")
    @classmethod
    def _normalise_path(cls, value: str) -> str:
        value = value.strip().replace("\\", "/").removeprefix("./").rstrip("/")
        if not value or value.startswith("/") or ".." in value.split("/"):
            raise ValueError("must be a relative path inside the repository")
        return value


class IntentRoute(_Model):
    id: str
    title: str
    paths: tuple[str, ...] = ()


class ChangeRoute(_Model):
    id: str
    title: str
    start_here: str | None = None
    related_packages: tuple[str, ...] = ()


class RoutingOptions(_Model):
    ownership: tuple[OwnershipRecord, ...] = ()
    intents: tuple[IntentRoute, ...] = ()
    changes: tuple[ChangeRoute, ...] = ()

    @field_validator("ownership", mode="before")
    @classmethod
    def _ownership_by_id(cls, value: Any) -> Any:
        # The established format keys records by id; a list of records with an `id` is accepted too.
        if isinstance(value, dict):
            records = []
            for key, record in value.items():
                if not isinstance(record, dict):
                    raise ValueError(f"record {key!r} must be an object")
                records.append({**record, "id": record.get("id", key)})
            return records
        return value

    @model_validator(mode="after")
    def _sorted_unique(self) -> RoutingOptions:
        seen: set[str] = set()
        for record in self.ownership:
            if record.id in seen:
                raise ValueError(f"ownership id {record.id!r} is declared twice")
            seen.add(record.id)
        object.__setattr__(self, "ownership", tuple(sorted(self.ownership, key=lambda r: r.id)))
        return self


class Routing(_Model):
    options: RoutingOptions = RoutingOptions()


class OkfConfig(_Model):
    """`corpus.agent.okf`: whether the `okf-type` gate requires a `type` in every agent document's frontmatter
    (default: only under the `strict` gates preset), and the types it allows (default: any)."""

    require_type: bool | None = None
    allowed_types: tuple[str, ...] | None = None


class AgentCorpus(_Model):
    root: str | None = None
    index: str | None = None
    okf: OkfConfig | None = Field(default=None, exclude=True)  # outside the hash: read by the gates alone


class HumanCorpus(_Model):
    plugin: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class Corpus(_Model):
    agent: AgentCorpus = AgentCorpus()
    human: HumanCorpus | None = None


class AreasConfig(_Model):
    depth: int = Field(default=1, ge=1, le=4)
    roots: tuple[str, ...] = DEFAULT_AREA_ROOTS
    exclude: tuple[Glob, ...] = ()


# what part a file plays (docbridge.engine.discovery.roles names them)
Role = Literal["source", "test", "example", "demo", "template", "docs-site", "script", "generated"]


class AnalysisConfig(_Model):
    areas: AreasConfig = AreasConfig()
    # glob → role, before anything Doc Bridge reads from the layout, the manifests or a file's header; the first
    # glob (in the order written) that matches a path decides
    roles: dict[Glob, Role] = Field(default_factory=dict)


class LimitsConfig(_Model):
    max_file_bytes: int = Field(default=1024 * 1024, ge=1)
    max_total_bytes: int = Field(default=1024 * 1024 * 1024, ge=1)
    max_files: int = Field(default=200_000, ge=1)
    relations_per_document: int = Field(default=64, ge=1)


class CheckConfig(_Model):
    severity: dict[str, Severity] = Field(default_factory=dict)
    ignore: tuple[Glob, ...] = ()
    # documents that describe the past (changelogs, release notes, migration guides, blog posts): their mentions
    # of paths and names that are gone are history, not drift. None: the built-in patterns; [] : none.
    history: tuple[Glob, ...] | None = None
    # what check reports about structure and names: `library` (findings about library source only: an area only
    # where its siblings are mostly documented, a relation only between packages documented apart, no note on a
    # name several modules declare), or `all` (every area, every import between areas and every ambiguous name,
    # as the original defines them). Unset: `all` where the repository declares its architecture (ownership
    # records, or relations declared in frontmatter), `library` everywhere else.
    scope: Literal["library", "all"] | None = None


class RetrievalParams(_Model):
    """BM25 `k1` (term-frequency saturation) and `b` (length normalisation) as the configuration asks for them;
    unset, the defaults 1.2 and 0.75 (docbridge.engine.retrieval.lexical rescores its candidates with others)."""

    k1: float | None = Field(default=None, gt=0)
    b: float | None = Field(default=None, ge=0, le=1)

    def requested(self) -> dict[str, float]:
        return {k: v for k, v in (("k1", self.k1), ("b", self.b)) if v is not None}

    def tuned(self) -> dict[str, float]:
        """The values that differ from the defaults (what the projection carries; {} ranks as by default)."""
        return {k: float(v) for k, v in self.requested().items() if v != BM25_DEFAULTS[k]}


class RetrievalConfig(_Model):
    weights: dict[str, float] = Field(default_factory=dict)
    # outside the configuration hash (every default artifact keeps its hash): the projection carries the values
    # that differ from the defaults in its header, and a stored projection with others is rebuilt
    params: RetrievalParams = Field(default_factory=RetrievalParams, exclude=True)
    # hybrid search by default (docbridge.engine.semantic); outside the hash: it changes no lexical artifact
    hybrid: bool = Field(default=False, exclude=True)

    @field_validator("weights", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name, weight in value.items():
                if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                    raise ValueError(f"weight for {name!r} must be a number, not {json.dumps(weight, default=str)}")
        return value

    @field_validator("weights")
    @classmethod
    def _known_fields(cls, value: dict[str, float]) -> dict[str, float]:
        # Unknown fields are ignored (as the original does); a weight is a finite number from 0 to 100.
        for name, weight in value.items():
            if not math.isfinite(weight) or not 0 <= weight <= MAX_WEIGHT:
                raise ValueError(f"weight for {name!r} must be a finite number from 0 to {MAX_WEIGHT:g}, "
                                 f"not {weight!r}")
        return {k: v for k, v in value.items() if k in DEFAULT_WEIGHTS}


class EmbedConfig(_Model):
    """Where chunk embeddings come from: the local model (no `baseUrl`) or an OpenAI-compatible endpoint."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    batch_size: int = Field(default=64, ge=1, le=2048)
    # what an untrusted repository asked for and did not get, as the sentence to show (set by `load_config`)
    _refused: str | None = PrivateAttr(default=None)

    @property
    def refused(self) -> str | None:
        return self._refused

    def asks_network(self) -> bool:
        return bool(self.base_url or self.api_key_env)


def _inside_repository(value: str) -> str:
    """`value` as a relative path inside the repository (`./` and trailing `/` dropped, `\\` as `/`)."""
    value = value.strip().replace("\\", "/").removeprefix("./").rstrip("/")
    while value.startswith("./"):
        value = value.removeprefix("./")
    if not value or value == "." or value.startswith("/") or (len(value) > 1 and value[1] == ":") or \
            ".." in value.split("/"):
        raise ValueError("must be a relative path inside the repository")
    return value


class IndexConfig(_Model):
    """The semantic index (docbridge.engine.semantic): where it is kept (`dir`, default `.docbridge/semantic`),
    what it is cut from (`sources`: the documents and modules at or under these paths; default every one),
    passage size, the RRF constant and the embeddings' source."""

    dir: str | None = None
    sources: tuple[str, ...] | None = Field(default=None, max_length=256)
    chunk_chars: int = Field(default=800, ge=100, le=20_000)
    rrf_k: int = Field(default=60, ge=1, le=1000)
    embed: EmbedConfig = EmbedConfig()

    @field_validator("dir")
    @classmethod
    def _index_dir(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = _inside_repository(value)
        first = value.split("/")[0]
        if first == ".git":
            raise ValueError("must not be inside .git")
        if value == ".docbridge" or value.split("/")[:2] in (
                [".docbridge", "index"], [".docbridge", "cache"]):
            raise ValueError("must be a folder of its own (not .docbridge, .docbridge/index or .docbridge/cache, "
                             "which hold Doc Bridge's other files)")
        return value

    @field_validator("sources")
    @classmethod
    def _index_sources(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        paths = set()
        for item in value:
            try:
                paths.add(_inside_repository(item))
            except ValueError as exc:
                raise ValueError(f"{json.dumps(item)} {exc}") from None
        return tuple(sorted(paths))


class RegistryRole(_Model):
    """One enrichment role: its agent identity and, optionally, its own command."""

    agent_id: str | None = None
    command: str | None = None


RegistryRoleName = Literal["curator", "reviewer", "adjudicator"]


def _default_roles() -> dict[RegistryRoleName, RegistryRole]:
    return {"curator": RegistryRole()}


class RegistryConfig(_Model):
    """`intelligence.registry`: the enrichment agent. Nothing leaves the process unless `enabled`."""

    enabled: bool = False
    agent_id: str = Field(default="docbridge-agent", min_length=1, max_length=128)
    agent_version: str = Field(default="1", max_length=64)
    prompt_version: str = Field(default="1", min_length=1, max_length=64)
    command: str | None = None
    roles: dict[RegistryRoleName, RegistryRole] = Field(default_factory=_default_roles)
    max_pack_bytes: int = Field(default=65536, ge=1024, le=4 * 1024 * 1024)
    agent_root: str | None = None
    timeout_seconds: float = Field(default=120.0, gt=0, le=3600)
    max_output_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    _refused: str | None = PrivateAttr(default=None)  # as EmbedConfig's

    @property
    def refused(self) -> str | None:
        return self._refused

    def commands(self) -> list[str]:
        return [c for c in (self.command, *(r.command for r in self.roles.values())) if c]

    def agent_ids(self) -> frozenset[str]:
        """Every configured agent's id (the registry's and each role's): none of them may decide a proposal."""
        return frozenset({self.agent_id, *(r.agent_id for r in self.roles.values() if r.agent_id)})

    @field_validator("roles", mode="before")
    @classmethod
    def _role_list(cls, value: Any) -> Any:
        # a list of role names is accepted too: each with the registry's own agent and command
        if isinstance(value, list):
            return {name: {} for name in value}
        return value


class IntelligenceConfig(_Model):
    registry: RegistryConfig = RegistryConfig()


class RenderConfig(_Model):
    templates: dict[str, str] = Field(default_factory=dict)  # template name -> path relative to the root


class ReconciliationConfig(_Model):
    """`docbridge reconcile`: the scope observed relations aggregate to, the kinds a declaration must cover
    (None: every observed kind; empty: none), and whether documents that declare nothing are reported."""

    scope: Literal["file", "module", "package", "area"] = "file"
    required_relation_kinds: tuple[Literal["imports", "re-exports"], ...] | None = None
    include_orphaned_documents: bool = False


class RulesConfig(_Model):
    """Rules modes (behaviours §8.2): the default severity of every rule, per-rule overrides (`off` drops a
    rule), critical paths (gitignore-style globs) and the betweenness a module needs to be central."""

    mode: Literal["default", "recommended", "strict"] | None = None  # None: no mode, findings as they are
    overrides: dict[str, Literal["error", "warn", "info", "off"]] = Field(default_factory=dict)
    critical_paths: tuple[Glob, ...] = ()
    centrality_threshold: float = Field(default=0.2, ge=0, le=1)


class AuditConfig(_Model):
    """`docbridge audit`: the documentation quality thresholds."""

    min_words: int = Field(default=20, ge=0)
    require_examples: bool = True
    required_sections: dict[Glob, tuple[str, ...]] = Field(default_factory=dict)  # path glob -> headings


class DoctorConfig(_Model):
    suite: str | None = None  # the golden retrieval suite hit@3 is measured on


GateId = Literal["index-freshness", "index-reproducible", "human-guide-links", "okf-type", "docs-style",
                 "documentation-standard-v1", "link-rot", "routing-currency", "bootstrap-size"]


class GatesConfig(_Model):
    """`docbridge gate run` and the MCP tool gate.status (docbridge.engine.render.gates): a preset (minimal:
    index-freshness; standard: and human-guide-links; strict: and okf-type and docs-style; playbook:
    index-freshness and okf-type), the gates `include` adds and `exclude` removes, and per-gate `options`
    (`docs-style`: `{profile, required}`)."""

    preset: Literal["minimal", "standard", "strict", "playbook"] = "minimal"
    include: tuple[GateId, ...] = Field(default=(), max_length=16)
    exclude: tuple[GateId, ...] = Field(default=(), max_length=16)
    options: dict[str, Any] = Field(default_factory=dict)


StandardRuleId = Literal["human-docs", "llms-and-raw-source", "agent-handoffs", "contribution", "metadata",
                         "cross-links", "tested-quickstarts", "visual-explanations", "structured-diagrams"]
EvidencePath = Annotated[str, Field(min_length=1, max_length=512)]


class EvidenceFile(_Model):
    path: EvidencePath
    contains: tuple[Annotated[str, Field(min_length=1, max_length=512)], ...] = Field(min_length=1, max_length=32)


class LinkEvidence(_Model):
    url: Annotated[str, Field(min_length=1, max_length=512)]
    paths: tuple[EvidencePath, ...] = Field(min_length=1, max_length=16)


class QuickstartEvidence(_Model):
    id: Annotated[str, Field(min_length=1, max_length=128)]
    doc: EvidencePath
    test: EvidencePath
    command: Annotated[str, Field(min_length=1, max_length=512)]
    test_contains: tuple[Annotated[str, Field(min_length=1, max_length=512)], ...] = Field(min_length=1,
                                                                                          max_length=32)


class EcosystemContract(_Model):
    manifest: EvidencePath
    claims: EvidencePath
    product_id: Annotated[str, Field(min_length=1, max_length=128)]


class StandardException(_Model):
    rule_id: StandardRuleId
    reason: Annotated[str, Field(min_length=10, max_length=1024)]
    approved_by: Annotated[str, Field(min_length=1, max_length=256)]
    tracking_url: Annotated[str, Field(pattern=r"^https?://\S+$", max_length=512)]


class DocumentationStandardV1Config(_Model):
    """`conformance.documentationStandardV1`: the evidence the documentation-standard-v1 profile checks, and the
    approved exceptions (one per rule)."""

    raw_sources: tuple[EvidencePath, ...] = Field(default=(), max_length=64)
    contribution_paths: tuple[EvidencePath, ...] = Field(default=(), max_length=16)
    metadata: tuple[EvidenceFile, ...] = Field(default=(), max_length=32)
    links: tuple[LinkEvidence, ...] = Field(default=(), max_length=64)
    quickstarts: tuple[QuickstartEvidence, ...] = Field(default=(), max_length=32)
    visuals: tuple[EvidencePath, ...] = Field(default=(), max_length=64)
    diagrams: tuple[EvidenceFile, ...] = Field(default=(), max_length=32)
    ecosystem_contract: EcosystemContract | None = None
    exceptions: tuple[StandardException, ...] = Field(default=(), max_length=32)

    @model_validator(mode="after")
    def _one_exception_per_rule(self) -> DocumentationStandardV1Config:
        seen: set[str] = set()
        for exception in self.exceptions:
            if exception.rule_id in seen:
                raise ValueError(f"exceptions: rule {exception.rule_id!r} has more than one exception")
            seen.add(exception.rule_id)
        return self


class ConformanceConfig(_Model):
    documentation_standard_v1: DocumentationStandardV1Config = DocumentationStandardV1Config()


class Config(_Model):
    schema_version: int = 1
    corpus: Corpus = Corpus()
    routing: Routing = Routing()
    analysis: AnalysisConfig = AnalysisConfig()
    ignore: tuple[Glob, ...] = ()
    limits: LimitsConfig = LimitsConfig()
    check: CheckConfig = CheckConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    reconciliation: ReconciliationConfig = ReconciliationConfig()
    rules: RulesConfig = RulesConfig()
    audit: AuditConfig = AuditConfig()
    doctor: DoctorConfig = DoctorConfig()
    # outside the hash: the semantic index keeps its own record of what it was built with
    index: IndexConfig = Field(default_factory=IndexConfig, exclude=True)
    # outside the hash: the enrichment overlay's effect is recorded as the projection's overlay hash
    intelligence: IntelligenceConfig = Field(default_factory=IntelligenceConfig, exclude=True)
    render: RenderConfig = Field(default_factory=RenderConfig, exclude=True)  # outside the hash: read on render
    # outside the hash: read by `docbridge gate run` alone
    gates: GatesConfig = Field(default_factory=GatesConfig, exclude=True)
    conformance: ConformanceConfig = Field(default_factory=ConformanceConfig, exclude=True)

    @property
    def ownership(self) -> tuple[OwnershipRecord, ...]:
        return self.routing.options.ownership

    @property
    def intents(self) -> tuple[IntentRoute, ...]:
        return self.routing.options.intents

    @property
    def changes(self) -> tuple[ChangeRoute, ...]:
        return self.routing.options.changes

    def weights(self) -> dict[str, float]:
        return {**DEFAULT_WEIGHTS, **self.retrieval.weights}

    def content_hash(self) -> str:
        return canonical_hash(self.model_dump(mode="json", by_alias=True))


def _key_path(loc: tuple[Any, ...], raw: Any) -> str:
    """Render a pydantic error location as the key a person wrote (ownership records by their id)."""
    parts: list[str] = []
    node = raw
    for item in loc:
        if isinstance(item, int) and isinstance(node, dict):
            # The ownership list was built from a dict: show the record's id instead of an index.
            key = list(node.keys())[item] if item < len(node) else str(item)
            parts.append(str(key))
            node = node.get(key)
        else:
            parts.append(str(item))
            node = node.get(item) if isinstance(node, dict) else (
                node[item] if isinstance(node, list) and isinstance(item, int) and item < len(node) else None)
    return ".".join(parts)


def _printable(text: str) -> str:
    """`text` with control characters escaped, so that an error about a key stays on one line."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def load_config(root: Path) -> Config:
    """`doc-bridge.config.json` under `root` (or the defaults), with what only the user decides taken from the
    user's settings (`apply_user_settings`)."""
    return apply_user_settings(load_repository_config(root), root)


def load_repository_config(root: Path) -> Config:
    """Read `doc-bridge.config.json` under `root`, or return the defaults when there is none."""
    from docbridge.engine.base.safe_io import read_config_file
    try:
        data = read_config_file(root, CONFIG_FILE)
    except ValueError as exc:  # a link out of the root, a FIFO, a directory, a file too large
        raise ConfigError(f"{exc}.") from exc
    if data is None:
        return Config()
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{CONFIG_FILE}: the file is not valid UTF-8 ({exc.reason}).") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{CONFIG_FILE}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}.") from exc
    except RecursionError as exc:
        raise ConfigError(f"{CONFIG_FILE}: invalid JSON: it nests too deeply to be read.") from exc
    except ValueError as exc:  # a number too long to convert, say
        raise ConfigError(f"{CONFIG_FILE}: invalid JSON: {str(exc).rstrip('.')}.") from exc
    return parse_config(raw)


COMMENT_KEY = "$comment"  # JSON has no comments: a member of this name is a note for people, anywhere


def _without_comments(raw: Any) -> Any:
    if isinstance(raw, dict):
        return {key: _without_comments(value) for key, value in raw.items() if key != COMMENT_KEY}
    if isinstance(raw, list):
        return [_without_comments(value) for value in raw]
    return raw


def _nul_at(raw: Any, loc: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """Where a key or a string value holds a NUL character (no path, glob or name can), or None."""
    if isinstance(raw, str):
        return loc if "\x00" in raw else None
    items = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, list) else ()
    for key, value in items:
        if isinstance(key, str) and "\x00" in key:
            return (*loc, key)
        found = _nul_at(value, (*loc, key))
        if found is not None:
            return found
    return None


def parse_config(raw: Any) -> Config:
    if not isinstance(raw, dict):
        raise ConfigError(f"{CONFIG_FILE}: the top level must be a JSON object.")
    try:
        raw = _without_comments(raw)
        nul = _nul_at(raw)
    except RecursionError as exc:
        raise ConfigError(f"{CONFIG_FILE}: it nests too deeply to be read.") from exc
    if nul is not None:
        raise ConfigError(f"{CONFIG_FILE}: {_printable('.'.join(str(part) for part in nul))}: holds a NUL character "
                          "(\\u0000), which no path, pattern or name can hold.")
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        messages = []
        for error in exc.errors():
            loc = tuple(x for x in error["loc"] if x not in ("function-after[_sorted_unique(), RoutingOptions]",))
            key = _printable(_key_path(loc, raw)) or "(top level)"
            message = f"{CONFIG_FILE}: {key}: {error['msg']}"
            value = error.get("input")
            if isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= 80):
                shown = json.dumps(value)  # escapes control characters too
                if shown not in message:
                    message += f" (the value is {shown})"
            messages.append(message)
        raise ConfigError("\n".join(messages)) from exc


# ------------------------------------------------------------------------------------------------ the user's own

USER_CONFIG_ENV = "DOCBRIDGE_USER_CONFIG"  # the user's settings file ("" for none)
MAX_USER_CONFIG_BYTES = 1024 * 1024


class UserIndexConfig(_Model):
    embed: EmbedConfig | None = None


class UserRegistryConfig(_Model):
    command: str | None = None


class UserIntelligenceConfig(_Model):
    registry: UserRegistryConfig = UserRegistryConfig()


class UserSettings(_Model):
    """The user's own settings: the embeddings endpoint and the agent command for every repository, and the
    repositories (folders, `~` allowed) whose own configuration may choose them."""

    trusted_repositories: tuple[str, ...] = ()
    index: UserIndexConfig = UserIndexConfig()
    intelligence: UserIntelligenceConfig = UserIntelligenceConfig()

    def trusts(self, root: Path) -> bool:
        try:
            here = root.resolve()
        except OSError:
            return False
        for entry in self.trusted_repositories:
            try:
                trusted = Path(entry).expanduser().resolve()
            except (OSError, RuntimeError):
                continue
            if trusted.is_absolute() and (here == trusted or trusted in here.parents):
                return True
        return False


def user_config_path() -> Path | None:
    """`$DOCBRIDGE_USER_CONFIG`, else `$XDG_CONFIG_HOME/docbridge/config.json`, else
    `~/.config/docbridge/config.json`; None when the variable is set empty."""
    given = os.environ.get(USER_CONFIG_ENV)
    if given is not None:
        return Path(given).expanduser() if given.strip() else None
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    home = Path(base) if base.strip() and Path(base).is_absolute() else Path.home() / ".config"
    return home / "docbridge" / "config.json"


_user_cache: dict[Path, tuple[tuple[int, int], UserSettings]] = {}


def load_user_settings() -> UserSettings:
    """The user's settings file, or the defaults when there is none (a malformed one is a ConfigError naming it)."""
    path = user_config_path()
    if path is None:
        return UserSettings()
    try:
        status = path.stat()
    except OSError:
        return UserSettings()
    stamp = (status.st_mtime_ns, status.st_size)
    cached = _user_cache.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    if not path.is_file():
        raise ConfigError(f"{path}: the user settings file is not a regular file.")
    if status.st_size > MAX_USER_CONFIG_BYTES:
        raise ConfigError(f"{path}: the user settings file is larger than {MAX_USER_CONFIG_BYTES} bytes.")
    try:
        raw = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc}).") from exc
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        where = f":{exc.lineno}:{exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ConfigError(f"{path}{where}: the user settings are not valid JSON.") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a JSON object.")
    try:
        settings = UserSettings.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise ConfigError(f"{path}: {key}: {first['msg']}") from exc
    _user_cache[path] = (stamp, settings)
    return settings


def apply_user_settings(config: Config, root: Path, settings: UserSettings | None = None) -> Config:
    """`config` with the endpoint and the agent command the user chose; an untrusted repository's own choice of
    them is dropped and kept as the sentence that says so."""
    settings = settings if settings is not None else load_user_settings()
    trusted = settings.trusts(root)
    where = user_config_path() or Path("~/.config/docbridge/config.json")
    index, intelligence = config.index, config.intelligence
    embed = settings.index.embed
    if embed is None and not trusted and index.embed.asks_network():
        embed = EmbedConfig()
        asked = index.embed.base_url or "an embeddings endpoint"
        key = f" with the key in ${index.embed.api_key_env}" if index.embed.api_key_env else ""
        embed._refused = (f"this repository's {CONFIG_FILE} asks to send text to {asked}{key}; only your own "
                          f"settings decide where text and keys go: set index.embed in {where}, or list this "
                          f"repository under trustedRepositories there.")
    if embed is not None:
        index = index.model_copy(update={"embed": embed})
    registry = intelligence.registry
    command = settings.intelligence.registry.command
    if command is not None or (not trusted and registry.commands()):
        roles = {name: role.model_copy(update={"command": None}) for name, role in registry.roles.items()}
        refused = None
        if command is None:
            refused = (f"this repository's {CONFIG_FILE} names an agent command to run "
                       f"({registry.commands()[0]!r}); only you decide which program runs: pass "
                       f"--agent-command, set intelligence.registry.command in {where}, or list this repository "
                       f"under trustedRepositories there.")
        registry = registry.model_copy(update={"command": command, "roles": roles})
        registry._refused = refused
        intelligence = intelligence.model_copy(update={"registry": registry})
    if index is config.index and intelligence is config.intelligence:
        return config
    return config.model_copy(update={"index": index, "intelligence": intelligence})
