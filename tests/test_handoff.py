"""Handoffs, lookups and agent payloads on the fixtures, through the CLI; budgets and determinism."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, docbridge, docbridge_json


@pytest.fixture(scope="module")
def acme_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_fixture("acme", tmp_path_factory.mktemp("handoff"))


@pytest.fixture(scope="module")
def mono_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_fixture("monorepo", tmp_path_factory.mktemp("handoff"))


def query(root: Path, ref: str, *extra: str) -> dict[str, Any]:
    return docbridge_json("query", ref, "--root", str(root), "--json", *extra)  # type: ignore[no-any-return]


def test_owned_area_handoff(acme_root: Path) -> None:
    handoff = query(acme_root, "acme-billing")
    assert handoff["target"] == {"type": "area", "id": "acme-billing", "entityId": "area:src/billing",
                                 "path": "src/billing", "title": "Billing — rules for coding agents"}
    # tier 1: the ownership record's agent document; then a covering document; then a mentioning one
    assert handoff["startHere"] == "docs/for-agents/billing.md"
    assert handoff["explain"]["startHere"] == "ownership acme-billing names it as the agent document"
    assert handoff["readBeforeEditing"][0] == "docs/billing.md"
    assert handoff["explain"]["readBeforeEditing"][0] == "covers area:src/billing"
    assert handoff["explain"]["readBeforeEditing"][1].startswith("mentions area:src/billing")
    assert handoff["readBeforeEditing"][-1] == "AGENTS.md" and len(handoff["readBeforeEditing"]) == 3
    assert handoff["editRoots"] == ["src/billing"]
    assert handoff["checks"] == ["npm test -- billing"]
    assert handoff["metadata"]["checksSource"] == "ownership"
    assert handoff["explain"]["checks"] == ["routing.options.ownership.acme-billing.checks"]
    assert handoff["humanDoc"] == "docs/billing.md"
    # billing imports util twice (invoice.ts lines 3 and 4) and orders once (payments.ts line 1); orders
    # imports billing once (checkout.ts line 2)
    assert handoff["related"] == [
        {"id": "area:src/util", "path": "src/util", "direction": "imports", "strength": 2,
         "evidence": ["src/billing/invoice.ts:3 → src/util/money.ts", "src/billing/invoice.ts:4 → src/util/ids.ts"]},
        {"id": "area:src/orders", "path": "src/orders", "direction": "imports", "strength": 1,
         "evidence": ["src/billing/payments.ts:1 → src/orders/checkout.ts"]},
        {"id": "area:src/orders", "path": "src/orders", "direction": "imported-by", "strength": 1,
         "evidence": ["src/orders/checkout.ts:2 → src/billing/invoice.ts"]},
    ]
    assert handoff["metadata"] == {"entityId": "area:src/billing", "kind": "area", "checksSource": "ownership",
                                   "confidence": "observed", "areaId": None, "packageId": "package:@acme/orders-api"}
    assert handoff["evidence"][0]["path"] == "src/billing"


def test_unowned_module_handoff(acme_root: Path) -> None:
    handoff = query(acme_root, "src/catalog/pricing.ts")
    assert handoff["target"]["id"] == "module:src/catalog/pricing.ts"
    assert handoff["editRoots"] == ["src/catalog"]
    assert handoff["explain"]["editRoots"] == ["contained by area area:src/catalog"]
    # package.json declares test, lint and typecheck (and build, which is not a check)
    assert handoff["checks"] == ["npm test", "npm run lint", "npm run typecheck"]
    assert handoff["metadata"]["checksSource"] == "package-scripts"
    # no document covers the module; the ones that mention it come first
    assert handoff["explain"]["startHere"] == "mentions module:src/catalog/pricing.ts"
    mentioning = {"docs/architecture.md", "docs/catalog.md", "docs/orders.md"}
    assert handoff["startHere"] in mentioning
    related = {(r["id"], r["direction"]) for r in handoff["related"]}
    assert ("area:src/orders", "imported-by") in related  # orders/cart.ts prices lines with it
    assert handoff["metadata"]["areaId"] == "area:src/catalog"


def test_module_inside_an_owned_area_inherits_its_checks(acme_root: Path) -> None:
    handoff = query(acme_root, "module:src/orders/checkout.ts")
    assert handoff["checks"] == ["npm test -- orders", "npm run typecheck"]
    assert handoff["metadata"]["checksSource"] == "ownership"
    assert handoff["explain"]["checks"] == ["inherited from ownership acme-orders (src/orders)"]


def test_document_handoff(acme_root: Path) -> None:
    handoff = query(acme_root, "docs/api.md")
    assert handoff["target"]["type"] == "document"
    assert handoff["startHere"] == "docs/api.md" and handoff["explain"]["startHere"] == "the target itself"
    # its outgoing link (auth.md#tokens; orders.md is linked only inside the generated region), then the index
    assert handoff["readBeforeEditing"][:2] == ["docs/auth.md", "docs/README.md"]
    assert handoff["explain"]["readBeforeEditing"][:2] == ["document:docs/api.md links to it",
                                                           "links to docs/api.md"]
    assert handoff["editRoots"] == ["docs/api.md"]
    assert handoff["checks"] == ["docbridge check"] and handoff["metadata"]["checksSource"] == "documentation"
    assert handoff["related"] == []


def test_package_handoffs(acme_root: Path, mono_root: Path) -> None:
    single = query(acme_root, "@acme/orders-api")
    assert single["target"]["type"] == "package" and single["editRoots"] == ["."]
    assert single["checks"] == ["npm test", "npm run lint", "npm run typecheck"]
    api = query(mono_root, "@mono/api")
    assert api["target"] == {"type": "package", "id": "package:@mono/api", "entityId": "package:@mono/api",
                             "path": "packages/api", "title": "@mono/api"}
    assert api["editRoots"] == ["packages/api"]
    assert api["checks"] == ["npm test --workspace=@mono/api"]  # a workspace member: run its own script
    assert api["metadata"]["checksSource"] == "package-scripts"
    imports = next(r for r in api["related"] if r["direction"] == "imports")
    assert imports["id"] == "package:@mono/core" and imports["path"] == "packages/core"
    assert imports["strength"] == 6  # client, routes/orders, routes/users (twice), server/app, server/main
    assert imports["evidence"][0] == "packages/api/src/client.ts:1 → packages/core/src/index.ts"
    imported_by = next(r for r in api["related"] if r["direction"] == "imported-by")
    assert (imported_by["id"], imported_by["strength"]) == ("package:@mono/web", 2)
    owned = query(mono_root, "mono-core")
    assert owned["target"]["entityId"] == "package:@mono/core" and owned["target"]["id"] == "mono-core"
    assert owned["checks"] == ["npm test -w @mono/core", "npm run typecheck"]
    assert owned["humanDoc"] == "packages/core/README.md"


def test_change_and_intent_routes(acme_root: Path) -> None:
    change = query(acme_root, "tax-rules")
    assert change["target"]["type"] == "change" and change["startHere"] == "src/billing/tax.ts"
    assert change["editRoots"] == ["src/billing/tax.ts"] and "AGENTS.md" in change["readBeforeEditing"]
    intent = query(acme_root, "intent:find-endpoint")
    assert (intent["startHere"], intent["readBeforeEditing"]) == ("docs/api.md", ["src/api/routes.ts"])


@pytest.mark.parametrize("ref", ["area:src/billing", "acme-billing", "src/billing", "src/billing/", "./src/billing"])
def test_lookup_by_id_ownership_id_and_path(acme_root: Path, ref: str) -> None:
    payload = docbridge_json("lookup", ref, "--root", str(acme_root), "--json")
    assert payload["entity"]["id"] == "area:src/billing"
    assert payload["entity"]["ownershipId"] == "acme-billing"
    covering = [d["path"] for d in payload["documents"]["covering"]]
    assert set(covering) == {"docs/billing.md", "docs/for-agents/billing.md"}
    assert {n["id"] for n in payload["neighbours"]["contains"]} >= {
        "module:src/billing/tax.ts", "module:src/billing/invoice.ts", "package:@acme/orders-api"}
    assert [f["code"] for f in payload["findings"]] == ["IMPORT_CYCLE"]  # located in src/billing/invoice.ts
    assert payload["evidence"][0]["path"] == "src/billing"


def test_lookup_by_alias_and_depth(acme_root: Path) -> None:
    payload = docbridge_json("lookup", "orders-api", "--root", str(acme_root), "--json")  # a package short name
    assert payload["entity"]["id"] == "package:@acme/orders-api"
    deeper = docbridge_json("lookup", "src/billing/tax.ts", "--root", str(acme_root), "--json", "--depth", "2")
    contains = {n["id"]: n for n in deeper["neighbours"]["contains"]}
    assert contains["area:src/billing"]["distance"] == 1
    assert any(n["distance"] == 2 and n.get("via") for items in deeper["neighbours"].values() for n in items)


def test_unknown_reference_lists_candidates(acme_root: Path) -> None:
    result = docbridge("query", "src/billling", "--root", str(acme_root))
    assert result.returncode == 2
    assert 'Unknown entity "src/billling"' in result.stderr and "src/billing" in result.stderr
    result = docbridge("lookup", "acme-biling", "--root", str(acme_root))
    assert result.returncode == 2 and "acme-billing" in result.stderr


def test_the_same_inputs_give_byte_identical_json(acme_root: Path) -> None:
    first = docbridge("query", "acme-billing", "--root", str(acme_root), "--json").stdout
    second = docbridge("query", "acme-billing", "--root", str(acme_root), "--json", "--no-cache").stdout
    assert first == second
    lookups = {docbridge("lookup", "src/orders", "--root", str(acme_root), "--json").stdout for _ in range(2)}
    assert len(lookups) == 1


def test_text_card(acme_root: Path) -> None:
    text = docbridge("query", "acme-billing", "--root", str(acme_root), "--text").stdout
    assert "Start here:          docs/for-agents/billing.md" in text
    assert "Run to check:        npm test -- billing  [ownership]" in text


# ------------------------------------------------------------------------------------------------ budgets


def _tokens_of(payload: dict[str, Any]) -> int:
    body = {k: v for k, v in payload.items() if k != "budget"}
    return math.ceil(len(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)) / 4)


def test_a_small_lookup_budget_fits_and_reports_what_it_dropped(acme_root: Path) -> None:
    full = docbridge_json("lookup", "src/billing", "--root", str(acme_root), "--json")
    assert _tokens_of(full) > 800
    payload = docbridge_json("lookup", "src/billing", "--root", str(acme_root), "--json", "--budget", "800")
    report = payload["budget"]
    assert report["fits"] is True and report["tokenMethod"] == "approximate"
    assert report["order"] == ["evidenceExcerpts", "related", "neighbours", "summaries", "explanations", "details"]
    assert report["dropped"] == report["order"][:len(report["dropped"])] and report["dropped"]
    assert report["tokens"]["total"] == _tokens_of(payload) <= 800
    assert all("excerpt" not in e for e in payload["evidence"])
    assert payload["entity"]["id"] == "area:src/billing" and payload["handoff"]["startHere"]


def test_an_impossible_budget_fails_closed(acme_root: Path) -> None:
    result = docbridge("lookup", "src/billing", "--root", str(acme_root), "--json", "--budget", "50")
    assert result.returncode == 2 and "too small for the minimum grounded answer" in result.stderr
    assert result.stdout == ""
    result = docbridge("query", "acme-billing", "--root", str(acme_root), "--budget", "10")
    assert result.returncode == 2


def test_a_handoff_budget_drops_evidence_then_related(acme_root: Path) -> None:
    handoff = docbridge_json("query", "acme-billing", "--root", str(acme_root), "--json", "--budget", "250")
    assert handoff["budget"]["dropped"][:2] == ["evidence", "related"]
    assert "evidence" not in handoff and "related" not in handoff
    assert handoff["startHere"] == "docs/for-agents/billing.md" and handoff["checks"] == ["npm test -- billing"]
    assert handoff["budget"]["tokens"]["total"] == _tokens_of(handoff) <= 250


def _context_bytes(payload: dict[str, Any]) -> int:
    """What the budget counts: the selected context, `{matches, nextCommands}` as compact JSON (UTF-8 bytes)."""
    return len(json.dumps({"matches": payload["matches"], "nextCommands": payload["nextCommands"]},
                          separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def test_agent_search_prints_compact_json_and_budgets_the_selected_context(acme_root: Path) -> None:
    result = docbridge("search", "billing", "--root", str(acme_root), "--agent", "--context-budget", "120")
    assert result.returncode == 0, result.stderr
    printed = result.stdout
    assert printed.count("\n") == 1 and printed.endswith("\n") and ": " not in printed and ", " not in printed
    payload = json.loads(printed)
    assert payload["type"] == "agent-search" and payload["schemaVersion"] == 1
    assert payload["term"] == payload["query"] == "billing" and payload["source"] == ".docbridge/index.json"
    telemetry = payload["telemetry"]
    assert (telemetry["contextBudgetTokens"], telemetry["tokenMethod"]) == (120, "estimate")
    # the budget counts the matches and the commands, not the envelope, bestMatch or the telemetry
    size = _context_bytes(payload)
    assert telemetry["contextBytes"] == size and telemetry["estimatedTokens"] == math.ceil(size / 4) <= 120
    assert len(printed.encode("utf-8")) > size
    assert all("score" not in m for m in payload["matches"])
    assert payload["matches"][0]["path"].startswith("src/billing") or "billing" in json.dumps(payload["matches"][0])
    roomy = docbridge_json("search", "billing", "--root", str(acme_root), "--agent", "--context-budget", "400",
                           "--mode", "editing")
    assert len(roomy["matches"]) <= 5 and len(roomy["nextCommands"]) <= 3
    # the best match is the first, in full (the budget never sheds it); `count` is every match, not only those shown
    assert roomy["bestMatch"] == roomy["matches"][0] and roomy["count"] >= len(roomy["matches"])
    assert payload["bestMatch"] == roomy["bestMatch"]
    assert {k: payload["bestMatch"][k] for k in ("type", "id", "path")} == {
        k: payload["matches"][0][k] for k in ("type", "id", "path")}
    assert len(set(roomy["nextCommands"])) == len(roomy["nextCommands"])
    # a tighter budget sheds: the same query under 120 tokens holds less than under 400
    assert telemetry["truncated"] and not roomy["telemetry"]["truncated"] and size < _context_bytes(roomy)
    default = docbridge_json("search", "createInvoice", "--root", str(acme_root), "--agent")
    assert default["telemetry"]["contextBudgetTokens"] == 32 and default["telemetry"]["contextBytes"] <= 128
    # every match keeps its id, even when it is only `kind:path`
    assert all(m["id"] == (f"{m['type']}:{m['path']}" if m["type"] != "ownership" else m["id"])
               for m in roomy["matches"]) and all("id" in m for m in roomy["matches"])


def test_agent_search_too_small_a_budget_fails_closed(acme_root: Path) -> None:
    result = docbridge("search", "billing", "--root", str(acme_root), "--agent", "--context-budget", "8")
    assert result.returncode == 2 and "too small for the minimum grounded result" in result.stderr
    # the sentence names the budget that would do, and that budget does
    needed = result.stderr.split("pass --context-budget ", 1)[1].split()[0]
    fits = docbridge_json("search", "billing", "--root", str(acme_root), "--agent", "--context-budget", needed)
    assert len(fits["matches"]) == 1 and fits["nextCommands"] == [] and "summary" not in fits["matches"][0]
    assert docbridge("search", "billing", "--root", str(acme_root), "--agent", "--context-budget",
                     "0").returncode == 2


def test_a_change_route_focuses_the_agent_payload(acme_root: Path) -> None:
    payload = docbridge_json("search", "change how sales tax is calculated", "--root", str(acme_root), "--agent",
                             "--context-budget", "200")
    assert payload["matches"][0] == {"type": "change", "id": "change:tax-rules", "path": "src/billing/tax.ts",
                                     "summary": "Change how sales tax is calculated"}
    assert {m["type"] for m in payload["matches"]} == {"change"}
    (command,) = payload["nextCommands"]
    assert command.startswith("docbridge query change:tax-rules --agent --root ")
    # the root as this working directory reaches it (relative when near, else absolute)
    assert (Path.cwd() / command.split(" --root ", 1)[1]).resolve() == acme_root.resolve()
    # without a change intent the route does not crowd an ordinary question
    question = docbridge_json("search", "how is sales tax calculated", "--root", str(acme_root), "--agent",
                              "--context-budget", "200")
    assert question["matches"][0]["type"] != "change"


def test_follow_up_commands_name_the_root_unless_it_is_the_working_directory(acme_root: Path) -> None:
    inside = docbridge_json("search", "billing", "--agent", "--context-budget", "900", cwd=acme_root)
    assert inside["nextCommands"] and all(c.endswith(" --agent") for c in inside["nextCommands"])
    # from the parent folder the commands say which tree; run as printed, each one answers
    outside = docbridge_json("search", "billing", "--root", acme_root.name, "--agent", "--context-budget", "900",
                             cwd=acme_root.parent)
    assert outside["nextCommands"] == [c + f" --root {acme_root.name}" for c in inside["nextCommands"]]
    for command in outside["nextCommands"]:
        words = command.split()
        assert words[0] == "docbridge"
        followed = docbridge(*words[1:], cwd=acme_root.parent)
        assert followed.returncode == 0, followed.stderr
        assert "startHere" in json.loads(followed.stdout)


def test_query_ownership_takes_a_path_as_the_original_does(acme_root: Path) -> None:
    by_id = docbridge_json("query", "acme-billing", "--root", str(acme_root), "--agent")
    by_path = docbridge_json("query", "ownership", "src/billing", "--root", str(acme_root), "--agent")
    assert by_path == by_id and by_path["startHere"] == "docs/for-agents/billing.md"
    assert docbridge_json("query", "ownership", "./src/billing/", "--root", str(acme_root), "--agent") == by_id
    # a path inside no record's folder is handed off as what it is (a module here)
    module = docbridge_json("query", "ownership", "src/billing/tax.ts", "--root", str(acme_root), "--agent")
    assert module == docbridge_json("query", "src/billing/tax.ts", "--root", str(acme_root), "--agent")
    unknown = docbridge("query", "ownership", "nothing-here", "--root", str(acme_root), "--agent")
    assert unknown.returncode == 2 and "no ownership id, path or alias" in unknown.stderr
    assert "acme-billing" in unknown.stderr
