"""The command line's semantic options: `index --semantic`, `search --hybrid` / `--no-hybrid`, and hybrid
retrieval benchmarks. Registered onto the existing commands; nothing here imports the embedding model, numpy or
the semantic index until hybrid search is asked for (by the option or by `retrieval.hybrid` in the configuration).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.main import (
    EXIT_OK,
    UsageError,
    _console,
    _kinds,
    _Progress,
    _reference_workspace,
    _root,
    cmd_index,
    cmd_search,
    open_retriever,
    render_search_text,
)

CONFIG_FILE = "doc-bridge.config.json"


def hybrid_configured(root: Path) -> bool:
    """Whether the configuration asks for hybrid search (`retrieval.hybrid`), read without validating the rest
    (an invalid configuration is reported by the command that loads it)."""
    from docbridge.engine.base.safe_io import read_config_file
    try:
        data = read_config_file(root, CONFIG_FILE)
        raw = json.loads(data) if data is not None else None
    except (OSError, ValueError, RecursionError):
        return False
    retrieval = raw.get("retrieval") if isinstance(raw, dict) else None
    return isinstance(retrieval, dict) and retrieval.get("hybrid") is True


def _warn(reason: str) -> None:
    _console(stderr=True).print(f"docbridge: semantic search skipped, lexical results only: {reason}", markup=False)


def hybrid_retriever(root: Path, lexical: Any, workspace: Any = None, warn: bool = True) -> Any:
    """`lexical` wrapped for hybrid search over `root` (the semantic index brought up to date, saved), or, when
    that cannot be, a wrapper that answers lexically and says why (one warning on stderr)."""
    from docbridge.engine.base.config import load_config
    from docbridge.engine.semantic.hybrid import HybridRetriever, open_semantic
    from docbridge.engine.semantic.index import disk_reader
    config = workspace.config if workspace is not None else load_config(root)
    read = disk_reader(root)
    if workspace is not None:
        state = workspace.state

        def read_buffered(path: str) -> str | None:
            buffered = state.text_of(path)
            return buffered if buffered is not None else read(path)
        reader = read_buffered
    else:
        reader = read
    index, embedder, status = open_semantic(root, config, lexical.entries, reader)
    if not status.used and warn:
        _warn(status.reason or "unavailable")
    return HybridRetriever(lexical, index, embedder, config.index.rrf_k, status, _warn if warn else None)


def _wants_hybrid(args: argparse.Namespace, root: Path) -> bool:
    if getattr(args, "no_hybrid", False):
        return False
    return bool(getattr(args, "hybrid", False)) or hybrid_configured(root)


def cmd_search_semantic(args: argparse.Namespace) -> int:
    root = _root(args.root)
    if not _wants_hybrid(args, root):
        return cmd_search(args)
    from docbridge.engine.base.lexicon import tokens
    if args.limit < 1:
        raise UsageError("--limit must be at least 1.")
    kinds = _kinds(args.kinds)
    workspace, lexical = open_retriever(root, use_cache=not args.no_cache, progress=not (args.json or args.agent))
    retriever = hybrid_retriever(root, lexical, workspace)
    if args.agent:
        from docbridge.engine.agent.payloads import agent_search, render_agent
        from docbridge.engine.base.budget import BudgetError
        try:
            payload = agent_search(retriever, args.query, args.mode, args.context_budget, root)
        except BudgetError as exc:
            raise UsageError(str(exc)) from exc
        sys.stdout.write(render_agent(payload))
        return EXIT_OK
    results = retriever.search(args.query, args.limit, kinds=kinds)
    if args.json:
        payload = {"query": args.query, "terms": results[0].terms if results else tokens(args.query, unique=True),
                   "index": {"entries": len(lexical.entries), "reused": lexical.reused, "source": lexical.source},
                   "semantic": retriever.status.to_json(),
                   "results": [r.to_json(explain=args.explain) for r in results]}
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        text = render_search_text(args.query, results, args.explain)
        if args.explain:
            text = _with_fusion(text, results)
        sys.stdout.write(text)
    return EXIT_OK


def _with_fusion(text: str, results: list[Any]) -> str:
    """The explanation's lines, each result followed by its two ranks, the fused score and its best chunk."""
    lines = text.rstrip("\n").split("\n")
    out: list[str] = []
    number = 0
    for line in lines:
        if line.startswith(f"{number + 1:>2}. [") and number < len(results):
            result = results[number]
            line = line.replace(f"score={result.score:.2f}", f"score={result.score:.6f}", 1)
        out.append(line)
        if line.startswith(f"{number + 1:>2}. [") and number < len(results):
            result = results[number]
            number += 1
            fusion = result.fusion
            if not fusion:
                continue
            lexical = fusion["lexicalRank"] if fusion["lexicalRank"] is not None else "-"
            cosine = f"{fusion['cosine']:.3f}" if fusion["cosine"] is not None else "-"
            out.append(f"    fused: {fusion['fused']:.6f} (lexical rank {lexical}, dense rank {fusion['denseRank']}, "
                       f"cosine {cosine}{', kept in place: ' + fusion['pinned'] if fusion['pinned'] else ''})")
            chunk = fusion.get("bestChunk")
            if chunk:
                where = f"{chunk['id']} lines {chunk['startLine']}-{chunk['endLine']}"
                heading = f" — {chunk['heading']}" if chunk["heading"] else ""
                preview = " ".join(chunk["text"].split())[:120]
                out.append(f"    best chunk: {where}{heading}: {preview}")
    return "\n".join(out) + "\n"


def cmd_index_semantic(args: argparse.Namespace) -> int:
    if not args.semantic:
        return cmd_index(args)
    from docbridge.engine.artifacts.index_file import write_index
    from docbridge.engine.semantic.hybrid import build_semantic
    from docbridge.engine.semantic.index import disk_reader, semantic_dir
    root = _root(args.root)
    workspace, projection = _reference_workspace(root, not args.no_cache)
    target = Path(args.output).resolve() if args.output else None
    path, index = write_index(workspace.state, projection, target)
    state = workspace.state
    disk = disk_reader(root)

    def read(name: str) -> str | None:
        buffered = state.text_of(name)
        return buffered if buffered is not None else disk(name)
    with _Progress(not args.json) as bar:
        report, status = build_semantic(root, workspace.config, projection.entries, read,
                                        bar if bar.enabled else None)
    semantic: dict[str, Any] = {"built": status.used, **status.to_json()}
    semantic.pop("used", None)
    semantic.update(semantic.pop("index", {}))
    if report is not None:
        semantic.update(report.to_json())
        semantic["directory"] = str(semantic_dir(root))
    summary = {"index": str(path), "contentHash": index["contentHash"], "knowledge": len(index["knowledge"]),
               "entries": len(index["projection"]["entries"]), "semantic": semantic}
    if not status.used:
        _warn(status.reason or "unavailable")
    if args.json:
        sys.stdout.write(json.dumps(summary, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    out = _console()
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    out.print(f"Index:      {shown} (content hash {index['contentHash'][:16]})")
    out.print(f"Knowledge:  {summary['knowledge']} documents and modules")
    if report is None:
        out.print(f"Semantic:   not built ({status.reason}); search stays lexical.")
        return EXIT_OK
    where = semantic_dir(root)
    shown_dir = where.relative_to(root) if where.is_relative_to(root) else where
    out.print(f"Semantic:   {shown_dir} — {report.chunks} chunks "
              f"from {report.files} files, {report.embedded} embedded, {report.reused} reused "
              f"({report.seconds:.2f} s, {status.model}, {status.index.get('dim')} dimensions)")
    return EXIT_OK


def bench_hybrid(args: argparse.Namespace, root: Path, retriever: Any) -> Any:
    """`bench retrieval --hybrid`: the suite ranked by hybrid search."""
    return hybrid_retriever(root, retriever, warn=True) if getattr(args, "hybrid", False) else retriever


def register(commands: Any) -> None:
    search = commands.choices["search"]
    group = search.add_mutually_exclusive_group()
    group.add_argument("--hybrid", action="store_true",
                       help="fuse the lexical ranking with the semantic index (docbridge index --semantic); "
                            "lexical only, with a warning, when it is unavailable")
    group.add_argument("--no-hybrid", action="store_true", help="lexical only, even when retrieval.hybrid is set")
    search.set_defaults(handler=cmd_search_semantic)
    index = commands.choices["index"]
    index.add_argument("--semantic", action="store_true",
                       help="also build the semantic index (.docbridge/semantic: chunks, vectors, meta.json), "
                            "embedding only chunks not already cached")
    index.set_defaults(handler=cmd_index_semantic)
    bench = commands.choices["bench"]
    bench.add_argument("--hybrid", action="store_true", help="retrieval: rank with hybrid search")
