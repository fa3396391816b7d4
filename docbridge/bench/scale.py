"""`docbridge bench scale`: a monorepo the size of a large real one, timed the way its users meet it.

A generated repository (`bench.synthetic`, default 50,000 Markdown documents and 50,000 TypeScript modules over
20 npm workspaces) is scanned by the CLI (cold, warm, the full model; `docbridge check`'s time and peak memory)
and served by the language server three times: a first start with no cache (initialize, a document opened during
the scan and its first diagnostics, ready, edits and their diagnostics, a search right after an edit, peak
memory), a restart on the unchanged tree, and a restart after a branch switch that changed 1 % of the files.
Figures are printed (JSON with `--json`); nothing here passes or fails.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from docbridge.bench.core import _bench_dir, _change, _open, _percentile, _scan_done, _start_lsp, _StdioServer

GOALS = {"cold_scan_s": 60, "server_peak_rss_mb": 1200, "change_to_diagnostics_p95_ms": 20,
         "cold_open_during_scan_to_diagnostics_ms": 100}
PACKAGES = 20


def ensure_monorepo(directory: Path, size: int) -> Path:
    """The monorepo for `size`, generated once and reused by later runs."""
    from docbridge.bench.synthetic import generate
    target = directory / f"monorepo-{size}"
    marker = target / ".generated"
    if not marker.exists():
        if target.exists():
            shutil.rmtree(target)
        generate(target, size, packages=PACKAGES)
        marker.write_text("ok\n")
    return target


SEARCHES_AFTER_EDITS = 20  # edit-then-search pairs timed once the index is built


# a shutdown is answered once the resolved model of the first scan is written, waited for up to 30 s
# (`lsp.lifecycle.KEEP_MODEL_AT_SHUTDOWN_S`); the benchmark waits that long, and reports how long it took
SHUTDOWN_WAIT_S = 40.0
OPEN_DURING_SCAN_AFTER_S = 3.0  # a second document is opened this long after start, while the cold scan runs


def _start(root: Path, document: Path, text: str, phase: str,
           later: Path | None = None) -> tuple[_StdioServer, dict[str, Any]]:
    """Start a server, open `document` at once (and `later`, a few seconds on, while the first scan runs); the
    start-up figures of `phase`."""
    server, started = _start_lsp(root)
    opened_ms = _open(server, document.as_uri(), text)
    figures: dict[str, Any] = {f"{phase}_initialize_ms": round(server.initialize_ms, 1),
               f"{phase}_open_to_diagnostics_ms": round(opened_ms, 1),
               f"{phase}_start_to_first_diagnostics_ms": round((time.perf_counter() - started) * 1000, 1)}
    if later is not None:
        time.sleep(max(0.0, started + OPEN_DURING_SCAN_AFTER_S - time.perf_counter()))
        scanning = not any(m["method"] == "$/progress" and m["params"]["value"].get("kind") == "end"
                           for _, m in server.notifications)
        during_ms = _open(server, later.as_uri(), later.read_text(encoding="utf-8"))
        # null when the scan had ended: the figure is of a document opened while it runs
        figures[f"{phase}_open_during_scan_to_diagnostics_ms"] = round(during_ms, 1) if scanning else None
    figures[f"{phase}_start_to_ready_s"] = round(_scan_done(server, started) - started, 2)
    return server, figures


def _edits(server: _StdioServer, document: Path, text: str, edits: int) -> dict[str, Any]:
    """didChange -> that document's diagnostics, each edit adding a broken link; then a search right after one
    more edit (nothing was searched before: the index is built for it)."""
    uri = document.as_uri()
    original = text
    timings = []
    for index in range(edits):
        text += f"\nA broken link [x{index}](./missing-{index}.md).\n"
        timings.append(_change(server, uri, index + 2, text))
    text += "\nThe invoice ledger is reconciled nightly.\n"
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": edits + 2},
                                             "contentChanges": [{"text": text}]})
    _, search_ms = server.request("workspace/executeCommand", {"command": "docbridge.search",
                                                               "arguments": ["invoice ledger", 5]})
    searches = []  # each an edit of the page's prose, then a search at once (the index patched, not rebuilt)
    for index in range(SEARCHES_AFTER_EDITS):
        text += f"\nRefunds of batch {index} are reconciled too.\n"
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": edits + 3 + index},
                                                 "contentChanges": [{"text": text}]})
        _, again_ms = server.request("workspace/executeCommand", {"command": "docbridge.search",
                                                                  "arguments": [f"refund ledger batch {index}", 5]})
        searches.append(again_ms)
    # undone, as an editor's undo would: the restart reopens the disk's
    _change(server, uri, edits + 3 + SEARCHES_AFTER_EDITS, original)
    return {"change_to_diagnostics_p50_ms": round(statistics.median(timings), 2),
            "change_to_diagnostics_p95_ms": round(_percentile(timings, 0.95), 2),
            "first_search_after_an_edit_ms": round(search_ms, 1),
            "search_after_an_edit_p50_ms": round(statistics.median(searches), 1),
            "search_after_an_edit_p95_ms": round(_percentile(searches, 0.95), 1)}


def _check(root: Path) -> dict[str, Any]:
    """`docbridge check` as CI runs it (warm cache): wall time and the process's peak memory."""
    probe = ("import resource, subprocess, sys, time; s = time.perf_counter(); "
             "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
             "print(time.perf_counter() - s, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    command = [sys.executable, "-c", probe, sys.executable, "-m", "docbridge.cli.main", "check", "--root", str(root),
               "--format", "json", "--fail-on", "never", "--output", os.devnull]
    seconds, peak_kb = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()
    return {"check_s": round(float(seconds), 2), "check_peak_rss_mb": round(int(peak_kb) / 1024, 1)}


def _branch_switch(root: Path, share: float = 0.01) -> dict[Path, str]:
    """Change `share` of the documents and modules as a checkout of another branch would; their old texts."""
    changed = {}
    files = sorted([*(root / "docs").rglob("*.md"), *(root / "packages").rglob("*.ts")])
    for path in files[::max(1, round(1 / share))]:
        old = path.read_text(encoding="utf-8")
        changed[path] = old
        extra = ("\nChanged on another branch: see [the overview](../README.md).\n" if path.suffix == ".md"
                 else "\nexport const changedOnAnotherBranch = 1;\n")
        path.write_text(old + extra, encoding="utf-8")
    return changed


def scale_figures(size: int, workdir: Path | None, edits: int = 50) -> dict[str, Any]:
    root = ensure_monorepo(_bench_dir(workdir), size)
    documents = sorted((root / "docs").rglob("*.md"))
    document = documents[len(documents) // 2]
    text = document.read_text(encoding="utf-8")
    figures: dict[str, Any] = {"n": size, "packages": PACKAGES}
    scanned = subprocess.run([sys.executable, "-m", "docbridge.bench.core", "scan-one", str(root)], capture_output=True,
                             text=True, check=True)
    scan = json.loads(scanned.stdout)
    figures.update({"files": scan["files"], "cold_scan_s": scan["cold_scan_s"], "warm_scan_s": scan["warm_scan_s"],
                    "warm_full_model_s": scan["warm_full_model_s"], "keep_model_s": scan["keep_model_s"],
                    "scan_peak_rss_mb": scan["peak_rss_mb"]})
    figures.update(_check(root))
    shutil.rmtree(root / ".docbridge", ignore_errors=True)  # the server's first start finds no cache
    server, started = _start(root, document, text, "cold", later=documents[len(documents) // 3])
    try:
        figures.update(_edits(server, document, text, edits))
        figures["server_peak_rss_mb_before_pause"] = server.peak_rss_mb()
        # then what a long pause in editing brings: the search index, used and patched, rebuilt whole in the
        # background once the pause is REBUILD_PAUSE times as long as a build of it took (the first search's time)
        from docbridge.lsp.commands import REBUILD_PAUSE
        paused = time.perf_counter()
        time.sleep(REBUILD_PAUSE * figures["first_search_after_an_edit_ms"] / 1000)
        server.settled()
        figures["server_settled_after_pause_s"] = round(time.perf_counter() - paused, 1)
        figures["server_peak_rss_mb"] = server.peak_rss_mb()
    finally:
        figures["cold_shutdown_s"] = server.close(SHUTDOWN_WAIT_S)
    server, restarted = _start(root, document, text, "restart")
    figures.update(started)
    figures.update(restarted)
    figures["restart_peak_rss_mb"] = server.peak_rss_mb()
    figures["restart_shutdown_s"] = server.close(SHUTDOWN_WAIT_S)
    changed = _branch_switch(root)
    try:
        server, switched = _start(root, document, text, "branch_switch")
        figures["branch_switch_shutdown_s"] = server.close(SHUTDOWN_WAIT_S)
    finally:
        for path, old in changed.items():
            path.write_text(old, encoding="utf-8")
    figures["branch_switch_files"] = len(changed)
    figures.update(switched)
    return figures


def bench_scale(size: int, workdir: Path | None, as_json: bool) -> int:
    figures = scale_figures(size, workdir)
    if as_json:
        print(json.dumps({"benchmark": "scale", "goals": GOALS, "results": [figures]}, indent=2))
        return 0
    print(f"docbridge on a generated monorepo of {figures['files']} files ({size} Markdown + {size} TypeScript, "
          f"{PACKAGES} workspaces)")
    for key, value in figures.items():
        if key not in ("n", "files", "packages"):
            print(f"  {key:<46} {value}")
    print("goals: cold scan <= 60 s, server peak RSS <= 1200 MB, didChange -> diagnostics p95 <= 20 ms, "
          "didOpen during the cold scan -> diagnostics <= 100 ms")
    return 0


__all__ = ["bench_scale", "ensure_monorepo", "scale_figures"]
