"""A scan's worker processes never outlive it: `kill -9` of `docbridge scan` during a cold scan leaves no
orphan, and the next scan succeeds with the artifacts an undisturbed scan writes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BIN, docbridge_json
from docbridge.engine.state.scan import POOL_THRESHOLD

from docbridge.bench.kill import artifacts_parse, descendants, wait_gone
from docbridge.bench.synthetic import generate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def first_workers(process: subprocess.Popen[bytes], failure: str) -> set[tuple[int, int]]:
    """The worker processes `process` has started, as soon as there are any (within a minute)."""
    workers: set[tuple[int, int]] = set()
    deadline = time.monotonic() + 60
    while not workers and process.poll() is None and time.monotonic() < deadline:
        workers = descendants(process.pid)
        time.sleep(0.005)
    assert workers, failure
    return workers


def test_killing_a_cold_scan_takes_its_workers_with_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    generate(root, POOL_THRESHOLD // 2 + 100)  # Markdown + TypeScript files: enough for the process pool
    scan = subprocess.Popen([str(BIN / "docbridge"), "scan", "--root", str(root), "--json", "--jobs", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = first_workers(scan, "the scan never started worker processes")
    time.sleep(0.1)  # the workers are analyzing
    workers |= descendants(scan.pid)
    scan.send_signal(signal.SIGKILL)
    scan.wait()
    orphans = wait_gone(workers, 5.0)
    for pid, _ in orphans:  # do not leave them behind when the assertion fails
        subprocess.run(["kill", "-9", str(pid)], check=False)
    assert not orphans, f"{len(orphans)} of {len(workers)} worker(s) outlived the killed scan"
    assert artifacts_parse(root)
    after = docbridge_json("scan", "--root", str(root), "--json", "--jobs", "2")  # uses what the kill left
    snapshot = json.loads((root / ".docbridge/snapshot.json").read_text(encoding="utf-8"))
    fresh = docbridge_json("scan", "--root", str(root), "--json", "--no-cache")
    assert after["content_hash"] == snapshot["content_hash"] == fresh["content_hash"]


def _frame(message: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_killing_the_language_server_during_its_first_scan_takes_the_workers_with_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    generate(root, POOL_THRESHOLD // 2 + 300)
    server = subprocess.Popen([str(BIN / "docbridge-lsp")], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None
    server.stdin.write(_frame({"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": root.as_uri(), "capabilities": {}}}) +
        _frame({"method": "initialized", "params": {}}))
    server.stdin.flush()
    workers = first_workers(server, "the first scan never started worker processes")
    time.sleep(0.3)  # spawned workers are importing the analyzers
    workers |= descendants(server.pid)
    server.send_signal(signal.SIGKILL)
    server.wait()
    server.stdin.close()
    orphans = wait_gone(workers, 5.0)
    for pid, _ in orphans:
        subprocess.run(["kill", "-9", str(pid)], check=False)
    assert not orphans, f"{len(orphans)} of {len(workers)} worker(s) outlived the killed language server"


WITHOUT_PRCTL = """
import multiprocessing, os, sys, time
from docbridge.engine.state import scan

def worker(parent):
    sys.platform = "darwin"  # no PR_SET_PDEATHSIG: only the watchdog thread is left
    scan.follow_parent(parent)
    time.sleep(120)

if __name__ == "__main__":
    child = multiprocessing.get_context("fork").Process(target=worker, args=(os.getpid(),))
    child.start()
    print(child.pid, flush=True)
    time.sleep(120)
"""


def test_the_watchdog_ends_a_worker_whose_parent_died_where_the_kernel_would_not(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(WITHOUT_PRCTL)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(0.5)  # the worker armed its watchdog
    workers = {w for w in descendants(parent.pid) if w[0] == child}
    assert workers
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    orphans = wait_gone(workers, 5.0)
    for pid, _ in orphans:
        subprocess.run(["kill", "-9", str(pid)], check=False)
    assert not orphans


def test_bench_kill_reports_trials_orphans_and_artifacts(tmp_path: Path) -> None:
    figures = docbridge_json("bench", "kill", "--files", str(POOL_THRESHOLD // 2 + 100), "--trials", "2", "--json",
                             "--workdir", str(tmp_path))
    assert figures["trials"] == 2 and len(figures["results"]) == 2
    assert figures["orphans"] == 0 and figures["artifacts_valid"] == 2
