"""Human decisions on pending proposals: `docbridge fix approve|reject PROPOSAL_ID --by NAME`.

An approval binds to the proposal id and the target's content hash (its id is the hash of both) and is
recorded under `.docbridge/approvals/`; the overlay is rewritten with the entry moved. Refused: `policy`
as the approver (it is not a person), the proposal's own agent as its approver, a target that changed
since the proposal (stale), and a second decision on the same proposal.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from engine.cache import artifact_dir, write_atomic
from engine.enrich.overlay import entity_hash, read_overlay, write_overlay
from engine.hashing import canonical_hash


class DecisionRefused(Exception):
    """A decision that may not be taken; the message says why."""


def approval_id(proposal_id: str, target_content_hash: str) -> str:
    return canonical_hash({"proposalId": proposal_id, "targetContentHash": target_content_hash})


def decide(root: Path, entities: dict[str, Any], proposal_id: str, by: str, approve: bool,
           reason: str | None = None) -> dict[str, Any]:
    """Approve or reject one pending proposal; the moved entry. Raises DecisionRefused."""
    by = by.strip()
    overlay = read_overlay(root)
    if overlay is None:
        raise DecisionRefused(f"{root / '.docbridge' / 'overlay.json'}: no usable overlay; run `docbridge enrich` "
                              "first.")
    for name, entries in (("accepted", overlay.accepted), ("rejected", overlay.rejected)):
        if any(e.get("proposalId") == proposal_id for e in entries):
            word = "approved" if name == "accepted" else "rejected"
            raise DecisionRefused(f"proposal {proposal_id} is already {word}; a proposal is decided once.")
    entry = next((e for e in overlay.pending if e.get("proposalId") == proposal_id), None)
    if entry is None:
        raise DecisionRefused(f"no pending proposal {proposal_id} in .docbridge/overlay.json.")
    if not by:
        raise DecisionRefused("--by needs the name of the person deciding.")
    if by == "policy":
        raise DecisionRefused(f"proposal {proposal_id} requires a person: `policy` cannot approve or reject it.")
    author = (entry.get("origin") or {}).get("agentId")
    if approve and by == author:
        raise DecisionRefused(f"{by} cannot approve its own output (proposal {proposal_id}).")
    entity = entities.get(entry.get("entity"))
    if approve and (entity is None or entity_hash(entity) != entry.get("targetContentHash")):
        raise DecisionRefused(f"proposal {proposal_id} is stale: {entry.get('entity')} changed since it was "
                              "proposed; run `docbridge enrich` again.")
    record_id = approval_id(proposal_id, str(entry.get("targetContentHash")))
    record = artifact_dir(root) / "approvals" / f"{record_id}.json"
    if record.exists():
        raise DecisionRefused(f"proposal {proposal_id} is already approved (approval {record_id[:12]}).")
    overlay.pending = [e for e in overlay.pending if e.get("proposalId") != proposal_id]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if approve:
        moved = {**{k: v for k, v in entry.items() if k != "note"}, "acceptedBy": by, "acceptedAt": now}
        overlay.accepted.append(moved)
    else:
        moved = {**{k: v for k, v in entry.items() if k != "note"}, "reason": "human-rejected",
                 "detail": f"{by}: {reason or 'no reason given'}"}
        overlay.rejected.append(moved)
    write_atomic(record, (json.dumps({"approvalId": record_id, "proposalId": proposal_id,
                                      "targetContentHash": entry.get("targetContentHash"), "by": by,
                                      "decision": "approved" if approve else "rejected", "reason": reason,
                                      "at": now}, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    write_overlay(root, overlay)
    return moved
