"""Deterministic validators: each raw proposal is accepted (by policy), held pending (for a person) or
rejected with a reason, in the original's order of envelope checks, then the kind's own checks.

Envelope, in order: not an object → schema; unknown kind → invalid-kind; empty evidence → no-evidence;
schema failure → schema; baseSnapshotHash ≠ snapshot → base-snapshot-mismatch; unknown entity →
unknown-entity; an entity the agent was not shown → entity-outside-pack; entity hash ≠ targetContentHash →
stale-target; unknown related diagnostic → unknown-diagnostic; an evidence item that is not a line range of
a file the snapshot holds → evidence-outside-artifacts; id mismatch → proposal-id-mismatch.

Pure: no agent is run here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docbridge.engine.base.hashing import canonical_hash
from docbridge.engine.base.overlay import entity_hash
from docbridge.engine.enrich.proposals import FINDING, KIND_POLICY, PROPOSAL_ADAPTER, dump, proposal_id
from pydantic import ValidationError

ALIAS_COLLISION = 0.95
SECRET_PATTERNS = (
    re.compile(r"AKIA[0-9A-Z]{16}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"(?i)\b(password|passwd|secret|api[_-]?key|token)\s*[:=]\s*['\"]?[^\s'\"]{6,}"),
)
INVENTED = frozenset({"unknown-entity", "unknown-endpoint", "unknown-scope", "unknown-diagnostic",
                      "unknown-directory", "evidence-outside-artifacts", "entity-outside-pack"})


def secret_shaped(text: str) -> bool:
    return any(p.search(text) for p in SECRET_PATTERNS)


def redact(text: str) -> str:
    for pattern in SECRET_PATTERNS:
        text = pattern.sub("[redacted]", text)
    return text


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).lower()


@dataclass(slots=True)
class Context:
    """What the validators check a proposal against: the snapshot of this run and what surrounds it."""

    snapshot_hash: str
    entities: dict[str, Any]
    observed: set[tuple[str, str, str]]
    diagnostics: set[str]
    line_count: Callable[[str], int | None]
    summaries: dict[str, str | None]
    names: list[str]  # lowercased ids, names, aliases, titles and file stems
    area_paths: dict[str, str]  # area entity id -> directory
    directories: set[str]  # every directory holding a scanned file
    pack_entities: set[str] | None = None  # the entities the agent was shown (None: not checked)


@dataclass(slots=True)
class Verdict:
    status: str  # accepted | pending | rejected
    entry: dict[str, Any]


@dataclass(slots=True)
class Partition:
    accepted: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def all(self) -> list[dict[str, Any]]:
        return [*self.accepted, *self.pending, *self.rejected]


def rejection(raw: Any, reason: str, detail: str) -> dict[str, Any]:
    """A rejected record: the proposal's identifying fields as far as they could be read, reason, detail."""
    data = raw if isinstance(raw, dict) else {}
    pid = data.get("proposalId")
    return {"proposalId": pid if isinstance(pid, str) and pid else "raw-" + canonical_hash(raw)[:40],
            "kind": data.get("kind") if isinstance(data.get("kind"), str) else None,
            "entity": data.get("entity") if isinstance(data.get("entity"), str) else None,
            "reason": reason, "detail": detail[:500],
            **({"proposalReason": data["reason"][:500]} if isinstance(data.get("reason"), str) else {}),
            **({"evidence": data["evidence"]} if isinstance(data.get("evidence"), list)
               and all(isinstance(e, dict) for e in data["evidence"]) else {}),
            **({"origin": data["origin"]} if isinstance(data.get("origin"), dict) else {})}


def _schema_detail(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(x) for x in error["loc"][1:] or error["loc"])
    return f"{where}: {error['msg']}"


def _safe_path(path: str) -> bool:
    return not (path.startswith("/") or "\\" in path or ".." in path.split("/") or ":" in path.split("/")[0])


def validate(raw: Any, ctx: Context, earlier: Partition) -> Verdict:
    """One raw proposal's verdict; `earlier` holds the verdicts of this run so far and of the previous overlay."""
    if not isinstance(raw, dict):
        return Verdict("rejected", rejection(raw, "schema", "a proposal must be a JSON object"))
    kind = raw.get("kind")
    if kind not in KIND_POLICY:
        return Verdict("rejected", rejection(raw, "invalid-kind", f"unknown kind {kind!r}"))
    if not raw.get("evidence"):
        return Verdict("rejected", rejection(raw, "no-evidence", "a proposal needs at least one evidence item"))
    try:
        proposal = PROPOSAL_ADAPTER.validate_python(raw)
    except ValidationError as exc:
        return Verdict("rejected", rejection(raw, "schema", _schema_detail(exc)))
    data = dump(proposal)
    if proposal.base_snapshot_hash != ctx.snapshot_hash:
        return Verdict("rejected", rejection(data, "base-snapshot-mismatch",
                                             "the proposal was made against another snapshot"))
    entity = ctx.entities.get(proposal.entity)
    if entity is None:
        return Verdict("rejected", rejection(data, "unknown-entity", f"no entity {proposal.entity!r}"))
    if ctx.pack_entities is not None and proposal.entity not in ctx.pack_entities:
        return Verdict("rejected", rejection(data, "entity-outside-pack",
                                             f"{proposal.entity} was not in the packs the agent was given"))
    if entity_hash(entity) != proposal.target_content_hash:
        return Verdict("rejected", rejection(data, "stale-target",
                                             f"{proposal.entity} changed since the proposal was made"))
    for diagnostic in proposal.related_diagnostics:
        if diagnostic not in ctx.diagnostics:
            return Verdict("rejected", rejection(data, "unknown-diagnostic", f"no finding {diagnostic!r}"))
    for item in proposal.evidence:
        lines = ctx.line_count(item.path) if _safe_path(item.path) else None
        if lines is None or item.line_end < item.line_start or item.line_end > lines:
            return Verdict("rejected", rejection(data, "evidence-outside-artifacts",
                                                 f"{item.key()} is not a line range of a scanned file"))
    expected = proposal_id(proposal.kind, proposal.entity, proposal.target_content_hash, proposal.origin.agent_id,
                           proposal.origin.prompt_version, data["payload"])
    if proposal.proposal_id != expected:
        return Verdict("rejected", rejection(data, "proposal-id-mismatch",
                                             f"proposalId should be {expected} (kind, entity, targetContentHash, "
                                             "agentId, promptVersion, key)"))
    return _by_kind(proposal, data, entity, ctx, earlier)


def _accept(data: dict[str, Any], note: str | None = None) -> Verdict:
    policy = KIND_POLICY[data["kind"]]
    if policy == "human":
        return Verdict("pending", {**data, "policy": policy, **({"note": note} if note else {})})
    return Verdict("accepted", {**data, "policy": policy, "acceptedBy": "policy",
                                **({"finding": True} if policy == FINDING else {})})


def _reject(data: dict[str, Any], reason: str, detail: str) -> Verdict:
    return Verdict("rejected", rejection(data, reason, detail))


def _inside(path: str, entity: Any) -> bool:
    base = entity.path
    if base is None:
        return False
    return path == base or base in (".", "") or path.startswith(base.rstrip("/") + "/")


def _by_kind(proposal: Any, data: dict[str, Any], entity: Any, ctx: Context, earlier: Partition) -> Verdict:  # noqa: C901 (to split)
    kind, payload = proposal.kind, data["payload"]
    if kind in ("classify-document", "mark-canonical", "flag-redundancy") and entity.kind != "document":
        return _reject(data, "entity-kind", f"{kind} needs a document, not a {entity.kind}")
    if kind == "summarize":
        if secret_shaped(payload["summary"]):
            return _reject(data, "redaction", "the summary holds secret-shaped text")
        if _norm(payload["summary"]) == _norm(ctx.summaries.get(entity.id)):
            return _reject(data, "summary-unchanged", "the summary equals the current one")
    elif kind == "add-alias":
        from rapidfuzz import process
        from rapidfuzz.distance import JaroWinkler
        alias = payload["alias"].strip().lower()
        accepted = [str(e["payload"]["alias"]).lower() for e in earlier.accepted if e.get("kind") == "add-alias"]
        for names in (ctx.names, accepted):
            found = process.extractOne(alias, names, scorer=JaroWinkler.similarity, score_cutoff=ALIAS_COLLISION)
            if found is not None:
                return _reject(data, "alias-collision", f"{payload['alias']!r} collides with {found[0]!r}")
    elif kind == "mark-canonical":
        scope = payload["scope"]
        if scope not in ctx.entities:
            return _reject(data, "unknown-scope", f"no entity {scope!r}")
        rivals = [e for e in earlier.accepted if e.get("kind") == "mark-canonical"
                  and e["payload"].get("scope") == scope and e.get("entity") != entity.id]
        if rivals:
            return _reject(data, "canonical-conflict", f"{rivals[0]['entity']} is already canonical for {scope}")
        pending = [e for e in earlier.pending if e.get("kind") == "mark-canonical"
                   and e["payload"].get("scope") == scope and e.get("entity") != entity.id]
        if pending:
            for other in pending:
                other["note"] = "canonical-conflict"
            return _accept(data, "canonical-conflict")
    elif kind == "propose-relation":
        ends = (payload["from"], payload["to"])
        if any(end not in ctx.entities for end in ends) or entity.id not in ends or ends[0] == ends[1]:
            return _reject(data, "unknown-endpoint", "both endpoints must exist and the entity must be one of them")
        if (payload["from"], payload["kind"], payload["to"]) in ctx.observed:
            return _reject(data, "relation-already-observed", "the snapshot already holds this relation")
        endpoints = [ctx.entities[end] for end in ends]
        if not all(any(_inside(item["path"], end) for end in endpoints) for item in data["evidence"]):
            return _reject(data, "evidence-outside-endpoints", "evidence must lie inside an endpoint's file")
    elif kind == "flag-contradiction":
        against = ctx.entities.get(payload["against"])
        if against is None:
            return _reject(data, "unknown-endpoint", f"no entity {payload['against']!r}")
        for end in (entity, against):
            if not any(_inside(item["path"], end) for item in data["evidence"]):
                return _reject(data, "evidence-missing-for-endpoint", f"no evidence inside {end.id}")
        disputed = [e for e in earlier.pending if e.get("kind") == "flag-contradiction"
                    and {e.get("entity"), e["payload"].get("against")} == {entity.id, against.id}
                    and e.get("origin", {}).get("agentId") != proposal.origin.agent_id]
        if disputed:
            return _accept(data, "disputed-contradiction")
    elif kind == "flag-redundancy":
        twin = ctx.entities.get(payload["with"])
        if twin is None or twin.kind != "document" or twin.id == entity.id:
            return _reject(data, "unknown-endpoint", f"{payload['with']!r} is not another document")
        if entity_hash(twin) == entity_hash(entity):
            return _reject(data, "already-duplicate", "the two documents are already identical")
    elif kind == "flag-gap":
        if payload["area"] not in ctx.area_paths:
            return _reject(data, "unknown-scope", f"no area {payload['area']!r}")
        if any(e.get("kind") == "flag-gap" and e["payload"].get("area") == payload["area"]
               and _norm(e["payload"].get("missing")) == _norm(payload["missing"]) for e in earlier.accepted):
            return _reject(data, "already-covered", "the same gap is already recorded")
    elif kind == "suggest-area":
        for directory in payload["directories"]:
            clean = directory.strip("/")
            if not _safe_path(clean) or clean not in ctx.directories:
                return _reject(data, "unknown-directory", f"no scanned file under {directory!r}")
            for area_id, area_path in ctx.area_paths.items():
                if clean == area_path or clean.startswith(area_path + "/") or area_path.startswith(clean + "/"):
                    return _reject(data, "area-overlap", f"{directory!r} overlaps {area_id}")
    return _accept(data)
