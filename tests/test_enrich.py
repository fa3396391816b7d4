"""The enrichment overlay through `docbridge enrich` with the reference agent (fixtures/agents): one accepted
and one pending proposal per kind and every rejection reason, the shipped schema, the cache, hostile agents,
approvals, expiry and the retrieval delta."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, REPO, copy_fixture, docbridge, docbridge_json

AGENT = REPO / "fixtures" / "agents" / "reference_agent.py"
STORAGE, BILLING, CONFIGURATION = "document:docs/storage.md", "document:docs/billing.md", \
    "document:docs/configuration.md"


def enable(root: Path, **extra: Any) -> None:
    path = root / "doc-bridge.config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["intelligence"] = {"registry": {"enabled": True, "agentId": "ref-agent", "roles": ["reviewer"],
                                           "timeoutSeconds": 20, **extra}}
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def agent(*args: str) -> str:
    return " ".join([sys.executable, str(AGENT), *args])


def run_script(root: Path, templates: list[dict[str, Any]], name: str = "script.json", expect: int = 0,
               extra: tuple[str, ...] = ()) -> Any:
    if name != "script.json":  # another script is another agent's answer: not what the cache holds
        shutil.rmtree(root / ".docbridge" / "enrich", ignore_errors=True)
    script = root.parent / name
    script.write_text(json.dumps(templates), encoding="utf-8")
    return docbridge_json("enrich", "--root", str(root), "--json", "--agent-command",
                          agent("--script", str(script), "--log", str(root.parent / "calls.log"), *extra),
                          expect=expect)


def overlay(root: Path) -> dict[str, Any]:
    return json.loads((root / ".docbridge" / "overlay.json").read_text(encoding="utf-8"))


def ev(path: str, start: int = 1, end: int = 1) -> list[dict[str, Any]]:
    return [{"source": "snapshot", "path": path, "lineStart": start, "lineEnd": end}]


ACCEPTED = {
    "classify": {"entity": STORAGE, "kind": "classify-document",
                 "payload": {"type": "guide", "audience": "human", "lifecycle": "active", "criticality": "tier-1"}},
    "summarize": {"entity": "module:src/util/ids.ts", "kind": "summarize",
                  "payload": {"summary": "Identifier helpers for orders and invoices.", "language": "en"}},
    "alias": {"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "persistence-layer"}},
    "intent": {"entity": STORAGE, "kind": "add-intent",
               "payload": {"phrase": "run a database migration", "language": "en"}},
    "rank": {"entity": "document:docs/deployment.md", "kind": "rank-hint", "payload": {"relevance": "strong"}},
    "gap": {"entity": STORAGE, "kind": "flag-gap",
            "payload": {"area": "area:src/storage", "missing": "cache eviction policy"}},
}
PENDING = {
    "canonical": {"entity": BILLING, "kind": "mark-canonical", "payload": {"scope": "area:src/billing"}},
    "canonical-rival": {"entity": "document:docs/for-agents/billing.md", "kind": "mark-canonical",
                        "payload": {"scope": "area:src/billing"}},
    "relation": {"entity": STORAGE, "kind": "propose-relation",
                 "payload": {"from": STORAGE, "to": "module:src/storage/cache.ts", "kind": "documents"}},
    "contradiction": {"entity": CONFIGURATION, "kind": "flag-contradiction",
                      "payload": {"against": STORAGE, "claim": "no config files", "observed": "a legacy file"},
                      "evidence": ev("docs/configuration.md") + ev("docs/storage.md")},
    "redundancy": {"entity": BILLING, "kind": "flag-redundancy",
                   "payload": {"with": "document:docs/guias/faturamento.md"}},
    "area": {"entity": "document:docs/README.md", "kind": "suggest-area",
             "payload": {"directories": ["docs/for-agents"], "name": "agent-docs"}},
}
REJECTED = {
    "not-an-object": ({"raw": "just a string", "via": STORAGE}, "schema"),
    "invalid-kind": ({"raw": {"kind": "delete-everything", "entity": STORAGE, "proposalId": "x1",
                              "evidence": ev("docs/storage.md")}, "via": STORAGE}, "invalid-kind"),
    "no-evidence": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "store-x"},
                     "set": {"evidence": []}}, "no-evidence"),
    "schema": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "a" * 65}}, "schema"),
    "base": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "store-b"},
              "set": {"baseSnapshotHash": "0" * 64}}, "base-snapshot-mismatch"),
    "unknown-entity": ({"entity": "document:docs/nope.md", "via": STORAGE, "kind": "add-alias",
                        "payload": {"alias": "nope-doc"}}, "unknown-entity"),
    "outside-pack": ({"entity": "package:@acme/orders-api", "via": STORAGE, "kind": "rank-hint",
                      "payload": {"relevance": "weak"}}, "entity-outside-pack"),
    "stale": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "store-c"},
               "set": {"targetContentHash": "f" * 64}}, "stale-target"),
    "diagnostic": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "store-d"},
                    "set": {"relatedDiagnostics": ["no-such-finding"]}}, "unknown-diagnostic"),
    "passwd": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "store-e"},
                "evidence": ev("../../etc/passwd")}, "evidence-outside-artifacts"),
    "past-end": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "store-f"},
                  "evidence": ev("docs/storage.md", 900, 901)}, "evidence-outside-artifacts"),
    "id": ({"entity": STORAGE, "kind": "add-alias", "payload": {"alias": "store-g"},
            "set": {"proposalId": "not-the-hash"}}, "proposal-id-mismatch"),
    "entity-kind": ({"entity": "module:src/billing/tax.ts", "kind": "classify-document",
                     "payload": {"type": "guide", "audience": "human", "lifecycle": "active",
                                 "criticality": "tier-1"}}, "entity-kind"),
    "redaction": ({"entity": "document:docs/auth.md", "kind": "summarize",
                   "payload": {"summary": "Use api_key = sk-abcdefghijklmnopqrstuvwx to sign in.",
                               "language": "en"}}, "redaction"),
    "unchanged": ({"entity": "document:docs/catalog.md", "kind": "summarize",
                   "payload": {"summary": "  SRC/CATALOG knows what we sell and for how much. It has no database "
                                          "code of its own: the ProductRepository and StockStore interfaces are "
                                          "implemented in the composition root.", "language": "en"}},
                  "summary-unchanged"),
    "collision": ({"entity": BILLING, "kind": "add-alias", "payload": {"alias": "Billing"}}, "alias-collision"),
    "fuzzy-collision": ({"entity": BILLING, "kind": "add-alias", "payload": {"alias": "invoicee"}},
                        "alias-collision"),
    "scope": ({"entity": "document:docs/catalog.md", "kind": "mark-canonical",
               "payload": {"scope": "area:src/nope"}}, "unknown-scope"),
    "endpoint": ({"entity": STORAGE, "kind": "propose-relation",
                  "payload": {"from": STORAGE, "to": "module:src/nope.ts", "kind": "documents"}}, "unknown-endpoint"),
    "observed": ({"entity": STORAGE, "kind": "propose-relation",
                  "payload": {"from": STORAGE, "to": "area:src/storage", "kind": "covers"}},
                 "relation-already-observed"),
    "outside-endpoints": ({"entity": STORAGE, "kind": "propose-relation",
                           "payload": {"from": STORAGE, "to": "module:src/storage/db.ts", "kind": "related-to"},
                           "evidence": ev("docs/billing.md")}, "evidence-outside-endpoints"),
    "one-sided": ({"entity": CONFIGURATION, "kind": "flag-contradiction",
                   "payload": {"against": "document:docs/deployment.md", "claim": "a", "observed": "b"},
                   "evidence": ev("docs/configuration.md")}, "evidence-missing-for-endpoint"),
    "duplicate": ({"entity": STORAGE, "kind": "flag-redundancy", "payload": {"with": "document:docs/storage-copy.md"}},
                  "already-duplicate"),
    "gap-scope": ({"entity": STORAGE, "kind": "flag-gap", "payload": {"area": "area:src/nope", "missing": "x"}},
                  "unknown-scope"),
    "directory": ({"entity": "document:docs/README.md", "kind": "suggest-area",
                   "payload": {"directories": ["docs/nope"], "name": "nope"}}, "unknown-directory"),
    "overlap": ({"entity": "document:docs/README.md", "kind": "suggest-area",
                 "payload": {"directories": ["src/billing"], "name": "money"}}, "area-overlap"),
}


def templates() -> list[dict[str, Any]]:
    out = []
    for name, template in {**ACCEPTED, **PENDING}.items():
        out.append({**template, "reason": f"case {name}"})
    for name, (template, _) in REJECTED.items():
        out.append({**template, "reason": f"case {name}"} if "raw" not in template else template)
    return out


@pytest.fixture(scope="module")
def enriched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    base = tmp_path_factory.mktemp("enrich")
    root = copy_fixture("acme", base)
    shutil.copy(root / "docs" / "storage.md", root / "docs" / "storage-copy.md")
    enable(root)
    report = run_script(root, templates())
    return root, report, overlay(root)


def _by_case(entries: list[dict[str, Any]], field: str = "reason") -> dict[str, dict[str, Any]]:
    return {str(e.get(field, "")).removeprefix("case "): e for e in entries}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_each_policy_kind_is_accepted_by_policy(enriched: Any, name: str) -> None:
    _, _, doc = enriched
    entry = _by_case(doc["accepted"])[name]
    assert entry["kind"] == ACCEPTED[name]["kind"] and entry["acceptedBy"] == "policy"
    assert entry["entity"] == ACCEPTED[name]["entity"]


@pytest.mark.parametrize("name", sorted(PENDING))
def test_each_human_kind_is_held_pending(enriched: Any, name: str) -> None:
    _, _, doc = enriched
    entry = _by_case(doc["pending"])[name]
    assert entry["kind"] == PENDING[name]["kind"]
    # the shape `render overlay-review` reads
    assert {"proposalId", "kind", "entity", "reason", "confidence", "evidence"} <= set(entry)
    assert {"path", "lineStart", "lineEnd"} <= set(entry["evidence"][0])


def test_two_pending_canonical_markers_for_one_scope_are_both_noted(enriched: Any) -> None:
    _, _, doc = enriched
    pending = _by_case(doc["pending"])
    assert pending["canonical"]["note"] == pending["canonical-rival"]["note"] == "canonical-conflict"


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_each_rejection_reason_is_reached(enriched: Any, name: str) -> None:
    _, _, doc = enriched
    reason = REJECTED[name][1]
    if name == "not-an-object":
        assert any(e["reason"] == "schema" and e["kind"] is None for e in doc["rejected"])
        return
    if name == "invalid-kind":
        assert any(e["reason"] == "invalid-kind" and e["kind"] == "delete-everything" for e in doc["rejected"])
        return
    entry = _by_case(doc["rejected"], "proposalReason")[name]
    assert entry["reason"] == reason, entry["detail"]


def test_stats_count_kinds_reasons_and_invented_references(enriched: Any) -> None:
    _, report, doc = enriched
    stats = report["stats"]
    assert stats["byKind"]["add-alias"]["accepted"] == 1
    assert stats["rejectionReasons"]["evidence-outside-artifacts"] == 2
    # exactly the five invented-reference reasons: unknown entity, diagnostic, scope x2, endpoint, directory
    assert stats["inventedReferences"] >= 6
    assert stats["agentRuns"] == stats["batches"] > 0 and stats["cacheHits"] == 0
    assert doc["stats"]["agentRuns"] == stats["agentRuns"]


def test_overlay_is_sealed_and_sorted(enriched: Any) -> None:
    from docbridge.engine.base.overlay import seal
    _, report, doc = enriched
    assert doc["contentHash"] == seal(doc) == report["overlayHash"]
    for name in ("accepted", "pending", "rejected"):
        ids = [e["proposalId"] for e in doc[name]]
        assert ids == sorted(ids)
    # the hash ignores acceptedAt and stats
    changed = {**doc, "stats": {}, "accepted": [{**e, "acceptedAt": "1999"} for e in doc["accepted"]]}
    assert seal(changed) == doc["contentHash"]


def test_the_shipped_schema_is_the_one_the_models_generate() -> None:
    from docbridge.engine.enrich.proposals import proposal_schema
    shipped = json.loads((REPO / "engine" / "data" / "enrichment-proposal.schema.json").read_text(encoding="utf-8"))
    assert shipped == proposal_schema()
    assert set(shipped["discriminator"]["mapping"]) == {
        "classify-document", "summarize", "add-alias", "add-intent", "mark-canonical", "propose-relation",
        "flag-contradiction", "flag-redundancy", "flag-gap", "rank-hint", "suggest-area"}


def test_nothing_runs_unless_enabled(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    result = docbridge("enrich", "--root", str(root), "--agent-command", agent("--log", str(tmp_path / "log")))
    assert result.returncode == 2 and "intelligence.registry.enabled" in result.stderr
    assert not (tmp_path / "log").exists() and not (root / ".docbridge" / "overlay.json").exists()


# ------------------------------------------------------------------------------------------ cache


def _calls(root: Path) -> list[dict[str, Any]]:
    log = root.parent / "calls.log"
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_unchanged_repository_makes_no_agent_call_and_one_edit_reruns_its_packs(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root, roles=["curator"])
    first = run_script(root, [])
    assert first["stats"]["agentRuns"] > 0 and first["stats"]["cacheHits"] == 0
    calls = len(_calls(root))
    second = run_script(root, [])
    assert len(_calls(root)) == calls and second["stats"]["agentRuns"] == 0
    assert second["stats"]["cacheHitRate"] == 1.0 and second["stats"]["overlayHashIdentical"] is True
    # docs/deployment.md: its pack, and the packs of the documents next to it in the graph (their packs hold
    # its content hash): README.md and docs/README.md link to it, it links to docs/storage.md and
    # docs/configuration.md
    target = root / "docs" / "deployment.md"
    target.write_text(target.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    third = run_script(root, [])
    expected = {"curator:document:docs/deployment.md", "curator:document:docs/README.md",
                "curator:document:README.md", "curator:document:docs/storage.md",
                "curator:document:docs/configuration.md"}
    assert set(third["stats"]["packsRun"]) == expected
    assert sorted(p for call in _calls(root)[calls:] for p in call["packs"]) == sorted(
        p.removeprefix("curator:") for p in expected)


# ------------------------------------------------------------------------------------------ hostile agents


@pytest.mark.attack("agents")
@pytest.mark.parametrize("mode,reason", [("invalid-json", "agent-invalid-json"),
                                         ("huge", "agent-output-too-large"),
                                         ("hang", "agent-timeout"), ("crash", "agent-crash"),
                                         ("deep", "agent-invalid-json"), ("forge", "agent-crash")])
def test_a_hostile_agent_leaves_the_previous_overlay_intact(tmp_path: Path, mode: str, reason: str) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root, roles=["curator"], timeoutSeconds=2, maxOutputBytes=1024 * 1024)
    run_script(root, [ACCEPTED["alias"], PENDING["canonical"]])
    assert overlay(root)["pending"]  # something a forger would accept
    before = (root / ".docbridge" / "overlay.json").read_bytes()
    shutil.rmtree(root / ".docbridge" / "enrich")  # nothing cached: every pack goes to the agent again
    result = docbridge("enrich", "--root", str(root), "--json", "--agent-command", agent("--hostile", mode))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert report["written"] is False and report["stats"]["rejectionReasons"][reason] >= 1
    if mode == "forge":  # the agent rewrote the overlay itself: not sealed by the user, so never believed
        assert (root / ".docbridge" / "overlay.json").read_bytes() != before
        refused = docbridge("fix", "approve", "x", "--by", "Ana", "--root", str(root))
        assert refused.returncode == 2 and "no usable overlay" in refused.stderr
        assert "was not written by Doc Bridge for this user" in refused.stderr
    else:
        assert (root / ".docbridge" / "overlay.json").read_bytes() == before


@pytest.mark.attack("agents")
def test_a_reply_of_junk_proposals_is_refused_and_the_overlay_stays_bounded(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root, roles=["curator"])
    run_script(root, [ACCEPTED["alias"]])
    before = (root / ".docbridge" / "overlay.json").read_bytes()
    shutil.rmtree(root / ".docbridge" / "enrich")
    report = docbridge_json("enrich", "--root", str(root), "--json", "--agent-command", agent("--hostile", "junk"),
                            expect=1)
    assert report["stats"]["rejectionReasons"]["agent-too-many-proposals"] >= 1
    assert (root / ".docbridge" / "overlay.json").read_bytes() == before


def test_hostile_proposals_are_rejected_and_earlier_entries_stay(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root, roles=["reviewer"])
    run_script(root, [ACCEPTED["alias"]])
    accepted = overlay(root)["accepted"]
    report = run_script(root, [REJECTED["passwd"][0], REJECTED["invalid-kind"][0]], name="hostile.json")
    assert report["stats"]["rejectionReasons"] == {"evidence-outside-artifacts": 1, "invalid-kind": 1}
    assert [e["proposalId"] for e in overlay(root)["accepted"]] == [e["proposalId"] for e in accepted]


# ------------------------------------------------------------------------------------------ approvals


def test_approvals_and_their_refusals(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root)
    run_script(root, [{**PENDING["relation"], "reason": "case relation"},
                      {**PENDING["redundancy"], "reason": "case redundancy"},
                      {**PENDING["area"], "reason": "case area"}])
    pending = _by_case(overlay(root)["pending"])
    relation, redundancy, area = (pending[n]["proposalId"] for n in ("relation", "redundancy", "area"))

    def fix(*args: str) -> Any:
        return docbridge("fix", *args, "--root", str(root))

    refused = fix("approve", relation, "--by", "policy")
    assert refused.returncode == 2 and "requires a person" in refused.stderr
    refused = fix("approve", relation, "--by", "ref-agent")
    assert refused.returncode == 2 and "is a configured agent" in refused.stderr
    approved = fix("approve", relation, "--by", "Ana")
    assert approved.returncode == 0, approved.stderr
    entry = next(e for e in overlay(root)["accepted"] if e["proposalId"] == relation)
    assert entry["acceptedBy"] == "Ana"
    again = fix("approve", relation, "--by", "Ana")
    assert again.returncode == 2 and "already approved" in again.stderr
    rejected = fix("reject", area, "--by", "Ana", "--reason", "docs are not code")
    assert rejected.returncode == 0, rejected.stderr
    entry = next(e for e in overlay(root)["rejected"] if e["proposalId"] == area)
    assert entry["reason"] == "human-rejected" and entry["detail"] == "Ana: docs are not code"
    billing = root / "docs" / "billing.md"
    billing.write_text(billing.read_text(encoding="utf-8") + "\nChanged.\n", encoding="utf-8")
    stale = fix("approve", redundancy, "--by", "Ana")
    assert stale.returncode == 2 and "stale" in stale.stderr


def test_an_accepted_canonical_marker_rejects_a_rival(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root)
    run_script(root, [{**PENDING["canonical"], "reason": "case canonical"}])
    pid = _by_case(overlay(root)["pending"])["canonical"]["proposalId"]
    assert docbridge("fix", "approve", pid, "--by", "Ana", "--root", str(root)).returncode == 0
    report = run_script(root, [{**PENDING["canonical-rival"], "reason": "case rival"},
                               {**ACCEPTED["gap"], "reason": "case gap"}], name="rival.json")
    assert report["stats"]["rejectionReasons"] == {"canonical-conflict": 1}
    report = run_script(root, [{**ACCEPTED["gap"], "entity": "document:docs/orders.md", "reason": "case again"}],
                        name="again.json")
    assert report["stats"]["rejectionReasons"] == {"already-covered": 1}


# ------------------------------------------------------------------------------------------ retrieval


def _search(root: Path, query: str) -> list[str]:
    payload = docbridge_json("search", query, "--root", str(root), "--json")
    return [r["id"] for r in payload["results"]]


def test_an_accepted_alias_finds_its_document_until_the_document_changes(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    assert STORAGE not in _search(root, "persistence-layer")[:1]
    enable(root, roles=["curator"])
    run_script(root, [ACCEPTED["alias"]])
    assert _search(root, "persistence-layer")[0] == STORAGE
    before = (root / ".docbridge" / "overlay.json").read_bytes()
    target = root / "docs" / "storage.md"
    target.write_text(target.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    assert STORAGE not in _search(root, "persistence-layer")[:1]  # expired at once
    assert (root / ".docbridge" / "overlay.json").read_bytes() == before  # the read did not rewrite it
    report = run_script(root, [])
    assert report["stats"]["expired"] == 1
    assert any(e["reason"] == "expired" for e in overlay(root)["rejected"])


def test_a_corrupt_overlay_reads_as_none_and_says_so(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root, roles=["curator"])
    run_script(root, [ACCEPTED["alias"]])
    path = root / ".docbridge" / "overlay.json"
    path.write_text(path.read_text(encoding="utf-8").replace("persistence-layer", "persistence-layez"),
                    encoding="utf-8")
    result = docbridge("search", "persistence-layer", "--root", str(root), "--json")
    assert result.returncode == 0 and result.stderr.count("does not match its contentHash") == 1
    assert STORAGE not in [r["id"] for r in json.loads(result.stdout)["results"]][:1]


def test_check_results_do_not_change_and_check_enrich_labels_overlay_findings(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    plain = docbridge("check", "--root", str(root), "--format", "json")
    enable(root, roles=["curator"])
    run_script(root, [ACCEPTED["gap"]])
    after = docbridge("check", "--root", str(root), "--format", "json")
    assert json.loads(after.stdout)["findings"] == json.loads(plain.stdout)["findings"]
    assert after.returncode == plain.returncode
    enriched = docbridge("check", "--root", str(root), "--format", "json", "--enrich")
    report = json.loads(enriched.stdout)
    assert enriched.returncode == plain.returncode and report["findings"] == json.loads(plain.stdout)["findings"]
    assert [(f["code"], f["source"], f["status"]) for f in report["overlay"]["findings"]] == [
        ("flag-gap", "enrichment-overlay", "accepted")]


SUITE = {"version": 1, "name": "overlay", "cases": [
    {"id": "alias", "input": "persistence-layer", "expected": {"anyOf": [STORAGE]}},
    {"id": "page", "input": "checkout orders", "expected": {"anyOf": ["document:docs/orders.md"]}},
]}
# "checkout orders" finds the orders page third, after the checkout module and the architecture page; the orders
# area and the billing page follow within 30 points (the most a signal adds): strong hints on the two push the page
# out of the top 3
MISLEADING = [{"entity": e, "kind": "rank-hint", "payload": {"relevance": "strong"}, "reason": "misleading",
               "evidence": [{"source": "snapshot", "path": e.split(":", 1)[1], "lineStart": 1, "lineEnd": 1}]}
              for e in ("area:src/orders", "document:docs/billing.md")]


def test_bench_overlay_reports_a_gained_case_for_a_correct_alias(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    (root / "overlay-suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    enable(root, roles=["curator"])
    run_script(root, [ACCEPTED["alias"]])
    delta = docbridge_json("bench", "retrieval", str(root / "overlay-suite.json"), "--overlay", "--json")
    assert delta["gained"] == ["alias"] and delta["lost"] == [] and delta["hitAt3Dropped"] is False


def test_bench_overlay_fails_when_a_misleading_rank_hint_loses_a_case(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    (root / "overlay-suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    enable(root)
    # no overlay yet: nothing to measure (exit 2, naming the file)
    missing = docbridge("bench", "retrieval", str(root / "overlay-suite.json"), "--overlay", "--json")
    assert missing.returncode == 2 and "overlay.json: no enrichment overlay to measure" in missing.stderr
    run_script(root, MISLEADING)
    result = docbridge("bench", "retrieval", str(root / "overlay-suite.json"), "--overlay", "--json")
    delta = json.loads(result.stdout)
    assert result.returncode == 1 and delta["lost"] == ["page"] and delta["hitAt3Dropped"] is True


def test_fixture_agent_has_no_engine_import() -> None:
    text = (FIXTURES / "agents" / "reference_agent.py").read_text(encoding="utf-8")
    assert not any(f"{word} {name}" in text for word in ("import", "from") for name in ("docbridge", "engine"))


# ------------------------------------------------------------------------------------------ adjudication


def _conflict(root: Path, judge: str) -> tuple[dict[str, Any], list[str]]:
    enable(root, roles={"reviewer": {}, "adjudicator": {"agentId": judge}})
    report = run_script(root, [{**PENDING["canonical"], "reason": "case canonical"},
                               {**PENDING["canonical-rival"], "reason": "case rival"}])
    ids = sorted(p["proposalId"] for p in report["new"]["pending"])
    return report, ids


def test_an_adjudicator_settles_a_canonical_conflict(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    report, ids = _conflict(root, "judge")
    assert len(ids) == 2 and report["stats"]["adjudications"] == 1
    doc = overlay(root)
    # the reference adjudicator keeps the smaller id: it stays pending (a person decides), without its note
    assert [(e["proposalId"], e.get("note")) for e in doc["pending"]] == [(ids[0], None)]
    loser = next(e for e in doc["rejected"] if e["proposalId"] == ids[1])
    assert loser["reason"] == "adjudicated" and loser["detail"].startswith("judge: ")
    assert doc["accepted"] == []


def test_an_adjudicator_may_not_judge_its_own_proposals(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    report, ids = _conflict(root, "ref-agent")
    assert report["stats"]["rejectionReasons"] == {"self-adjudication": 1}
    doc = overlay(root)
    assert sorted(e["proposalId"] for e in doc["pending"]) == ids
    assert all(e["note"] == "canonical-conflict" for e in doc["pending"])


@pytest.mark.attack("agents")
def test_an_agent_that_signs_as_a_person_neither_approves_nor_blocks_that_person(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root, roles=["reviewer"])
    forged = {**PENDING["relation"], "set": {"origin": {"agentId": "Ana", "agentVersion": "1", "promptVersion": "1"}}}
    run_script(root, [forged])
    (entry,) = overlay(root)["pending"]
    assert entry["proposedBy"] == "ref-agent"  # what the tool sent the pack to, whatever the origin says
    refused = docbridge("fix", "approve", entry["proposalId"], "--by", "ref-agent", "--root", str(root))
    assert refused.returncode == 2 and "is a configured agent" in refused.stderr
    approved = docbridge("fix", "approve", entry["proposalId"], "--by", "Ana", "--root", str(root))
    assert approved.returncode == 0, approved.stderr


@pytest.mark.attack("agents")
def test_an_approval_interrupted_after_its_record_is_completed_by_the_next_attempt(tmp_path: Path) -> None:
    from docbridge.engine.enrich.approvals import approval_id
    root = copy_fixture("acme", tmp_path)
    enable(root)
    run_script(root, [PENDING["relation"]])
    (entry,) = overlay(root)["pending"]
    record = root / ".docbridge" / "approvals" / f"{approval_id(entry['proposalId'], entry['targetContentHash'])}.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"approvalId": record.stem, "proposalId": entry["proposalId"], "by": "Ana",
                                  "decision": "approved", "reason": None, "at": "2026-12-04T12:00:00Z",
                                  "targetContentHash": entry["targetContentHash"]}))  # as if killed right after
    again = docbridge("fix", "approve", entry["proposalId"], "--by", "Ana", "--root", str(root))
    assert again.returncode == 0, again.stderr
    (accepted,) = [e for e in overlay(root)["accepted"] if e["proposalId"] == entry["proposalId"]]
    assert accepted["acceptedBy"] == "Ana" and overlay(root)["pending"] == []


@pytest.mark.attack("agents")
def test_an_approval_made_while_enrichment_runs_is_kept(tmp_path: Path) -> None:
    import subprocess

    from support.wait import wait_until

    from tests.conftest import BIN
    root = copy_fixture("acme", tmp_path)
    enable(root, roles=["reviewer"])
    script = root.parent / "script.json"
    run_script(root, [PENDING["relation"]])
    (entry,) = overlay(root)["pending"]
    shutil.rmtree(root / ".docbridge" / "enrich")  # the next run asks the agent again, which takes a while
    calls = tmp_path / "calls.log"  # the agent writes its call here before it answers
    # the agent takes 4 s to answer: the window in which the approval below is made
    running = subprocess.Popen([str(BIN / "docbridge"), "enrich", "--root", str(root), "--json", "--agent-command",
                                agent("--script", str(script), "--log", str(calls), "--sleep", "4")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the run has read the overlay and waits for its agent once the agent was called
        wait_until(lambda: calls.exists() and calls.read_text(encoding="utf-8").strip(), 60,
                   what="the enrichment run to call its agent")
        approved = docbridge("fix", "approve", entry["proposalId"], "--by", "Ana", "--root", str(root))
        assert approved.returncode == 0, approved.stderr
        _, err = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 0, err
    (accepted,) = [e for e in overlay(root)["accepted"] if e["proposalId"] == entry["proposalId"]]
    assert accepted["acceptedBy"] == "Ana" and overlay(root)["pending"] == []
