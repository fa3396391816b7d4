"""The agent JSON contracts, kept field for field with the original's (additions allowed, nothing renamed or dropped).

AgentHandoffV1 (`query … --agent`, `query … --json`, `handoff.resolve`, a lookup's `handoff`) and AgentSearch
(`search … --agent`): the CLI's output on the fixtures validates against the JSON Schemas the package ships
(`docbridge/engine/data/schemas/`); samples written from the reference's own examples validate too (and payloads
that break the contract do not); and an old consumer, which reads only the fields the original documents, passes
unchanged on our output. Expectations come from the fixtures' files (doc-bridge.config.json, frontmatter,
package.json), not from our output.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, copy_fixture, docbridge, docbridge_json
from support.schemas import assert_invalid, assert_valid, package_schema

import docbridge as api

HANDOFF_SCHEMA = package_schema("agent-handoff-v1.schema.json")
SEARCH_SCHEMA = package_schema("agent-search.schema.json")
valid, invalid = assert_valid, assert_invalid


def config_of(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name / "doc-bridge.config.json").read_text(encoding="utf-8"))


def ownership(name: str, record: str) -> dict[str, Any]:
    return config_of(name)["routing"]["options"]["ownership"][record]  # type: ignore[no-any-return]


def frontmatter_covers(path: Path) -> list[str]:
    """The `covers:` list of a Markdown file's frontmatter (block or flow style), read without our parser."""
    lines = path.read_text(encoding="utf-8").split("---", 2)[1].splitlines()
    for number, line in enumerate(lines):
        if line.startswith("covers:"):
            rest = line.removeprefix("covers:").strip()
            if rest.startswith("["):
                return [item.strip() for item in rest.strip("[]").split(",")]
            return [item.strip().removeprefix("- ") for item in lines[number + 1:] if item.startswith("  - ")]
    return []


def context_bytes(payload: dict[str, Any]) -> int:
    """What the search budget counts: `{matches, nextCommands}` as compact JSON, in UTF-8 bytes."""
    return len(json.dumps({"matches": payload["matches"], "nextCommands": payload["nextCommands"]},
                          separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("contracts")
    return {name: copy_fixture(name, base) for name in ("acme", "monorepo")}


def query(root: Path, *ref: str, output: str = "--agent") -> dict[str, Any]:
    return docbridge_json("query", *ref, "--root", str(root), output)  # type: ignore[no-any-return]


def search(root: Path, term: str, *extra: str) -> dict[str, Any]:
    return docbridge_json("search", term, "--root", str(root), "--agent", *extra)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ AgentHandoffV1

# (fixture, the reference as the command line takes it, target.type, target.path); target.type gains area and
# document, and a directory (ours alone) is handed off as an area
HANDOFFS = [
    ("acme", ("acme-billing",), "area", "src/billing"),
    ("acme", ("ownership", "acme-billing"), "area", "src/billing"),
    ("acme", ("package", "@acme/orders-api"), "package", "."),
    ("acme", ("area", "src/catalog"), "area", "src/catalog"),
    ("acme", ("module", "src/billing/tax.ts"), "module", "src/billing/tax.ts"),
    ("acme", ("document", "docs/api.md"), "document", "docs/api.md"),
    ("acme", ("change", "tax-rules"), "change", "src/billing/tax.ts"),
    ("acme", ("intent", "find-endpoint"), "intent", "docs/api.md"),
    ("acme", ("docs",), "area", "docs"),
    ("monorepo", ("mono-core",), "package", "packages/core"),
    ("monorepo", ("package", "@mono/api"), "package", "packages/api"),
    ("monorepo", ("module", "packages/core/src/errors/AppError.ts"), "module", "packages/core/src/errors/AppError.ts"),
    ("monorepo", ("document", "docs/errors.md"), "document", "docs/errors.md"),
]


@pytest.mark.parametrize(("fixture", "ref", "kind", "path"), HANDOFFS, ids=[" ".join(h[1]) for h in HANDOFFS])
def test_every_handoff_on_the_fixtures_is_an_agent_handoff_v1(roots: dict[str, Path], fixture: str,
                                                              ref: tuple[str, ...], kind: str, path: str) -> None:
    handoff = query(roots[fixture], *ref)
    valid(handoff, HANDOFF_SCHEMA)
    assert (handoff["type"], handoff["schemaVersion"], handoff["source"]) == ("agent-handoff", 1,
                                                                              ".docbridge/index.json")
    assert (handoff["target"]["type"], handoff["target"]["path"]) == (kind, path)
    # `--json` prints the same object, indented
    assert query(roots[fixture], *ref, output="--json") == handoff
    # the original omits humanDoc when there is none, rather than printing null
    assert handoff.get("humanDoc", "absent") is not None


def test_an_owned_area_hands_off_what_its_record_and_documents_say(roots: dict[str, Path]) -> None:
    record = ownership("acme", "acme-billing")
    handoff = query(roots["acme"], "ownership", "acme-billing")
    assert handoff["target"]["id"] == "acme-billing" and handoff["target"]["path"] == record["path"]
    assert handoff["startHere"] == record["agentDoc"]  # tier 1: the record's agent document
    # docs/billing.md declares it covers src/billing: the next read; AGENTS.md exists, so it comes last
    assert "src/billing" in frontmatter_covers(FIXTURES / "acme/docs/billing.md")
    assert handoff["readBeforeEditing"][0] == "docs/billing.md"
    assert (FIXTURES / "acme/AGENTS.md").is_file() and handoff["readBeforeEditing"][-1] == "AGENTS.md"
    assert handoff["editRoots"] == [record["path"]] and handoff["checks"] == record["checks"]
    assert handoff["humanDoc"] == record["humanDoc"] and handoff["bridge"] == {"humanDoc": "linked"}
    assert handoff["notes"] == [record["purpose"]]  # a human guide is named: no "missing" note


def test_a_module_and_a_document_hand_off_their_unit(roots: dict[str, Path]) -> None:
    module = query(roots["acme"], "module", "src/billing/tax.ts")
    assert module["editRoots"] == ["src/billing"]  # the module's area
    assert module["checks"] == ownership("acme", "acme-billing")["checks"]  # inside the owned path
    assert "humanDoc" not in module and module["bridge"] == {"humanDoc": "missing"}  # human corpus, unowned
    document = query(roots["acme"], "document", "docs/api.md")
    assert document["startHere"] == "docs/api.md" and document["editRoots"] == ["docs/api.md"]
    package = query(roots["monorepo"], "package", "@mono/api")
    scripts = json.loads((FIXTURES / "monorepo/packages/api/package.json").read_text())["scripts"]
    assert "test" in scripts and package["checks"] == ["npm test --workspace=@mono/api"]
    assert package["editRoots"] == ["packages/api"]


def test_the_bridge_says_how_the_human_guide_stands(roots: dict[str, Path], tmp_path: Path) -> None:
    assert config_of("acme")["corpus"]["human"]  # a human corpus is configured
    external = query(roots["acme"], "acme-api")
    assert external["humanDoc"] == ownership("acme", "acme-api")["humanDoc"]
    assert external["bridge"] == {"humanDoc": "external"}  # an https address
    linked = query(roots["monorepo"], "mono-core")
    assert linked["humanDoc"] == ownership("monorepo", "mono-core")["humanDoc"]
    assert linked["bridge"] == {"humanDoc": "linked"}
    # acme-orders names no human guide: the bridge says it is missing, where it goes and which command writes it
    assert "humanDoc" not in ownership("acme", "acme-orders")
    missing = query(roots["acme"], "acme-orders")
    assert "humanDoc" not in missing
    bridge = missing["bridge"]
    assert bridge["humanDoc"] == "missing" and bridge["bootstrap"] == "docs/for-agents/human/acme-orders.md"
    assert missing["notes"] == [ownership("acme", "acme-orders")["purpose"],
                                f"Human guide missing for acme-orders. Run: {bridge['action']}"]
    # the command is ours and it works: it writes the guide at the bootstrap path
    words = bridge["action"].split()
    assert words[0] == "docbridge"
    root = copy_fixture("acme", tmp_path)
    result = docbridge(*words[1:], cwd=root)
    assert result.returncode == 0, result.stderr
    assert "acme-orders" in (root / bridge["bootstrap"]).read_text(encoding="utf-8")


def test_without_a_human_corpus_no_guide_is_missing(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    config = config_of("acme")
    del config["corpus"]["human"]
    (root / "doc-bridge.config.json").write_text(json.dumps(config), encoding="utf-8")
    orders = query(root, "acme-orders")
    valid(orders, HANDOFF_SCHEMA)
    assert "bridge" not in orders and "humanDoc" not in orders
    assert not any(note.startswith("Human guide missing") for note in orders["notes"])
    assert query(root, "acme-billing")["bridge"] == {"humanDoc": "linked"}  # a named guide is still linked


def test_a_budgeted_handoff_keeps_the_contract(roots: dict[str, Path]) -> None:
    for budget in ("400", "250", "190"):
        handoff = docbridge_json("query", "acme-orders", "--root", str(roots["acme"]), "--agent", "--budget", budget)
        valid(handoff, HANDOFF_SCHEMA)
        assert isinstance(handoff["notes"], list)  # emptied when shed, never removed: the contract requires it
    assert "notes" in handoff["budget"]["dropped"] and handoff["notes"] == []


def test_the_python_api_and_the_mcp_tools_hand_off_the_same_payload(roots: dict[str, Path]) -> None:
    """`Workspace.handoff` is `handoff.resolve` (docbridge.engine.agent.knowledge), and a lookup nests one."""
    repo = api.open_workspace(roots["acme"])
    resolved = repo.handoff("acme-billing")
    valid(resolved, HANDOFF_SCHEMA)
    assert resolved == query(roots["acme"], "acme-billing")
    budgeted = repo.handoff("acme-orders", budget_tokens=560)
    valid(budgeted, HANDOFF_SCHEMA)
    nested = repo.lookup("acme-orders")["handoff"]
    valid(nested, HANDOFF_SCHEMA)
    assert nested["type"] == "agent-handoff" and nested["bridge"]["humanDoc"] == "missing"


# the reference's examples (docs/schemas/agent-handoff-v1.md, behaviours §15 and its tests 25-31), written out
REFERENCE_HANDOFF = {
    "type": "agent-handoff", "schemaVersion": 1, "source": ".doc-bridge/index.json",
    "target": {"type": "package", "id": "auth"},
    "startHere": "docs/for-agents/modules/auth.md",
    "readBeforeEditing": ["docs/for-agents/modules/auth.md", "AGENTS.md"],
    "editRoots": ["src/auth/"], "checks": ["npm test -- auth"],
    "humanDoc": "/docs/guides/authentication", "notes": ["Authentication module"],
}
REFERENCE_ADDITIONS = {
    "related": [{"id": "area:src/ranking", "path": "src/ranking", "direction": "imports", "strength": 3,
                 "evidence": ["src/query/search.ts → src/ranking/bm25.ts"]}],
    "explain": {"startHere": ["covers area:src/query"],
                "checks": ["routing.options.ownership.doc-bridge-query.checks"]},
    "evidence": [{"source": "derived", "path": "src/query", "contentHash": "0" * 64}],
    "metadata": {"entityId": "area:src/query", "kind": "area", "checksSource": "ownership", "confidence": "observed"},
}
REFERENCE_AREA = {
    "type": "agent-handoff", "schemaVersion": 1, "source": ".doc-bridge/index.json",
    "target": {"type": "area", "id": "fixture-query", "path": "src/query"},
    "startHere": "docs/for-agents/query.md", "readBeforeEditing": ["AGENTS.md"], "editRoots": ["src/query"],
    "checks": ["pnpm test --filter query"], "notes": [],
    "bridge": {"humanDoc": "missing", "action": "ak-docs bootstrap agent-docs",
               "bootstrap": "docs/for-agents/human/fixture-query.md"},
    "related": [{"id": "area:src/ranking", "path": "src/ranking", "direction": "imports", "strength": 1,
                 "evidence": ["src/query/search.ts → src/ranking/bm25.ts"]}],
    "explain": {"checks": ["routing.options.ownership.fixture-query.checks"]},
    "metadata": {"entityId": "area:src/query", "kind": "area", "checksSource": "ownership"},
}
REFERENCE_DOCUMENT = {
    "type": "agent-handoff", "schemaVersion": 1, "source": ".doc-bridge/index.json",
    "target": {"type": "document", "id": "document:docs/ranking.md", "path": "docs/ranking.md"},
    "startHere": "docs/ranking.md", "readBeforeEditing": ["AGENTS.md"], "editRoots": ["docs/ranking.md"],
    "checks": [], "notes": [],
}


def test_the_reference_examples_validate_and_broken_handoffs_do_not() -> None:
    for sample in (REFERENCE_HANDOFF, {**REFERENCE_HANDOFF, **REFERENCE_ADDITIONS}, REFERENCE_AREA,
                   REFERENCE_DOCUMENT, {**REFERENCE_HANDOFF, "humanDoc": None}):
        valid(sample, HANDOFF_SCHEMA)
    breakages = [
        lambda h: h.pop("type"), lambda h: h.pop("source"), lambda h: h.pop("notes"),
        lambda h: h.update(type="handoff"), lambda h: h.update(schemaVersion=2), lambda h: h.update(humanDoc=""),
        lambda h: h["target"].update(type="directory"), lambda h: h["target"].pop("id"),
        lambda h: h.update(bridge={"humanDoc": "absent"}), lambda h: h.update(checks=[""]),
        lambda h: h.update(evidence=[{"source": "derived", "path": "src", "contentHash": "not-a-hash"}]),
        lambda h: h.update(related=[{"id": "a", "path": "a", "direction": "sideways", "strength": 1,
                                     "evidence": []}]),
    ]
    for breakage in breakages:
        broken = copy.deepcopy(REFERENCE_HANDOFF)
        breakage(broken)
        invalid(broken, HANDOFF_SCHEMA)


# ------------------------------------------------------------------------------------------------ AgentSearch

# (fixture, term, extra options)
SEARCHES = [
    ("acme", "sales tax", ()),
    ("acme", "createInvoice", ()),
    ("acme", "acme-billing", ()),
    ("acme", "billing", ("--context-budget", "120")),
    ("acme", "change how sales tax is calculated", ("--context-budget", "200")),
    ("acme", "where do I change billing?", ("--mode", "editing", "--context-budget", "400")),
    ("acme", "zxqvnomatch987654321", ()),
    ("monorepo", "AppError", ("--context-budget", "64")),
    ("monorepo", "orders table", ("--mode", "documentation", "--context-budget", "300")),
]


@pytest.mark.parametrize(("fixture", "term", "extra"), SEARCHES, ids=[s[1] for s in SEARCHES])
def test_every_agent_search_on_the_fixtures_is_an_agent_search(roots: dict[str, Path], fixture: str, term: str,
                                                               extra: tuple[str, ...]) -> None:
    payload = search(roots[fixture], term, *extra)
    valid(payload, SEARCH_SCHEMA)
    assert (payload["type"], payload["schemaVersion"], payload["source"]) == ("agent-search", 1,
                                                                             ".docbridge/index.json")
    assert payload["term"] == term and payload["count"] >= len(payload["matches"])
    telemetry = payload["telemetry"]
    budget = int(extra[extra.index("--context-budget") + 1]) if "--context-budget" in extra else 32
    assert telemetry["contextBudgetTokens"] == budget and telemetry["tokenMethod"] == "estimate"
    # the budget counts the selected matches and commands only
    size = context_bytes(payload)
    assert telemetry["contextBytes"] == size <= budget * 4
    assert telemetry["estimatedTokens"] == math.ceil(size / 4)
    if payload["count"] == 0:
        assert payload["bestMatch"] is None and payload["matches"] == []
        return
    # bestMatch: the first match's type, id, path and summary, unbudgeted
    best, first = payload["bestMatch"], payload["matches"][0]
    assert {k: best[k] for k in ("type", "id", "path")} == {k: first[k] for k in ("type", "id", "path")}
    roomy = search(roots[fixture], term, *[*extra, "--context-budget", "1000000"])
    assert best == roomy["matches"][0] == roomy["bestMatch"]


def test_best_matches_are_what_the_fixtures_name(roots: dict[str, Path]) -> None:
    invoice = (FIXTURES / "acme/src/billing/invoice.ts").read_text(encoding="utf-8")
    assert "export async function createInvoice" in invoice
    assert search(roots["acme"], "createInvoice")["bestMatch"]["path"] == "src/billing/invoice.ts"
    # the default budget sheds the ownership's summary from the match; bestMatch keeps it
    record = ownership("acme", "acme-billing")
    owned = search(roots["acme"], "acme-billing")
    assert owned["bestMatch"] == {"type": "ownership", "id": "acme-billing", "path": record["path"],
                                  "summary": record["purpose"]}
    assert "summary" not in owned["matches"][0] and owned["telemetry"]["truncated"]
    # a change route named by the question focuses the payload on routes of its kind
    route = config_of("acme")["routing"]["options"]["changes"][0]
    focused = search(roots["acme"], "change how sales tax is calculated", "--context-budget", "200")
    assert focused["bestMatch"]["id"] == f"change:{route['id']}" and focused["bestMatch"]["path"] == route["startHere"]
    assert {m["type"] for m in focused["matches"]} == {"change"}
    defining = FIXTURES / "monorepo/packages/core/src/errors/AppError.ts"
    assert "export class AppError" in defining.read_text(encoding="utf-8")
    assert search(roots["monorepo"], "AppError", "--context-budget", "64")["bestMatch"]["path"] == (
        "packages/core/src/errors/AppError.ts")


@pytest.mark.parametrize("budget", [28, 32, 48, 64, 96, 128, 200, 400])
def test_the_budget_sheds_summaries_then_commands_then_matches(roots: dict[str, Path], budget: int) -> None:
    roomy = search(roots["acme"], "billing", "--context-budget", "1000000")
    result = docbridge("search", "billing", "--root", str(roots["acme"]), "--agent", "--context-budget", str(budget))
    if result.returncode == 2:  # fail closed: even one match without its summary is over the budget
        assert result.stdout == "" and "too small for the minimum grounded result" in result.stderr
        one = {"matches": [{k: v for k, v in roomy["matches"][0].items() if k != "summary"}], "nextCommands": []}
        assert context_bytes(one) > budget * 4
        return
    tight = json.loads(result.stdout)
    valid(tight, SEARCH_SCHEMA)
    matches, commands = tight["matches"], tight["nextCommands"]
    assert [m["id"] for m in matches] == [m["id"] for m in roomy["matches"]][:len(matches)]
    assert commands == roomy["nextCommands"][:len(commands)]
    had = [i for i, m in enumerate(roomy["matches"][:len(matches)]) if "summary" in m]
    kept = [i for i, m in enumerate(matches) if "summary" in m]
    assert kept == had[:len(kept)]  # the last summary goes first
    assert all(matches[i]["summary"] == roomy["matches"][i]["summary"] for i in kept)
    if len(commands) < len(roomy["nextCommands"]):
        assert kept == []  # commands go only once every summary has
    if len(matches) < len(roomy["matches"]):
        assert len(commands) <= 1  # matches go only once one command is left
    if commands == [] and roomy["nextCommands"]:
        assert len(matches) == 1
    assert tight["telemetry"]["truncated"] == ((matches, commands) != (roomy["matches"], roomy["nextCommands"]))
    assert tight["bestMatch"] == roomy["bestMatch"] and tight["count"] == roomy["count"]


def test_the_default_budget_yields_to_one_grounded_match_where_a_given_one_refuses(roots: dict[str, Path]) -> None:
    roomy = search(roots["acme"], "billing", "--context-budget", "1000000")
    one = {"matches": [{k: v for k, v in roomy["matches"][0].items() if k != "summary"}], "nextCommands": []}
    needed = -(-context_bytes(one) // 4)
    assert needed > 32  # the id names the kind and the path: one match needs more than the reference's 32
    default = search(roots["acme"], "billing")
    valid(default, SEARCH_SCHEMA)
    assert len(default["matches"]) == 1 and default["matches"][0]["id"] == roomy["matches"][0]["id"]
    assert default["telemetry"]["contextBudgetTokens"] >= needed and default["telemetry"]["truncated"]
    assert default["telemetry"]["estimatedTokens"] <= default["telemetry"]["contextBudgetTokens"]
    given = docbridge("search", "billing", "--root", str(roots["acme"]), "--agent", "--context-budget", "32")
    assert given.returncode == 2 and "too small for the minimum grounded result" in given.stderr
    short = search(roots["acme"], "sales tax")  # one that fits keeps the reference's 32
    assert short["telemetry"]["contextBudgetTokens"] == 32


# 1.4.3's AgentSearch (scores, no telemetry) and the newer one of behaviours §16 (test 32: "schema", 32 tokens)
REFERENCE_SEARCH_OLD = {
    "type": "agent-search", "schemaVersion": 1, "source": ".doc-bridge/index.json", "term": "billing", "count": 2,
    "bestMatch": {"type": "ownership", "id": "billing", "path": "docs/for-agents/billing.md", "score": 61},
    "matches": [{"type": "ownership", "id": "billing", "path": "docs/for-agents/billing.md", "score": 61},
                {"type": "knowledge", "id": "billing-guide", "path": "docs/billing.md", "summary": "Billing",
                 "score": 40}],
    "nextCommands": ["ak-docs query ownership billing --agent", "ak-docs list knowledge --text"],
}
REFERENCE_SEARCH = {
    "type": "agent-search", "schemaVersion": 1, "source": ".doc-bridge/index.json", "term": "schema", "count": 4,
    "bestMatch": {"type": "ownership", "id": "doc-bridge-schemas", "path": "src/schemas",
                  "summary": "Zod schemas and JSON Schema exports"},
    "matches": [{"type": "ownership", "id": "doc-bridge-schemas", "path": "src/schemas"}],
    "nextCommands": ["ak-docs query ownership doc-bridge-schemas --agent"],
    "telemetry": {"contextBytes": 126, "estimatedTokens": 32, "tokenMethod": "estimate", "contextBudgetTokens": 32,
                  "mode": "discovery", "truncated": True},
}


def test_the_reference_search_examples_validate_and_broken_ones_do_not() -> None:
    for sample in (REFERENCE_SEARCH_OLD, REFERENCE_SEARCH, {**REFERENCE_SEARCH, "count": 0, "bestMatch": None,
                                                            "matches": [], "nextCommands": []}):
        valid(sample, SEARCH_SCHEMA)
    breakages = [
        lambda s: s.pop("bestMatch"), lambda s: s.pop("term"), lambda s: s.pop("source"),
        lambda s: s.update(schemaVersion=2), lambda s: s.update(count=-1),
        lambda s: s["matches"][0].pop("id"), lambda s: s["telemetry"].update(tokenMethod="approximate"),
        lambda s: s["telemetry"].update(mode="browsing"), lambda s: s["telemetry"].pop("truncated"),
        lambda s: s.update(nextCommands=["a", "a"]),
    ]
    for breakage in breakages:
        broken = copy.deepcopy(REFERENCE_SEARCH)
        breakage(broken)
        invalid(broken, SEARCH_SCHEMA)


# ------------------------------------------------------------------------------------------------ an old consumer

# A reader written against the original's documentation (docs/query.md, docs/schemas/agent-handoff-v1.md and the
# AgentSearch fields), run as its own process: it knows nothing of our additions and reads only the documented
# fields, with the checks the original's handoff skill applies (target id as requested, safe relative paths).
OLD_CONSUMER = r'''
import json, sys

def safe(path):
    return (isinstance(path, str) and path.strip() and not path.startswith(("/", "\\"))
            and ".." not in path.replace("\\", "/").split("/") and not (len(path) > 1 and path[1] == ":"))

def strings(value, allow_empty=True):
    return isinstance(value, list) and (allow_empty or value) and all(isinstance(v, str) and v for v in value)

given = json.load(sys.stdin)
h, s, requested = given["handoff"], given["search"], given["requested"]

assert h["type"] == "agent-handoff", h.get("type")
assert h.get("schemaVersion", 1) == 1  # a legacy handoff may omit it
assert isinstance(h["source"], str) and h["source"]
target = h["target"]
assert isinstance(target["type"], str) and target["id"] == requested
assert "path" not in target or safe(target["path"])
assert safe(h["startHere"])
assert strings(h["readBeforeEditing"]) and all(safe(p) for p in h["readBeforeEditing"])
assert strings(h["editRoots"], allow_empty=False) and all(safe(p) for p in h["editRoots"])
assert strings(h["checks"], allow_empty=False)
human = h.get("humanDoc")  # optional, and may be null in a legacy handoff
assert human is None or (isinstance(human, str) and human)
bridge = h.get("bridge")
assert bridge is None or bridge["humanDoc"] in ("linked", "missing", "external")
assert strings(h["notes"])

assert s["type"] == "agent-search" and s.get("schemaVersion", 1) == 1
assert isinstance(s["source"], str) and s["source"] and isinstance(s["term"], str) and s["term"]
assert isinstance(s["count"], int) and s["count"] >= len(s["matches"])
best = s["bestMatch"]
for match in s["matches"] + ([best] if best else []):
    assert isinstance(match["type"], str) and isinstance(match["id"], str) and safe(match["path"])
    assert "summary" not in match or isinstance(match["summary"], str)
assert strings(s["nextCommands"]) and len(set(s["nextCommands"])) == len(s["nextCommands"])
t = s["telemetry"]
assert t["tokenMethod"] == "estimate" and t["estimatedTokens"] * 4 >= t["contextBytes"]
assert t["estimatedTokens"] <= t["contextBudgetTokens"] and isinstance(t["truncated"], bool)
assert t["mode"] in ("discovery", "editing", "debugging", "documentation")

print(json.dumps({"target": [target["type"], target["id"], target.get("path")], "start": h["startHere"],
                  "read": h["readBeforeEditing"], "edit": h["editRoots"], "checks": h["checks"], "human": human,
                  "bridge": bridge and bridge["humanDoc"], "best": best and [best["type"], best["id"], best["path"]],
                  "paths": [m["path"] for m in s["matches"]], "budget": t["contextBudgetTokens"]}))
'''


def consume(handoff: dict[str, Any], found: dict[str, Any], requested: str) -> dict[str, Any]:
    given = json.dumps({"handoff": handoff, "search": found, "requested": requested})
    result = subprocess.run([sys.executable, "-c", OLD_CONSUMER], input=given, capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_an_old_consumer_reads_our_payloads_unchanged(roots: dict[str, Path]) -> None:
    record = ownership("acme", "acme-billing")
    read = consume(query(roots["acme"], "ownership", "acme-billing"), search(roots["acme"], "createInvoice"),
                   "acme-billing")
    assert read["target"] == ["area", "acme-billing", record["path"]]
    assert read["start"] == record["agentDoc"] and read["edit"] == [record["path"]]
    assert read["checks"] == record["checks"] and read["human"] == record["humanDoc"] and read["bridge"] == "linked"
    assert read["read"][0] == "docs/billing.md" and read["read"][-1] == "AGENTS.md"
    assert read["best"] == ["module", "module:src/billing/invoice.ts", "src/billing/invoice.ts"]
    assert read["paths"][0] == "src/billing/invoice.ts" and read["budget"] == 32
    # the original's package form on a workspace member, and a module hand-off, with a bounded search
    core = ownership("monorepo", "mono-core")
    read = consume(query(roots["monorepo"], "package", "mono-core"),
                   search(roots["monorepo"], "AppError", "--context-budget", "64"), "mono-core")
    assert read["target"] == ["package", "mono-core", core["path"]] and read["edit"] == [core["path"]]
    assert read["checks"] == core["checks"] and read["human"] == core["humanDoc"]
    assert read["best"][2] == "packages/core/src/errors/AppError.ts" and read["budget"] == 64
    module = "module:packages/core/src/errors/AppError.ts"
    read = consume(query(roots["monorepo"], module), search(roots["monorepo"], "zxqvnomatch987654321"), module)
    assert read["target"][0] == "module" and read["edit"] == ["packages/core/src/errors"]
    assert read["human"] is None and read["bridge"] == "missing" and read["best"] is None and read["paths"] == []
