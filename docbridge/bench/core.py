"""Benchmarks that print figures (never timed tests): `docbridge bench scan|check|search|retrieval`.

Each size runs in its own process so that peak RSS is the figure of that run alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from docbridge.engine.agent.suites import _percentile, load_suite

BENCH_WARM_AFTER_MS = 500  # search.warmAfterMs in the language server benchmark


def _bench_dir(workdir: Path | None) -> Path:
    """Where synthetic repositories are generated and kept between runs."""
    base = workdir or Path(tempfile.gettempdir()) / "docbridge-bench"
    base.mkdir(parents=True, exist_ok=True)
    return base

def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return round(max(own, children), 1)


def ensure_synthetic(directory: Path, files: int) -> Path:
    """The synthetic repository for `files`, generated once and reused by later runs."""
    from docbridge.bench.synthetic import generate
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
    from docbridge.engine.artifacts.snapshot_file import write_snapshot
    from docbridge.engine.workspace import Workspace
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
    assert not artifact.rebuilt and not warm.last_scan.parsed, "a warm scan must parse nothing"
    started = time.perf_counter()
    warm.ensure_resolved()
    snapshot = warm.snapshot()
    resolve_seconds = time.perf_counter() - started
    from docbridge.engine.state.resume import write_model
    server_like = Workspace(root)
    server_like.scan()  # resolved as a language server's scan is
    started = time.perf_counter()
    kept = write_model(server_like.state)  # what a language server writes after its first scan, for its restarts
    keep_seconds = time.perf_counter() - started
    del server_like
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
        "keep_model_s": round(keep_seconds, 2) if kept else None,
        "update_p50_ms": round(statistics.median(timings), 2),
        "update_p95_ms": round(_percentile(timings, 0.95), 2),
        "peak_rss_mb": peak_rss_mb(),
        "reused_on_warm": warm.last_scan.reused,
    }


SCAN_GOALS = {"cold_scan_s": 20.0, "warm_scan_s": 2.0, "update_p95_ms": 50.0, "peak_rss_mb": 500.0}


def bench_scan(sizes: list[int], workdir: Path | None, as_json: bool) -> int:
    base = _bench_dir(workdir)
    results = []
    for size in sizes:
        root = ensure_synthetic(base, size)
        completed = subprocess.run([sys.executable, "-m", "docbridge.bench.core", "scan-one", str(root)],
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
    subprocess.run([sys.executable, "-m", "docbridge.cli.main", *args], capture_output=True, check=False)
    return time.perf_counter() - started


def bench_check(size: int, workdir: Path | None, as_json: bool) -> int:
    """`docbridge check` wall time on the synthetic repository, as a user runs it (a new process each time)."""
    base = _bench_dir(workdir)
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
        from docbridge.engine.base.heap import bound_malloc_arenas
        bound_malloc_arenas()  # as the command line does before any thread starts: the scan timed as users run it
        print(json.dumps(scan_one(Path(argv[1]))))
        return 0
    raise SystemExit(f"unknown bench entry {argv!r}")


def _query_latencies(retriever: Any, queries: list[str], repeat: int) -> list[float]:
    for query in queries:  # warm the caches once
        retriever.search(query, 10)
    timings = []
    for _ in range(repeat):
        for query in queries:
            started = time.perf_counter()
            retriever.search(query, 10)
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def _latency_row(corpus: str, retriever: Any, timings: list[float]) -> dict[str, Any]:
    return {"corpus": corpus, "entries": len(retriever.entries), "queries": len(timings),
            "p50_ms": round(statistics.median(timings), 2), "p95_ms": round(_percentile(timings, 0.95), 2)}


def bench_search(size: int, workdir: Path | None, as_json: bool, suite_path: Path | None,
                 suite_root: Path | None = None) -> int:
    """Warm search latency over a suite's queries (on `suite_root`, default the suite's directory), or over
    the queries of every suite (`*-suite.json`) under a folder, three rounds, on `suite_root`; and over the
    synthetic repository (skipped when `size` is 0); index build time."""
    from docbridge.engine.retrieval.rank import Retriever
    from docbridge.engine.workspace import Workspace
    rows = []
    if suite_path is not None and suite_path.is_dir():
        files = sorted(suite_path.rglob("*-suite.json"))
        queries = [c["input"] for file in files for c in load_suite(file)["cases"]]
        workspace = Workspace(suite_root or suite_path)
        workspace.scan()
        retriever = workspace.retriever()
        timings = _query_latencies(retriever, queries, 3)
        rows.append({**_latency_row(f"{workspace.root.name}: the queries of {len(files)} suites", retriever, timings),
                     "max_ms": round(max(timings), 1)})
    elif suite_path is not None and suite_path.exists():
        suite = load_suite(suite_path)
        workspace = Workspace(suite_root or suite_path.resolve().parent)
        workspace.scan()
        retriever = Retriever(workspace.projection())
        timings = _query_latencies(retriever, [c["input"] for c in suite["cases"]], 10)
        rows.append(_latency_row(suite.get("name", str(suite_path)), retriever, timings))
    if size <= 0:
        return _print_search(rows, as_json)
    base = _bench_dir(workdir)
    root = ensure_synthetic(base, size)
    workspace = Workspace(root)
    workspace.scan()
    started = time.perf_counter()
    projection = workspace.projection()
    projected = time.perf_counter() - started
    started = time.perf_counter()
    retriever = Retriever(projection)
    built = time.perf_counter() - started
    rng = random.Random(5)
    entries = retriever.entries
    modules = [e for e in entries if e.kind == "module"]
    documents = [e for e in entries if e.kind == "document"]
    from docbridge.bench.synthetic import WORDS
    queries = []
    for _ in range(60):
        queries.append(rng.choice(modules).symbols[0])
        queries.append(rng.choice(modules).path)
        queries.append(rng.choice(documents).path.rsplit("/", 1)[0])
        queries.append(f"how does {rng.choice(WORDS)} {rng.choice(WORDS)} work")
        queries.append(" ".join(rng.sample(WORDS, 2)))
    timings = _query_latencies(retriever, queries, 1)
    rows.append({"corpus": f"synthetic-{size}", "entries": len(entries), "queries": len(timings),
                 "p50_ms": round(statistics.median(timings), 2), "p95_ms": round(_percentile(timings, 0.95), 2),
                 "projection_s": round(projected, 2), "index_build_s": round(built, 2)})
    return _print_search(rows, as_json)


def _print_search(rows: list[dict[str, Any]], as_json: bool) -> int:
    if as_json:
        print(json.dumps({"benchmark": "search", "goals": {"p50_ms": 5, "p95_ms": 20, "index_build_s": 3},
                          "results": rows}, indent=2))
        return 0
    for row in rows:
        extra = (f", projection {row['projection_s']:.2f} s, index build {row['index_build_s']:.2f} s"
                 if "index_build_s" in row else "")
        extra += f", max {row['max_ms']:.1f} ms" if "max_ms" in row else ""
        print(f"{row['corpus']}: {row['entries']} entries, {row['queries']} queries, p50 {row['p50_ms']:.2f} ms, "
              f"p95 {row['p95_ms']:.2f} ms{extra}")
    print("goals: p50 <= 5 ms, p95 <= 20 ms (on a real repository, p95 <= 10 ms), index build for 10,000 files "
          "<= 3 s")
    return 0


# ------------------------------------------------------------------------------------------------ command line

CLI_QUERIES = ("config", "how does caching work", "where is the server started")
CLI_GOAL_MS = 300


def _run_cli(args: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one `docbridge` process, as a shell would start it."""
    command = [str(Path(sys.executable).with_name("docbridge")), *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {completed.returncode}: {completed.stderr.decode()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _settle(root: Path) -> None:
    """Wait until nothing in the tree was modified within the last seconds: a search only trusts a stamp of
    a quiet tree (docbridge.engine.retrieval.store), so a tree just generated or checked out is scanned until then."""
    from docbridge.engine.base.cache import RACY_WINDOW_NS
    newest = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            with contextlib_suppress():
                newest = max(newest, os.stat(os.path.join(directory, name)).st_mtime_ns)
    wait = (newest + RACY_WINDOW_NS - time.time_ns()) / 1e9
    if wait > 0:
        time.sleep(wait + 0.1)


def contextlib_suppress() -> Any:
    import contextlib
    return contextlib.suppress(OSError)


def cli_figures(root: Path, runs: int = 5) -> dict[str, Any]:
    """`docbridge search` on one repository as a user runs it: cold (no .docbridge), the first search after
    a one-file change (scan from the facts cache, index rebuilt), and warm (the stored index opened)."""
    shutil.rmtree(root / ".docbridge", ignore_errors=True)
    _settle(root)
    query = CLI_QUERIES[1]
    cold_wall, cold_cpu = _run_cli(["search", query, "--root", str(root)])
    _run_cli(["search", query, "--root", str(root)])  # records the stamp (the first run made .docbridge/)
    warm = [_run_cli(["search", q, "--root", str(root)]) for _ in range(runs) for q in CLI_QUERIES]
    agent = [_run_cli(["search", q, "--root", str(root), "--agent"]) for q in CLI_QUERIES]
    files = sorted(p for p in root.rglob("*.md") if ".docbridge" not in p.parts and "node_modules" not in p.parts)
    changed = []
    if files:
        victim = files[len(files) // 2]
        original = victim.read_bytes()
        try:
            victim.write_bytes(original + b"\nA sentence added by the benchmark.\n")
            changed.append(_run_cli(["search", query, "--root", str(root)]))
        finally:
            victim.write_bytes(original)
            _run_cli(["search", query, "--root", str(root)])
    interpreter = [_run_cli_python(["-c", "pass"]) for _ in range(runs)]
    return {
        "root": str(root), "files": sum(1 for _ in _walk_files(root)),
        "cold_s": round(cold_wall, 2), "cold_cpu_s": round(cold_cpu, 2),
        "after_one_change_s": round(changed[0][0], 2) if changed else None,
        "warm_p50_ms": round(1000 * statistics.median(w for w, _ in warm), 1),
        "warm_p95_ms": round(1000 * _percentile([w for w, _ in warm], 0.95), 1),
        "warm_cpu_p50_ms": round(1000 * statistics.median(c for _, c in warm), 1),
        "agent_warm_p50_ms": round(1000 * statistics.median(w for w, _ in agent), 1),
        "interpreter_p50_ms": round(1000 * statistics.median(w for w, _ in interpreter), 1),
        "load_average": round(os.getloadavg()[0], 2),
    }


def _run_cli_python(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _walk_files(root: Path) -> Any:
    for _directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        yield from files


def _scratch_copy(root: Path, base: Path) -> Path:
    """A fresh copy of `root` (without `.git`, `node_modules` and `.docbridge`) under `base`."""
    target = base / "cli-copies" / (root.resolve().name or "root")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(root, target, symlinks=True, ignore=shutil.ignore_patterns(".git", "node_modules", ".docbridge"))
    return target


def bench_cli(roots: list[Path], size: int, workdir: Path | None, as_json: bool) -> int:
    """Cold and warm `docbridge search` latency on the given repositories and on the synthetic one."""
    # a repository given is measured in a copy: the benchmark deletes `.docbridge` and edits a document, which
    # are the user's to keep
    targets = [(root, _scratch_copy(root, _bench_dir(workdir))) for root in roots]
    if size > 0:
        synthetic = ensure_synthetic(_bench_dir(workdir), size)
        targets.append((synthetic, synthetic))
    rows = [{**cli_figures(measured), "root": str(root)} for root, measured in targets]
    if as_json:
        print(json.dumps({"benchmark": "cli", "goals": {"warm_p50_ms": CLI_GOAL_MS}, "results": rows}, indent=2))
        return 0
    for row in rows:
        print(f"{row['root']} ({row['files']} files): cold {row['cold_s']:.2f} s (CPU {row['cold_cpu_s']:.2f} s), "
              f"after a one-file change {row['after_one_change_s']} s, warm p50 {row['warm_p50_ms']} ms / p95 "
              f"{row['warm_p95_ms']} ms (CPU p50 {row['warm_cpu_p50_ms']} ms), search --agent warm p50 "
              f"{row['agent_warm_p50_ms']} ms; python -c pass {row['interpreter_p50_ms']} ms; "
              f"load {row['load_average']}")
    print(f"goal: a warm search (interpreter start included) <= {CLI_GOAL_MS} ms; wall times on a loaded machine "
          "exceed CPU times, compare them in one run")
    return 0


# ------------------------------------------------------------------------------------------------ language server


def _large_notification(raw: bytes) -> dict[str, Any]:
    """A large notification's method and document, read from its head without parsing the rest."""
    head = raw[:400].decode("utf-8", "replace")
    method = re.search(r'"method":\s*"([^"]*)"', head)
    uri = re.search(r'"uri":\s*"([^"]*)"', head)
    return {"method": method.group(1) if method else "", "params": {"uri": uri.group(1) if uri else ""},
            "unparsed_bytes": len(raw)}


class _StdioServer:
    """A minimal JSON-RPC client for the language server's stdio (the engine does not import the lsp package:
    the server is measured from the outside, as an editor sees it)."""

    def __init__(self, command: list[str], root: Path, skip_large_notifications: bool = False) -> None:
        import threading
        # a notification over 100 KB (a large document's diagnostics) is not parsed: parsing it in this process
        # would delay reading the answers behind it, and `bench loop` measures the server, not this client
        self.skip_large_notifications = skip_large_notifications
        self.answered_times: dict[int, float] = {}
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.root = root
        self.lock = threading.Condition()
        self.responses: dict[int, dict[str, Any]] = {}
        self.notifications: list[tuple[float, dict[str, Any]]] = []
        self.next_id = 0
        self.initialize_ms = 0.0  # how long `initialize` took (set by `_start_lsp`)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            raw = stream.read(length)
            now = time.perf_counter()
            if self.skip_large_notifications and length > 100_000 and b'"id"' not in raw[:100]:
                message = _large_notification(raw)
            else:
                message = json.loads(raw)
            if "id" in message and "method" in message:  # the server asks: answer
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [{"diagnostics": {"debounceMs": 0}, "search": {"warmAfterMs": BENCH_WARM_AFTER_MS}}]
                self._send({"id": message["id"], "result": result})
            with self.lock:
                if "id" in message and "method" not in message:
                    self.responses[message["id"]] = message
                    self.answered_times[message["id"]] = now
                elif "method" in message:
                    self.notifications.append((now, message))
                self.lock.notify_all()

    def start(self, method: str, params: Any) -> int:
        """Send a request without waiting; `request` waits for it."""
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def answered(self, number: int) -> bool:
        with self.lock:
            return number in self.answered_times

    def answered_at(self, number: int) -> float | None:
        """When the answer to request `number` was read (`time.perf_counter`), if it was."""
        with self.lock:
            return self.answered_times.get(number)

    def request(self, method: str, params: Any, timeout: float = 600, number: int | None = None) -> tuple[
            Any, float]:
        started = time.perf_counter()
        if number is None:
            number = self.start(method, params)
        with self.lock:
            if not self.lock.wait_for(lambda: number in self.responses, timeout):
                raise TimeoutError(f"{method}: no response in {timeout} s")
            response = self.responses.pop(number)
        return response.get("result"), (time.perf_counter() - started) * 1000

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def wait_notification(self, predicate: Any, after: float, timeout: float = 600) -> float:
        with self.lock:
            found: list[float] = []

            def check() -> bool:
                for stamp, message in self.notifications:
                    if stamp >= after and predicate(message):
                        found.append(stamp)
                        return True
                return False

            if not self.lock.wait_for(check, timeout):
                raise TimeoutError("expected notification did not arrive")
        return found[0]

    def peak_rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.process.pid}/status", encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return 0.0

    def settled(self, quiet_s: float = 2.0, timeout_s: float = 300.0) -> float | None:
        """Seconds until the server used no processor time for `quiet_s` (what it does in the background is
        done: the search index rebuilt once edits pause, the model kept); None after `timeout_s`, or off Linux."""
        def used() -> int | None:
            try:
                with open(f"/proc/{self.process.pid}/stat", encoding="utf-8") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                return None
            return int(fields[11]) + int(fields[12])  # utime and stime, in clock ticks
        started = time.perf_counter()
        last, since = used(), time.perf_counter()
        if last is None:
            return None
        while time.perf_counter() - started < timeout_s:
            time.sleep(0.25)
            now = used()
            if now is None:
                return None
            if now != last:
                last, since = now, time.perf_counter()
            elif time.perf_counter() - since >= quiet_s:
                return round(since - started, 2)
        return None

    def close(self, timeout: float = 10) -> float | None:
        """Shut the server down, waiting up to `timeout` s for the answer; seconds to the answer (None: none came).
        The process is killed when it has not ended 10 s after `exit`."""
        started = time.perf_counter()
        answered: float | None = None
        with contextlib.suppress(Exception):
            self.request("shutdown", None, timeout=timeout)
            answered = round(time.perf_counter() - started, 2)
        try:
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
        return answered


def bench_lsp(sizes: list[int], workdir: Path | None, as_json: bool) -> int:
    """Drive `docbridge-lsp` over stdio on synthetic repositories and print the editor-facing latencies."""
    results = []
    for size in sizes:
        figures = _lsp_figures(size, workdir)
        results.append(figures)
        if not as_json:
            print(f"docbridge-lsp on {2 * size} files (N = {size})")
            for key, value in figures.items():
                if key != "n":
                    print(f"  {key:<32} {value}")
    if as_json:
        print(json.dumps({"benchmark": "lsp", "goals": {
            "definition_hover_p50_ms": 1, "definition_hover_p95_ms": 5, "change_to_diagnostics_p50_ms": 10,
            "change_to_diagnostics_p95_ms": 30, "open_to_diagnostics_ms": 100, "peak_rss_mb": 600},
            "results": results}, indent=2))
    else:
        print("goals: definition/hover p50 <= 1 ms, p95 <= 5 ms; didChange -> diagnostics p50 <= 10 ms, "
              "p95 <= 30 ms; didOpen -> diagnostics <= 100 ms once scanned; peak RSS <= 600 MB "
              "(measured with diagnostics.debounceMs = 0)")
    return 0


def _start_lsp(root: Path, skip_large_notifications: bool = False) -> tuple[_StdioServer, float]:
    # DOCBRIDGE_LSP_COMMAND runs another command (a profiler around the server, say) instead
    command = os.environ.get("DOCBRIDGE_LSP_COMMAND", "").split() or [str(Path(sys.executable).with_name(
        "docbridge-lsp"))]
    started = time.perf_counter()
    server = _StdioServer(command, root, skip_large_notifications)
    _, server.initialize_ms = server.request("initialize", {
        "processId": None, "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": {"window": {"workDoneProgress": True},
                         "workspace": {"configuration": True,
                                       "didChangeWatchedFiles": {"dynamicRegistration": True}},
                         "textDocument": {"publishDiagnostics": {"relatedInformation": True}}}})
    server.notify("initialized", {})
    return server, started


def _link_positions(text: str) -> list[dict[str, int]]:
    """Positions inside relative links and inline code: where definition and hover have something to say."""
    positions = []
    for number, line in enumerate(text.split("\n")):
        for marker in ("`", "]("):
            column = line.find(marker)
            if column >= 0:
                positions.append({"line": number, "character": column + 2})
    return positions or [{"line": 0, "character": 2}]


def _open(server: _StdioServer, uri: str, text: str) -> float:
    """didOpen -> that document's first diagnostics, in ms."""
    opened = time.perf_counter()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1,
                                                            "text": text}})
    arrived = server.wait_notification(
        lambda m: m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, opened)
    return (arrived - opened) * 1000


def _change(server: _StdioServer, uri: str, version: int, text: str) -> float:
    """didChange (the whole text) -> that document's next diagnostics, in ms."""
    sent = time.perf_counter()
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                             "contentChanges": [{"text": text}]})
    arrived = server.wait_notification(
        lambda m: m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, sent)
    return (arrived - sent) * 1000


def _scan_done(server: _StdioServer, started: float) -> float:
    return server.wait_notification(
        lambda m: m["method"] == "$/progress" and m["params"]["value"].get("kind") == "end", started)


def _lsp_figures(size: int, workdir: Path | None, requests: int = 200, edits: int = 100) -> dict[str, Any]:
    """Answers that are null where the settled server answers are counted apart (`*_null`): a request
    answered with nothing during a scan is a failure, not a fast answer."""
    base = _bench_dir(workdir)
    root = ensure_synthetic(base, size)
    documents = sorted((root / "docs").rglob("*.md"))
    document = documents[len(documents) // 2]
    original = document.read_text(encoding="utf-8")
    uri = document.as_uri()
    figures: dict[str, Any] = {"n": size}
    expected: dict[str, Any] = {}
    # the cache is empty: the first scan is cold; the document is opened right after `initialized`
    shutil.rmtree(root / ".docbridge", ignore_errors=True)
    for phase in ("cold", "warm"):
        server, started = _start_lsp(root)
        try:
            figures[f"{phase}_open_during_scan_to_diagnostics_ms"] = round(_open(server, uri, original), 1)
            positions = _link_positions(original)
            timings: list[float] = []
            for position in positions:  # asked at once: the first ones while the scan runs
                params = {"textDocument": {"uri": uri}, "position": position}
                result, elapsed = server.request("textDocument/definition", params)
                timings.append(elapsed)
                if phase == "cold":
                    expected[json.dumps(position)] = result
            figures[f"{phase}_definition_during_scan_p50_ms"] = round(statistics.median(timings), 2)
            figures[f"{phase}_scan_done_s"] = round(_scan_done(server, started) - started, 2)
            if phase == "warm":
                break
            # settled: the same positions answer the same (nulls where the settled server says null too)
            answers = [server.request("textDocument/definition", {"textDocument": {"uri": uri}, "position": p})[0]
                       for p in positions]
            resolving = [p for p, a in zip(positions, answers) if a]
            nulls = sum(1 for p, a in zip(positions, answers) if a and not expected[json.dumps(p)])
            figures["cold_definition_during_scan_null"] = nulls
            figures["definition_positions"] = f"{len(resolving)} of {len(positions)} resolve"
            definition, hover = [], []
            definition_null = hover_null = 0
            for index in range(requests):
                params = {"textDocument": {"uri": uri}, "position": resolving[index % len(resolving)]}
                result, elapsed = server.request("textDocument/definition", params)
                definition.append(elapsed)
                definition_null += not result
                result, elapsed = server.request("textDocument/hover", params)
                hover.append(elapsed)
                hover_null += not result
            figures["definition_p50_ms"] = round(statistics.median(definition), 2)
            figures["definition_p95_ms"] = round(_percentile(definition, 0.95), 2)
            figures["definition_null"] = definition_null
            figures["hover_p50_ms"] = round(statistics.median(hover), 2)
            figures["hover_p95_ms"] = round(_percentile(hover, 0.95), 2)
            figures["hover_null"] = hover_null
            text = original
            changes = []
            for index in range(edits):
                text += f"\nA broken link [x{index}](./missing-{index}.md).\n"
                changes.append(_change(server, uri, index + 2, text))
            figures["change_to_diagnostics_p50_ms"] = round(statistics.median(changes), 2)
            figures["change_to_diagnostics_p95_ms"] = round(_percentile(changes, 0.95), 2)
            # the first search after edits builds the retrieval index of the newest state off the server's
            # thread: definitions asked meanwhile are answered, right
            started_search = time.perf_counter()
            search = server.start("workspace/executeCommand", {"command": "docbridge.search",
                                                                 "arguments": ["invoice", 5]})
            during: list[float] = []
            during_null = 0
            while not server.answered(search) and len(during) < 5000:
                params = {"textDocument": {"uri": uri}, "position": resolving[len(during) % len(resolving)]}
                result, elapsed = server.request("textDocument/definition", params)
                during.append(elapsed)
                during_null += not result
            server.request("workspace/executeCommand", None, number=search)
            figures["search_after_edits_ms"] = round((time.perf_counter() - started_search) * 1000, 1)
            if during:
                figures["definition_during_index_p50_ms"] = round(statistics.median(during), 2)
                figures["definition_during_index_max_ms"] = round(max(during), 2)
                figures["definition_during_index_null"] = during_null
            # the index is used now: after one more edit and a pause, the server has rebuilt it unasked
            text += f"\nA broken link [x{edits}](./missing-{edits}.md).\n"  # new findings: a publish to wait for
            _change(server, uri, edits + 2, text)
            time.sleep(BENCH_WARM_AFTER_MS / 1000 + 2 * figures["search_after_edits_ms"] / 1000)
            _, elapsed = server.request("workspace/executeCommand", {"command": "docbridge.search",
                                                                     "arguments": ["invoice", 5]})
            figures["search_after_a_pause_ms"] = round(elapsed, 1)
            figures["peak_rss_mb"] = server.peak_rss_mb()
        finally:
            server.close()
    return figures


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
