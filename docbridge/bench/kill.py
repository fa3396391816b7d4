"""`docbridge bench kill`: `kill -9` a cold `docbridge scan` at random moments and count what it leaves behind.

Each trial deletes `.docbridge/`, starts a scan of the synthetic repository, kills it after a random delay
(up to the length of an undisturbed cold scan), then counts the scan's worker processes still alive a few
seconds later (orphans), and checks the artifacts: every JSON file the killed scan left parses, and a
following scan succeeds and yields the snapshot content hash of an undisturbed scan.

Processes are read from /proc (Linux): a process is identified by its pid and start time, so a reused pid
is never taken for a survivor.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

Process = tuple[int, int]  # pid, start time (clock ticks since boot)


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) of a live process, None when it is gone (or a zombie)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    state = fields[0]
    if state in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[19]), state


def descendants(pid: int) -> set[Process]:
    """Every live process below `pid`, with its start time."""
    parents: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _stat(int(entry))
        if stat is not None:
            parents.setdefault(stat[0], []).append((int(entry), stat[1]))
    out: set[Process] = set()
    pending = [pid]
    while pending:
        for child in parents.get(pending.pop(), []):
            if child not in out:
                out.add(child)
                pending.append(child[0])
    return out


def alive(processes: set[Process]) -> set[Process]:
    """Those of `processes` still running (same pid, same start time)."""
    out = set()
    for pid, started in processes:
        stat = _stat(pid)
        if stat is not None and stat[1] == started:
            out.add((pid, started))
    return out


def scan_command(root: Path, jobs: int = 2) -> list[str]:
    return [sys.executable, "-m", "docbridge.cli.main", "scan", "--root", str(root), "--json", "--jobs", str(jobs)]


def wait_gone(processes: set[Process], timeout: float) -> set[Process]:
    """Poll until every process is gone or `timeout` passes; the ones still alive."""
    deadline = time.monotonic() + timeout
    left = alive(processes)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = alive(left)
    return left


def artifacts_parse(root: Path) -> bool:
    """Every JSON artifact under .docbridge/ is whole: a plain one parses, a sealed one (a header line, then
    the payload) matches its header's hash (atomic writes leave no half-written artifact)."""
    from docbridge.engine.base.cache import read_sealed
    base = root / ".docbridge"
    for path in base.rglob("*.json") if base.exists() else []:
        try:
            raw = path.read_bytes()
        except OSError:
            return False
        head = raw.partition(b"\n")[0]
        try:
            header = json.loads(head)
            if isinstance(header, dict) and "sha256" in header and "kind" in header and len(head) < len(raw):
                if read_sealed(path, header["kind"], parse=False) is None:  # its hash and seal (a payload may be lines)
                    return False
                continue
            json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return False
    return True


def scan_hash(root: Path, jobs: int = 2) -> str | None:
    """The snapshot content hash a scan reports, None when the scan fails."""
    done = subprocess.run(scan_command(root, jobs), capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        return None
    return json.loads(done.stdout).get("content_hash")


def kill_trial(root: Path, delay: float, expected: str, jobs: int = 2, grace: float = 5.0) -> dict[str, Any]:
    """One cold scan killed with SIGKILL after `delay` seconds: its workers, orphans and artifact validity."""
    shutil.rmtree(root / ".docbridge", ignore_errors=True)
    scan = subprocess.Popen(scan_command(root, jobs), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: set[Process] = set()
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline and scan.poll() is None:
        seen |= descendants(scan.pid)
        time.sleep(0.01)
    seen |= descendants(scan.pid)
    finished = scan.poll() is not None
    scan.send_signal(signal.SIGKILL)
    scan.wait()
    orphans = wait_gone(seen, grace)
    for pid, _ in orphans:  # leave the machine as it was
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    parsed = artifacts_parse(root)
    again = scan_hash(root, jobs)
    return {"delay_s": round(delay, 3), "finished_before_kill": finished, "workers_seen": len(seen),
            "orphans": len(orphans), "artifacts_parse": parsed, "rescan_ok": again is not None,
            "artifacts_valid": parsed and again == expected}


def bench_kill(size: int, workdir: Path | None, as_json: bool, trials: int = 20, seed: int = 1) -> int:
    from docbridge.bench.core import _bench_dir, ensure_synthetic
    if not sys.platform.startswith("linux"):
        print("bench kill reads /proc: Linux only", file=sys.stderr)
        return 2
    root = ensure_synthetic(_bench_dir(workdir), size)
    shutil.rmtree(root / ".docbridge", ignore_errors=True)
    started = time.perf_counter()
    expected = scan_hash(root)
    cold = time.perf_counter() - started
    if expected is None:
        print("the undisturbed cold scan failed", file=sys.stderr)
        return 2
    rng = random.Random(seed)
    results = [kill_trial(root, rng.uniform(0.0, cold), expected) for _ in range(trials)]
    summary = {"benchmark": "kill", "n": size, "files": 2 * size, "cold_scan_s": round(cold, 2), "trials": trials,
               "trials_with_workers": sum(1 for r in results if r["workers_seen"]),
               "orphans": sum(r["orphans"] for r in results),
               "trials_with_orphans": sum(1 for r in results if r["orphans"]),
               "artifacts_valid": sum(1 for r in results if r["artifacts_valid"]), "results": results}
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"kill -9 of a cold docbridge scan on {2 * size} files (undisturbed: {cold:.2f} s), {trials} trials")
        print(f"{'delay s':>8} {'workers':>8} {'orphans':>8} {'artifacts':>10}")
        for r in results:
            print(f"{r['delay_s']:>8.3f} {r['workers_seen']:>8} {r['orphans']:>8} "
                  f"{'valid' if r['artifacts_valid'] else 'INVALID':>10}")
        print(f"trials with workers: {summary['trials_with_workers']}/{trials}; orphans left: {summary['orphans']} "
              f"(in {summary['trials_with_orphans']} trials); artifacts valid after a rescan: "
              f"{summary['artifacts_valid']}/{trials}")
    return 0 if summary["orphans"] == 0 and summary["artifacts_valid"] == trials else 1


__all__ = ["alive", "bench_kill", "descendants", "kill_trial", "wait_gone"]
