"""`docbridge gate run [GATE...]`: the documentation gates CI runs, read-only (docbridge.engine.render.gates, the
implementation the MCP tool gate.status answers with)."""

from __future__ import annotations

import argparse
import json
import sys

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, add_root, open_workspace, root_dir

NAME = "gate"
HELP = "run the documentation gates (index freshness, the documentation standard, ...) for CI"
DESCRIPTION = ("Evaluate the gates the configuration selects (gates.preset: minimal runs index-freshness; standard "
               "adds human-guide-links; strict adds okf-type and docs-style; playbook runs index-freshness and "
               "okf-type; gates.include and gates.exclude adjust it), or the gates named. documentation-standard-v1 "
               "is the conformance profile of conformance.documentationStandardV1: human documents, a current "
               "llms.txt with raw sources, action-ready handoffs, contribution guidance, metadata, links, tested "
               "quickstarts (required), visuals and diagrams (recommended), and approved exceptions. Nothing is "
               "written.")
EPILOG = ("Gates: index-freshness, human-guide-links, okf-type, docs-style, documentation-standard-v1. Exit 0 when "
          "every gate passes, 1 when one fails, 2 on a usage or configuration error.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["run"], help="run: evaluate the gates")
    parser.add_argument("gates", nargs="*", metavar="GATE", help="only these gates (default: the configured ones)")
    add_root(parser)
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="{type, ok, preset, results: [{id, ok, message, expected?, actual?, details?}], "
                             "notEvaluated} (the default)")
    output.add_argument("--text", action="store_true", help="one line per gate, and the profile's rules")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.render.gates import GateError, render_text, run_gates
    from docbridge.engine.retrieval.project import projection_of
    root = root_dir(args.root)
    workspace = open_workspace(root, progress=False, use_cache=not args.no_cache)
    state = workspace.ensure_resolved()
    try:
        result = run_gates(state, projection_of(state), list(args.gates) or None)
    except GateError as exc:
        raise UsageError(str(exc)) from None
    if args.text:
        sys.stdout.write(render_text(result))
    else:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK if result["ok"] else EXIT_FINDINGS
