"""Declared relations as live diagnostics: deleting the import a document declares turns the declaration
stale in the editor, and restoring it confirms it again (pytest-lsp over stdio, fixtures/governance)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import copy_fixture
from lsp_client import session
from support.positions import find


async def test_a_declared_relation_turns_stale_live_and_back(tmp_path: Path) -> None:
    root = copy_fixture("governance", tmp_path)
    readme, invoice = root / "README.md", root / "src/billing/invoice.ts"
    declared = find(readme, "from: src/billing/invoice.ts")[0]  # declares invoice.ts imports entries.ts
    original = invoice.read_text(encoding="utf-8")
    import_line = 'import { postEntry } from "../ledger/entries";\n'
    assert import_line in original
    async with session(root) as s:
        s.open(readme)
        s.open(invoice)
        await s.until(lambda: ("RELATION_CONFIRMED", declared) in s.codes(readme))
        assert ("DECLARED_RELATION_STALE", declared) not in s.codes(readme)
        # delete the import in the editor buffer (not saved)
        s.replace_all(invoice, original.replace(import_line, ""))
        await s.until(lambda: ("DECLARED_RELATION_STALE", declared) in s.codes(readme))
        assert ("RELATION_CONFIRMED", declared) not in s.codes(readme)
        (stale,) = [d for d in s.diagnostics(readme) if d.code == "DECLARED_RELATION_STALE"
                    and d.range.start.line == declared]
        assert "was not observed" in stale.message
        # the other declarations keep their outcomes
        assert ("DECLARED_RELATION_STALE", find(readme, "from: src/billing/refund.ts")[0]) in s.codes(readme)
        # restore it
        s.replace_all(invoice, original)
        await s.until(lambda: ("RELATION_CONFIRMED", declared) in s.codes(readme))
        assert ("DECLARED_RELATION_STALE", declared) not in s.codes(readme)


async def test_doctor_command_grades_the_open_buffers(tmp_path: Path) -> None:
    root = copy_fixture("monorepo", tmp_path)
    config = json.loads((root / "doc-bridge.config.json").read_text())
    config["doctor"] = {"suite": "retrieval-suite.json"}
    (root / "doc-bridge.config.json").write_text(json.dumps(config))
    readme, web_readme = root / "README.md", root / "packages/web/README.md"
    async with session(root) as s:
        s.open(readme)
        s.open(web_readme)
        await s.ready()
        (before,) = await s.command("docbridge.doctor", {"show": False})  # a status line's question
        assert before["grade"] == "A" and before["text"].startswith("grade A")
        assert not (root / ".docbridge/doctor.md").exists()
        # unlink the web guide in both editor buffers (unsaved): it becomes unreachable
        s.replace_all(readme, readme.read_text().replace("[the web guide](docs/web.md)", "the web guide"))
        s.replace_all(web_readme, web_readme.read_text().replace("[the web guide](../../docs/web.md)",
                                                                 "the web guide"))
        (after,) = await s.command("docbridge.doctor")  # no arguments: the report opens
        assert after["grade"] == "B"
        assert after["report"]["dimensions"]["reachability"]["unreachable"] == ["docs/web.md"]
        assert (root / ".docbridge/doctor.md").read_text().count("grade B") == 1
