"""`docbridge index`: the DocBridgeIndexV1 artifact for index readers, and with `--semantic` the semantic index
hybrid search reads."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.common import EXIT_OK, Progress, add_root, console, dump, reference_workspace, root_dir

NAME = "index"
HELP = "write .docbridge/index.json (DocBridgeIndexV1) for index readers"
DESCRIPTION = ("Write the DocBridgeIndexV1 artifact: knowledge[] (every document and module with its content hash "
               "and tags) and the retrieval projection with its header (weights, BM25 params, lexical statistics), "
               "sealed by content hash.")
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--output", metavar="FILE", help="write here instead of .docbridge/index.json")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    parser.add_argument("--semantic", action="store_true",
                        help="also build the semantic index (.docbridge/semantic: chunks, vectors, meta.json), "
                             "embedding only chunks not already cached")


def run(args: argparse.Namespace) -> int:
    return semantic_index(args) if args.semantic else lexical_index(args)


def lexical_index(args: argparse.Namespace) -> int:
    from docbridge.engine.artifacts.index_file import write_index
    root = root_dir(args.root)
    workspace, projection = reference_workspace(root, not args.no_cache)
    target = Path(args.output).resolve() if args.output else None
    path, index = write_index(workspace.state, projection, target)
    retrieval = index["projection"]
    summary = {"index": str(path), "contentHash": index["contentHash"], "knowledge": len(index["knowledge"]),
               "entries": len(retrieval["entries"]), "params": retrieval["params"],
               **({"paramsNote": retrieval["paramsNote"]} if "paramsNote" in retrieval else {})}
    if args.json:
        sys.stdout.write(dump(summary))
        return EXIT_OK
    out = console()
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    out.print(f"Index:      {shown} (content hash {index['contentHash'][:16]})")
    out.print(f"Knowledge:  {summary['knowledge']} documents and modules")
    out.print(f"Projection: {summary['entries']} entries, BM25 k1={retrieval['params']['k1']:g} "
              f"b={retrieval['params']['b']:g}")
    if "paramsNote" in summary:
        out.print(f"Note:       {summary['paramsNote']}")
    return EXIT_OK


def semantic_index(args: argparse.Namespace) -> int:
    from docbridge.cli.hybrid import warn
    from docbridge.engine.artifacts.index_file import write_index
    from docbridge.engine.semantic.hybrid import build_semantic
    from docbridge.engine.semantic.index import disk_reader, semantic_dir
    root = root_dir(args.root)
    workspace, projection = reference_workspace(root, not args.no_cache)
    target = Path(args.output).resolve() if args.output else None
    path, index = write_index(workspace.state, projection, target)
    state = workspace.state
    disk = disk_reader(root)

    def read(name: str) -> str | None:
        buffered = state.text_of(name)
        return buffered if buffered is not None else disk(name)
    with Progress(not args.json) as bar:
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
        warn(status.reason or "unavailable")
    if args.json:
        sys.stdout.write(json.dumps(summary, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    out = console()
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
