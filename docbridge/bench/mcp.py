"""`docbridge bench mcp`: knowledge.search latency through a real MCP client over stdio, and the server's memory.

The server runs as `docbridge mcp` in its own process on the synthetic repository (docbridge/bench/synthetic.py, N
Markdown + N TypeScript files); the client is the SDK's own. Figures: time to the first answer (scan + index),
knowledge.search p50/p95 on warm state, knowledge.lookup p50, the server's resident and peak memory, and one
`docbridge search --agent` process for comparison (what an agent paid per query before).
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from docbridge.bench.core import _bench_dir, _percentile, ensure_synthetic


def _queries(root: Path, count: int) -> list[str]:
    from docbridge.bench.synthetic import WORDS
    rng = random.Random(5)
    modules = sorted(p.relative_to(root).as_posix() for p in (root / "src").rglob("*.ts"))
    queries = []
    for _ in range(count // 4):
        module = rng.choice(modules)
        index = int(module.rsplit("/", 1)[-1][-8:-3])
        queries.append(f"{WORDS[index % len(WORDS)]}Handler{index}x0")  # an exported symbol
        queries.append(module)  # a path
        queries.append(f"how does {rng.choice(WORDS)} {rng.choice(WORDS)} work")  # a question
        queries.append(" ".join(rng.sample(WORDS, 2)))  # two words
    return queries


async def _measure(root: Path, queries: list[str]) -> dict[str, Any]:
    command = shutil.which("docbridge") or str(Path(sys.executable).with_name("docbridge"))
    params = StdioServerParameters(command=command, args=["mcp", "--root", str(root)])
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=600) as client:
        connected = time.perf_counter() - started
        first = await client.call_tool("knowledge.search", {"query": queries[0], "limit": 10})
        assert not first.is_error, first.content
        first_answer = time.perf_counter() - started
        for query in queries[:20]:  # warm
            await client.call_tool("knowledge.search", {"query": query, "limit": 10})
        search = []
        for query in queries:
            begin = time.perf_counter()
            result = await client.call_tool("knowledge.search", {"query": query, "limit": 10})
            search.append((time.perf_counter() - begin) * 1000)
            assert not result.is_error, result.content
        lookup = []
        await client.call_tool("knowledge.lookup", {"path": "src"})
        for query in queries[1::4][:50]:
            begin = time.perf_counter()
            await client.call_tool("knowledge.lookup", {"path": query})
            lookup.append((time.perf_counter() - begin) * 1000)
        status = (await client.call_tool("docbridge.status", {})).structured_content or {}
    return {"connect_s": round(connected, 2), "first_answer_s": round(first_answer, 2), "queries": len(search),
            "search_p50_ms": round(statistics.median(search), 2), "search_p95_ms": round(_percentile(search, 0.95), 2),
            "lookup_p50_ms": round(statistics.median(lookup), 2), "files": status.get("files"),
            "server_rss_mib": status.get("memory", {}).get("rssMiB"),
            "server_peak_rss_mib": status.get("memory", {}).get("peakRssMiB")}


def bench_mcp(size: int, workdir: Path | None, as_json: bool) -> int:
    root = ensure_synthetic(_bench_dir(workdir), size)
    queries = _queries(root, 200)
    figures = {"corpus": f"synthetic-{size}", **anyio.run(_measure, root, queries)}
    command = shutil.which("docbridge") or str(Path(sys.executable).with_name("docbridge"))
    begin = time.perf_counter()
    subprocess.run([command, "search", queries[0], "--root", str(root), "--agent"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures["cli_search_agent_s"] = round(time.perf_counter() - begin, 2)
    if as_json:
        print(json.dumps({"benchmark": "mcp", "goals": {"search_p50_ms": 10}, "results": [figures]}, indent=2))
        return 0
    print(f"{figures['corpus']} ({figures['files']} files): first answer after {figures['first_answer_s']:.2f} s "
          f"(connect {figures['connect_s']:.2f} s, scan and index included)")
    print(f"knowledge.search through the MCP client: {figures['queries']} queries, p50 {figures['search_p50_ms']:.2f} "
          f"ms, p95 {figures['search_p95_ms']:.2f} ms; knowledge.lookup p50 {figures['lookup_p50_ms']:.2f} ms")
    print(f"server memory: {figures['server_rss_mib']} MiB resident, {figures['server_peak_rss_mib']} MiB peak")
    print(f"one `docbridge search --agent` process: {figures['cli_search_agent_s']:.2f} s")
    print("goal: knowledge.search p50 <= 10 ms")
    return 0


__all__ = ["bench_mcp"]
