"""Adjudication: an agent of a different identity settles canonical conflicts and disputed contradictions.

An adjudication judges 1..16 pending proposals of one conflict and keeps a subset of them; its id is the
hash of {sorted judges, sorted keep, agentId, promptVersion}. It is rejected when it judges a proposal its own
agent made (`self-adjudication`), names a proposal that is not pending (`unknown-proposal`), keeps one it
does not judge or is malformed (`schema`), or carries another id (`proposal-id-mismatch`). The losers are
rejected `adjudicated`; the survivors stay pending (a person still decides) with their note cleared.

Pure: the agent call is docbridge.engine.enrich.run's.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from docbridge.engine.base.hashing import canonical_hash
from docbridge.engine.enrich.proposals import Origin
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel


class Adjudication(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    adjudication_id: str = Field(min_length=1, max_length=128)
    judges: list[str] = Field(min_length=1, max_length=16)
    keep: list[str] = Field(max_length=16)
    reason: str = Field(min_length=1, max_length=500)
    origin: Origin

    @model_validator(mode="after")
    def _keep_within_judges(self) -> Adjudication:
        if not set(self.keep) <= set(self.judges):
            raise ValueError("keep must be a subset of judges")
        return self


def adjudication_id(judges: list[str], keep: list[str], agent_id: str, prompt_version: str) -> str:
    return canonical_hash({"judges": sorted(judges), "keep": sorted(keep), "agentId": agent_id,
                           "promptVersion": prompt_version})


def conflicts(pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conflicts an adjudicator is asked about: pending canonical markers of one scope noted
    `canonical-conflict`, and pending contradiction flags of one pair of entities noted
    `disputed-contradiction` (with the flags they dispute)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    disputed: set[str] = set()
    for entry in pending:
        payload = entry.get("payload") or {}
        if entry.get("kind") == "mark-canonical" and entry.get("note") == "canonical-conflict":
            groups[("canonical-conflict", str(payload.get("scope")))].append(entry)
        elif entry.get("kind") == "flag-contradiction":
            pair = "|".join(sorted((str(entry.get("entity")), str(payload.get("against")))))
            groups[("disputed-contradiction", pair)].append(entry)
            if entry.get("note") == "disputed-contradiction":
                disputed.add(pair)
    out = []
    for (conflict, key), entries in sorted(groups.items()):
        if len(entries) < 2 or (conflict == "disputed-contradiction" and key not in disputed):
            continue
        out.append({"conflict": conflict, "key": key,
                    "proposals": sorted(entries, key=lambda e: str(e["proposalId"]))[:16]})
    return out


def _rejected(raw: Any, reason: str, detail: str) -> dict[str, Any]:
    data = raw if isinstance(raw, dict) else {}
    rid = data.get("adjudicationId")
    return {"proposalId": rid if isinstance(rid, str) and rid else "raw-" + canonical_hash(raw)[:40],
            "kind": "adjudication", "entity": None, "reason": reason, "detail": detail[:500]}


def apply(raws: list[Any], pending: list[dict[str, Any]], rejected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Apply valid adjudications to `pending` and `rejected` (in place); the rejected adjudications."""
    refused: list[dict[str, Any]] = []
    for raw in sorted(raws, key=canonical_hash):
        if not isinstance(raw, dict):
            refused.append(_rejected(raw, "schema", "an adjudication must be a JSON object"))
            continue
        try:
            verdict = Adjudication.model_validate(raw)
        except ValidationError as exc:
            error = exc.errors()[0]
            refused.append(_rejected(raw, "schema", f"{'.'.join(str(x) for x in error['loc'])}: {error['msg']}"))
            continue
        by_id = {str(e["proposalId"]): e for e in pending}
        unknown = [j for j in verdict.judges if j not in by_id]
        if unknown:
            refused.append(_rejected(raw, "unknown-proposal", f"{unknown[0]} is not pending"))
            continue
        own = [j for j in verdict.judges if (by_id[j].get("origin") or {}).get("agentId") == verdict.origin.agent_id]
        if own:
            refused.append(_rejected(raw, "self-adjudication",
                                     f"{verdict.origin.agent_id} judges its own proposal {own[0]}"))
            continue
        expected = adjudication_id(verdict.judges, verdict.keep, verdict.origin.agent_id,
                                   verdict.origin.prompt_version)
        if verdict.adjudication_id != expected:
            refused.append(_rejected(raw, "proposal-id-mismatch", f"adjudicationId should be {expected}"))
            continue
        for judged in verdict.judges:
            entry = by_id[judged]
            if judged in verdict.keep:
                entry.pop("note", None)
            else:
                pending.remove(entry)
                rejected.append({**{k: v for k, v in entry.items() if k != "note"}, "reason": "adjudicated",
                                 "detail": f"{verdict.origin.agent_id}: {verdict.reason}",
                                 "adjudicationId": verdict.adjudication_id})
    return refused
