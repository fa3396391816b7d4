"""`docbridge doctor` on the fixtures: each dimension's figure, the grade, the actions, and the grade falling
when a document becomes unreachable.

Figures read from the fixtures: monorepo's seven documents are all linked from its README (directly or through
a package README), every document names code, one of its seven areas (`packages/web/src/components`) is named
by no document; fixtures/governance has five documents of which the README links only `docs/ledger.md`, its
three areas are all mentioned, and `docs/notes.md` and `docs/summary.md` name no code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import copy_fixture, docbridge, docbridge_json


def test_monorepo_is_grade_a_until_a_document_is_unreachable(tmp_path: Path) -> None:
    root = copy_fixture("monorepo", tmp_path)
    suite = str(root / "retrieval-suite.json")
    report = docbridge_json("doctor", "--root", str(root), "--suite", suite, "--json")
    dims = report["dimensions"]
    assert report["grade"] == "A"
    assert (dims["reachability"]["reachable"], dims["reachability"]["total"]) == (7, 7)
    assert dims["connectivity"]["undocumentedAreas"] == ["packages/web/src/components"]
    assert dims["connectivity"]["value"] == pytest.approx(13 / 14, abs=1e-6)
    assert dims["hitAt3"]["status"] == "analyzed" and dims["hitAt3"]["suite"] == "retrieval-suite.json"
    # unlink the web guide everywhere: it is still indexed, but no entry document leads to it
    for path, link in (("README.md", "[the web guide](docs/web.md)"),
                       ("packages/web/README.md", "[the web guide](../../docs/web.md)")):
        text = (root / path).read_text(encoding="utf-8")
        assert link in text
        (root / path).write_text(text.replace(link, "the web guide"), encoding="utf-8")
    after = docbridge_json("doctor", "--root", str(root), "--suite", suite, "--json")
    reach = after["dimensions"]["reachability"]
    assert (reach["reachable"], reach["unreachable"]) == (6, ["docs/web.md"])
    assert after["grade"] == "B" and after["score"] < report["score"]
    first = after["actions"][0]
    assert first["dimension"] == "reachability" and first["files"] == ["docs/web.md"]


def test_governance_figures_and_actions(tmp_path: Path) -> None:
    root = copy_fixture("governance", tmp_path)
    report = docbridge_json("doctor", "--root", str(root), "--json")
    dims = report["dimensions"]
    assert dims["reachability"]["value"] == pytest.approx(2 / 5)
    assert dims["reachability"]["unreachable"] == ["docs/notes.md", "docs/old/ledger.md", "docs/summary.md"]
    assert dims["connectivity"]["value"] == pytest.approx(6 / 8)
    assert dims["connectivity"]["documentsWithoutCode"] == ["docs/notes.md", "docs/summary.md"]
    assert dims["hitAt3"]["status"] == "not-analyzed"
    assert report["score"] == pytest.approx(100 * (15 * 0.4 + 15 * 0.75) / 30, abs=0.05)
    assert report["grade"] == "D"
    # unreachable pages are grouped by folder: docs/ (notes, summary) and docs/old/ (ledger) get an action each
    assert [a["dimension"] for a in report["actions"]] == ["hitAt3", "reachability", "connectivity", "reachability"]
    assert [a["files"] for a in report["actions"] if a["dimension"] == "reachability"] == [
        ["docs/notes.md", "docs/summary.md"], ["docs/old/ledger.md"]]
    text = docbridge("doctor", "--root", str(root))
    assert text.returncode == 0 and text.stdout.startswith("grade D  (score 57.5/100)")
    assert "hit@3         not-analyzed" in text.stdout
    assert docbridge("doctor", "--root", str(root), "--text").stdout == text.stdout  # --text as the other gates


def test_a_missing_or_invalid_suite_is_an_input_error(tmp_path: Path) -> None:
    root = copy_fixture("governance", tmp_path)
    missing = docbridge("doctor", "--root", str(root), "--suite", str(root / "nope.json"))
    assert missing.returncode == 2 and "nope.json" in missing.stderr and "does not exist" in missing.stderr
    (root / "suite.json").write_text("{ not json", encoding="utf-8")
    broken = docbridge("doctor", "--root", str(root), "--suite", str(root / "suite.json"))
    assert broken.returncode == 2 and "suite.json:1:3" in broken.stderr
    config = json.loads((root / "doc-bridge.config.json").read_text())
    config["doctor"] = {"suite": "golden.json"}
    (root / "doc-bridge.config.json").write_text(json.dumps(config))
    configured = docbridge("doctor", "--root", str(root))
    assert configured.returncode == 2 and "doctor.suite" in configured.stderr and "golden.json" in configured.stderr
