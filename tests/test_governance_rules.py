"""Rules modes and `check --format finding` on fixtures/governance (behaviours §8.2, §8.4).

Without a mode `check` keeps each code's own severity; a mode gives every rule-mapped finding the mode's
severity: default info, recommended warning (not-analyzed-coverage info), strict error (not-analyzed-coverage
warning). RELATION_CONFIRMED has no rule and stays info.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import docbridge, docbridge_json

RULED = ("DECLARED_RELATION_STALE", "CONFLICTING_DECLARATIONS", "UNRESOLVED_ENTITY_REFERENCE",
         "RELATION_UNDOCUMENTED", "DOCBRIDGE_BLOCK_INVALID", "GENERATED_REGION_EDITED")


@pytest.mark.parametrize(("mode", "ruled", "not_analyzed", "exit_code"), [
    ("default", "info", "info", 0),
    ("recommended", "warning", "info", 0),
    ("strict", "error", "warning", 1),
])
def test_each_mode_gives_its_severities_and_exit_code(governance: Path, mode: str, ruled: str, not_analyzed: str,
                                                      exit_code: int) -> None:
    report = docbridge_json("check", "--root", str(governance), "--format", "json", "--mode", mode,
                            expect=exit_code)
    severities = {f["code"]: f["severity"] for f in report["findings"]}
    assert severities == {**dict.fromkeys(RULED, ruled), "RELATION_NOT_ANALYZED": not_analyzed,
                          "RELATION_CONFIRMED": "info"}
    ids = {f["code"]: f["data"].get("id") for f in report["findings"]}
    assert ids["RELATION_CONFIRMED"] is None
    assert ids["DECLARED_RELATION_STALE"].startswith("reconciliation:DECLARED_RELATION_STALE:")
    assert ids["DECLARED_RELATION_STALE"].endswith(":declared-unobserved-relation")
    assert ids["RELATION_UNDOCUMENTED"].endswith(":graph-undocumented-relation")


def test_without_a_mode_codes_keep_their_own_severity(governance: Path) -> None:
    report = docbridge_json("check", "--root", str(governance), "--format", "json", expect=1)
    assert {f["code"]: f["severity"] for f in report["findings"]}["CONFLICTING_DECLARATIONS"] == "error"
    assert all("id" not in f["data"] for f in report["findings"])


def test_configured_mode_overrides_critical_paths_and_centrality(governance: Path) -> None:
    (governance / "doc-bridge.config.json").write_text(json.dumps({"schemaVersion": 1, "rules": {
        "mode": "recommended", "overrides": {"not-analyzed-coverage": "off", "unresolved-reference": "error"},
        "criticalPaths": ["src/ledger/"], "centralityThreshold": 0.1}}), encoding="utf-8")
    # nothing in the README's body describes invoice.ts any more: the module every import path crosses
    # (audit.ts -> invoice.ts -> entries.ts; betweenness 1/6) becomes a centrality risk
    readme = governance / "README.md"
    text = readme.read_text(encoding="utf-8")
    text = text.replace("Issue an invoice with `issueInvoice` from `src/billing/invoice.ts`; every",
                        "Invoices are issued in the billing area; every")
    text = text.replace('import { issueInvoice } from "./src/billing/invoice";\n\n', "")
    readme.write_text(text, encoding="utf-8")
    report = docbridge_json("check", "--root", str(governance), "--format", "json", expect=1)
    found = sorted((f["code"], f["path"], f["severity"]) for f in report["findings"])
    assert found == sorted([
        ("RELATION_CONFIRMED", "README.md", "info"),
        ("DECLARED_RELATION_STALE", "README.md", "warning"),
        ("CONFLICTING_DECLARATIONS", "README.md", "warning"),
        ("UNRESOLVED_ENTITY_REFERENCE", "README.md", "error"),  # overridden
        ("RELATION_UNDOCUMENTED", "src/ledger/audit.ts", "warning"),
        ("DOCBRIDGE_BLOCK_INVALID", "docs/summary.md", "warning"),
        ("GENERATED_REGION_EDITED", "docs/summary.md", "warning"),
        ("CRITICAL_PATH_RISK", "src/ledger/audit.ts", "warning"),  # the copy: audit.ts is under src/ledger/
        ("CENTRALITY_RISK", "src/billing/invoice.ts", "warning"),
        # and its copy: its evidence (the importer) is src/ledger/audit.ts
        ("CRITICAL_PATH_RISK", "src/billing/invoice.ts", "warning"),
    ])  # RELATION_NOT_ANALYZED is off
    centrality = next(f for f in report["findings"] if f["code"] == "CENTRALITY_RISK")
    assert centrality["data"]["betweenness"] == pytest.approx(1 / 6, abs=1e-6)
    critical = next(f for f in report["findings"] if f["code"] == "CRITICAL_PATH_RISK"
                    and f["path"] == "src/ledger/audit.ts")
    assert critical["data"]["source_code"] == "RELATION_UNDOCUMENTED"
    assert critical["data"]["id"].endswith(":critical-path-risk")
    # the command line's mode wins over the configured one
    strict = docbridge_json("check", "--root", str(governance), "--format", "json", "--mode", "strict", expect=1)
    assert {f["code"]: f["severity"] for f in strict["findings"]}["DECLARED_RELATION_STALE"] == "error"


def test_finding_format_orders_most_severe_first(governance: Path) -> None:
    result = docbridge("check", "--root", str(governance), "--format", "finding", "--mode", "strict")
    assert result.returncode == 1, result.stderr
    records = json.loads(result.stdout)["findings"]
    order = ["high", "medium", "low", "info"]
    keys = [(order.index(r["severity"]), r["id"]) for r in records]
    assert keys == sorted(keys)
    assert [r["severity"] for r in records] == ["high"] * 6 + ["medium", "low"]
    stale = next(r for r in records if r["code"] == "DECLARED_RELATION_STALE")
    assert stale["ruleId"] == "declared-unobserved-relation"
    assert stale["location"] == {"path": "README.md", "startLine": 7, "startColumn": 13, "endLine": 7,
                                 "endColumn": 34}
    assert all(r["severity"] != "critical" for r in records)
    plain = json.loads(docbridge("check", "--root", str(governance), "--format", "finding").stdout)["findings"]
    assert {r["severity"] for r in plain if r["ruleId"] == "CONFLICTING_DECLARATIONS"} == {"high"}


def test_an_unknown_mode_or_rule_severity_is_a_usage_error(governance: Path) -> None:
    assert docbridge("check", "--root", str(governance), "--mode", "lenient").returncode == 2
    (governance / "doc-bridge.config.json").write_text(json.dumps({"rules": {"overrides": {"freshness": "loud"}}}),
                                                       encoding="utf-8")
    result = docbridge("check", "--root", str(governance))
    assert result.returncode == 2
    assert "doc-bridge.config.json: rules.overrides.freshness" in result.stderr
