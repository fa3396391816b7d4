"""`docbridge suggest [--documentation]`: the suggestions the model holds, as advice bound to its hashes.

The original's `suggest` ran its Registry agent; here only `docbridge enrich` runs an agent, and `suggest` lists
what is there to act on: areas the import graph suggests for a flat layout, the agent proposals waiting for a
person, and with `--documentation` what the documentation audit asks for (docbridge.engine.agent.suggestions).
"""

from __future__ import annotations

import argparse
import json
import sys

from docbridge.cli.common import EXIT_OK, UsageError, add_root, open_workspace, root_dir

NAME = "suggest"
HELP = "what to do next: suggested areas, pending agent proposals, and (--documentation) the audit's asks"
DESCRIPTION = ("List advice bound to the model's snapshot hash: areas the import graph suggests when the layout is "
               "flat, the enrichment proposals an agent made that wait for a person (`docbridge enrich` runs the "
               "agent; `docbridge fix` decides), and with --documentation what the documentation audit asks for "
               "(fix a declaration, document an uncovered package or area, merge a duplicate, regenerate a region, "
               "improve a document, declare a module's relations), bound to the audit's hash. Nothing is applied.")
EPILOG = "Exit 0 (suggestions are advice, never a failure); 2 on a usage or input error."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--documentation", action="store_true",
                        help="also suggest what the documentation audit asks for (docbridge audit)")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N suggestions, the most pressing first")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--text", action="store_true", help="print a readable list (the default)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.governance import disk_reader
    from docbridge.engine.agent.suggestions import render_text, suggestions
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1.")
    root = root_dir(args.root)
    workspace = open_workspace(root, use_cache=not args.no_cache)
    state = workspace.ensure_resolved()
    findings = workspace.findings() if args.documentation else []
    payload = suggestions(state, findings, disk_reader(root), documentation=args.documentation, limit=args.limit)
    if args.json:
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(payload))
    return EXIT_OK
