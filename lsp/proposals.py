"""Pending enrichment proposals in the editor: hint diagnostics on the lines they cite (built in
docbridge.lsp.diagnostics from docbridge.engine.ide.proposals) and the `docbridge.approveProposal` /
`docbridge.rejectProposal` commands their code actions run.

The approver is the `docbridge.approver` setting, else `git config user.name` in the folder; with neither
the command is refused with a message saying how to set one.
"""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

from docbridge.engine.base.model import Span
from docbridge.engine.ide.proposals import APPROVE, CODE, REJECT, ProposalHint
from docbridge.engine.state.model_state import ModelState
from docbridge.engine.state.text import lines_of
from docbridge.engine.views.reconcile import findings_index_of
from docbridge.engine.views.snapshot import snapshot_of
from docbridge.lsp.folders import Folder
from docbridge.lsp.server import DocBridgeServer
from lsprotocol import types as T


def to_diagnostic(server: DocBridgeServer, folder: Folder, state: ModelState, path: str,
                  hint: ProposalHint) -> T.Diagnostic:
    lines = lines_of(state, path) or []
    end = hint.line_end if hint.line_end < len(lines) else max(len(lines) - 1, 0)
    start = min(hint.line_start, end)
    width = len(lines[end]) if end < len(lines) else 0
    range_ = server.convert.range(folder, path, Span(start, 0, end, width), state=state)
    return T.Diagnostic(range=range_, severity=T.DiagnosticSeverity.Hint, code=CODE, source="docbridge",
                        message=hint.message, data={"code": CODE, "proposalId": hint.proposal_id,
                                                    "kind": hint.kind, "fingerprint": hint.proposal_id})


OVERLAY = ".docbridge/overlay.json"


def refresh(server: DocBridgeServer, folder: Folder) -> None:
    """The overlay file changed (an `enrich` run, a decision from the terminal): republish the diagnostics of
    the files that showed proposal hints or cite pending proposals now."""
    from docbridge.engine.ide.proposals import pending_hints
    from docbridge.lsp.diagnostics import publish_findings
    state = folder.state
    if state is None:
        return
    index = findings_index_of(state)
    paths = {path for path, _ in folder.published.values()}
    paths |= {path for path in state.universe.paths() if pending_hints(state, path)}
    for path in sorted(p for p in paths if p is not None):
        publish_findings(server, folder, state, path, index.by_path.get(path, ()), force=False)


def _git_user(folder: Folder) -> str | None:
    try:
        result = subprocess.run(["git", "config", "user.name"], cwd=folder.root, capture_output=True, text=True,
                                timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    name = result.stdout.strip()
    return name or None


async def _decide(ls: DocBridgeServer, args: tuple[Any, ...], approve: bool) -> dict[str, Any]:
    from docbridge.engine.enrich.approvals import DecisionRefused, decide
    from docbridge.lsp.commands import arguments
    command = APPROVE if approve else REJECT
    proposal_id, reason = arguments(command, args, ("proposalId", str, ...), ("reason", str, None))
    folders = [f for f in ls.folders if not f.refused and f.state is not None]
    folder = next((f for f in folders if (f.root / ".docbridge" / "overlay.json").is_file()
                   and proposal_id in (f.root / ".docbridge" / "overlay.json").read_text(encoding="utf-8")), None)
    if folder is None:
        raise ValueError(f"{command}: no pending proposal {proposal_id} in any folder's .docbridge/overlay.json.")
    by = ls.settings.approver or await asyncio.to_thread(_git_user, folder)
    if not by:
        raise ValueError("No approver: set the `docbridge.approver` setting or `git config user.name`; a proposal "
                         "is approved or rejected by a person.")
    state = folder.state
    assert state is not None
    entities = (await asyncio.to_thread(snapshot_of, state)).entities
    try:
        moved = await asyncio.to_thread(decide, folder.root, entities, proposal_id, by, approve, reason,
                                        state.config.intelligence.registry.agent_ids())
    except DecisionRefused as exc:
        raise ValueError(str(exc)) from exc
    from docbridge.lsp.diagnostics import publish_findings
    index = await asyncio.to_thread(findings_index_of, state)
    for item in moved.get("evidence") or ():
        path = item.get("path") if isinstance(item, dict) else None
        if isinstance(path, str) and state.universe.exists(path):
            publish_findings(ls, folder, state, path, index.by_path.get(path, ()), force=True)
    word = "Approved" if approve else "Rejected"
    ls.window_show_message(T.ShowMessageParams(
        type=T.MessageType.Info, message=f"{word} {moved.get('kind')} proposal {proposal_id[:12]} as {by}."))
    return {"proposalId": proposal_id, "decision": "approved" if approve else "rejected", "by": by}


def register(server: DocBridgeServer) -> None:
    from docbridge.lsp.commands import clear_errors

    @server.command(APPROVE)
    @clear_errors
    async def approve(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
        """`[proposalId]` -> the decision; the approver is `docbridge.approver` or `git config user.name`."""
        return await _decide(ls, args, True)

    @server.command(REJECT)
    @clear_errors
    async def reject(ls: DocBridgeServer, *args: Any) -> dict[str, Any]:
        """`[proposalId, reason?]` -> the decision."""
        return await _decide(ls, args, False)
