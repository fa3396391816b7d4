"""`docbridge retrieve`: the documents a RAG pipeline would be given for a query (the original's `retrieve`).

The same `RetrievedDocument`s as the MCP tool `retriever.query` and the Python API's `retriever()`: content (the
title, summary and body), score, source, and metadata (kind, path, title, evidence with content hash, explain,
confidence, provenance). Hybrid when `--hybrid` or `retrieval.hybrid` asks for it, as `search`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from docbridge.cli.common import EXIT_OK, UsageError, add_root, reference_workspace, root_dir

NAME = "retrieve"
HELP = "the documents a RAG pipeline is given for a query, with content and evidence"
DESCRIPTION = ("Retrieve RetrievedDocuments for a query (the original's `retrieve`, the MCP tool retriever.query): "
               "each with its content (title, summary and body), score, source and metadata (kind, path, title, "
               "evidence with content hash, score components, confidence, provenance). Ranked as `search` ranks.")
EPILOG = "Exit 0 (an empty list when nothing matches); 2 on a usage error."

EXCERPT = 240
_SPACE = re.compile(r"\s+")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", nargs="+", help="what to retrieve for (the words are joined)")
    add_root(parser)
    parser.add_argument("--limit", type=int, default=8, metavar="N", help="at most N documents (1-100, default 8)")
    parser.add_argument("--kinds", nargs="+", metavar="KIND",
                        help="only these kinds (document, module, area, package, intent, change)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="the retriever-query payload: {type, schemaVersion, query, count, documents}")
    output.add_argument("--text", action="store_true", help="a readable list with excerpts (the default)")
    hybrid = parser.add_mutually_exclusive_group()
    hybrid.add_argument("--hybrid", action="store_true",
                        help="fuse with the semantic index, as `search --hybrid`; lexical, with a warning, when it "
                             "is unavailable")
    hybrid.add_argument("--no-hybrid", action="store_true", help="lexical only, even when retrieval.hybrid is set")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.hybrid import hybrid_configured, hybrid_retriever
    from docbridge.engine.agent import knowledge
    from docbridge.engine.retrieval.rank import Retriever
    root = root_dir(args.root)
    query = " ".join(args.query).strip()
    if not 1 <= args.limit <= knowledge.MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {knowledge.MAX_LIMIT}.")
    kinds = sorted({k.strip() for v in args.kinds or [] for k in v.split(",") if k.strip()}) or None
    workspace, projection = reference_workspace(root, not args.no_cache)
    retriever: Any = Retriever(projection)  # the full projection: content carries each entry's body
    hybrid = not args.no_hybrid and (args.hybrid or hybrid_configured(root))
    if hybrid:
        retriever = hybrid_retriever(root, retriever, workspace)
    try:
        payload = knowledge.retriever_query(retriever, query, limit=args.limit, kinds=kinds)
    except knowledge.ArgumentError as exc:
        raise UsageError(str(exc).replace("kinds:", "--kinds:")) from exc
    if hybrid:
        payload["semantic"] = retriever.status.to_json()
    if args.json:
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(payload))
    return EXIT_OK


def excerpt(text: str) -> str:
    """The content's opening, whitespace collapsed, cut at a word boundary."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= EXCERPT:
        return flat
    cut = flat.rfind(" ", 0, EXCERPT)
    return flat[:cut if cut > EXCERPT // 2 else EXCERPT].rstrip() + "…"


def render_text(payload: dict[str, Any]) -> str:
    documents = payload["documents"]
    lines = [f"Retrieve: {payload['query']} ({len(documents)} document{'s' if len(documents) != 1 else ''})"]
    if not documents:
        lines.append("  Nothing matches. Try other words, or `docbridge search` with --explain.")
    for number, document in enumerate(documents, start=1):
        meta = document["metadata"]
        lines.append(f"{number:>2}. [{meta['kind']}] {document['id']}  score={document['score']:.2f}  "
                     f"confidence={meta['confidence']}")
        evidence = meta["evidence"][0]
        lines.append(f"    {meta['path']}  sha256:{evidence['contentHash'][:12]}")
        lines.append(f"    > {excerpt(document['content'])}")
    return "\n".join(lines) + "\n"
