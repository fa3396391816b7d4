"""`docbridge search`: ranked search over documents, modules, areas, packages and routes; lexical, or hybrid
with the semantic index (`--hybrid`, or `retrieval.hybrid` in the configuration, unless `--no-hybrid`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.common import EXIT_OK, UsageError, add_root, open_retriever, root_dir

NAME = "search"
HELP = "ranked search over documents, modules, areas, packages and routes"
DESCRIPTION = ("Rank the repository's documents, modules, areas, packages and configured routes for a query: an "
               "exported symbol, a path, an ownership id or a question (English or Portuguese).")
EPILOG = None

KINDS = ("document", "module", "area", "package", "directory", "intent", "change")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="what to look for")
    add_root(parser)
    parser.add_argument("--limit", type=int, default=10, metavar="N", help="at most N results (default 10)")
    parser.add_argument("--kinds", nargs="+", metavar="KIND",
                        help="only these kinds (document, module, area, package, directory, intent, change)")
    parser.add_argument("--explain", action="store_true", help="show every score component and matched terms")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--text", action="store_true", help="print a readable ranked list (the default)")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    parser.add_argument("--agent", action="store_true",
                        help="a bounded payload for agents: matches without scores, follow-up commands, telemetry")
    parser.add_argument("--mode", choices=["discovery", "editing", "debugging", "documentation"],
                        default="discovery", help="--agent: how many matches and commands to allow")
    parser.add_argument("--context-budget", type=int, metavar="N",
                        help="--agent: token budget for the selected matches and follow-up commands (estimated: "
                             "their compact JSON's UTF-8 bytes / 4; default 32, raised to one grounded match when "
                             "that needs more; a budget given that cannot hold one is exit 2)")
    hybrid = parser.add_mutually_exclusive_group()
    hybrid.add_argument("--hybrid", action="store_true",
                        help="fuse the lexical ranking with the semantic index (docbridge index --semantic); "
                             "lexical only, with a warning, when it is unavailable")
    hybrid.add_argument("--no-hybrid", action="store_true", help="lexical only, even when retrieval.hybrid is set")


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.hybrid import hybrid_configured
    root = root_dir(args.root)
    return ranked_search(args, root, hybrid=not args.no_hybrid and (args.hybrid or hybrid_configured(root)))


def parse_kinds(values: list[str] | None) -> list[str] | None:
    """`--kinds`: the kinds named (space- or comma-separated), sorted; a usage error on one that is unknown."""
    if not values:
        return None
    kinds = sorted({k.strip() for v in values for k in v.split(",") if k.strip()})
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise UsageError(f"unknown kind {unknown[0]!r}; choose from {', '.join(sorted(KINDS))}.")
    return kinds


def ranked_search(args: argparse.Namespace, root: Path, hybrid: bool) -> int:
    """The ranked list (text or JSON), or with `--agent` the bounded payload; `hybrid` fuses the semantic
    index into the lexical ranking."""
    from docbridge.engine.base.lexicon import tokens
    if args.limit < 1:
        raise UsageError("--limit must be at least 1.")
    kinds = parse_kinds(args.kinds)
    workspace, lexical = open_retriever(root, use_cache=not args.no_cache, progress=not (args.json or args.agent))
    retriever = lexical
    if hybrid:
        from docbridge.cli.hybrid import hybrid_retriever
        retriever = hybrid_retriever(root, lexical, workspace)
    if args.agent:
        return agent_search(args, root, retriever)
    results = retriever.search(args.query, args.limit, kinds=kinds)
    if args.json:
        payload = {"query": args.query, "terms": results[0].terms if results else tokens(args.query, unique=True),
                   "index": {"entries": len(lexical.entries), "reused": lexical.reused, "source": lexical.source}}
        if hybrid:
            payload["semantic"] = retriever.status.to_json()
        payload["results"] = [r.to_json(explain=args.explain) for r in results]
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_OK
    text = render_search_text(args.query, results, args.explain)
    sys.stdout.write(with_fusion(text, results) if hybrid and args.explain else text)
    return EXIT_OK


def agent_search(args: argparse.Namespace, root: Path, retriever: Any) -> int:
    """`--agent`: the bounded payload for agents."""
    from docbridge.engine.agent import payloads
    from docbridge.engine.base.budget import BudgetError
    try:
        payload = payloads.agent_search(retriever, args.query, args.mode, args.context_budget, root)
    except BudgetError as exc:
        raise UsageError(str(exc)) from exc
    sys.stdout.write(payloads.render_agent(payload))
    return EXIT_OK


def render_search_text(query: str, results: list[Any], explain: bool) -> str:
    lines = [f"Query: {query} ({len(results)} result{'s' if len(results) != 1 else ''})"]
    if explain and results:
        if results[0].reading:
            lines.append("Reading: " + "; ".join(results[0].reading))
        readings = [f"{source} → {target}" for source, target in results[0].translated.items()]
        readings += [f"{typo} → {word} (closest indexed word)" for typo, word in results[0].corrected.items()]
        if readings:
            lines.append("Read as: " + "; ".join(readings))
    for number, result in enumerate(results, start=1):
        entry = result.entry
        lines.append(f"{number:>2}. [{entry.kind}] {entry.id}  score={result.score:.2f}  "
                     f"confidence={result.confidence}")
        detail = entry.path + (f" — {entry.summary}" if entry.summary else "")
        lines.append(f"    {detail[:160]}")
        if result.also_in:
            shown = ", ".join(result.also_in[:3]) + (f" and {len(result.also_in) - 3} more" if len(
                result.also_in) > 3 else "")
            lines.append(f"    also in: {shown}")
        if explain:
            parts = [f"{k}={v:g}" for k, v in result.components.items()
                     if v and not (k in ("prior", "aboutness") and v == 1.0)]
            lines.append(f"    why: {', '.join(parts) or 'nothing'}")
            for reason in result.reasons:
                lines.append(f"    because: {reason}")
            if result.matches():
                lines.append("    matched: " + " | ".join(f"{f}: {' '.join(t)}" for f, t in result.matches().items()))
            if result.surfaced_by:
                via = result.surfaced_by
                lines.append(f"    surfaced by: {via['kind']} {via['id']} ({via['hops']} hop"
                             f"{'s' if via['hops'] != 1 else ''}, {via['confidence']})")
    return "\n".join(lines) + "\n"


def with_fusion(text: str, results: list[Any]) -> str:
    """The explanation's lines, each result followed by its two ranks, the fused score and its best chunk."""
    from docbridge.engine.retrieval.fusion import AGREEMENT
    lines = text.rstrip("\n").split("\n")
    if results and results[0].fusion and results[0].fusion.get("agreed"):
        lines.insert(1, "Fusion: the two rankings agree on the best answer (it is among the dense ranking's "
                        f"{AGREEMENT} best): the lexical order stands")
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
            dense = fusion["denseRank"] if fusion["denseRank"] is not None else "- (no passages)"
            out.append(f"    fused: {fusion['fused']:.6f} (lexical rank {lexical}, dense rank {dense}, "
                       f"cosine {cosine}{', kept in place: ' + fusion['pinned'] if fusion['pinned'] else ''})")
            chunk = fusion.get("bestChunk")
            if chunk:
                where = f"{chunk['id']} lines {chunk['startLine']}-{chunk['endLine']}"
                heading = f" — {chunk['heading']}" if chunk["heading"] else ""
                preview = " ".join(chunk["text"].split())[:120]
                out.append(f"    best chunk: {where}{heading}: {preview}")
    return "\n".join(out) + "\n"
