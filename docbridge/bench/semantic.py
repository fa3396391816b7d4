"""Figures for hybrid search (prints them; not a test):

    python -m docbridge.bench.semantic [--synthetic N] [--workdir DIR] [--model PACKAGE ...] [ROOT[=SUITE.json] ...]

For each repository (the synthetic one of N Markdown + N TypeScript files, docbridge.bench.synthetic, and each ROOT), in
its own process so that peak RSS is that run's: embedding time cold (no `.docbridge/semantic`), unchanged (a
second run) and after a one-file edit, with the chunks embedded each time; warm query latency p50/p95 of lexical
and hybrid search (the suite's queries, or generated ones); the size of the vectors on disk; peak RSS. With
`--model` (repeatable: any of docbridge.engine.semantic.embed.LOCAL_MODELS), each model in turn; the default model
otherwise. The index is built in a folder of its own (`.docbridge/semantic-bench`), not the repository's.
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


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


BENCH_DIR = ".docbridge/semantic-bench"


def measure(root: Path, suite: Path | None, model: str) -> dict[str, Any]:
    from docbridge.bench.core import peak_rss_mb
    from docbridge.cli.common import open_retriever
    from docbridge.engine.base.config import load_config
    from docbridge.engine.semantic.embed import LocalEmbedder
    from docbridge.engine.semantic.hybrid import HybridRetriever, SemanticStatus
    from docbridge.engine.semantic.index import disk_reader, load_index, semantic_dir, update_index
    shutil.rmtree(semantic_dir(root, BENCH_DIR), ignore_errors=True)
    config = load_config(root)
    _, lexical = open_retriever(root)
    embedder = LocalEmbedder(model)
    started = time.perf_counter()
    embedder.embed(["warm the model"])  # loading the model is counted apart
    load_s = time.perf_counter() - started
    loaded_rss = peak_rss_mb()
    started = time.perf_counter()
    index, cold = update_index(lexical.entries, disk_reader(root), embedder, config.index.chunk_chars)
    index.save(root, BENCH_DIR)
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    index, warm = update_index(lexical.entries, disk_reader(root), embedder, config.index.chunk_chars,
                               load_index(root, BENCH_DIR))
    warm_s = time.perf_counter() - started
    # the one-file edit, without writing into the repository: the entries say the file changed (another
    # content hash) and the reader returns its text with a paragraph added
    from dataclasses import replace
    documents = sorted(e.path for e in lexical.entries if e.kind == "document")
    victim = documents[len(documents) // 2]
    disk = disk_reader(root)

    def edited_reader(path: str) -> str | None:
        text = disk(path)
        if path == victim and text is not None:
            return text + "\n\n## Benchmark edit\n\nA paragraph added by the benchmark, about retries and timeouts.\n"
        return text
    entries = [replace(e, content_hash="edited") if e.path == victim and e.kind == "document" else e
               for e in lexical.entries]
    started = time.perf_counter()
    _, edit = update_index(entries, edited_reader, embedder, config.index.chunk_chars, load_index(root, BENCH_DIR))
    edit_s = time.perf_counter() - started
    if suite is not None:
        queries = [c["input"] for c in json.loads(suite.read_text())["cases"]]
    else:
        from docbridge.bench.synthetic import WORDS
        rng = random.Random(5)
        queries = [f"how does {rng.choice(WORDS)} {rng.choice(WORDS)} work" for _ in range(60)]
        queries += [" ".join(rng.sample(WORDS, 2)) for _ in range(40)]
    hybrid = HybridRetriever(lexical, index, embedder, config.index.rrf_k, SemanticStatus(True))
    latency = {}
    for name, retriever in (("lexical", lexical), ("hybrid", hybrid)):
        for query in queries:
            retriever.search(query, 10)
        timings = []
        for query in queries * 3:
            begin = time.perf_counter()
            retriever.search(query, 10)
            timings.append((time.perf_counter() - begin) * 1000)
        latency[name] = {"p50_ms": round(statistics.median(timings), 2), "p95_ms": round(_percentile(timings, 0.95), 2)}
    directory = semantic_dir(root, BENCH_DIR)
    row = {"root": str(root), "model": embedder.model_id, "files": cold.files, "chunks": cold.chunks, "dim": index.dim,
            "load": {"seconds": round(load_s, 2), "peak_rss_mb": loaded_rss},
            "cold": {"seconds": round(cold_s, 2), "embedded": cold.embedded},
            "unchanged": {"seconds": round(warm_s, 3), "embedded": warm.embedded},
            "oneFileEdit": {"seconds": round(edit_s, 3), "embedded": edit.embedded, "filesRead": edit.files_read},
            "latency": latency, "queries": len(queries) * 3,
            "vectorsMB": round((directory / "vectors.npy").stat().st_size / 1e6, 2),
            "chunksMB": round((directory / "chunks.jsonl").stat().st_size / 1e6, 2),
            "peak_rss_mb": peak_rss_mb()}
    shutil.rmtree(directory, ignore_errors=True)
    return row


def main(argv: list[str]) -> int:
    from docbridge.engine.semantic.embed import DEFAULT_LOCAL, LOCAL_MODELS
    if argv[:1] == ["one"]:
        suite = Path(argv[2]) if len(argv) > 2 and argv[2] else None
        print(json.dumps(measure(Path(argv[1]), suite, argv[3] if len(argv) > 3 else DEFAULT_LOCAL)))
        return 0
    synthetic = 5000
    workdir = None
    models: list[str] = []
    targets: list[tuple[Path, Path | None]] = []
    items = iter(argv)
    for item in items:
        if item == "--synthetic":
            synthetic = int(next(items))
        elif item == "--workdir":
            workdir = Path(next(items))
        elif item == "--model":
            model = next(items)
            if model not in LOCAL_MODELS:
                print(f"unknown local model {model!r} (local models: {', '.join(sorted(LOCAL_MODELS))})",
                      file=sys.stderr)
                return 2
            models.append(model)
        else:
            root_text, _, suite_text = item.partition("=")
            targets.append((Path(root_text).resolve(), Path(suite_text).resolve() if suite_text else None))
    if synthetic > 0:
        from docbridge.bench.core import _bench_dir, ensure_synthetic
        targets.insert(0, (ensure_synthetic(_bench_dir(workdir), synthetic), None))
    rows = []
    for root, suite in targets:
        for model in models or [DEFAULT_LOCAL]:
            done = subprocess.run([sys.executable, "-m", "docbridge.bench.semantic", "one", str(root), str(suite or ""),
                                   model], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 2
            rows.append(json.loads(done.stdout))
    for row in rows:
        print(f"{row['root']} with {row['model']}: {row['files']} files, {row['chunks']} chunks ({row['dim']} "
              f"dimensions); model loaded in {row['load']['seconds']:.2f} s, RSS then "
              f"{row['load']['peak_rss_mb']:.0f} MB")
        print(f"  embedding: cold {row['cold']['seconds']:.2f} s ({row['cold']['embedded']} chunks), unchanged "
              f"{row['unchanged']['seconds']:.3f} s ({row['unchanged']['embedded']} embedded), one-file edit "
              f"{row['oneFileEdit']['seconds']:.3f} s ({row['oneFileEdit']['embedded']} embedded, "
              f"{row['oneFileEdit']['filesRead']} file read)")
        lexical, hybrid = row["latency"]["lexical"], row["latency"]["hybrid"]
        print(f"  query latency over {row['queries']} searches: lexical p50 {lexical['p50_ms']:.2f} ms / p95 "
              f"{lexical['p95_ms']:.2f} ms; hybrid p50 {hybrid['p50_ms']:.2f} ms / p95 {hybrid['p95_ms']:.2f} ms")
        print(f"  on disk: vectors {row['vectorsMB']:.2f} MB, chunks {row['chunksMB']:.2f} MB; peak RSS "
              f"{row['peak_rss_mb']:.0f} MB")
    print(json.dumps(rows), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
