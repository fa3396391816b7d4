"""The original's older MCP tool names (its `src/mcp/server.ts`), kept as thin aliases: through the MCP SDK's own
client over a real stdio connection to the installed command, as tests/test_mcp.py does (its helpers).

Expected answers come from reading the fixture (fixtures/acme): its doc-bridge.config.json, its documents'
frontmatter, and what the command line prints for the same tree (`scan`, `reconcile`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the `mcp` extra (make test installs it)")
pytest.importorskip("watchfiles", reason="the MCP server needs the `mcp` extra (make test installs it)")

from support.wait import wait_until_async

from tests.conftest import docbridge, docbridge_json
from tests.test_mcp import TOOLS, call, error, serve

ALIASES = {"gate.status", "memory.classify", "memory.promoteDraft", "registry.topology", "docbridge.snapshot",
           "docbridge.report", "docbridge.relations", "docbridge.run"}
NO_COUNTERPART = ("memory.classify", "memory.promoteDraft")


def local_human_docs(root: Path) -> set[str]:
    config = json.loads((root / "doc-bridge.config.json").read_text(encoding="utf-8"))
    return {record["humanDoc"] for record in config["routing"]["options"]["ownership"].values()
            if record.get("humanDoc") and not record["humanDoc"].startswith(("http://", "https://"))}


async def test_the_aliases_are_listed_read_only_with_schemas(acme: Path) -> None:
    async with serve(acme) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) >= ALIASES and TOOLS >= ALIASES
    for name in ALIASES:
        tool = tools[name]
        assert tool.description and tool.output_schema and tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    relations = tools["docbridge.relations"].input_schema["properties"]
    assert set(relations) == {"kind", "limit"} and relations["limit"]["maximum"] == 500
    assert relations["limit"]["default"] == 100
    for name in ("docbridge.snapshot", "docbridge.report"):
        assert set(tools[name].input_schema["properties"]) == {"runId"}
    for name in ("gate.status", "registry.topology", "docbridge.run", *NO_COUNTERPART):
        assert tools[name].input_schema.get("properties", {}) == {}


async def test_gate_status_reads_the_index_freshness_and_the_human_guide_links(acme: Path) -> None:
    async with serve(acme, "--debounce-ms", "50") as client:
        missing = await call(client, "gate.status")
        assert missing["type"] == "gate-status" and missing["ok"] is False
        # acme configures no gates: the minimal preset, index-freshness alone (as `docbridge gate run`)
        assert "gates" not in json.loads((acme / "doc-bridge.config.json").read_text(encoding="utf-8"))
        results = {r["id"]: r for r in missing["results"]}
        assert missing["preset"] == "minimal" and set(results) == {"index-freshness"}
        assert not results["index-freshness"]["ok"] and "docbridge index" in results["index-freshness"]["message"]
        assert missing["notEvaluated"] == []
        assert not (acme / ".docbridge" / "index.json").exists()  # the gate writes nothing

    config = acme / "doc-bridge.config.json"
    config.write_text(config.read_text(encoding="utf-8").replace(
        '"schemaVersion": 1,', '"schemaVersion": 1, "gates": {"preset": "standard"},', 1), encoding="utf-8")
    async with serve(acme, "--debounce-ms", "50") as client:
        results = {r["id"]: r for r in (await call(client, "gate.status"))["results"]}
        assert set(results) == {"index-freshness", "human-guide-links"}
        # acme-billing's humanDoc is docs/billing.md (a document); acme-api's is an https address (not a file)
        links = local_human_docs(acme)
        assert links == {"docs/billing.md"}
        assert results["human-guide-links"] == {"id": "human-guide-links", "ok": True,
                                                "message": f"Resolved {len(links)} humanDoc link"}

    assert docbridge("index", "--root", str(acme)).returncode == 0
    async with serve(acme, "--debounce-ms", "50") as client:
        fresh = await call(client, "gate.status")
        assert fresh["ok"] is True
        index = {r["id"]: r for r in fresh["results"]}["index-freshness"]
        written = json.loads((acme / ".docbridge" / "index.json").read_text(encoding="utf-8"))
        assert index["ok"] and index["actual"] == index["expected"] == written["projection"]["contentHash"]
        (acme / "docs" / "refunds.md").write_text("# Refunds\n\nHow refunds are computed.\n", encoding="utf-8")

        async def stale() -> bool:
            answer = await call(client, "gate.status")
            return not {r["id"]: r for r in answer["results"]}["index-freshness"]["ok"]

        await wait_until_async(stale, interval=0.1, what="gate.status to see the index go stale")
        after = {r["id"]: r for r in (await call(client, "gate.status"))["results"]}["index-freshness"]
        assert after["actual"] == written["projection"]["contentHash"] != after["expected"]
        assert "Index is stale" in after["message"]


async def test_the_snapshot_report_relations_and_run_are_the_models(acme: Path) -> None:
    docbridge("scan", "--root", str(acme))
    scanned = json.loads((acme / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))
    reconciled = docbridge_json("reconcile", "--root", str(acme))
    async with serve(acme) as client:
        run = await call(client, "docbridge.run")
        assert run["type"] == "run" and run["state"] == "ready" and run["runId"] == scanned["content_hash"][:16]
        assert run["artifacts"]["snapshot"]["contentHash"] == scanned["content_hash"]

        snapshot = await call(client, "docbridge.snapshot")
        assert snapshot["runId"] == run["runId"]
        assert snapshot["snapshot"]["content_hash"] == scanned["content_hash"]
        assert snapshot["snapshot"]["entities"] == scanned["entities"]
        documents = {e["path"] for e in snapshot["snapshot"]["entities"] if e["kind"] == "document"}
        assert documents == {p.relative_to(acme).as_posix() for p in acme.rglob("*.md") if ".docbridge" not in p.parts}
        same = await call(client, "docbridge.snapshot", {"runId": run["runId"]})
        assert same["snapshot"]["content_hash"] == scanned["content_hash"]
        wrong = await error(client, "docbridge.snapshot", {"runId": "elsewhere"})
        assert "runId" in wrong and run["runId"] in wrong

        report = await call(client, "docbridge.report")
        assert report["type"] == "reconciliation-report" and report["runId"] == run["runId"]
        assert [d["id"] for d in report["diagnostics"]] == [d["id"] for d in reconciled["diagnostics"]]
        assert report["summary"] == reconciled["summary"]
        assert report["contentHash"] == run["artifacts"]["report"]["contentHash"]
        assert "runId" in await error(client, "docbridge.report", {"runId": "elsewhere"})

        # docs/billing.md's frontmatter: `covers:` then `- src/billing`; docs/api.md: `- src/api`
        covers = await call(client, "docbridge.relations", {"kind": "covers", "limit": 500})
        pairs = {(r["source"], r["target"]) for r in covers["relations"]}
        assert {("document:docs/billing.md", "area:src/billing"), ("document:docs/api.md", "area:src/api")} <= pairs
        assert {r["kind"] for r in covers["relations"]} == {"covers"} and covers["truncated"] is False
        assert covers["total"] == sum(1 for r in scanned["relations"] if r["kind"] == "covers") == covers["count"]
        billing = next(r for r in covers["relations"] if r["source"] == "document:docs/billing.md")
        assert billing["evidence"][0]["path"] == "docs/billing.md" and billing["provenance"] == "declared"
        one = await call(client, "docbridge.relations", {"limit": 1})
        assert one["count"] == 1 and one["truncated"] is True and one["total"] == len(scanned["relations"])
        unknown = await error(client, "docbridge.relations", {"kind": "teleports"})
        assert "teleports" in unknown and "imports" in unknown  # names the kinds this repository has
        assert "limit" in await error(client, "docbridge.relations", {"limit": 501})


async def test_registry_topology_describes_the_configured_roles(acme: Path) -> None:
    async with serve(acme) as client:
        listed = sorted(tool.name for tool in (await client.list_tools()).tools)
        topology = await call(client, "registry.topology")
    # the fixture configures no `intelligence`: enrichment is off, the default role is the curator
    assert (topology["id"], topology["enabled"], topology["delegates"]) == ("doc-curator", False, ["curator"])
    assert topology["mergePolicy"]["autoMerge"] is False and topology["mergePolicy"]["requiresHuman"] is True
    assert "propose-relation" in topology["mergePolicy"]["decidedByAPerson"]
    assert topology["tools"] == listed and topology["steps"] == ["pack", "propose", "validate", "decide"]
    assert topology["roles"][0]["role"] == "curator" and "summarize" in topology["roles"][0]["proposes"]


async def test_the_memory_tools_have_no_counterpart_and_say_what_to_call_instead(acme: Path) -> None:
    async with serve(acme) as client:
        for name in NO_COUNTERPART:
            result = await client.call_tool(name, {})
            assert result.is_error, name
            payload: Any = result.structured_content
            assert payload["type"] == "tool-unavailable" and payload["tool"] == name
            assert payload["counterpart"] is None and "agent memory" in payload["reason"]
            instead = {item.get("tool") or item.get("command") for item in payload["instead"]}
            assert {"knowledge.search", "docbridge.proposals"} <= instead
            text = result.content[0].text
            assert text.startswith(f"{name} has no counterpart in Doc Bridge") and "knowledge.search" in text
        # the server keeps serving (docbridge.run waits for the first scan)
        assert (await call(client, "docbridge.run"))["state"] == "ready"
