"""Benchmarks that print figures (never timed tests): `docbridge bench scan|check|search|retrieval`.

Each size runs in its own process so that peak RSS is the figure of that run alone.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return round(max(own, children), 1)


def ensure_synthetic(directory: Path, files: int) -> Path:
    """The synthetic repository for `files`, generated once and reused by later runs."""
    from engine.synthetic import generate
    target = directory / f"synthetic-{files}"
    marker = target / ".generated"
    if not marker.exists():
        if target.exists():
            shutil.rmtree(target)
        generate(target, files)
        marker.write_text("ok\n")
    return target


def scan_one(root: Path, edits: int = 100) -> dict[str, Any]:
    """Cold scan, warm scan and single-file updates on one repository (run in a fresh process)."""
    from engine.artifacts import write_snapshot
    from engine.workspace import Workspace
    shutil.rmtree(root / ".docbridge", ignore_errors=True)
    # cold and warm are what `docbridge scan` does: scan, then write (or reuse) the snapshot artifact
    started = time.perf_counter()
    cold = Workspace(root)
    cold.scan(resolve=False)
    write_snapshot(cold)
    cold_seconds = time.perf_counter() - started
    del cold
    started = time.perf_counter()
    warm = Workspace(root)
    warm.scan(resolve=False)
    artifact = write_snapshot(warm)
    warm_seconds = time.perf_counter() - started
    assert not artifact.rebuilt and warm.last_scan.parsed == [], "a warm scan must parse nothing"
    started = time.perf_counter()
    warm.ensure_resolved()
    snapshot = warm.snapshot()
    resolve_seconds = time.perf_counter() - started
    rng = random.Random(11)
    documents = sorted(warm.universe.documents)
    modules = sorted(warm.universe.modules)
    timings: list[float] = []
    for index in range(edits):
        if index % 2 == 0:
            path = rng.choice(documents)
            text = (root / path).read_text(encoding="utf-8")
            target = rng.choice(modules)
            text += f"\nEdit {index}: see `{target}` and [the index](../README.md).\n"
        else:
            path = rng.choice(modules)
            text = (root / path).read_text(encoding="utf-8") + f"\nexport const benchEdit{index} = {index};\n"
        begin = time.perf_counter()
        warm.update(path, text)
        timings.append((time.perf_counter() - begin) * 1000)
    return {
        "files": len(warm.facts),
        "entities": len(snapshot.entities),
        "relations": len(snapshot.relations),
        "cold_scan_s": round(cold_seconds, 2),
        "warm_scan_s": round(warm_seconds, 2),
        "warm_full_model_s": round(warm_seconds + resolve_seconds, 2),
        "update_p50_ms": round(statistics.median(timings), 2),
        "update_p95_ms": round(_percentile(timings, 0.95), 2),
        "peak_rss_mb": peak_rss_mb(),
        "reused_on_warm": warm.last_scan.reused,
    }


SCAN_GOALS = {"cold_scan_s": 20.0, "warm_scan_s": 2.0, "update_p95_ms": 50.0, "peak_rss_mb": 500.0}


def bench_scan(sizes: list[int], workdir: Path | None, as_json: bool) -> int:
    base = workdir or Path(tempfile.gettempdir()) / "docbridge-bench"
    base.mkdir(parents=True, exist_ok=True)
    results = []
    for size in sizes:
        root = ensure_synthetic(base, size)
        completed = subprocess.run([sys.executable, "-m", "engine.bench", "scan-one", str(root)],
                                   capture_output=True, text=True, check=False)
        if completed.returncode != 0:
            print(completed.stderr, file=sys.stderr)
            return 2
        figures = json.loads(completed.stdout)
        figures["n"] = size
        results.append(figures)
    if as_json:
        print(json.dumps({"benchmark": "scan", "goals_at_5000": SCAN_GOALS, "results": results}, indent=2))
        return 0
    print(f"{'N (md+ts)':>10} {'files':>6} {'cold s':>7} {'warm s':>7} {'upd p50 ms':>11} {'upd p95 ms':>11} "
          f"{'RSS MB':>7}")
    for r in results:
        print(f"{r['n']:>10} {r['files']:>6} {r['cold_scan_s']:>7.2f} {r['warm_scan_s']:>7.2f} "
              f"{r['update_p50_ms']:>11.2f} {r['update_p95_ms']:>11.2f} {r['peak_rss_mb']:>7.1f}")
    print("goals at N=5000: cold <= 20 s, warm <= 2 s, update p95 <= 50 ms, peak RSS <= 500 MB")
    return 0


def _timed_cli(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, check=False)
    return time.perf_counter() - started


def bench_check(size: int, workdir: Path | None, as_json: bool) -> int:
    """`docbridge check` wall time on the synthetic repository, as a user runs it (a new process each time)."""
    base = workdir or Path(tempfile.gettempdir()) / "docbridge-bench"
    base.mkdir(parents=True, exist_ok=True)
    root = ensure_synthetic(base, size)
    shutil.rmtree(root / ".docbridge", ignore_errors=True)
    args = ["check", "--root", str(root), "--format", "json", "--fail-on", "never", "--output", os.devnull]
    cold = _timed_cli(args)
    warm = [_timed_cli(args) for _ in range(3)]
    changed = []
    victim = sorted(root.glob("docs/*/*.md"))[0]
    original = victim.read_text(encoding="utf-8")
    try:
        for index in range(3):
            victim.write_text(original + f"\nEdit {index}.\n", encoding="utf-8")
            changed.append(_timed_cli(args))
    finally:
        victim.write_text(original, encoding="utf-8")
    figures = {"n": size, "files": 2 * size, "cold_s": round(cold, 2), "warm_s": round(statistics.median(warm), 2),
               "one_file_changed_s": round(statistics.median(changed), 2)}
    if as_json:
        print(json.dumps({"benchmark": "check", "goal_warm_s": 3.0, "results": [figures]}, indent=2))
    else:
        print(f"docbridge check on {2 * size} files: cold {figures['cold_s']:.2f} s, warm {figures['warm_s']:.2f} s "
              f"(goal <= 3 s), after a one-file change {figures['one_file_changed_s']:.2f} s")
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "scan-one":
        print(json.dumps(scan_one(Path(argv[1]))))
        return 0
    raise SystemExit(f"unknown bench entry {argv!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
