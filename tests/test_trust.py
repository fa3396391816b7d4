"""A cloned repository is untrusted: its configuration cannot send text or a key anywhere, nor run a program,
and an endpoint the user did choose cannot freeze a search or a server.

Every case goes through a public surface (the CLI as a subprocess, the language server over stdio, the MCP
server through the MCP SDK's client) against a stub embeddings endpoint on 127.0.0.1 that records what it
receives.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.embeddings import read_json, send_json, serve_posts, vector
from support.wait import not_before_async, wait_until_async

from tests.conftest import BIN, copy_fixture, docbridge, user_settings

pytestmark = pytest.mark.attack("network and agent programs")

SECRET = "cloud-token-that-must-not-leave"


class Endpoint:
    """What the stub received, and how it answers: `ok`, `trickle` (a byte every 0.2 s, forever) or
    `endless` (bytes as fast as they go, forever)."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[dict[str, Any]] = []
        self.url = ""


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()

    def answer(request: http.server.BaseHTTPRequestHandler) -> None:
        body = read_json(request)
        state.requests.append({"auth": request.headers.get("Authorization"), "body": body})
        try:
            if state.mode == "trickle":
                request.send_response(200)
                request.end_headers()
                while True:
                    request.wfile.write(b" ")
                    request.wfile.flush()
                    time.sleep(0.2)  # kept: a byte every 0.2 s is the slow endpoint under test
            if state.mode == "endless":
                request.send_response(200)
                request.end_headers()
                chunk = b"9" * 65536
                while True:
                    request.wfile.write(chunk)
            vectors = [{"index": i, "embedding": vector(text)} for i, text in enumerate(body["input"])]
            send_json(request, {"data": vectors}, length=True)
        except OSError:  # the client hung up: what a deadline or a size cap does
            return

    with serve_posts(answer) as url:
        state.url = url
        yield state


def _repository(tmp_path: Path, embed: dict[str, Any] | None = None, **extra: Any) -> Path:
    root = copy_fixture("acme", tmp_path)
    config = json.loads((root / "doc-bridge.config.json").read_text())
    config["retrieval"] = {**config.get("retrieval", {}), "hybrid": True}
    if embed is not None:
        config["index"] = {"embed": embed}
    config.update(extra)
    (root / "doc-bridge.config.json").write_text(json.dumps(config))
    return root


def _run(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return docbridge(*args, "--root", str(root), timeout=120, env={"CLOUD_TOKEN": SECRET, **(env or {})})


def _semantic(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = _run(root, *args, "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return dict(json.loads(result.stdout)["semantic"])


# ------------------------------------------------------------------------------------------------ the CLI


def test_a_repository_cannot_send_text_or_a_key_to_an_endpoint_it_names(tmp_path: Path, endpoint: Endpoint) -> None:
    root = _repository(tmp_path, {"baseUrl": endpoint.url, "model": "m", "apiKeyEnv": "CLOUD_TOKEN"})
    built = _semantic(root, "index", "--semantic")
    assert built["built"] is False
    assert endpoint.url in built["reason"] and "$CLOUD_TOKEN" in built["reason"]
    assert "only your own settings decide" in built["reason"]
    searched = _semantic(root, "search", "refunds of invoices", "--hybrid")
    assert searched["used"] is False and "only your own settings decide" in searched["reason"]
    assert endpoint.requests == []  # nothing was sent, least of all the token


def test_the_users_own_endpoint_gets_the_users_key_never_the_repositorys(tmp_path: Path,
                                                                        endpoint: Endpoint) -> None:
    root = _repository(tmp_path / "repo", {"baseUrl": "http://127.0.0.1:9/v1", "model": "m",
                                           "apiKeyEnv": "CLOUD_TOKEN"})
    env = {**user_settings(tmp_path, {"index": {"embed": {"baseUrl": endpoint.url, "model": "mine",
                                                           "apiKeyEnv": "MY_KEY"}}}), "MY_KEY": "my-key"}
    built = _semantic(root, "index", "--semantic", env=env)
    assert built["built"] is True and built["model"] == "endpoint:mine"
    assert endpoint.requests and {r["auth"] for r in endpoint.requests} == {"Bearer my-key"}
    assert all(SECRET not in json.dumps(r) for r in endpoint.requests)
    assert _semantic(root, "search", "refunds of invoices", "--hybrid", env=env)["used"] is True


def test_a_repository_the_user_trusts_chooses_its_endpoint(tmp_path: Path, endpoint: Endpoint) -> None:
    root = _repository(tmp_path / "repo", {"baseUrl": endpoint.url, "model": "m", "apiKeyEnv": "CLOUD_TOKEN"})
    env = user_settings(tmp_path, {"trustedRepositories": [str(tmp_path / "repo")]})  # a folder above it
    assert _semantic(root, "index", "--semantic", env=env)["built"] is True
    assert {r["auth"] for r in endpoint.requests} == {f"Bearer {SECRET}"}


def test_a_malformed_user_settings_file_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo")
    settings = tmp_path / "settings.json"
    settings.write_text('{"trustedRepositories": "not a list"}')
    result = _run(root, "search", "tax", env={"DOCBRIDGE_USER_CONFIG": str(settings)})
    assert result.returncode == 2 and str(settings) in result.stderr and "trustedRepositories" in result.stderr
    settings.write_text("{")
    result = _run(root, "search", "tax", env={"DOCBRIDGE_USER_CONFIG": str(settings)})
    assert result.returncode == 2 and f"{settings}:1:2" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("mode, reason", [("trickle", "did not answer within 2 s"),
                                          ("endless", "answered more than")])
def test_an_endpoint_that_never_finishes_is_cut_off(tmp_path: Path, endpoint: Endpoint, mode: str,
                                                    reason: str) -> None:
    root = _repository(tmp_path / "repo")
    env = user_settings(tmp_path, {"index": {"embed": {"baseUrl": endpoint.url, "model": "m",
                                                       "timeoutSeconds": 2}}})
    assert _semantic(root, "index", "--semantic", env=env)["built"] is True
    endpoint.mode = mode
    searched = _semantic(root, "search", "refunds of invoices", "--hybrid", env=env)
    assert searched["used"] is False and reason in searched["reason"], searched
    billing = root / "docs/billing.md"
    billing.write_text(billing.read_text() + "\n## Refunds\n\nA refund reverses an invoice.\n")  # to embed
    rebuilt = _semantic(root, "index", "--semantic", env=env)
    assert rebuilt["built"] is False and reason in rebuilt["reason"], rebuilt


def test_a_repository_cannot_name_the_program_enrichment_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = f"python3 -c \"open('{marker}', 'w').write('x')\""
    root = _repository(tmp_path / "repo", intelligence={"registry": {"enabled": True, "command": command}})
    result = _run(root, "enrich")
    assert result.returncode == 2 and "names an agent command" in result.stderr and "--agent-command" in result.stderr
    assert not marker.exists()


# ------------------------------------------------------------------------------------------------ the servers


async def test_the_language_server_keeps_answering_while_an_endpoint_trickles(
        tmp_path: Path, endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    from lsprotocol import types as T

    from tests.lsp_client import session
    root = _repository(tmp_path / "repo")
    for key, value in user_settings(tmp_path, {"index": {"embed": {"baseUrl": endpoint.url, "model": "m",
                                                                   "timeoutSeconds": 3}}}).items():
        monkeypatch.setenv(key, value)
    billing = root / "docs/billing.md"
    async with session(root) as s:
        async def semantic() -> bool:  # the vectors are built in the background from the endpoint
            found = await s.command("docbridge.search", "refunds of invoices", 5)
            return any("chunk_id" in e for r in found["results"] for e in r["evidence"])
        await wait_until_async(semantic, 60, interval=0.1, what="a search answered with the semantic index")
        endpoint.mode = "trickle"
        asked = len(endpoint.requests)
        symbols = asyncio.ensure_future(s.client.workspace_symbol_async(T.WorkspaceSymbolParams(query="refunds")))
        await s.until(lambda: len(endpoint.requests) > asked)  # the query's vector is being waited for
        hover = await s.hover(billing, 19, 3)
        assert hover is not None and not symbols.done()  # answered while the search still waits
        assert await asyncio.wait_for(symbols, 30)  # then the search answers lexically


async def test_the_mcp_server_never_sends_to_a_repositorys_endpoint(tmp_path: Path, endpoint: Endpoint) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the `mcp` extra (make test installs it)")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    root = _repository(tmp_path, {"baseUrl": endpoint.url, "model": "m", "apiKeyEnv": "CLOUD_TOKEN"})
    params = StdioServerParameters(command=str(BIN / "docbridge"), args=["mcp", "--root", str(root)],
                                   env={**os.environ, "CLOUD_TOKEN": SECRET})
    log = tmp_path / "server.log"
    with log.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            for _ in range(3):
                result = await client.call_tool("knowledge.search", {"query": "refunds of invoices"})
                assert not result.is_error
            # the vectors are built in the background after the first search: it says it will not send, and why
            # (the positive event: after it, that update sends nothing, and searches embed nothing without it)
            await not_before_async(lambda: "only your own settings decide" in log.read_text(encoding="utf-8"),
                                   lambda: endpoint.requests, 60, interval=0.05,
                                   what="the server's warning that semantic search is off",
                                   unwanted_what="a request to the repository's endpoint")
            result = await client.call_tool("knowledge.search", {"query": "refunds of invoices"})
            assert not result.is_error
    assert endpoint.requests == []
