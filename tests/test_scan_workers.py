"""A scan's worker processes never outlive it: `kill -9` of `docbridge scan` during a cold scan leaves no
orphan, and the next scan succeeds with the artifacts an undisturbed scan writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BIN, docbridge_json
from docbridge.engine.state.scan import POOL_THRESHOLD
from support.jsonrpc import encode
from support.wait import wait_until

from docbridge.bench.kill import artifacts_parse, descendants, wait_gone
from docbridge.bench.synthetic import generate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _threads(pid: int) -> int:
    """How many threads process `pid` runs (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("Threads:"))


def _pool_workers(pid: int) -> set[tuple[int, int]]:
    """The process pool's workers below `pid`: its descendants but the resource tracker a spawned pool starts."""
    def command(worker: int) -> bytes:
        try:
            return Path(f"/proc/{worker}/cmdline").read_bytes()
        except OSError:
            return b""
    return {w for w in descendants(pid) if b"resource_tracker" not in command(w[0])}


def started_workers(process: subprocess.Popen[bytes], count: int, *, armed: bool, what: str) -> set[tuple[int, int]]:
    """Once `process` runs `count` pool workers (each with its parent watchdog thread started, when `armed`: the
    initializer ran and the worker takes tasks): those workers, and every other process below it."""
    def started() -> set[tuple[int, int]] | None:
        assert process.poll() is None, f"the process ended before {what}"
        workers = _pool_workers(process.pid)
        if len(workers) < count or (armed and any(_threads(pid) < 2 for pid, _ in workers)):
            return None
        return workers | descendants(process.pid)
    return wait_until(started, 60, what=what, interval=0.005)


def test_killing_a_cold_scan_takes_its_workers_with_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    generate(root, POOL_THRESHOLD // 2 + 100)  # Markdown + TypeScript files: enough for the process pool
    scan = subprocess.Popen([str(BIN / "docbridge"), "scan", "--root", str(root), "--json", "--jobs", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # killed while the workers analyze: both started and took the initializer's watchdog (tasks are queued by then)
    workers = started_workers(scan, 2, armed=True, what="the scan's 2 pool workers, watchdogs armed")
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


def test_killing_the_language_server_during_its_first_scan_takes_the_workers_with_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    generate(root, POOL_THRESHOLD // 2 + 300)
    server = subprocess.Popen([str(BIN / "docbridge-lsp")], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None
    server.stdin.write(encode({"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": root.as_uri(), "capabilities": {}}}) +
        encode({"method": "initialized", "params": {}}))
    server.stdin.flush()
    # killed as soon as the pool (one worker per core, spawned: the server runs threads) is up, while its workers
    # are still importing the analyzers (most of a second; they arm their watchdog after that)
    workers = started_workers(server, min(os.cpu_count() or 1, 8), armed=False,
                              what="the first scan's pool workers")
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
    time.sleep(120)  # kept: a worker that lives on until its watchdog ends it

if __name__ == "__main__":
    child = multiprocessing.get_context("fork").Process(target=worker, args=(os.getpid(),))
    child.start()
    print(child.pid, flush=True)
    time.sleep(120)  # kept: the parent lives until the test kills it
"""


def test_the_watchdog_ends_a_worker_whose_parent_died_where_the_kernel_would_not(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(WITHOUT_PRCTL)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    wait_until(lambda: _threads(child) >= 2, 30, what=f"worker {child} to start its parent watchdog thread")
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
