"""`docbridge mcp` through the MCP SDK's own client, over a real stdio connection to the installed command.

Expected answers come from reading the fixture (fixtures/acme): its files, its doc-bridge.config.json. Freshness
is shown by writing and deleting files while one server runs; nothing restarts it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP server needs the `mcp` extra (make test installs it)")
pytest.importorskip("watchfiles", reason="the MCP server needs the `mcp` extra (make test installs it)")

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from support.wait import wait_until, wait_until_async

from tests.conftest import BIN

TOOLS = {"knowledge.search", "knowledge.lookup", "handoff.resolve", "doc.search", "doc.get", "retriever.query",
         "docbridge.diagnostics", "docbridge.proposals", "docbridge.status",
         # the original's older names, kept as thin aliases (tests/test_mcp_aliases.py)
         "gate.status", "memory.classify", "memory.promoteDraft", "registry.topology", "docbridge.snapshot",
         "docbridge.report", "docbridge.relations", "docbridge.run"}


@asynccontextmanager
async def serve(root: Path, *options: str) -> AsyncIterator[Client]:
    # the SDK passes on only a few variables by default: the whole environment, so the server reads no user
    # settings (DOCBRIDGE_USER_CONFIG, tests/conftest.py)
    params = StdioServerParameters(command=str(BIN / "docbridge"), args=["mcp", "--root", str(root), *options],
                                   env=dict(os.environ))
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None, **options: Any) -> Any:
    """A successful call's structured payload."""
    result = await client.call_tool(tool, arguments or {}, **options)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


async def error(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    """A failing call's text (a tool error: isError, not a protocol error)."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} {arguments} should fail, got {result.structured_content}"
    return str(result.content[0].text)


# ------------------------------------------------------------------------------------------------ tools and schemas


async def test_lists_every_tool_with_schemas_from_its_arguments(acme: Path) -> None:
    async with serve(acme) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    search = tools["knowledge.search"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {"query", "kinds", "limit", "explain", "budgetTokens", "format"}
    assert search["properties"]["limit"]["maximum"] == 100 and search["properties"]["limit"]["default"] == 20
    kinds = search["properties"]["kinds"]["anyOf"][0]["items"]["enum"]
    assert sorted(kinds) == ["area", "change", "document", "intent", "module", "package"]
    lookup = tools["knowledge.lookup"].input_schema
    assert {"id", "path", "depth", "budgetTokens"} <= set(lookup["properties"])
    assert (lookup["properties"]["depth"]["minimum"], lookup["properties"]["depth"]["maximum"]) == (1, 3)
    assert tools["handoff.resolve"].input_schema["required"] == ["ref"]
    assert set(tools["docbridge.diagnostics"].input_schema["properties"]["format"]["enum"]) == {"native", "finding"}
    for tool in tools.values():
        assert tool.description and tool.output_schema and tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True


# ------------------------------------------------------------------------------------------------ every tool answers


async def test_every_tool_answers_from_the_fixture(acme: Path) -> None:
    config = json.loads((acme / "doc-bridge.config.json").read_text())
    billing = config["routing"]["options"]["ownership"]["acme-billing"]
    async with serve(acme) as client:
        found = await call(client, "knowledge.search", {"query": "createInvoice", "limit": 3, "explain": True})
        assert found["type"] == "knowledge-search" and found["source"].startswith("projection:")
        top = found["results"][0]
        # src/billing/invoice.ts declares `export async function createInvoice`
        assert (top["id"], top["kind"], top["path"]) == ("module:src/billing/invoice.ts", "module",
                                                        "src/billing/invoice.ts")
        assert top["evidence"][0]["path"] == "src/billing/invoice.ts" and len(top["evidence"][0]["contentHash"]) == 64
        assert top["explain"]["components"]["exactSymbol"] > 0 and top["confidence"] == "observed"

        owned = await call(client, "knowledge.search", {"query": "acme-billing", "limit": 1})
        assert owned["results"][0]["type"] == "ownership" and owned["results"][0]["id"] == "acme-billing"
        assert owned["results"][0]["entityId"] == "area:src/billing"

        documents = await call(client, "knowledge.search", {"query": "VAT", "kinds": ["document"], "limit": 5})
        assert documents["kinds"] == ["document"] and {r["kind"] for r in documents["results"]} == {"document"}
        assert "docs/billing.md" in {r["path"] for r in documents["results"]}  # "calculates VAT"
        assert all(len(r.get("excerpt", "")) <= 241 for r in documents["results"])

        lookup = await call(client, "knowledge.lookup", {"id": "acme-billing", "depth": 2})
        assert lookup["entity"]["id"] == "area:src/billing" and lookup["entity"]["ownershipId"] == "acme-billing"
        assert lookup["handoff"]["startHere"] == billing["agentDoc"]
        assert lookup["handoff"]["checks"] == billing["checks"]
        assert "module:src/billing/tax.ts" in {n["id"] for n in lookup["neighbours"]["contains"]}
        assert lookup["evidence"][0]["path"] == "src/billing" and lookup["evidence"][0]["source"] == "derived"
        assert set(lookup["diagnostics"]) == {"reportHash", "open"}
        by_path = await call(client, "knowledge.lookup", {"path": "src/billing/tax.ts"})
        assert by_path["entity"]["id"] == "module:src/billing/tax.ts"

        handoff = await call(client, "handoff.resolve", {"ref": "src/billing"})
        assert handoff["target"]["id"] == "acme-billing" and handoff["editRoots"] == [billing["path"]]
        text = await client.call_tool("handoff.resolve", {"ref": "acme-billing", "format": "text"})
        assert "Start here:          docs/for-agents/billing.md" in text.content[0].text

        doc_search = await call(client, "doc.search", {"query": "VAT"})
        assert doc_search["documents"] and all(d["id"].startswith("document:") for d in doc_search["documents"])

        document = await call(client, "doc.get", {"path": "docs/api.md"})
        assert document["text"] == (acme / "docs/api.md").read_text(encoding="utf-8")
        assert document["truncated"] is False and document["headings"][0]["text"] == "HTTP API"
        short = await call(client, "doc.get", {"id": "document:docs/api.md", "maxChars": 10})
        assert short["text"] == document["text"][:10] and short["truncated"] is True

        retrieved = await call(client, "retriever.query", {"query": "sales tax", "limit": 3})
        first = retrieved["documents"][0]
        assert set(first) == {"id", "content", "score", "source", "metadata"}
        assert {"kind", "path", "evidence", "explain", "confidence"} <= set(first["metadata"])
        assert first["content"].startswith(first["metadata"]["title"])

        # docs/deployment.md's frontmatter has an unclosed flow sequence: `tags: [deploy, operations`
        broken = await call(client, "docbridge.diagnostics", {"code": "DOCBRIDGE_BLOCK_INVALID"})
        assert [f["path"] for f in broken["findings"]] == ["docs/deployment.md"]
        canonical = await call(client, "docbridge.diagnostics", {"path": "docs/deployment.md", "format": "finding"})
        assert canonical["findings"][0]["severity"] == "high" and canonical["findings"][0]["location"]["startLine"] == 6

        proposals = await call(client, "docbridge.proposals")
        assert proposals["pending"] == [] and "overlay" in proposals["note"]
        status = await call(client, "docbridge.status")
        assert status["state"] == "ready" and status["files"] > 0

        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"docbridge://snapshot", "docbridge://handoff/src/billing"} <= resources
        area = json.loads((await client.read_resource("docbridge://handoff/src/billing")).contents[0].text)
        assert area["target"]["id"] == "acme-billing"
        summary = json.loads((await client.read_resource("docbridge://snapshot")).contents[0].text)
        assert "src/billing" in summary["areas"] and summary["entities"]["document"] == len(
            list(acme.rglob("*.md")))


# ------------------------------------------------------------------------------------------------ budgets


async def test_budgets_drop_sections_in_the_declared_order_and_fail_closed(acme: Path) -> None:
    order = ["evidenceExcerpts", "related", "neighbours", "summaries"]
    async with serve(acme) as client:
        full = await call(client, "knowledge.lookup", {"id": "acme-billing", "budgetTokens": 1_000_000})
        report = full["budget"]
        assert report["order"] == order and report["dropped"] == [] and report["tokenMethod"] == "approximate"
        sections = report["tokens"]["sections"]
        core = report["tokens"]["core"]
        assert set(sections) == set(order)  # every section holds content for this area
        seen = []
        for keep in range(len(order), -1, -1):  # a budget that holds the core and the last `keep` sections
            budget = core + sum(sections[name] for name in order[len(order) - keep:])
            trimmed = await call(client, "knowledge.lookup", {"id": "acme-billing", "budgetTokens": budget})
            dropped = trimmed["budget"]["dropped"]
            assert dropped == order[:len(order) - keep]  # the oldest sections go first
            assert trimmed["budget"]["tokens"]["total"] <= budget and trimmed["budget"]["fits"] is True
            assert ("excerpt" in json.dumps(trimmed["evidence"])) == ("evidenceExcerpts" not in dropped)
            assert ("related" in trimmed["handoff"]) == ("related" not in dropped)
            assert bool(trimmed["neighbours"]) == ("neighbours" not in dropped)
            assert ("summary" in trimmed["entity"]) == ("summaries" not in dropped)
            seen.append(tuple(dropped))
        assert len(set(seen)) == len(order) + 1
        refused = await error(client, "knowledge.lookup", {"id": "acme-billing", "budgetTokens": core - 1})
        assert "budgetTokens" in refused and "too small" in refused
        search = await call(client, "knowledge.search", {"query": "billing", "budgetTokens": 1_000_000})
        assert search["budget"]["order"] == ["evidenceExcerpts", "summaries"]
        assert "too small" in await error(client, "knowledge.search", {"query": "billing", "budgetTokens": 5})
        handoff = await call(client, "handoff.resolve", {"ref": "acme-billing", "budgetTokens": 1_000_000})
        assert handoff["budget"]["order"] == ["related", "summaries"]


# ------------------------------------------------------------------------------------------------ bad input


async def test_bad_arguments_are_tool_errors_naming_the_argument_and_the_server_keeps_serving(acme: Path) -> None:
    (acme / "docs/leak.md").symlink_to("/etc/passwd")
    async with serve(acme) as client:
        assert "limit" in await error(client, "knowledge.search", {"query": "billing", "limit": 10 ** 9})
        assert "depth" in await error(client, "knowledge.lookup", {"id": "acme-billing", "depth": 7})
        assert "kinds" in await error(client, "knowledge.search", {"query": "billing", "kinds": ["nonsense"]})
        assert "query" in await error(client, "knowledge.search", {})
        assert "query" in await error(client, "knowledge.search", {"query": ""})
        assert "maxChars" in await error(client, "doc.get", {"path": "docs/api.md", "maxChars": 10 ** 9})
        assert "exactly one of id or path" in await error(client, "knowledge.lookup", {})
        unknown = await error(client, "knowledge.lookup", {"id": "area:src/nowhere"})
        assert 'Unknown entity "area:src/nowhere"' in unknown and "Closest:" in unknown
        assert "Unknown entity" in await error(client, "handoff.resolve", {"ref": "no-such-owner"})
        for tool, arguments in [("doc.get", {"path": "../../etc/passwd"}),
                                ("knowledge.lookup", {"path": "../../etc/passwd"}),
                                ("docbridge.diagnostics", {"path": "../../etc/passwd"})]:
            message = await error(client, tool, arguments)
            assert "leaves the repository" in message and "root:" not in message
        assert "not repository-relative" in await error(client, "doc.get", {"path": "/etc/passwd"})
        leak = await error(client, "doc.get", {"path": "docs/leak.md"})  # a symlink out of the repository
        assert "Unknown entity" in leak and "root:" not in leak
        assert "code" in await error(client, "docbridge.diagnostics", {"code": "NOT_A_CODE"})
        # an argument of the wrong type is said in one line, not as pydantic's report (class names, a link)
        wrong = await error(client, "handoff.resolve", {"ref": None})
        assert wrong == "handoff.resolve: ref: Input should be a valid string.", wrong
        huge = await call(client, "knowledge.search", {"query": "billing " * 200, "limit": 100})
        assert huge["limit"] == 100
        still = await call(client, "knowledge.search", {"query": "createInvoice", "limit": 1})
        assert still["results"][0]["path"] == "src/billing/invoice.ts"


# ------------------------------------------------------------------------------------------------ freshness


async def test_a_document_written_on_disk_is_found_and_gone_once_deleted_without_a_restart(acme: Path) -> None:
    planted = acme / "docs" / "zanzibar.md"

    async def hits(query: str) -> list[str]:
        found = await call(client, "knowledge.search", {"query": query, "limit": 5})
        return [r["path"] for r in found["results"]]

    async with serve(acme, "--debounce-ms", "50") as client:
        assert "docs/zanzibar.md" not in await hits("zanzibarquux")
        planted.write_text("# Zanzibarquux\n\nHow `createInvoice` numbers zanzibarquux invoices.\n", encoding="utf-8")
        await wait_until_async(lambda: _contains(hits("zanzibarquux"), "docs/zanzibar.md"), interval=0.1,
                               what="search to find the document written on disk")
        lookup = await call(client, "knowledge.lookup", {"path": "src/billing/invoice.ts"})
        assert "docs/zanzibar.md" in {d["path"] for d in lookup["documents"]["mentioning"]}
        # an ignored directory is never indexed, whatever it holds
        (acme / "node_modules" / "pkg").mkdir(parents=True)
        (acme / "node_modules" / "pkg" / "readme.md").write_text("# zanzibarquux vendored\n", encoding="utf-8")
        planted.unlink()
        await wait_until_async(lambda: _lacks(hits("zanzibarquux"), "docs/zanzibar.md"), interval=0.1,
                               what="search to lose the deleted document")
        assert await hits("zanzibarquux") == []
        moved = acme / "docs" / "moved"
        moved.mkdir()
        (moved / "kilimanjaro.md").write_text("# Kilimanjaroquux\n", encoding="utf-8")
        await wait_until_async(lambda: _contains(hits("kilimanjaroquux"), "docs/moved/kilimanjaro.md"), interval=0.1,
                               what="search to find the document in a new directory")
        moved.rename(acme / "docs" / "elsewhere")  # a directory moved as a whole
        await wait_until_async(lambda: _contains(hits("kilimanjaroquux"), "docs/elsewhere/kilimanjaro.md"),
                               interval=0.1, what="search to find the document in the moved directory")
        assert "docs/moved/kilimanjaro.md" not in await hits("kilimanjaroquux")


async def _contains(pending: Any, path: str) -> bool:
    return path in await pending


async def _lacks(pending: Any, path: str) -> bool:
    return path not in await pending


# ------------------------------------------------------------------------------------------------ the first scan


@pytest.fixture(scope="module")
def large_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 files: a first scan without the cache on one process takes seconds, far longer than a handshake."""
    from docbridge.bench.synthetic import generate
    root = tmp_path_factory.mktemp("large") / "repo"
    generate(root, 1000)
    return root


async def test_a_call_during_the_first_scan_waits_for_it_and_reports_progress(large_repo: Path) -> None:
    progress: list[str] = []

    async def record(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with serve(large_repo, "--no-cache", "--jobs", "1") as client:
        status = await call(client, "docbridge.status")
        assert status["state"] == "scanning" and status["revision"] is None
        found = await call(client, "knowledge.search", {"query": "invoice", "limit": 3}, progress_callback=record)
        assert found["count"] == 3
        assert progress and all(message.startswith("scanning") for message in progress)
        assert (await call(client, "docbridge.status"))["state"] == "ready"


async def test_a_call_past_the_scan_timeout_is_a_clear_error_and_a_later_one_answers(large_repo: Path) -> None:
    async with serve(large_repo, "--no-cache", "--jobs", "1", "--scan-timeout", "0.2") as client:
        message = await error(client, "knowledge.search", {"query": "invoice"})
        assert "first scan" in message and "still running" in message and "--scan-timeout" in message
        with anyio.move_on_after(0.3):  # a call the client abandons mid-way
            await client.call_tool("knowledge.lookup", {"path": "src"})

        async def answered() -> bool:
            result = await client.call_tool("knowledge.search", {"query": "invoice", "limit": 1})
            return not result.is_error
        await wait_until_async(answered, 120, interval=0.1, what="a search answered once the first scan ended")


def test_a_client_that_disconnects_mid_call_ends_the_server_cleanly(large_repo: Path) -> None:
    server = subprocess.Popen([str(BIN / "docbridge"), "mcp", "--root", str(large_repo), "--no-cache", "--jobs", "1"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "knowledge.search",
                                                                          "arguments": {"query": "invoice"}}},
    ]
    server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1  # initialized; the search waits for the scan
    server.stdin.close()  # the client goes away mid-call
    try:
        returncode = server.wait(timeout=120)
    finally:
        server.kill()
    stderr = server.stderr.read().decode() if server.stderr else ""
    assert returncode == 0, stderr
    assert "Traceback" not in stderr


# ------------------------------------------------------------------------------------------------ http


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_streamable_http_on_the_loopback_interface(acme: Path) -> None:
    port = _free_port()
    server = subprocess.Popen([str(BIN / "docbridge"), "mcp", "--root", str(acme), "--transport", "http",
                               "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0
        wait_until(listening, 20, interval=0.1, what=f"the MCP server to listen on port {port}")
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            found = await call(client, "knowledge.search", {"query": "createInvoice", "limit": 1})
        assert found["results"][0]["path"] == "src/billing/invoice.ts"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_command_rejects_bad_options(acme: Path) -> None:
    from tests.conftest import docbridge
    assert docbridge("mcp", "--root", str(acme / "missing")).returncode == 2
    result = docbridge("mcp", "--root", str(acme), "--port", "80")
    assert result.returncode == 2 and "--transport http" in result.stderr
    assert docbridge("mcp", "--root", str(acme), "--transport", "http", "--port", "70000").returncode == 2


def test_other_commands_never_import_the_mcp_sdk() -> None:
    probe = ("import sys; from docbridge.cli import main; main.build_parser(); import docbridge; "
             "print(any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


async def test_proposals_lists_the_overlays_pending_proposals(tmp_path: Path) -> None:
    from tests.conftest import copy_fixture
    from tests.test_enrich import PENDING, enable, overlay, run_script
    root = copy_fixture("acme", tmp_path)
    enable(root)
    run_script(root, [{**PENDING["relation"], "reason": "case relation"}])
    expected = overlay(root)["pending"]
    async with serve(root) as client:
        proposals = await call(client, "docbridge.proposals")
    assert [(p["proposalId"], p["kind"], p["entity"]) for p in proposals["pending"]] == [
        (expected[0]["proposalId"], "propose-relation", "document:docs/storage.md")]
    assert "fix approve" in proposals["note"]


@pytest.mark.attack("MCP wire")
def test_every_malformed_request_gets_an_answer_over_stdio(acme: Path) -> None:
    """The SDK drops what it cannot validate; JSON-RPC answers it (id null when the id itself is unusable)."""
    process = subprocess.Popen([str(BIN / "docbridge"), "mcp", "--root", str(acme)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    assert process.stdin is not None and process.stdout is not None

    def exchange(message: Any) -> dict[str, Any]:
        raw = message if isinstance(message, bytes) else json.dumps(message).encode()
        process.stdin.write(raw + b"\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        return dict(json.loads(process.stdout.readline()))  # type: ignore[union-attr]

    try:
        assert "result" in exchange({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for message, answer in [
            ({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": 5}, (2, -32602)),
            ({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": []}, (3, -32602)),
            ({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"x": 1}}, (4, -32602)),
            ({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, (None, -32600)),
            ({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, (None, -32600)),
            ([{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}], (None, -32600)),
            (b"{not json", (None, -32700)),
        ]:
            got = exchange(message)
            assert (got.get("id"), got["error"]["code"]) == answer, (message, got)
        listed = exchange({"jsonrpc": "2.0", "id": 6, "method": "tools/list"})
        assert {tool["name"] for tool in listed["result"]["tools"]} == TOOLS  # still serving
    finally:
        process.kill()
        process.wait(timeout=30)
    assert b"Traceback" not in process.stderr.read()  # type: ignore[union-attr]


@pytest.mark.attack("MCP wire")
def test_requests_piped_with_a_lone_surrogate_are_all_answered_before_the_input_ends(acme: Path) -> None:
    """`printf '…' | docbridge mcp`: the input ended while requests were worked on, and 2 to 5 of 10 answers
    were lost; a string escaping a lone surrogate (`\\ud800`) got no answer at all (its answer could not be
    written). Every request is answered, the surrogate read as U+FFFD, then the server ends."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    lines = [json.dumps(init), '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
             '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "doc.search", '
             '"arguments": {"query": "\\ud800 billing"}}}',
             '{"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "docbridge://handoff/\\udfff"}}',
             *(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                           "params": {"name": "docbridge.status", "arguments": {}}}) for n in range(4, 12)),
             '{"jsonrpc": "2.0", "id": 12, "method": "ping"}',
             '{"jsonrpc": "2.0", "id": 13, "method": "prompts/get", "params": {"name": "x"}}']
    result = subprocess.run([str(BIN / "docbridge"), "mcp", "--root", str(acme)], input="\n".join(lines) + "\n",
                            capture_output=True, text=True, timeout=120, check=False)
    answers = {a["id"]: a for a in map(json.loads, result.stdout.splitlines())}
    assert sorted(answers) == list(range(1, 14)), result.stdout[-2000:]
    assert answers[13]["error"]["code"] == -32602, answers[13]  # no prompts here: code 0 and two tracebacks
    searched = answers[2]["result"]["structuredContent"]
    assert searched["query"] == "\ufffd billing", searched
    assert "\ufffd" in answers[3]["error"]["message"] and answers[3]["error"]["code"] == -32602  # not internal
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr


def test_a_client_that_stops_reading_ends_the_server_with_one_line(acme: Path) -> None:
    """A client that closes its end of the server's stdout: the server's next answer met a broken pipe and it
    ended with exit 1 and three nested tracebacks. It ends with one line and exit 0."""
    process = subprocess.Popen([str(BIN / "docbridge"), "mcp", "--root", str(acme)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    process.stdin.write((json.dumps(init) + "\n").encode())
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    process.stdout.close()
    with contextlib.suppress(BrokenPipeError):
        for n in range(2, 12):
            process.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}) + "\n").encode())
            process.stdin.flush()
        process.stdin.close()
    assert process.wait(timeout=60) == 0
    said = process.stderr.read().decode()
    assert "Traceback" not in said and "the MCP client closed the connection" in said, said


@pytest.mark.attack("MCP wire")
def test_a_port_in_use_is_one_sentence_and_exit_2(acme: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([str(BIN / "docbridge"), "mcp", "--root", str(acme), "--transport", "http",
                                 "--port", str(port)], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    assert f"cannot serve MCP on 127.0.0.1:{port}" in result.stderr and "Traceback" not in result.stderr
