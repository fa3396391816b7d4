"""Pending enrichment proposals in the language server: hint diagnostics on the lines they cite, the
Approve and Reject code actions, and their commands (the approver from `docbridge.approver`, else
`git config user.name`, refused when neither exists)."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, copy_fixture, docbridge_json
from lsp_client import session
from lsprotocol import types as T

AGENT = REPO / "fixtures" / "agents" / "reference_agent.py"
STORAGE = "document:docs/storage.md"
CODE = "ENRICHMENT_PROPOSAL"


def _enrich(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    root = copy_fixture("acme", tmp_path)
    config_path = root / "doc-bridge.config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["intelligence"] = {"registry": {"enabled": True, "agentId": "ref-agent", "roles": ["reviewer"]}}
    config_path.write_text(json.dumps(config), encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"entity": STORAGE, "kind": "propose-relation", "reason": "the page describes the cache",
         "payload": {"from": STORAGE, "to": "module:src/storage/cache.ts", "kind": "documents"},
         "evidence": [{"source": "snapshot", "path": "docs/storage.md", "lineStart": 3, "lineEnd": 4}]},
        {"entity": STORAGE, "kind": "flag-redundancy", "reason": "same topic as configuration",
         "payload": {"with": "document:docs/configuration.md"},
         "evidence": [{"source": "snapshot", "path": "docs/storage.md", "lineStart": 1, "lineEnd": 1}]},
    ]), encoding="utf-8")
    report = docbridge_json("enrich", "--root", str(root), "--json", "--agent-command",
                            f"{sys.executable} {AGENT} --script {script}")
    assert report["pending"] == 2
    pending = json.loads((root / ".docbridge" / "overlay.json").read_text(encoding="utf-8"))["pending"]
    return root, {p["kind"]: p for p in pending}


def _hints(client: Any, path: Path) -> list[T.Diagnostic]:
    return [d for d in client.diagnostics(path) if d.code == CODE]


async def test_pending_proposals_are_hints_with_approve_and_reject_actions(tmp_path: Path) -> None:
    root, pending = _enrich(tmp_path)
    storage = root / "docs" / "storage.md"
    relation = pending["propose-relation"]["proposalId"]
    async with session(root, settings={"approver": "Ana"}) as client:
        client.open(storage)
        await client.until(lambda: len(_hints(client, storage)) == 2, timeout=60)
        hints = sorted(_hints(client, storage), key=lambda d: d.range.start.line)
        assert [(d.range.start.line, d.range.end.line) for d in hints] == [(0, 0), (2, 3)]
        assert all(d.severity == T.DiagnosticSeverity.Hint for d in hints)
        assert "propose-relation" in hints[1].message and hints[1].data["proposalId"] == relation

        actions = await client.client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=storage.as_uri()), range=hints[1].range,
            context=T.CodeActionContext(diagnostics=[hints[1]])))
        # the client's converter reads a code action carrying a command as a Command whose `command` is the
        # nested object's text: read it back
        found = [ast.literal_eval(a.command) if isinstance(a.command, str) and a.command.startswith("{")
                 else {"command": a.command.command, "arguments": a.command.arguments} if isinstance(a, T.CodeAction)
                 else {"command": a.command, "arguments": a.arguments} for a in actions or []]
        commands = [(a.title.split()[0], c["command"], c["arguments"]) for a, c in zip(actions or [], found,
                                                                                        strict=True)
                    if "Proposal" in c["command"]]
        assert commands == [("Approve", "docbridge.approveProposal", [relation]),
                            ("Reject", "docbridge.rejectProposal", [relation])]

        result = await client.command("docbridge.approveProposal", relation)
        assert result["by"] == "Ana" and result["decision"] == "approved"
        await client.until(lambda: len(_hints(client, storage)) == 1, timeout=30)
        overlay = json.loads((root / ".docbridge" / "overlay.json").read_text(encoding="utf-8"))
        assert [(e["proposalId"], e["acceptedBy"]) for e in overlay["accepted"]] == [(relation, "Ana")]


async def test_deciding_without_an_approver_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, pending = _enrich(tmp_path)
    # no setting and no git user: the server's git reads no global or system configuration
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.delenv("GIT_AUTHOR_NAME", raising=False)
    monkeypatch.delenv("GIT_COMMITTER_NAME", raising=False)
    redundancy = pending["flag-redundancy"]["proposalId"]
    async with session(root) as client:
        with pytest.raises(Exception, match=r"docbridge\.approver"):
            await client.command("docbridge.rejectProposal", redundancy, "not redundant")
    overlay = json.loads((root / ".docbridge" / "overlay.json").read_text(encoding="utf-8"))
    assert redundancy in [e["proposalId"] for e in overlay["pending"]]


async def test_a_decision_from_the_terminal_clears_the_hint_when_the_overlay_changes(tmp_path: Path) -> None:
    root, pending = _enrich(tmp_path)
    storage = root / "docs" / "storage.md"
    redundancy = pending["flag-redundancy"]["proposalId"]
    async with session(root, settings={"approver": "Ana"}) as client:
        client.open(storage)
        await client.until(lambda: len(_hints(client, storage)) == 2, timeout=60)
        decided = docbridge_json("fix", "reject", redundancy, "--by", "Ana", "--root", str(root), "--json")
        assert decided["reason"] == "human-rejected"
        client.watched((root / ".docbridge" / "overlay.json", T.FileChangeType.Changed))
        await client.until(lambda: len(_hints(client, storage)) == 1, timeout=30)
        assert _hints(client, storage)[0].data["kind"] == "propose-relation"
