"""Two decisions against the reference, shown through the command line:

- `check --enrich` lists the enrichment overlay's findings and says how the overlay stands, but never runs the
  agent (the reference's "runs the enrich stage"): the reference agent logs every call, and the log stays empty.
- `doctor` keeps link reachability for its grade and reports the reference's figure (documents in the
  projection) beside it; files agent tools load by name (`AGENTS.md`, `CLAUDE.md`, `SKILL.md`) are entry
  documents wherever they are."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import REPO, docbridge, docbridge_json, make_repo

AGENT = REPO / "fixtures" / "agents" / "reference_agent.py"
GAP = {"entity": "document:docs/storage.md", "kind": "flag-gap",
       "payload": {"area": "area:src/storage", "missing": "cache eviction policy"},
       "evidence": [{"source": "snapshot", "path": "docs/storage.md", "lineStart": 1, "lineEnd": 1}]}


def overlay_status(root: Path) -> dict[str, str]:
    report = docbridge_json("check", "--root", str(root), "--format", "json", "--enrich", expect=1)
    status: dict[str, str] = report["overlay"]["status"]
    return status


def test_check_enrich_says_how_the_overlay_stands_and_never_runs_the_agent(acme: Path, tmp_path: Path) -> None:
    assert overlay_status(acme)["state"] == "off"  # the fixture does not turn enrichment on
    config = acme / "doc-bridge.config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data["intelligence"] = {"registry": {"enabled": True, "agentId": "ref-agent", "roles": ["reviewer"],
                                         "timeoutSeconds": 20}}
    config.write_text(json.dumps(data), encoding="utf-8")
    missing = overlay_status(acme)
    assert missing["state"] == "missing" and "docbridge enrich" in missing["message"]

    script, log = tmp_path / "script.json", tmp_path / "calls.log"
    script.write_text(json.dumps([GAP]), encoding="utf-8")
    command = " ".join([sys.executable, str(AGENT), "--script", str(script), "--log", str(log)])
    assert docbridge("enrich", "--root", str(acme), "--json", "--agent-command", command).returncode == 0
    calls = log.read_text(encoding="utf-8")
    assert calls.strip()  # enrich called the agent
    plain = docbridge("check", "--root", str(acme))
    text = docbridge("check", "--root", str(acme), "--enrich")
    assert text.returncode == plain.returncode == 1 and text.stdout.startswith(plain.stdout)
    assert "Enrichment overlay (proposed by an agent, not observed): 1 finding(s); the overlay was made for the " \
           "repository as it is." in text.stdout
    assert "flag-gap: gap in area:src/storage: cache eviction policy" in text.stdout
    assert log.read_text(encoding="utf-8") == calls  # check --enrich called nobody

    (acme / "docs" / "refunds.md").write_text("# Refunds\n\nHow refunds are computed.\n", encoding="utf-8")
    assert overlay_status(acme)["state"] == "earlier-snapshot"
    overlay = acme / ".docbridge" / "overlay.json"
    overlay.write_text(overlay.read_text(encoding="utf-8").replace("eviction", "evictions"), encoding="utf-8")
    assert overlay_status(acme)["state"] == "unusable"
    assert log.read_text(encoding="utf-8") == calls


def test_doctor_reports_the_projection_share_beside_link_reachability(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "docs-repo", {
        "package.json": json.dumps({"name": "docs-repo"}),
        "README.md": "# Docs repo\n\nSee the [guide](docs/guide.md).\n",
        "docs/guide.md": "# Guide\n\nHow to use it.\n",
        "docs/orphan.md": "# Orphan\n\nNothing links here.\n",
        "skills/release/SKILL.md": "---\nname: release\n---\n\n# Release\n\nHow an agent cuts a release.\n",
        "tools/AGENTS.md": "# Tools\n\nInstructions for agents working under tools/.\n",
    })
    report = docbridge_json("doctor", "--root", str(root), "--json")
    reach = report["dimensions"]["reachability"]
    # five documents, all projected; the orphan is the one no entry document or link reaches
    assert (reach["reachable"], reach["inProjection"], reach["total"]) == (4, 5, 5)
    assert reach["unreachable"] == ["docs/orphan.md"]
    assert reach["entryDocuments"] == ["README.md", "skills/release/SKILL.md", "tools/AGENTS.md"]
    text = docbridge("doctor", "--root", str(root)).stdout
    assert "(4/5 documents reachable from README.md, skills/release/SKILL.md, tools/AGENTS.md; 5/5 in the " \
           "projection)" in text
