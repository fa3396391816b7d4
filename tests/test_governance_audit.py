"""`docbridge audit` on fixtures/governance: every audit code planted once, its category and blocking state;
the original's distinct DOCBRIDGE_* declaration codes; statuses blocked / needs-review / pass.

Read from the fixture: `docs/notes.md` is one untitled sentence without an example; `docs/old/ledger.md`
repeats the body of `docs/ledger.md`; `docs/summary.md` has an unknown key in its docbridge block, a generated
region whose recorded hash is not its content's and a region that records no hash; the README lacks the
`Installation` section its configuration asks for; no document covers `src/ledger` (the only package's areas
are the units); and the README's declared relations give the reconciliation's codes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import docbridge, docbridge_json, make_repo
from support.positions import find


def rows(report: dict[str, Any]) -> list[tuple[str, str | None, int, int, str, bool]]:
    out = []
    for f in report["findings"]:
        start = (f["range"] or {}).get("start", {"line": -1, "character": -1})
        out.append((f["code"], f["path"], start["line"], start["character"], f["data"]["category"],
                    f["data"]["blocking"]))
    return sorted(out, key=lambda r: (r[0], r[1] or "", r[2]))


def test_every_audit_code_once_at_its_place(governance: Path) -> None:
    report = docbridge_json("audit", "--root", str(governance), expect=1)
    readme, summary = governance / "README.md", governance / "docs/summary.md"
    col = len("from: ")

    def decl(needle: str, occurrence: int = 1) -> tuple[int, int]:
        line, column = find(readme, needle, occurrence)
        return line, column + col
    expected = [
        ("DOCUMENTATION_SEMANTICS_NOT_ANALYZED", None, -1, -1, "limitation", False),
        ("DOCUMENTATION_SECTIONS_MISSING", "README.md", 0, 0, "quality", False),
        ("DOCUMENTATION_EXACT_DUPLICATE", "docs/old/ledger.md", 0, 0, "redundancy", False),
        ("DOCUMENTATION_EXAMPLE_MISSING", "docs/notes.md", 0, 0, "quality", False),
        ("DOCUMENTATION_TITLE_MISSING", "docs/notes.md", 0, 0, "quality", False),
        ("DOCUMENTATION_TOO_SHORT", "docs/notes.md", 0, 0, "quality", False),
        ("DOCBRIDGE_FIELD_UNKNOWN", "docs/summary.md", find(summary, "owner: finance")[0], 0, "quality", True),
        ("GENERATED_REGION_EDITED", "docs/summary.md", find(summary, "generated hash=")[0], 0,
         "generated-freshness", False),
        ("GENERATED_DOCUMENT_FRESHNESS_UNVERIFIED", "docs/summary.md",
         find(summary, "<!-- doc-bridge:generated -->")[0], 0, "generated-freshness", False),
        ("PACKAGE_DOCUMENTATION_MISSING", "src/ledger/audit.ts", 0, 0, "coverage", False),
        ("RELATION_UNDOCUMENTED", "src/ledger/audit.ts", *find(governance / "src/ledger/audit.ts", '"../billing'),
         "structure-gap", False),
        ("DECLARED_RELATION_STALE", "README.md", *decl("from: src/billing/refund.ts"), "stale", False),
        ("CONFLICTING_DECLARATIONS", "README.md", *decl("from: src/billing/refund.ts", 2), "contradiction", True),
        ("RELATION_NOT_ANALYZED", "README.md", *decl("from: src/notify/mailer.ts"), "limitation", False),
        ("UNRESOLVED_ENTITY_REFERENCE", "README.md", *decl("from: src/billing/invoice.ts", 2), "contradiction",
         True),
    ]
    assert rows(report) == sorted(expected, key=lambda r: (r[0], r[1] or "", r[2]))
    assert report["status"] == "blocked" and report["summary"]["blocking"] == 3
    duplicate = next(f for f in report["findings"] if f["code"] == "DOCUMENTATION_EXACT_DUPLICATE")
    assert duplicate["data"]["original"] == "docs/ledger.md"
    sections = next(f for f in report["findings"] if f["code"] == "DOCUMENTATION_SECTIONS_MISSING")
    assert sections["data"]["missing"] == ["Installation"]
    short = next(f for f in report["findings"] if f["code"] == "DOCUMENTATION_TOO_SHORT")
    assert short["data"]["words"] == len((governance / "docs/notes.md").read_text().split())
    text = docbridge("audit", "--root", str(governance), "--text")
    assert text.returncode == 1 and text.stdout.rstrip().endswith("audit: blocked (15 findings, 3 blocking)")


def test_a_critical_path_makes_a_high_confidence_finding_blocking(governance: Path) -> None:
    config = json.loads((governance / "doc-bridge.config.json").read_text())
    config["rules"] = {"criticalPaths": ["docs/notes.md"]}
    (governance / "doc-bridge.config.json").write_text(json.dumps(config))
    report = docbridge_json("audit", "--root", str(governance), expect=1)
    notes = [f for f in report["findings"] if f["path"] == "docs/notes.md"]
    assert len(notes) == 3 and all(f["data"]["blocking"] and f["severity"] == "error" for f in notes)


def test_check_audit_adds_the_audit_codes(governance: Path) -> None:
    plain = {f["code"] for f in docbridge_json("check", "--root", str(governance), "--format", "json",
                                               expect=1)["findings"]}
    audited = {f["code"] for f in docbridge_json("check", "--root", str(governance), "--format", "json", "--audit",
                                                 expect=1)["findings"]}
    assert audited - plain == {"DOCUMENTATION_SECTIONS_MISSING", "DOCUMENTATION_EXACT_DUPLICATE",
                               "DOCUMENTATION_EXAMPLE_MISSING", "DOCUMENTATION_TITLE_MISSING",
                               "DOCUMENTATION_TOO_SHORT", "GENERATED_DOCUMENT_FRESHNESS_UNVERIFIED",
                               "PACKAGE_DOCUMENTATION_MISSING"}


WORDS = ("This page explains how the shop issues invoices, records refunds and keeps its ledger balanced at the "
         "end of every working day.")


@pytest.mark.parametrize(("frontmatter", "code"), [
    ("title: [unclosed", "DOCBRIDGE_FRONTMATTER_MALFORMED"),
    ("- just\n- a list", "DOCBRIDGE_STRUCTURE_INVALID"),
    ("docbridge: 5", "DOCBRIDGE_BLOCK_MALFORMED"),
    ("docbridge:\n  owner: finance", "DOCBRIDGE_FIELD_UNKNOWN"),
    ("covers: {a: 1}", "DOCBRIDGE_COVERS_INVALID"),
    ("docbridge:\n  relations: nope", "DOCBRIDGE_RELATIONS_INVALID"),
    ("docbridge:\n  relations:\n    - from: README.md", "DOCBRIDGE_RELATION_FIELD_MISSING"),
    ("docbridge:\n  relations:\n    - from: README.md\n      to: README.md\n      detection: maybe",
     "DOCBRIDGE_DETECTION_INVALID"),
    ("docbridge:\n  relations:\n    - from: README.md\n      to: README.md\n      kind: [x]",
     "DOCBRIDGE_RELATION_INVALID"),
])
def test_declaration_problems_keep_the_original_codes(tmp_path: Path, frontmatter: str, code: str) -> None:
    text = f"---\n{frontmatter}\n---\n\n# Shop\n\n{WORDS}\n\n```sh\nnpm start\n```\n"
    root = make_repo(tmp_path / "repo", {"README.md": text})
    report = docbridge_json("audit", "--root", str(root), expect=1)
    (finding,) = [f for f in report["findings"] if f["code"].startswith("DOCBRIDGE_")]
    assert finding["code"] == code and finding["severity"] == "error" and finding["data"]["blocking"]
    check = docbridge_json("check", "--root", str(root), "--format", "json", expect=1)
    (invalid,) = check["findings"]
    assert invalid["code"] == "DOCBRIDGE_BLOCK_INVALID" and invalid["data"]["declarationCode"] == code


def test_needs_review_and_pass(tmp_path: Path) -> None:
    clean = make_repo(tmp_path / "clean", {"README.md": f"# Shop\n\n{WORDS}\n\n```sh\nnpm start\n```\n"})
    report = docbridge_json("audit", "--root", str(clean))
    assert report["status"] == "pass"
    assert [f["code"] for f in report["findings"]] == ["DOCUMENTATION_SEMANTICS_NOT_ANALYZED"]
    review = make_repo(tmp_path / "review", {"README.md": f"# Shop\n\n{WORDS}\n"})
    report = docbridge_json("audit", "--root", str(review))
    assert report["status"] == "needs-review"
    assert {f["code"] for f in report["findings"]} == {"DOCUMENTATION_SEMANTICS_NOT_ANALYZED",
                                                       "DOCUMENTATION_EXAMPLE_MISSING"}
