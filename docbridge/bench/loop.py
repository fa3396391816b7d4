"""`docbridge bench loop`: how long one pathological document holds the language server's event loop.

For each case of `bench robust` (a document of about the given size, within the caps), the server is started
on a small repository and pinged every 20 ms (a `$/` request it answers on the loop, MethodNotFound) while the
document is opened, edited in its middle, and closed. The slowest answer during each step is the longest the
loop could not answer an editor. Figures, not a test: the goal is at most 100 ms per case.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from docbridge.bench.core import _start_lsp, _StdioServer
from docbridge.bench.robust import CASES, write_repo

GOAL_MS = 100.0
PING_EVERY = 0.02
SETTLE = 2.0  # seconds each step is watched after it is sent
PING = "$/docbridge/ping"


class _Pinger:
    """Sends a ping every 20 ms from a thread and keeps each ping's answer latency."""

    def __init__(self, server: _StdioServer) -> None:
        self.server = server
        self.sent: list[tuple[int, float]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.sent.append((self.server.start(PING, {}), time.perf_counter()))
            time.sleep(PING_EVERY)

    def worst_since(self, index: int, timeout: float = 30) -> float:
        """The slowest answer (ms) among pings sent since `index` (the ones still unanswered count as waiting
        until now)."""
        pings = self.sent[index:]
        deadline = time.perf_counter() + timeout
        while any(not self.server.answered(n) for n, _ in pings) and time.perf_counter() < deadline:
            time.sleep(0.01)
        worst = 0.0
        for number, sent in pings:
            arrived = self.server.answered_at(number)
            worst = max(worst, ((arrived if arrived is not None else time.perf_counter()) - sent) * 1000)
        return worst

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)


def _step(server: _StdioServer, pinger: _Pinger, method: str, params: dict[str, Any]) -> float:
    start = len(pinger.sent)
    server.notify(method, params)
    time.sleep(SETTLE)
    return round(pinger.worst_since(start), 1)


def _diagnostics_after(server: _StdioServer, uri: str, since: float) -> bool:
    """Whether the document's diagnostics arrived after `since` (the open was analyzed, or refused with a
    notice: either way the server did the work being measured)."""
    try:
        server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics" and
                                 m["params"].get("uri") == uri, since, timeout=60)
    except TimeoutError:
        return False
    return True


def loop_figures(case: str, size: int, base: Path) -> dict[str, Any]:
    text = CASES[case](size)
    root = write_repo(base / case, "# Big\n\nSmall on disk; the editor's buffer is the large one.\n")
    server, _ = _start_lsp(root, skip_large_notifications=True)
    pinger = None
    try:
        server.wait_notification(lambda m: m["method"] == "docbridge/status" and
                                 m["params"].get("state") == "ready", 0, timeout=120)
        pinger = _Pinger(server)
        time.sleep(0.5)
        idle = round(pinger.worst_since(0), 1)
        uri = (root / "docs" / "big.md").as_uri()
        sent = time.perf_counter()
        opened = _step(server, pinger, "textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": text}})
        diagnosed = _diagnostics_after(server, uri, sent)
        middle = text.count("\n") // 2
        edited = _step(server, pinger, "textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {
                "start": {"line": middle, "character": 0}, "end": {"line": middle, "character": 0}}, "text": "x"}]})
        closed = _step(server, pinger, "textDocument/didClose", {"textDocument": {"uri": uri}})
        return {"case": case, "bytes": len(text.encode("utf-8")), "diagnosed": diagnosed, "idle_ms": idle,
                "open_ms": opened,
                "edit_ms": edited, "close_ms": closed, "worst_ms": max(opened, edited, closed)}
    finally:
        if pinger is not None:
            pinger.close()
        server.close()


def bench_loop(size: int, workdir: Path | None, as_json: bool, cases: list[str] | None = None) -> int:
    base = Path(tempfile.mkdtemp(prefix="docbridge-loop-", dir=workdir))
    rows = []
    try:
        for case in cases or list(CASES):
            row = loop_figures(case, size, base)
            rows.append(row)
            if not as_json:
                print(f"{case:<14} {row['bytes']:>10,} bytes: loop held up to {row['open_ms']:7.1f} ms on open, "
                      f"{row['edit_ms']:7.1f} ms on edit, {row['close_ms']:7.1f} ms on close "
                      f"(idle {row['idle_ms']:.1f} ms)", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    worst = max((row["worst_ms"] for row in rows), default=0.0)
    if as_json:
        print(json.dumps({"benchmark": "loop", "size": size, "goal_ms": GOAL_MS, "worst_ms": worst, "rows": rows},
                         indent=2))
    else:
        print(f"worst: {worst:.1f} ms (goal: at most {GOAL_MS:.0f} ms per document within the caps)")
    return 0
