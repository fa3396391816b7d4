"""`textDocument/codeAction` honours `context.only` and `triggerKind`: a real client drops, and logs as an
error, every action of a kind it did not ask for.

On docs/architecture.md of fixtures/acme the broken link `(./deployment-v1.md)` has a quick fix to
docs/deployment.md, and the document has the source action "Show handoff for docs/architecture.md".
The requests go out as raw JSON and the answers are read as JSON, exactly as an editor sees them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import copy_fixture
from lsp_client import RawClient
from support.positions import find

AUTOMATIC, INVOKED = 2, 1  # CodeActionTriggerKind


async def test_code_actions_are_filtered_by_only_and_trigger_kind(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    architecture = root / "docs/architecture.md"
    uri = architecture.as_uri()
    line, _ = find(architecture, "(./deployment-v1.md)")
    client = await RawClient.start()
    ids = iter(range(10, 1000))
    try:
        await client.request(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        client.send({"method": "initialized", "params": {}})
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": architecture.read_text(encoding="utf-8")}}})

        def broken_link() -> dict[str, Any] | None:
            for note in reversed(client.notifications):
                if note["method"] == "textDocument/publishDiagnostics" and note["params"]["uri"] == uri:
                    # the diagnostic of the full model, which carries the fix's candidates (one published
                    # while the scan runs may not)
                    return next((d for d in note["params"]["diagnostics"]
                                 if d["code"] == "LINK_BROKEN" and d["range"]["start"]["line"] == line
                                 and d.get("data", {}).get("candidates")), None)
            return None

        await client.ready(timeout=60)
        diagnostic = await client.until(broken_link, 60, what="the full model's LINK_BROKEN diagnostic with candidates")

        async def actions(only: list[str] | None = None, trigger: int | None = None) -> list[tuple[str, str]]:
            context: dict[str, Any] = {"diagnostics": [diagnostic]}
            if only is not None:
                context["only"] = only
            if trigger is not None:
                context["triggerKind"] = trigger
            answer = await client.request(next(ids), "textDocument/codeAction", {
                "textDocument": {"uri": uri}, "range": diagnostic["range"], "context": context})
            assert "error" not in answer, answer
            return sorted((action.get("kind", ""), action["title"]) for action in answer["result"] or [])

        handoff = ("source", "Show handoff for docs/architecture.md")
        link_fix = ("quickfix", "Link to docs/deployment.md")
        everything = await actions()
        assert link_fix in everything and handoff in everything

        # only quick fixes (the Problems panel, the hover's Quick Fix…): all of them, nothing else
        assert await actions(only=["quickfix"]) == [action for action in everything if action[0] == "quickfix"]
        assert link_fix in await actions(only=["quickfix"], trigger=AUTOMATIC)
        # a kind more specific than the fixes' own: none
        assert await actions(only=["quickfix.docbridge"]) == []

        # only source actions (the Source Action… menu): the handoff and nothing else
        assert await actions(only=["source"], trigger=INVOKED) == [handoff]
        # a source kind more specific than the handoff's (organize imports): none
        assert await actions(only=["source.organizeImports"]) == []
        # an unrelated kind: none
        assert await actions(only=["refactor"]) == []
        # several kinds: their union
        assert await actions(only=["quickfix", "source"]) == everything

        # automatic, with no kind named (the light bulb as the cursor moves): the fixes, no source action
        automatic = await actions(trigger=AUTOMATIC)
        assert automatic == [action for action in everything if action[0] == "quickfix"] and link_fix in automatic
        # invoked by the user with no kind named (Ctrl+.): everything
        assert await actions(trigger=INVOKED) == everything
        # the handoff opens a view: never on the editor's own initiative, not even when it names source actions
        # (code actions on save would open it at every save)
        assert await actions(only=["source"], trigger=AUTOMATIC) == []
    finally:
        await client.stop()
