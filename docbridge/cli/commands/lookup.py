"""`docbridge lookup`: everything an agent reads before editing an entity."""

from __future__ import annotations

import argparse
import sys

from docbridge.cli.common import EXIT_OK, UsageError, add_root, dump, reference_workspace, root_dir

NAME = "lookup"
HELP = "everything an agent reads before editing an entity"
DESCRIPTION = ("The entity, its neighbours by relation kind, the documents that cover and mention it, its handoff, "
               "its open findings and its evidence, optionally under a token budget.")
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ref", help="entity id, ownership id, alias or path")
    add_root(parser)
    parser.add_argument("--depth", type=int, default=1, metavar="N", help="neighbour hops, 1 to 3 (default 1)")
    parser.add_argument("--budget", type=int, metavar="N", help="token budget; drops evidence excerpts, related, "
                                                               "neighbours, then summaries")
    parser.add_argument("--json", action="store_true", help="print JSON (default: text)")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.agent.handoff import UnknownReference
    from docbridge.engine.agent.payloads import lookup, render_lookup_text
    from docbridge.engine.base.budget import BudgetError
    root = root_dir(args.root)
    if not 1 <= args.depth <= 3:
        raise UsageError("--depth must be 1, 2 or 3.")
    workspace, projection = reference_workspace(root, not args.no_cache)
    try:
        payload = lookup(workspace.ensure_resolved(), args.ref, args.depth, args.budget, projection)
    except (UnknownReference, BudgetError) as exc:
        raise UsageError(str(exc)) from exc
    sys.stdout.write(dump(payload) if args.json else render_lookup_text(payload))
    return EXIT_OK
