"""Human decisions on pending proposals: `docbridge fix approve|reject PROPOSAL_ID --by NAME`.

An approval binds to the proposal id and the target's content hash (its id is the hash of both) and is
recorded under `.docbridge/approvals/`; the overlay is rewritten with the entry moved. Refused: `policy`
or a configured agent as the approver (neither is a person), the agent that proposed it, a target that
changed since the proposal (stale), and a second decision on the same proposal.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from docbridge.engine.base.cache import artifact_dir, write_atomic
from docbridge.engine.base.hashing import canonical_hash
from docbridge.engine.base.overlay import OverlayBusy, entity_hash, overlay_lock, read_overlay, write_overlay
from docbridge.engine.base.safe_io import read_regular


class DecisionRefused(Exception):
    """A decision that may not be taken; the message says why."""


def approval_id(proposal_id: str, target_content_hash: str) -> str:
    return canonical_hash({"proposalId": proposal_id, "targetContentHash": target_content_hash})


def decide(root: Path, entities: dict[str, Any], proposal_id: str, by: str, approve: bool,
           reason: str | None = None, agents: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Approve or reject one pending proposal; the moved entry. Raises DecisionRefused.

    `agents` are the configured agents' ids: none of them decides (only people do). The overlay is read and
    written under its lock, so that an enrichment run writing meanwhile neither loses this decision nor has
    it lost. A decision whose record was written but whose overlay was not (the process was killed between
    the two) is completed by the next attempt instead of being refused."""
    by = by.strip()
    if not by:
        raise DecisionRefused("--by needs the name of the person deciding.")
    if by == "policy":
        raise DecisionRefused(f"proposal {proposal_id} requires a person: `policy` cannot approve or reject it.")
    if by in agents:
        raise DecisionRefused(f"{by} is a configured agent; proposals are approved or rejected by people.")
    try:
        with overlay_lock(root):
            return _decide(root, entities, proposal_id, by, approve, reason)
    except OverlayBusy as exc:
        raise DecisionRefused(str(exc)) from None


def _decide(root: Path, entities: dict[str, Any], proposal_id: str, by: str, approve: bool,
            reason: str | None) -> dict[str, Any]:
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
    # who proposed it is what the tool recorded (`proposedBy`), not what the agent wrote into its origin
    author = entry.get("proposedBy") or (entry.get("origin") or {}).get("agentId")
    record_id = approval_id(proposal_id, str(entry.get("targetContentHash")))
    record = artifact_dir(root) / "approvals" / f"{record_id}.json"
    recorded = _record(record)
    if recorded is not None:  # an earlier decision was interrupted after its record: complete it as recorded
        by, approve, reason, now = recorded["by"], recorded["decision"] == "approved", recorded.get("reason"), \
            recorded["at"]
    else:
        if approve and by == author:
            raise DecisionRefused(f"{by} cannot approve its own output (proposal {proposal_id}).")
        entity = entities.get(entry.get("entity", ""))  # no entity id is empty: a missing one finds nothing
        if approve and (entity is None or entity_hash(entity) != entry.get("targetContentHash")):
            raise DecisionRefused(f"proposal {proposal_id} is stale: {entry.get('entity')} changed since it was "
                                  "proposed; run `docbridge enrich` again.")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write_atomic(record, (json.dumps({"approvalId": record_id, "proposalId": proposal_id,
                                          "targetContentHash": entry.get("targetContentHash"), "by": by,
                                          "decision": "approved" if approve else "rejected", "reason": reason,
                                          "at": now}, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    overlay.pending = [e for e in overlay.pending if e.get("proposalId") != proposal_id]
    if approve:
        moved = {**{k: v for k, v in entry.items() if k != "note"}, "acceptedBy": by, "acceptedAt": now}
        overlay.accepted.append(moved)
    else:
        moved = {**{k: v for k, v in entry.items() if k != "note"}, "reason": "human-rejected",
                 "detail": f"{by}: {reason or 'no reason given'}"}
        overlay.rejected.append(moved)
    write_overlay(root, overlay)
    return moved


def _record(path: Path) -> dict[str, Any] | None:
    """A decision record written by `_decide` (None when there is none or it is not one)."""
    try:
        data = json.loads(read_regular(path, 1024 * 1024).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("decision") not in ("approved", "rejected") or \
            not isinstance(data.get("by"), str) or not isinstance(data.get("at"), str):
        return None
    return data
