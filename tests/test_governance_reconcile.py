"""Declared against observed relations on fixtures/governance: every reconciliation code planted once.

The expected positions are read from the fixture: `README.md` declares six relations in its frontmatter
(lines 5, 7, 9, 12, 15 and 18 counting from 1, each located at its `from:` value, column 13); the code shows
`src/billing/invoice.ts` importing the ledger statically, `src/billing/refund.ts` importing it with
`import()` only, `src/ledger/audit.ts` importing a type from billing, and `src/notify/mailer.ts` importing
nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import docbridge, docbridge_json
from support.positions import find


def positions(items: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    return sorted((d["code"], d["path"], d["range"]["start"]["line"], d["range"]["start"]["character"])
                  for d in items)


def declared_side(root: Path) -> list[tuple[str, str, int, int]]:
    readme = root / "README.md"
    invoice_decl = find(readme, "from: src/billing/invoice.ts")
    stale_decl = find(readme, "from: src/billing/refund.ts")
    conflict_decl = find(readme, "from: src/billing/refund.ts", 2)  # the first of the two for one relation
    external_decl = find(readme, "from: src/notify/mailer.ts")
    unresolved_decl = find(readme, "from: src/billing/invoice.ts", 2)
    column = len("from: ")
    return [
        ("RELATION_CONFIRMED", "README.md", invoice_decl[0], invoice_decl[1] + column),
        ("DECLARED_RELATION_STALE", "README.md", stale_decl[0], stale_decl[1] + column),
        ("CONFLICTING_DECLARATIONS", "README.md", conflict_decl[0], conflict_decl[1] + column),
        ("RELATION_NOT_ANALYZED", "README.md", external_decl[0], external_decl[1] + column),
        ("UNRESOLVED_ENTITY_REFERENCE", "README.md", unresolved_decl[0], unresolved_decl[1] + column),
    ]


def test_check_reports_each_declared_code_once_and_nothing_else(governance: Path) -> None:
    report = docbridge_json("check", "--root", str(governance), "--format", "json", expect=1)
    audit_line, audit_column = find(governance / "src/ledger/audit.ts", '"../billing/invoice"')
    summary = governance / "docs/summary.md"
    expected = [
        *declared_side(governance),
        # area level: ledger imports billing, and no document documents both areas
        ("RELATION_UNDOCUMENTED", "src/ledger/audit.ts", audit_line, audit_column),
        # docs/summary.md: an unknown key in its docbridge block, a generated region whose hash is not its own
        ("DOCBRIDGE_BLOCK_INVALID", "docs/summary.md", find(summary, "owner: finance")[0], 0),
        ("GENERATED_REGION_EDITED", "docs/summary.md", find(summary, "doc-bridge:generated hash=")[0], 0)]
    assert positions(report["findings"]) == sorted(expected)
    severities = {f["code"]: f["severity"] for f in report["findings"]}
    assert severities == {"RELATION_CONFIRMED": "info", "DECLARED_RELATION_STALE": "warning",
                          "CONFLICTING_DECLARATIONS": "error", "RELATION_NOT_ANALYZED": "info",
                          "UNRESOLVED_ENTITY_REFERENCE": "error", "RELATION_UNDOCUMENTED": "info",
                          "DOCBRIDGE_BLOCK_INVALID": "error", "GENERATED_REGION_EDITED": "warning"}
    invalid = next(f for f in report["findings"] if f["code"] == "DOCBRIDGE_BLOCK_INVALID")
    assert invalid["data"]["declarationCode"] == "DOCBRIDGE_FIELD_UNKNOWN"  # the original's distinct code
    conflict = next(f for f in report["findings"] if f["code"] == "CONFLICTING_DECLARATIONS")
    assert conflict["data"]["detections"] == ["dynamic", "static"] and conflict["data"]["observed"] == ["dynamic"]
    (related,) = conflict["related"]
    assert related["range"]["start"]["line"] == find(governance / "README.md", "from: src/billing/refund.ts", 3)[0]


@pytest.mark.parametrize(("scope", "undocumented"), [
    ("area", ("area:src/ledger", "area:src/billing")),
    ("file", ("module:src/ledger/audit.ts", "module:src/billing/invoice.ts")),
    ("package", None),  # one package: every relation is inside it
])
def test_reconcile_at_each_scope(governance: Path, scope: str, undocumented: tuple[str, str] | None) -> None:
    report = docbridge_json("reconcile", "--root", str(governance), "--scope", scope, "--include-orphaned",
                            expect=1)
    audit_line, audit_column = find(governance / "src/ledger/audit.ts", '"../billing/invoice"')
    # every document but the README declares nothing
    orphans = ["docs/ledger.md", "docs/notes.md", "docs/old/ledger.md", "docs/summary.md"]
    expected = [*declared_side(governance), *(("DOCUMENTATION_ORPHANED", path, 0, 0) for path in orphans)]
    if undocumented:
        expected.append(("RELATION_UNDOCUMENTED", "src/ledger/audit.ts", audit_line, audit_column))
    assert positions(report["diagnostics"]) == sorted(expected)
    ids = [d["id"] for d in report["diagnostics"]]
    assert ids == sorted(ids) and all(i.startswith(f"reconciliation:{d['code']}:")
                                      for i, d in zip(ids, report["diagnostics"], strict=True))
    statuses = {d["code"]: d["status"] for d in report["diagnostics"]}
    assert statuses["DECLARED_RELATION_STALE"] == "stale-or-unverified"
    assert statuses["CONFLICTING_DECLARATIONS"] == "conflict"
    if undocumented:
        gap = next(d for d in report["diagnostics"] if d["code"] == "RELATION_UNDOCUMENTED")
        assert (gap["data"]["from"], gap["data"]["to"]) == undocumented and gap["severity"] == "warning"
    summary = report["summary"]
    assert summary["scope"] == scope
    assert summary["documentation"] == {"documentCount": 5, "documentedDocumentCount": 1, "packageCount": 1,
                                        "packageStatus": {"package:ledgerly": "stale"}}


def test_reconcile_scope_comes_from_configuration_and_orphans_are_opt_in(governance: Path) -> None:
    report = docbridge_json("reconcile", "--root", str(governance), expect=1)  # reconciliation.scope: area
    assert report["summary"]["scope"] == "area"
    assert "DOCUMENTATION_ORPHANED" not in report["summary"]["diagnosticsByCode"]
    text = docbridge("reconcile", "--root", str(governance), "--text")
    assert text.returncode == 1
    assert "README.md:7:13  warning  DECLARED_RELATION_STALE" in text.stdout
    assert "package:ledgerly: stale" in text.stdout


def test_package_status_moves_from_stale_to_fresh(governance: Path) -> None:
    readme = governance / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split("docbridge:\n", 1)
    body = rest.split("---\n", 1)[1]
    # keep only the confirmed declaration and declare the ledger -> billing import too
    readme.write_text(head + "docbridge:\n  relations:\n    - from: src/billing/invoice.ts\n"
                      "      to: src/ledger/entries.ts\n    - from: src/billing/refund.ts\n"
                      "      to: src/ledger/entries.ts\n      detection: dynamic\n"
                      "    - from: src/ledger\n      to: src/billing\n---\n" + body, encoding="utf-8")
    report = docbridge_json("reconcile", "--root", str(governance), "--scope", "area")
    assert {d["code"] for d in report["diagnostics"]} == {"RELATION_CONFIRMED"}
    assert len(report["diagnostics"]) == 3
    assert report["summary"]["documentation"]["packageStatus"] == {"package:ledgerly": "fresh"}


def test_a_declaration_with_an_unknown_detection_is_malformed(governance: Path) -> None:
    readme = governance / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("detection: external", "detection: runtime"),
                      encoding="utf-8")
    report = docbridge_json("check", "--root", str(governance), "--format", "json", expect=1)
    (issue,) = [f for f in report["findings"] if f["code"] == "DOCBRIDGE_BLOCK_INVALID" and f["path"] == "README.md"]
    assert issue["data"]["declarationCode"] == "DOCBRIDGE_DETECTION_INVALID"
    assert "docbridge.relations.4.detection" in issue["message"]
    # nothing from a malformed block is used
    assert not [f for f in report["findings"] if f["code"] in ("RELATION_CONFIRMED", "DECLARED_RELATION_STALE")]


def test_reconcile_rejects_an_unknown_scope(governance: Path) -> None:
    result = docbridge("reconcile", "--root", str(governance), "--scope", "galaxy")
    assert result.returncode == 2 and "--scope" in result.stderr
