"""Enrichment proposals (`EnrichmentProposalV1`): the envelope and the eleven kinds, as a pydantic
discriminated union on `kind`, with the payload limits of the original and the proposal-id rule.

The JSON Schema agent authors validate against is generated from these models (`proposal_schema()`) and
shipped as `engine/data/enrichment-proposal.schema.json`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from docbridge.engine.base.hashing import canonical_hash
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

PROTOCOL = "doc-bridge.registry-agent.v2"
OVERLAY_SCHEMA_VERSION = 1

POLICY, HUMAN, FINDING = "policy", "human", "finding"
KIND_POLICY: dict[str, str] = {
    "classify-document": POLICY, "summarize": POLICY, "add-alias": POLICY, "add-intent": POLICY,
    "mark-canonical": HUMAN, "propose-relation": HUMAN, "flag-contradiction": HUMAN, "flag-redundancy": HUMAN,
    "flag-gap": FINDING, "rank-hint": POLICY, "suggest-area": HUMAN,
}
KINDS = tuple(sorted(KIND_POLICY))
RELATION_KINDS = ("covers", "documents", "depends-on", "links-to", "mentions", "related-to")
# which task (role) proposes which kinds: the curator handles documents, the reviewer structure
ROLE_TASKS = {"curator": "curate", "reviewer": "review", "adjudicator": "adjudicate"}
ROLE_KINDS = {
    "curator": ("classify-document", "summarize", "add-alias", "add-intent", "mark-canonical", "flag-redundancy",
                "flag-gap"),
    "reviewer": ("propose-relation", "flag-contradiction", "flag-gap", "rank-hint", "suggest-area"),
}


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class EvidenceItem(_Model):
    """A line range of a file the snapshot holds (`source: snapshot`) or of a finding's file (`report`)."""

    source: Literal["snapshot", "report"] = "snapshot"
    path: str = Field(min_length=1, max_length=1024)
    line_start: int = Field(ge=1)
    line_end: int = Field(ge=1)
    excerpt: str | None = Field(default=None, max_length=2000)

    def key(self) -> str:
        return f"{self.source}:{self.path}:{self.line_start}:{self.line_end}"


class Origin(_Model):
    agent_id: str = Field(min_length=1, max_length=128)
    agent_version: str = Field(default="0", max_length=64)
    prompt_version: str = Field(min_length=1, max_length=64)
    model: str | None = Field(default=None, max_length=128)
    provider: str | None = Field(default=None, max_length=128)


class ClassifyPayload(_Model):
    type: Literal["guide", "reference", "runbook", "adr", "spec", "index", "changelog", "policy", "other"]
    audience: Literal["agent", "human", "human-and-agent"]
    lifecycle: Literal["draft", "active", "deprecated", "archived"]
    criticality: Literal["tier-0", "tier-1", "tier-2"]


class SummarizePayload(_Model):
    summary: str = Field(min_length=1, max_length=400)
    language: str = Field(min_length=2, max_length=16)


class AliasPayload(_Model):
    alias: str = Field(min_length=1, max_length=64)


class IntentPayload(_Model):
    phrase: str = Field(min_length=1, max_length=120)
    language: str = Field(min_length=2, max_length=16)


class CanonicalPayload(_Model):
    scope: str = Field(min_length=1, max_length=1024)


class RelationPayload(_Model):
    from_: str = Field(alias="from", min_length=1, max_length=1024)
    to: str = Field(min_length=1, max_length=1024)
    kind: Literal["covers", "documents", "depends-on", "links-to", "mentions", "related-to"]
    detection: str | None = Field(default=None, max_length=200)


class ContradictionPayload(_Model):
    against: str = Field(min_length=1, max_length=1024)
    claim: str = Field(min_length=1, max_length=1000)
    observed: str = Field(min_length=1, max_length=1000)


class RedundancyPayload(_Model):
    with_: str = Field(alias="with", min_length=1, max_length=1024)


class GapPayload(_Model):
    area: str = Field(min_length=1, max_length=1024)
    missing: str = Field(min_length=1, max_length=400)


class RankHintPayload(_Model):
    relevance: Literal["strong", "weak"]


class SuggestAreaPayload(_Model):
    directories: list[str] = Field(min_length=1, max_length=32)
    name: str = Field(min_length=1, max_length=64)


class _Envelope(_Model):
    proposal_id: str = Field(min_length=1, max_length=128)
    entity: str = Field(min_length=1, max_length=1024)
    target_content_hash: str = Field(min_length=1, max_length=128)
    confidence: float = Field(ge=0, le=1)
    reason: str = Field(min_length=1, max_length=500)
    evidence: list[EvidenceItem] = Field(min_length=1, max_length=16)
    origin: Origin
    base_snapshot_hash: str = Field(min_length=1, max_length=128)
    related_diagnostics: list[str] = Field(default_factory=list, max_length=16)


class ClassifyDocument(_Envelope):
    kind: Literal["classify-document"]
    payload: ClassifyPayload


class Summarize(_Envelope):
    kind: Literal["summarize"]
    payload: SummarizePayload


class AddAlias(_Envelope):
    kind: Literal["add-alias"]
    payload: AliasPayload


class AddIntent(_Envelope):
    kind: Literal["add-intent"]
    payload: IntentPayload


class MarkCanonical(_Envelope):
    kind: Literal["mark-canonical"]
    payload: CanonicalPayload


class ProposeRelation(_Envelope):
    kind: Literal["propose-relation"]
    payload: RelationPayload


class FlagContradiction(_Envelope):
    kind: Literal["flag-contradiction"]
    payload: ContradictionPayload


class FlagRedundancy(_Envelope):
    kind: Literal["flag-redundancy"]
    payload: RedundancyPayload


class FlagGap(_Envelope):
    kind: Literal["flag-gap"]
    payload: GapPayload


class RankHint(_Envelope):
    kind: Literal["rank-hint"]
    payload: RankHintPayload


class SuggestArea(_Envelope):
    kind: Literal["suggest-area"]
    payload: SuggestAreaPayload


Proposal = Annotated[
    ClassifyDocument | Summarize | AddAlias | AddIntent | MarkCanonical | ProposeRelation | FlagContradiction
    | FlagRedundancy | FlagGap | RankHint | SuggestArea,
    Field(discriminator="kind")]
PROPOSAL_ADAPTER: TypeAdapter[Any] = TypeAdapter(Proposal)


def proposal_key(kind: str, payload: dict[str, Any]) -> Any:
    """The distinguishing part of a payload (None for the kinds that fill one slot of their entity)."""
    if kind == "add-alias":
        return payload.get("alias")
    if kind == "add-intent":
        return [payload.get("phrase"), payload.get("language")]
    if kind == "propose-relation":
        return [payload.get("from"), payload.get("to"), payload.get("kind")]
    if kind == "flag-contradiction":
        return payload.get("against")
    if kind == "flag-redundancy":
        return payload.get("with")
    if kind == "flag-gap":
        return [payload.get("area"), payload.get("missing")]
    if kind == "suggest-area":
        return payload.get("directories")
    return None


def proposal_id(kind: str, entity: str, target_content_hash: str, agent_id: str, prompt_version: str,
                payload: dict[str, Any]) -> str:
    """hash of {kind, entity, targetContentHash, agentId, promptVersion, key}: re-runs are idempotent."""
    return canonical_hash({"kind": kind, "entity": entity, "targetContentHash": target_content_hash,
                           "agentId": agent_id, "promptVersion": prompt_version,
                           "key": proposal_key(kind, payload)})


def dump(proposal: Any) -> dict[str, Any]:
    """A validated proposal as the camelCase JSON it was written in (without unset optional fields)."""
    return proposal.model_dump(mode="json", by_alias=True, exclude_none=True)


def proposal_schema() -> dict[str, Any]:
    schema = PROPOSAL_ADAPTER.json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:docbridge:enrichment-proposal-v1",
            "title": "EnrichmentProposalV1", **schema}
