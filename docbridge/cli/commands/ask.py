"""`docbridge ask`: a question in plain words, answered with the best match and its handoff."""

from __future__ import annotations

import argparse
import sys

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, add_root, dump, reference_workspace, root_dir

NAME = "ask"
HELP = "a question in plain words: the best match and where to start"
DESCRIPTION = ("Answer a natural-language question (\"where do I change how tax is calculated?\") with the "
               "best-ranked document, module, area, package or route and its handoff: where to start, what to read "
               "before editing, where to edit and which checks to run.")
EPILOG = "Exit 1 when nothing matches, 2 on a usage error."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", help="the question, in quotes")
    add_root(parser)
    parser.add_argument("--limit", type=int, default=4, metavar="N", help="the best match and N-1 alternatives")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")


def run(args: argparse.Namespace) -> int:
    """Search, then the handoff of the best unit: the answer to "where do I start for …"."""
    from docbridge.engine.agent.handoff import handoff_for_entity
    from docbridge.engine.agent.knowledge import ArgumentError, knowledge_search
    from docbridge.engine.base.model import CHANGE, INTENT
    from docbridge.engine.retrieval.rank import Retriever
    root = root_dir(args.root)
    workspace, projection = reference_workspace(root, not args.no_cache)
    retriever = Retriever(projection)
    try:
        found = knowledge_search(retriever, args.question, limit=args.limit)
    except ArgumentError as exc:
        raise UsageError(str(exc)) from exc
    best = found["results"][0] if found["results"] else None
    handoff = handoff_for_entity(workspace.state, best["entityId"], projection) if best else None
    answer = {"type": "ask", "schemaVersion": 1, "question": args.question, "best": best,
              "handoff": handoff, "alternatives": found["results"][1:]}
    if args.json:
        sys.stdout.write(dump(answer))
        return EXIT_OK if best else EXIT_FINDINGS
    if best is None:
        sys.stdout.write(f"Nothing in {root.name} matches {args.question!r}. Try other words, or "
                         "`docbridge list knowledge --text`.\n")
        return EXIT_FINDINGS
    from docbridge.engine.agent.handoff import render_handoff_text
    lines = [f"Best match: [{best['type']}] {best['id']} — {best['title']} ({best['path']}, {best['confidence']})"]
    if best.get("summary"):
        lines.append(f"  {best['summary']}")
    if best.get("excerpt"):
        lines.append(f"  > {best['excerpt']}")
    lines.append("")
    if handoff is not None and (best["kind"] in (INTENT, CHANGE) or handoff):
        lines += render_handoff_text(handoff).rstrip("\n").splitlines()
    if answer["alternatives"]:
        lines.append("")
        lines.append("Also relevant:")
        lines += [f"  [{r['type']}] {r['id']} — {r['path']}" for r in answer["alternatives"]]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
