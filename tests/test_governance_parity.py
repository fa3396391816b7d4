"""`docbridge parity` on fixtures/governance: a stale README number, a missing claim, two contradicting surfaces
and an unresolvable claim, each reported once; the sealed registry, exceptions, publication safety, --init.

Read from the fixture: package.json says 2.3.0 and the README's Status section says "Ledgerly 2.2.0"; the README
never states the module count; the README says 87.5% of tasks and docs/summary.md says 85.0%, while
docs/parity/round-1.json records 0.875; only the first arm of that round records `refunds`; the README mentions
`docbridge reconcile`, which the command line offers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import docbridge, docbridge_json, make_repo
from docbridge.engine.governance.parity import seal
from support.positions import find, one_based

REGISTRY = "docs/parity/public-claims-v1.json"


def rewrite(root: Path, change: Any) -> None:
    registry = json.loads((root / REGISTRY).read_text())
    change(registry)
    (root / REGISTRY).write_text(json.dumps(seal(registry), indent=2))


def test_each_parity_code_once(governance: Path) -> None:
    report = docbridge_json("parity", "--root", str(governance), expect=1)
    assert report["ok"] is False
    found = [(f["code"], f["claimId"], f["surface"], f["line"], f["column"], f["blocking"])
             for f in report["parity"]["findings"]]
    version_line, version_column = one_based(find(governance / "README.md", "2.2.0"))
    summary_line, summary_column = one_based(find(governance / "docs/summary.md", "85.0"))
    assert sorted(found) == sorted([
        ("PARITY_STALE", "package-version", "README.md", version_line, version_column, True),
        ("PARITY_MISSING", "module-count", "README.md", None, None, True),
        ("PARITY_CONTRADICTION", "completion-rate", "docs/summary.md", summary_line, summary_column, True),
        ("PARITY_NOT_ANALYZED", "refund-total", None, None, None, False),  # never blocks
    ])
    stale = next(f for f in report["parity"]["findings"] if f["code"] == "PARITY_STALE")
    assert (stale["stated"], stale["canonical"], stale["owner"]) == ("2.2.0", "2.3.0", "maintainers")
    contradiction = next(f for f in report["parity"]["findings"] if f["code"] == "PARITY_CONTRADICTION")
    assert [(o["surface"], o["stated"]) for o in contradiction["occurrences"]] == [
        ("README.md", "87.5"), ("docs/summary.md", "85.0")]
    assert report["parity"]["missingSurfaces"] == []
    again = docbridge_json("parity", "--root", str(governance), expect=1)
    assert again["parity"]["contentHash"] == report["parity"]["contentHash"]  # no timestamp, sorted
    text = docbridge("parity", "--root", str(governance), "--text")
    assert text.returncode == 1 and "parity: failing (5 claims, 4 findings, 3 blocking, 0 accepted)" in text.stdout
    assert str(governance) not in text.stdout + json.dumps(report)  # repository-relative only


def test_an_exception_is_honoured_and_a_fixed_surface_passes(governance: Path) -> None:
    rewrite(governance, lambda r: r["exceptions"].append(
        {"claimId": "package-version", "surface": "README.md", "reason": "the 2.3.0 notes ship next week",
         "acceptedBy": "release-manager"}))
    report = docbridge_json("parity", "--root", str(governance), expect=1)
    stale = next(f for f in report["parity"]["findings"] if f["code"] == "PARITY_STALE")
    assert stale["blocking"] is False and stale["accepted"]["acceptedBy"] == "release-manager"
    # fix the other blocking findings: the run passes with the accepted finding still reported
    summary = governance / "docs/summary.md"
    summary.write_text(summary.read_text().replace("85.0%", "87.5%"))
    readme = governance / "README.md"
    readme.write_text(readme.read_text() + "\nThe code is split into 5 modules.\n")
    report = docbridge_json("parity", "--root", str(governance))
    assert report["ok"] is True
    assert [f["code"] for f in report["parity"]["findings"]] == ["PARITY_STALE", "PARITY_NOT_ANALYZED"]


def test_a_required_surface_that_does_not_exist(governance: Path) -> None:
    rewrite(governance, lambda r: r["claims"][0]["required"].append("docs/releases.md"))
    report = docbridge_json("parity", "--root", str(governance), expect=1)
    assert report["parity"]["missingSurfaces"] == ["docs/releases.md"]
    assert any(f["code"] == "PARITY_MISSING" and f["surface"] == "docs/releases.md"
               for f in report["parity"]["findings"])


@pytest.mark.parametrize(("change", "message"), [
    (lambda text: text.replace('"2.3.0"', '"2.3.0"').replace('"warn"', '"error"'), "contentHash"),
    (lambda text: text[:-3], f"{REGISTRY}:"),
])
def test_a_tampered_or_broken_registry_is_refused(governance: Path, change: Any, message: str) -> None:
    path = governance / REGISTRY
    path.write_text(change(path.read_text()))
    result = docbridge("parity", "--root", str(governance))
    assert result.returncode == 2 and message in result.stderr and REGISTRY in result.stderr


@pytest.mark.parametrize(("edit", "key"), [
    (lambda r: r["exceptions"].append({"claimId": "package-version", "surface": "README.md", "reason": "later",
                                       "acceptedBy": "me"}), "exceptions[0].reason"),
    (lambda r: r["claims"][0].update(template="{value} or {value}"), "claims[0].template"),
    (lambda r: r["claims"][1].update(required=["/etc/passwd"]), "claims[1].required[0]"),
    (lambda r: r["claims"][4].update(template="{value}"), "claims[4].template"),
])
def test_an_invalid_registry_names_the_key(governance: Path, edit: Any, key: str) -> None:
    rewrite(governance, edit)
    result = docbridge("parity", "--root", str(governance))
    assert result.returncode == 2 and f"{REGISTRY}: {key}:" in result.stderr


def test_init_writes_a_starter_registry_and_refuses_to_overwrite(governance: Path) -> None:
    assert docbridge("parity", "--root", str(governance), "--init").returncode == 2  # one exists
    (governance / REGISTRY).unlink()
    readme = governance / "README.md"
    readme.write_text(readme.read_text().replace("Ledgerly 2.2.0", "Ledgerly 2.3.0"))
    result = docbridge("parity", "--root", str(governance), "--init")
    assert result.returncode == 0, result.stderr
    registry = json.loads((governance / REGISTRY).read_text())
    assert [c["claimId"] for c in registry["claims"]] == ["package-version", "command-reconcile"]
    assert registry["claims"][0]["template"] == "Ledgerly {value}"
    assert docbridge_json("parity", "--root", str(governance))["ok"] is True


def test_excerpts_are_bounded_and_redacted_and_signed_transforms_refuse_a_turn(tmp_path: Path) -> None:
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0"
    long_line = f"Checkout got 18.46% fewer abandoned carts (api_key = {secret}). " + "x" * 400
    root = make_repo(tmp_path / "repo", {
        "package.json": json.dumps({"name": "shop", "version": "1.0.0"}),
        "README.md": f"# Shop\n\n{long_line}\n",
        "study.json": json.dumps({"delta": -0.1846}),
    })
    claim = {"claimId": "abandonment", "statement": "fewer abandoned carts", "owner": "growth", "valueType": "percent",
             "template": "{value}% fewer", "transform": "negative-percent-2dp",
             "evidence": {"kind": "artifact-field", "path": "study.json", "field": "delta"},
             "required": ["README.md"], "severity": "error", "remediation": "Quote study.json."}
    (root / "claims.json").write_text(json.dumps(seal({"schemaVersion": 1, "claims": [claim], "exceptions": []})))
    assert docbridge_json("parity", "--root", str(root), "--claims", str(root / "claims.json"))["ok"] is True
    (root / "study.json").write_text(json.dumps({"delta": -0.2}))  # the README is now stale
    report = docbridge_json("parity", "--root", str(root), "--claims", str(root / "claims.json"), expect=1)
    (stale,) = report["parity"]["findings"]
    assert stale["code"] == "PARITY_STALE" and (stale["stated"], stale["canonical"]) == ("18.46", "20.00")
    assert len(stale["excerpt"]) <= 160 and secret not in json.dumps(report) and "[redacted]" in stale["excerpt"]
    (root / "study.json").write_text(json.dumps({"delta": 0.1846}))  # the measurement turned
    report = docbridge_json("parity", "--root", str(root), "--claims", str(root / "claims.json"))
    assert [f["code"] for f in report["parity"]["findings"]] == ["PARITY_NOT_ANALYZED"]


def test_a_surface_that_is_a_fifo_or_links_out_of_the_repository_is_not_read(governance: Path,
                                                                             tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("Ledgerly 2.3.0\n", encoding="utf-8")
    (governance / "docs/summary.md").unlink()
    os.mkfifo(governance / "docs/summary.md")  # a read would wait forever for a writer
    (governance / "README.md").unlink()
    (governance / "README.md").symlink_to(outside)
    result = docbridge("parity", "--root", str(governance), timeout=60)
    report = json.loads(result.stdout)
    unread = {f["surface"]: f["message"] for f in report["parity"]["findings"] if f["code"] == "PARITY_NOT_ANALYZED"
              and f["surface"] is not None}
    assert "outside the repository" in unread["README.md"]
    assert "regular file" in unread["docs/summary.md"]
    assert not [f for f in report["parity"]["findings"] if f["surface"] == "README.md"
                and f["code"] != "PARITY_NOT_ANALYZED"]  # nothing read through the link
