"""The command names an integration written against the original calls: `query ownership <path>`, `audit
documentation`, `retrieve` and `suggest [--documentation]`, each run as the installed command on a copy of
fixtures/acme. Expected answers come from reading the fixture: its doc-bridge.config.json, its documents'
frontmatter and fences, its folders and files."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import docbridge, docbridge_json, make_repo

FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def ownership(root: Path) -> dict[str, Any]:
    config = json.loads((root / "doc-bridge.config.json").read_text(encoding="utf-8"))
    return dict(config["routing"]["options"]["ownership"])


def documents(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".docbridge" not in p.parts)


def areas(root: Path) -> set[str]:
    """One package (package.json at the root): the folders under src/ are its areas."""
    return {f"src/{p.name}" for p in (root / "src").iterdir() if p.is_dir()}


def covered(root: Path) -> set[str]:
    """The paths the documents' frontmatter `covers` (a flow list or a block list of `- item` lines; an item is a
    path, an entity id such as `area:src/orders` or an ownership id such as `acme-billing`)."""
    records = {record_id: record["path"] for record_id, record in ownership(root).items()}
    found: set[str] = set()
    for path in documents(root):
        match = FRONTMATTER.match((root / path).read_text(encoding="utf-8"))
        if match is None:
            continue
        lines = match.group(1).splitlines()
        for index, line in enumerate(lines):
            if not line.startswith("covers:"):
                continue
            inline = line.removeprefix("covers:").strip()
            if inline.startswith("["):
                found.update(item.strip() for item in inline.strip("[]").split(",") if item.strip())
            for item in lines[index + 1:]:
                if not item.startswith(("  -", "- ")):
                    break
                found.add(item.split("-", 1)[1].strip())
    return {records.get(item, item.removeprefix("area:")) for item in found}


# ------------------------------------------------------------------------------------------------ query ownership


def test_query_ownership_takes_each_records_id_or_path(acme: Path) -> None:
    for record_id, record in ownership(acme).items():
        by_id = docbridge_json("query", "ownership", record_id, "--root", str(acme), "--agent")
        assert by_id["target"]["id"] == record_id and by_id["editRoots"] == [record["path"]]
        for form in (record["path"], f"./{record['path']}/"):
            assert docbridge_json("query", "ownership", form, "--root", str(acme), "--agent") == by_id, form
        # the original's package records are the ownership records: `query package <path>` names the same unit
        assert docbridge_json("query", "package", record["path"], "--root", str(acme), "--agent") == by_id
        if "checks" in record:
            assert by_id["checks"] == record["checks"]
        if "agentDoc" in record:
            assert by_id["startHere"] == record["agentDoc"]


def test_query_ownership_of_nothing_names_the_closest_and_exits_2(acme: Path) -> None:
    missed = docbridge("query", "ownership", "billing", "--root", str(acme), "--agent")
    assert missed.returncode == 2 and missed.stdout == ""
    assert "no ownership id, path or alias" in missed.stderr
    assert "Closest:" in missed.stderr and "src/billing" in missed.stderr  # the folder the word names
    assert all(record_id in missed.stderr for record_id in ownership(acme))
    wrong = docbridge("query", "module", "src/billing", "--root", str(acme))
    assert wrong.returncode == 2 and "is an area (area:src/billing), not a module" in wrong.stderr


# ------------------------------------------------------------------------------------------------ audit documentation


def test_audit_documentation_is_the_audit_with_the_originals_metrics(acme: Path) -> None:
    plain = docbridge_json("audit", "--root", str(acme), expect=1)  # docs/deployment.md's frontmatter is malformed
    report = docbridge_json("audit", "documentation", "--root", str(acme), expect=1)
    assert report["type"] == "documentation-audit-report" and report["schemaVersion"] == 1
    assert {k: v for k, v in report.items() if k not in ("type", "schemaVersion", "metrics")} == plain
    metrics = report["metrics"]
    units, documented = areas(acme), areas(acme) & covered(acme)
    assert metrics["documentCount"] == len(documents(acme))
    assert (metrics["coverageUnit"], metrics["packageCount"], metrics["coveredPackageCount"]) == (
        "area", len(units), len(documented))
    assert metrics["coverageRate"] == round(len(documented) / len(units), 6)
    missing = {f["data"]["entity"] for f in report["findings"] if f["code"] == "PACKAGE_DOCUMENTATION_MISSING"}
    assert missing == {f"area:{path}" for path in units - documented}
    assert metrics["structureGapCount"] == report["summary"]["byCategory"].get("structure-gap", 0)
    assert metrics["blockingCount"] == report["summary"]["blocking"] >= 1


def test_audit_documentation_text_adds_the_coverage_lines_and_plain_audit_is_unchanged(acme: Path) -> None:
    units, documented = areas(acme), areas(acme) & covered(acme)
    text = docbridge("audit", "documentation", "--root", str(acme), "--text")
    plain = docbridge("audit", "--root", str(acme), "--text")
    assert text.returncode == plain.returncode == 1
    coverage = f"Areas covered: {len(documented)}/{len(units)} ({len(documented) / len(units):.1%})"
    assert coverage in text.stdout and "Areas covered" not in plain.stdout
    assert f"Documents: {len(documents(acme))} (" in text.stdout
    last = plain.stdout.rstrip("\n").splitlines()[-1]
    assert last.startswith("audit: blocked (") and text.stdout.rstrip("\n").splitlines()[-1] == last
    # every finding line of the plain audit is in the documentation form, in the same order
    assert text.stdout.startswith(plain.stdout.rsplit(last, 1)[0])
    wrong = docbridge("audit", "documents", "--root", str(acme))
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr


# ------------------------------------------------------------------------------------------------ retrieve


def test_retrieve_gives_retrieved_documents_with_content_and_evidence(acme: Path) -> None:
    tax = acme / "src" / "billing" / "tax.ts"
    # tax.ts opens with `/** VAT rates by ISO 3166 country code. … */` above its rate table
    payload = docbridge_json("retrieve", "how", "is", "sales", "tax", "calculated", "--root", str(acme), "--json",
                             "--limit", "3")
    assert payload["type"] == "retriever-query" and payload["query"] == "how is sales tax calculated"
    assert payload["count"] == len(payload["documents"]) == 3
    first = payload["documents"][0]
    assert (first["id"], first["source"]) == ("module:src/billing/tax.ts", "src/billing/tax.ts")
    assert "VAT rates by ISO 3166 country code" in first["content"]
    assert "VAT rates by ISO 3166 country code" in tax.read_text(encoding="utf-8")
    meta = first["metadata"]
    assert meta["evidence"] == [{"path": "src/billing/tax.ts",
                                 "contentHash": hashlib.sha256(tax.read_bytes()).hexdigest()}]
    assert {"kind", "path", "title", "explain", "confidence", "provenance"} <= set(meta)
    assert [d["score"] for d in payload["documents"]] == sorted((d["score"] for d in payload["documents"]),
                                                                reverse=True)

    only = docbridge_json("retrieve", "billing", "--kinds", "document", "--root", str(acme), "--json")
    assert only["documents"] and {d["metadata"]["kind"] for d in only["documents"]} == {"document"}
    assert "docs/billing.md" in {d["source"] for d in only["documents"]}

    text = docbridge("retrieve", "sales tax", "--root", str(acme), "--limit", "2")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0] == "Retrieve: sales tax (2 documents)"
    assert lines[1].startswith(" 1. [module] module:src/billing/tax.ts  score=")


def test_retrieve_answers_nothing_with_exit_0_and_refuses_bad_options_with_exit_2(acme: Path) -> None:
    nothing = docbridge_json("retrieve", "zzqqxx", "--root", str(acme), "--json")
    assert nothing["count"] == 0 and nothing["documents"] == []
    for options, message in ((["--limit", "0"], "--limit"), (["--kinds", "widget"], "unknown kind 'widget'")):
        refused = docbridge("retrieve", "tax", "--root", str(acme), *options)
        assert refused.returncode == 2 and message in refused.stderr, refused.stderr


# ------------------------------------------------------------------------------------------------ suggest


def test_suggest_is_bound_to_the_snapshot_and_empty_on_a_laid_out_repository(acme: Path) -> None:
    docbridge("scan", "--root", str(acme))
    snapshot = json.loads((acme / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))
    payload = docbridge_json("suggest", "--root", str(acme), "--json")
    assert payload["type"] == "suggestions" and payload["baseSnapshotHash"] == snapshot["content_hash"]
    # eight folders under src/ are eight areas (not flat: no area suggestion) and no overlay exists
    assert payload["areas"] == len(areas(acme)) and payload["total"] == 0 and payload["suggestions"] == []
    assert "baseDocumentationAuditHash" not in payload
    text = docbridge("suggest", "--root", str(acme))
    assert text.returncode == 0 and "No suggestions." in text.stdout and "--documentation" in text.stdout


def test_suggest_documentation_answers_every_audit_finding_once(acme: Path) -> None:
    audit = docbridge_json("audit", "--root", str(acme), expect=1)
    payload = docbridge_json("suggest", "--documentation", "--root", str(acme), "--json")
    assert payload["documentation"] is True and payload["auditStatus"] == audit["status"] == "blocked"
    assert re.fullmatch(r"[0-9a-f]{64}", payload["baseDocumentationAuditHash"])
    suggestions = payload["suggestions"]
    assert payload["count"] == payload["total"] == len(suggestions) == payload["bySource"]["audit"]
    # the malformed frontmatter of docs/deployment.md blocks the audit: it comes first
    assert suggestions[0]["kind"] == "fix-declaration" and suggestions[0]["target"] == "docs/deployment.md"
    assert suggestions[0]["blocking"] is True and not any(s["blocking"] for s in suggestions[1:])
    by_kind: dict[str, set[str]] = {}
    for item in suggestions:
        by_kind.setdefault(item["kind"], set()).add(item["target"])
    assert by_kind["document-unit"] == {f"area:{path}" for path in areas(acme) - covered(acme)}
    unfenced = {path for path in documents(acme) if "```" not in (acme / path).read_text(encoding="utf-8")}
    assert by_kind["improve-document"] == unfenced  # audit.requireExamples: no fenced example
    assert by_kind["regenerate"] == {"docs/configuration.md"}  # its generated region was edited by hand
    # each actionable audit finding is answered by exactly one suggestion
    answered = [i for item in suggestions for i in item["auditFindingIds"]]
    actionable = [f["fingerprint"] for f in audit["findings"] if f["data"]["category"] != "limitation"]
    assert sorted(answered) == sorted(actionable)
    gaps = [f for f in audit["findings"] if f["code"] == "RELATION_UNDOCUMENTED"]
    assert sum(s.get("relationCount", 0) for s in suggestions) == len(gaps)
    assert by_kind["declare-relations"] == {f["path"] for f in gaps}

    limited = docbridge_json("suggest", "--documentation", "--limit", "2", "--root", str(acme), "--json")
    assert limited["count"] == 2 and limited["truncated"] is True and limited["total"] == payload["total"]
    assert limited["suggestions"] == suggestions[:2]
    text = docbridge("suggest", "--documentation", "--root", str(acme))
    assert text.returncode == 0 and text.stdout.startswith(" 1. [fix-declaration] ")
    assert text.stdout.rstrip().endswith("Advice only: nothing is applied.")
    assert docbridge("suggest", "--limit", "0", "--root", str(acme)).returncode == 2


def test_suggest_lists_the_agents_pending_proposals(tmp_path: Path) -> None:
    from tests.conftest import copy_fixture
    from tests.test_enrich import PENDING, enable, overlay, run_script
    root = copy_fixture("acme", tmp_path)
    enable(root)
    run_script(root, [{**PENDING["relation"], "reason": "the storage guide documents the cache"}])
    pending = overlay(root)["pending"]
    payload = docbridge_json("suggest", "--root", str(root), "--json")
    assert payload["bySource"]["overlay"] == len(pending) == 1
    item = payload["suggestions"][0]
    assert (item["kind"], item["proposalId"], item["proposalKind"], item["target"]) == (
        "pending-proposal", pending[0]["proposalId"], "propose-relation", "document:docs/storage.md")
    assert item["reason"] == "the storage guide documents the cache"
    assert f"docbridge fix approve {pending[0]['proposalId']}" in item["action"]


def test_suggest_offers_areas_for_a_flat_layout(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"package.json": '{"name": "flat"}'}
    for group in ("a", "b"):  # two cliques of four modules under code/ (no area root): one import between them
        for i in range(4):
            imports = "".join(f"import {{ x{j} }} from './m{j}';\n" for j in range(i + 1, 4))
            files[f"code/{group}/m{i}.ts"] = imports + f"export const x{i} = {i};\n"
    files["code/a/m0.ts"] += "import { x0 as y } from '../b/m0';\n"
    root = make_repo(tmp_path / "flat", files)
    payload = docbridge_json("suggest", "--root", str(root), "--json")
    assert payload["areas"] == 0
    assert [(s["kind"], s["target"], s["moduleCount"]) for s in payload["suggestions"]] == [
        ("suggest-area", "code/a", 4), ("suggest-area", "code/b", 4)]
    assert payload["suggestions"][0]["evidence"] == [f"code/a/m{i}.ts" for i in range(4)]
    assert "`code` to `analysis.areas.roots`" in payload["suggestions"][0]["action"]
