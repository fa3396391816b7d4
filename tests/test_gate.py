"""`docbridge gate run`: the configured gates (index freshness, human guide links, okf-type, docs-style, the
documentation-standard-v1 profile) through the command line, on the acme fixture and on small repositories whose
files say what each rule must find. The MCP tool gate.status answers with the same implementation
(tests/test_mcp_aliases.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import docbridge, docbridge_json, make_repo

URL = "https://example.org/tiny"
CONFIG: dict[str, Any] = {
    "schemaVersion": 1,
    "corpus": {"agent": {"root": "docs/for-agents"}},
    "routing": {"options": {"ownership": {"tiny-core": {
        "path": "src/core", "checks": ["npm test"], "agentDoc": "docs/for-agents/core.md",
        "humanDoc": "docs/guide.md"}}}},
    "gates": {"include": ["documentation-standard-v1"]},
    "conformance": {"documentationStandardV1": {
        "rawSources": ["README.md"],
        "metadata": [{"path": "site/index.html", "contains": ["<title>", 'name="description"']}],
        "links": [{"url": URL, "paths": ["README.md"]}],
        "quickstarts": [{"id": "quick", "doc": "README.md", "test": "tests/quick.test.ts", "command": "npm test",
                         "testContains": ["runs the quickstart"]}],
        "visuals": ["docs/assets/overview.svg"],
        "diagrams": [{"path": "docs/architecture.md", "contains": ["```mermaid"]}],
    }},
}
FILES: dict[str, str] = {
    "package.json": json.dumps({"name": "tiny", "scripts": {"test": "node --test"}}),
    "src/core/index.ts": "export function run(): number {\n  return 1\n}\n",
    "README.md": f"# Tiny\n\nRun `npm test`. Home: {URL}\n",
    "CONTRIBUTING.md": "# Contributing\n\nRun the tests before a pull request.\n",
    "docs/guide.md": "# Guide\n\nHow `src/core/index.ts` runs, for people.\n",
    "docs/architecture.md": "# Architecture\n\n```mermaid\nflowchart LR\n  A --> B\n```\n",
    "docs/for-agents/core.md": "---\ntype: guide\npurpose: where the core starts\nowner: core-team\n---\n\n"
                               "# Core\n\nStart at `src/core/index.ts`.\n",
    "docs/assets/overview.svg": '<svg xmlns="http://www.w3.org/2000/svg"/>\n',
    "site/index.html": '<html><head><title>Tiny</title><meta name="description" content="x"></head></html>\n',
    "tests/quick.test.ts": "test('runs the quickstart', () => {})\n",
}
REQUIRED = ["human-docs", "llms-and-raw-source", "agent-handoffs", "contribution", "metadata", "cross-links",
            "tested-quickstarts"]
RECOMMENDED = ["visual-explanations", "structured-diagrams"]


def tiny(tmp_path: Path, config: dict[str, Any] | None = None, changes: dict[str, str | None] | None = None) -> Path:
    """The repository above (`changes` replace or, as None, remove files of FILES), with llms.txt written."""
    contents = {**FILES, "doc-bridge.config.json": json.dumps(config or CONFIG)}
    for path, text in (changes or {}).items():
        if text is None:
            contents.pop(path)
        else:
            contents[path] = text
    root = make_repo(tmp_path / "tiny", dict(contents))
    assert docbridge("index", "--root", str(root)).returncode == 0
    return root


def gate(root: Path, *names: str, expect: int) -> dict[str, Any]:
    payload: dict[str, Any] = docbridge_json("gate", "run", *names, "--root", str(root), expect=expect)
    return payload


def rules(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    result = next(r for r in payload["results"] if r["id"] == "documentation-standard-v1")
    return {rule["id"]: rule for rule in result["details"]["results"]}


def test_the_minimal_preset_runs_index_freshness_which_follows_docbridge_index(acme: Path) -> None:
    missing = docbridge("gate", "run", "--root", str(acme), "--text")
    assert missing.returncode == 1, missing.stderr
    assert "FAIL index-freshness: No index at .docbridge/index.json. Run: docbridge index" in missing.stdout
    assert "1 gate(s): 0 passed, 1 failed." in missing.stdout
    assert not (acme / ".docbridge" / "index.json").exists()  # a gate writes nothing
    assert docbridge("index", "--root", str(acme)).returncode == 0
    fresh = gate(acme, expect=0)
    written = json.loads((acme / ".docbridge" / "index.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in fresh["results"]] == ["index-freshness"] and fresh["preset"] == "minimal"
    (result,) = fresh["results"]
    assert result["ok"] and result["actual"] == result["expected"] == written["projection"]["contentHash"]
    (acme / "docs" / "refunds.md").write_text("# Refunds\n\nHow refunds are computed.\n", encoding="utf-8")
    (stale,) = gate(acme, expect=1)["results"]
    assert stale["actual"] == written["projection"]["contentHash"] != stale["expected"]
    assert stale["message"].startswith("Index is stale")


def test_a_repository_with_every_declared_piece_of_evidence_meets_the_standard(tmp_path: Path) -> None:
    payload = gate(tiny(tmp_path), expect=0)
    assert [r["id"] for r in payload["results"]] == ["index-freshness", "documentation-standard-v1"]
    standard = payload["results"][1]
    assert standard["actual"] == "7 passed, 0 failed, 0 excepted"
    found = rules(payload)
    assert list(found) == REQUIRED + RECOMMENDED
    assert {r["level"] for r in found.values() if r["id"] in RECOMMENDED} == {"recommended"}
    assert all(r["status"] == "pass" for r in found.values())
    # the human documents are the two under docs/ (the agent corpus is docs/for-agents)
    assert [e["path"] for e in found["human-docs"]["evidence"]] == ["docs/architecture.md", "docs/guide.md"]
    assert found["llms-and-raw-source"]["evidence"][0] == {
        "path": "llms.txt", "detail": "File matches the current `docbridge index` output."}
    assert found["agent-handoffs"]["evidence"] == [
        {"path": "docs/for-agents/core.md", "detail": "tiny-core: 1 edit root(s), 1 check(s), bridge=linked"}]
    text = docbridge("gate", "run", "documentation-standard-v1", "--root", str(tiny(tmp_path / "again")), "--text")
    assert text.returncode == 0
    assert "Required: 7 passed · 0 failed · 0 excepted" in text.stdout
    assert "PASS [required] cross-links: 1 required link(s) resolve in source." in text.stdout


def test_each_missing_piece_fails_its_rule_with_its_evidence_and_remediation(tmp_path: Path) -> None:
    config = json.loads(json.dumps(CONFIG))
    del config["routing"]["options"]["ownership"]["tiny-core"]["humanDoc"]
    config["corpus"]["human"] = {"plugin": "plain-markdown", "options": {"root": "docs"}}
    root = tiny(tmp_path, config, {"CONTRIBUTING.md": None, "README.md": "# Tiny\n\nRun `npm test`.\n",
                                   "tests/quick.test.ts": "test('something else', () => {})\n",
                                   "docs/architecture.md": "# Architecture\n\nNo diagram.\n"})
    payload = gate(root, "documentation-standard-v1", expect=1)
    found = rules(payload)
    failed = sorted(r for r, rule in found.items() if rule["status"] == "fail")
    assert failed == ["agent-handoffs", "contribution", "cross-links", "structured-diagrams", "tested-quickstarts"]
    assert payload["results"][0]["actual"] == "3 passed, 4 failed, 0 excepted"  # structured-diagrams: recommended
    assert found["agent-handoffs"]["message"] == "0/1 handoff(s) are action-ready and human-linked."
    assert "bridge=missing" in found["agent-handoffs"]["evidence"][0]["detail"]
    assert found["contribution"]["evidence"] == [{"path": "CONTRIBUTING.md", "detail": "File does not exist."}]
    assert found["contribution"]["remediation"]["command"] == "edit CONTRIBUTING.md"
    assert found["cross-links"]["evidence"] == [{"path": "README.md", "detail": f"Missing {URL}"}]
    assert found["tested-quickstarts"]["evidence"][1]["detail"] == \
        "quick: missing test marker(s): runs the quickstart"
    assert found["structured-diagrams"]["evidence"][0]["detail"] == "Missing marker(s): ```mermaid"
    text = docbridge("gate", "run", "documentation-standard-v1", "--root", str(root), "--text").stdout
    assert "FAIL [required] contribution: Contribution guidance is missing." in text
    assert "  fix: edit CONTRIBUTING.md — Document setup" in text


def test_an_approved_exception_passes_a_required_rule_as_excepted(tmp_path: Path) -> None:
    config = json.loads(json.dumps(CONFIG))
    config["conformance"]["documentationStandardV1"]["exceptions"] = [{
        "ruleId": "contribution", "reason": "Contributions go through the upstream project.",
        "approvedBy": "Docs WG", "trackingUrl": "https://example.org/issues/1"}]
    payload = gate(tiny(tmp_path, config, {"CONTRIBUTING.md": None}), "documentation-standard-v1", expect=0)
    contribution = rules(payload)["contribution"]
    assert contribution["status"] == "excepted" and contribution["ok"] is True
    assert contribution["exception"] == {"reason": "Contributions go through the upstream project.",
                                         "approvedBy": "Docs WG", "trackingUrl": "https://example.org/issues/1"}
    assert payload["results"][0]["actual"] == "6 passed, 0 failed, 1 excepted"


def test_llms_txt_edited_by_hand_is_stale_until_docbridge_index(tmp_path: Path) -> None:
    root = tiny(tmp_path)
    (root / "llms.txt").write_text((root / "llms.txt").read_text(encoding="utf-8") + "- [Extra](x.md)\n",
                                   encoding="utf-8")
    rule = rules(gate(root, "documentation-standard-v1", expect=1))["llms-and-raw-source"]
    assert rule["status"] == "fail" and rule["evidence"][0]["detail"] == \
        "File is stale or was not written from the current inputs."
    assert rule["remediation"]["command"] == "docbridge index"
    assert docbridge("index", "--root", str(root)).returncode == 0
    assert rules(gate(root, "documentation-standard-v1", expect=0))["llms-and-raw-source"]["status"] == "pass"


def test_a_declared_path_outside_the_repository_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("secret\n", encoding="utf-8")
    config = json.loads(json.dumps(CONFIG))
    config["conformance"]["documentationStandardV1"]["rawSources"] = ["../outside.md"]
    config["conformance"]["documentationStandardV1"]["contributionPaths"] = ["/etc/hostname"]
    found = rules(gate(tiny(tmp_path, config), "documentation-standard-v1", expect=1))
    assert found["llms-and-raw-source"]["evidence"][1] == {"path": "../outside.md",
                                                          "detail": "Path escapes the project root."}
    assert found["contribution"]["evidence"] == [{"path": "/etc/hostname", "detail": "Path escapes the project root."}]


def test_presets_include_exclude_and_named_gates_choose_what_runs(tmp_path: Path) -> None:
    config = json.loads(json.dumps(CONFIG))
    config["gates"] = {"preset": "strict", "exclude": ["index-freshness"]}
    root = tiny(tmp_path, config, {"docs/for-agents/core.md": "# Core\n\nTBD: start at `src/core/index.ts`.\n"})
    payload = gate(root, expect=1)
    results = {r["id"]: r for r in payload["results"]}
    assert list(results) == ["human-guide-links", "okf-type", "docs-style"]
    assert results["human-guide-links"]["message"] == "Resolved 1 humanDoc link"
    # strict requires a frontmatter type in every agent document, and the playbook-okf style
    assert results["okf-type"]["message"] == "Missing or invalid OKF type frontmatter: docs/for-agents/core.md"
    assert results["docs-style"]["message"] == \
        "Docs style issues: docs/for-agents/core.md (purpose, owner-source, no-stale-wording)"
    named = gate(root, "okf-type", "index-reproducible", expect=1)
    assert [r["id"] for r in named["results"]] == ["okf-type"]
    assert [g["id"] for g in named["notEvaluated"]] == ["index-reproducible"]
    assert gate(tiny(tmp_path / "typed", config), expect=0)["ok"] is True  # the original document has all three


def test_bad_requests_and_configurations_exit_2_naming_what_is_wrong(tmp_path: Path) -> None:
    root = tiny(tmp_path)
    unknown = docbridge("gate", "run", "no-such-gate", "--root", str(root))
    assert unknown.returncode == 2 and "Unknown gate 'no-such-gate'" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    config = json.loads(json.dumps(CONFIG))
    config["conformance"]["documentationStandardV1"]["exceptions"] = [
        {"ruleId": "contribution", "reason": "short", "approvedBy": "x", "trackingUrl": "https://e.org/1"}]
    (root / "doc-bridge.config.json").write_text(json.dumps(config), encoding="utf-8")
    bad = docbridge("gate", "run", "--root", str(root))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "doc-bridge.config.json: conformance.documentationStandardV1.exceptions.0.reason" in bad.stderr
    config["conformance"] = {}
    config["gates"] = {"include": ["everything"]}
    (root / "doc-bridge.config.json").write_text(json.dumps(config), encoding="utf-8")
    bad = docbridge("gate", "run", "--root", str(root))
    assert bad.returncode == 2 and "doc-bridge.config.json: gates.include.0" in bad.stderr
