"""Pending enrichment proposals as editor hints: the ones citing a file, located on the lines they cite, and
the Approve / Reject actions for them. Reads `.docbridge/overlay.json` (never the agent code); only while
`intelligence.registry.enabled`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docbridge.engine.base.overlay import enabled, overlay_path, read_overlay
from docbridge.engine.ide.types import QUICKFIX, Action

CODE = "ENRICHMENT_PROPOSAL"
APPROVE, REJECT = "docbridge.approveProposal", "docbridge.rejectProposal"


@dataclass(frozen=True, slots=True)
class ProposalHint:
    proposal_id: str
    kind: str
    entity: str
    line_start: int  # 0-based, inclusive
    line_end: int  # 0-based, inclusive
    message: str


_memo: dict[str, tuple[tuple[int, int] | None, dict[str, list[ProposalHint]]]] = {}


def _hints(root: Path) -> dict[str, list[ProposalHint]]:
    """Path -> the pending proposals citing it (memoised per overlay file size and time)."""
    path = overlay_path(root)
    try:
        st = os.stat(path)
        stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = None
    cached = _memo.get(str(root))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    by_path: dict[str, list[ProposalHint]] = {}
    overlay = read_overlay(root) if stamp is not None else None
    for entry in overlay.pending if overlay is not None else ():
        seen: set[tuple[str, int, int]] = set()
        for item in entry.get("evidence") or ():
            if not isinstance(item, dict) or not isinstance(item.get("path"), str):
                continue
            start, end = item.get("lineStart"), item.get("lineEnd")
            if not isinstance(start, int) or not isinstance(end, int) or (item["path"], start, end) in seen:
                continue
            seen.add((item["path"], start, end))
            note = f" ({entry['note']})" if entry.get("note") else ""
            message = (f"Proposed {entry.get('kind')} for {entry.get('entity')}{note}: {entry.get('reason', '')}\n"
                       f"{_describe(entry)}Pending approval (proposal {str(entry.get('proposalId'))[:12]}).")
            by_path.setdefault(item["path"], []).append(ProposalHint(
                str(entry.get("proposalId")), str(entry.get("kind")), str(entry.get("entity")),
                max(0, start - 1), max(0, end - 1), message))
    for hints in by_path.values():
        hints.sort(key=lambda h: (h.line_start, h.proposal_id))
    _memo[str(root)] = (stamp, by_path)
    return by_path


def _describe(entry: dict[str, Any]) -> str:
    payload = entry.get("payload") or {}
    parts = [f"{k}: {v}" for k, v in sorted(payload.items()) if isinstance(v, (str, int, float, list))]
    return ("; ".join(str(p) for p in parts)[:300] + "\n") if parts else ""


def pending_hints(state: Any, path: str) -> list[ProposalHint]:
    """The pending proposals citing `path` (none while enrichment is disabled)."""
    if not enabled(state.config):
        return []
    return list(_hints(state.root).get(path, ()))


def proposal_actions(data: dict[str, Any], index: int) -> list[Action]:
    """Approve / Reject for a proposal hint's diagnostic data (`index`: the diagnostic's position)."""
    pid = data.get("proposalId")
    if not isinstance(pid, str):
        return []
    kind = data.get("kind", "proposal")
    return [Action(f"Approve {kind} proposal {pid[:12]}", QUICKFIX, command=APPROVE, arguments=(pid,), fixes=index),
            Action(f"Reject {kind} proposal {pid[:12]}", QUICKFIX, command=REJECT, arguments=(pid,), fixes=index)]
