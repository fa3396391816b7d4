"""`docbridge index`: the DocBridgeIndexV1 artifact for index readers and `llms.txt` (the agent reading list), and
with `--semantic` the semantic index hybrid search reads.

`llms.txt` is rendered by the `llms.txt` template (a project override included), so it is byte for byte what
`docbridge render llms.txt` prints, and is written at the repository root. It is rendered before anything is
written: a template error leaves both files as they were (exit 2)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.common import (
    EXIT_OK,
    Progress,
    UsageError,
    add_root,
    console,
    dump,
    reference_workspace,
    root_dir,
)

NAME = "index"
HELP = "write .docbridge/index.json (DocBridgeIndexV1) for index readers, and llms.txt"
DESCRIPTION = ("Write the DocBridgeIndexV1 artifact: knowledge[] (every document and module with its content hash "
               "and tags), lookup (packages, ownership, intents, changes), handoffs (one per package), project, "
               "and the retrieval projection with its header (weights, BM25 params, lexical statistics), sealed "
               "by content hash (contentHashAlgo sha256-semantic-v1). Also write llms.txt at the repository root: "
               "the agent reading list (the documents under corpus.agent.root, default docs/for-agents), as "
               "`docbridge render llms.txt` renders it; a repository with no agent corpus and no llms.txt gets "
               "none.")
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--output", metavar="FILE", help="write here instead of .docbridge/index.json")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    parser.add_argument("--semantic", action="store_true",
                        help="also build the semantic index (chunks, vectors, bm25.json, meta.json in "
                             ".docbridge/semantic or index.dir; of the documents and modules under index.sources "
                             "when set), embedding only chunks not already cached")


def run(args: argparse.Namespace) -> int:
    return semantic_index(args) if args.semantic else lexical_index(args)


def write_artifacts(root: Path, use_cache: bool,
                    output: str | None) -> tuple[Any, Any, Path, dict[str, Any], Path | None, int]:
    """Write llms.txt and the index (to `output` or .docbridge/index.json): (workspace, projection, index path,
    index, llms.txt path or None when it is not written, entries in llms.txt).

    llms.txt is written when the repository has an agent corpus (`corpus.agent.root` configured, or documents
    under the default `docs/for-agents`) or already has an llms.txt.

    llms.txt is rendered and checked before anything is written. It is written first, and when that changed the
    repository (a new or different llms.txt: the snapshot counts every file) the model is read again, so the
    index describes the repository as the command leaves it and a second `docbridge index` gives the same bytes.
    """
    from docbridge.engine.agent.index_members import index_members
    from docbridge.engine.artifacts.index_file import index_path, write_index
    from docbridge.engine.render import DEFAULT_OUTPUT
    from docbridge.engine.render.pages import plan, render_pages, write_file
    from docbridge.engine.render.templating import RenderError
    if output == "-":
        raise UsageError("index --output - names no file: the index records where it is written (its source); "
                         "give a path, or leave --output out for .docbridge/index.json.")
    workspace, projection = reference_workspace(root, use_cache)
    try:
        pages, _ = render_pages(workspace.state, "llms.txt")
        llms = plan(pages, root / DEFAULT_OUTPUT["llms.txt"], "llms.txt", True, root)[0]
    except RenderError as exc:
        raise UsageError(str(exc)) from None
    listed = len(pages[0].view["documents"])
    # a repository with no agent corpus (none configured, none under the default root) gets no llms.txt unless it
    # already has one: an unbidden file at the root would be noise (and an untracked file in version control)
    wanted = bool(workspace.state.config.corpus.agent.root) or listed > 0 or llms.status != "new"
    if wanted and llms.status != "unchanged":
        write_file(llms.path, llms.text)
        workspace, projection = reference_workspace(root, use_cache)
    target = Path(output).resolve() if output else None
    written_at = target or index_path(root)
    source = written_at.relative_to(root.resolve()).as_posix() if written_at.is_relative_to(root.resolve()) \
        else str(written_at)
    state = workspace.state
    lookup, handoffs = index_members(state, projection, source)
    path, index = write_index(state, projection, target, lookup=lookup, handoffs=handoffs)
    return workspace, projection, path, index, llms.path if wanted else None, listed


def _shown(root: Path, path: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path


def _print_llms(out: Any, root: Path, path: Path | None, listed: int) -> None:
    if path is None:
        out.print("llms.txt:   not written: no agent corpus (set corpus.agent.root, or add documents under "
                  "docs/for-agents)", markup=False)
    else:
        out.print(f"llms.txt:   {_shown(root, path)} ({listed} agent document{'' if listed == 1 else 's'})",
                  markup=False)


def lexical_index(args: argparse.Namespace) -> int:
    root = root_dir(args.root)
    _, _, path, index, llms_path, listed = write_artifacts(root, not args.no_cache, args.output)
    retrieval = index["projection"]
    summary = {"index": str(path), "contentHash": index["contentHash"], "knowledge": len(index["knowledge"]),
               "entries": len(retrieval["entries"]), "params": retrieval["params"],
               "packages": len(index["lookup"]["packages"]), "llmsTxt": str(llms_path) if llms_path else None,
               "llmsTxtEntries": listed}
    if args.json:
        sys.stdout.write(dump(summary))
        return EXIT_OK
    out = console()
    out.print(f"Index:      {_shown(root, path)} (content hash {index['contentHash'][:16]})")
    out.print(f"Knowledge:  {summary['knowledge']} documents and modules; {summary['packages']} packages with "
              "handoffs")
    out.print(f"Projection: {summary['entries']} entries, BM25 k1={retrieval['params']['k1']:g} "
              f"b={retrieval['params']['b']:g}")
    _print_llms(out, root, llms_path, listed)
    return EXIT_OK


def semantic_index(args: argparse.Namespace) -> int:
    from docbridge.cli.hybrid import warn
    from docbridge.engine.semantic.hybrid import build_semantic
    from docbridge.engine.semantic.index import disk_reader, semantic_dir
    root = root_dir(args.root)
    workspace, projection, path, index, llms_path, listed = write_artifacts(root, not args.no_cache, args.output)
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
        semantic["directory"] = str(semantic_dir(root, workspace.config.index.dir))
    summary = {"index": str(path), "contentHash": index["contentHash"], "knowledge": len(index["knowledge"]),
               "entries": len(index["projection"]["entries"]), "llmsTxt": str(llms_path) if llms_path else None,
               "llmsTxtEntries": listed, "semantic": semantic}
    if not status.used:
        warn(status.reason or "unavailable")
    if args.json:
        sys.stdout.write(json.dumps(summary, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    out = console()
    out.print(f"Index:      {_shown(root, path)} (content hash {index['contentHash'][:16]})")
    out.print(f"Knowledge:  {summary['knowledge']} documents and modules")
    _print_llms(out, root, llms_path, listed)
    if report is None:
        out.print(f"Semantic:   not built ({status.reason}); search stays lexical.")
        return EXIT_OK
    where = semantic_dir(root, workspace.config.index.dir)
    shown_dir = where.relative_to(root) if where.is_relative_to(root) else where
    out.print(f"Semantic:   {shown_dir} — {report.chunks} chunks "
              f"from {report.files} files, {report.embedded} embedded, {report.reused} reused "
              f"({report.seconds:.2f} s, {status.model}, {status.index.get('dim')} dimensions)")
    if report.resumed:
        out.print(f"Resumed:    {report.resumed} of the reused vectors were embedded by an interrupted build")
    for source in report.unmatched:
        out.print(f"Note:       index.sources: {source} holds no document or module; skipped.", markup=False)
    return EXIT_OK
