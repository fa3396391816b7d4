"""`docbridge fix approve|reject PROPOSAL_ID`: a person's decision on a pending enrichment proposal."""

from __future__ import annotations

import argparse
import json

from docbridge.cli.common import EXIT_OK, UsageError, add_root, console, open_workspace, root_dir

NAME = "fix"
HELP = "decide a pending enrichment proposal"
DESCRIPTION = "Approve or reject a pending proposal of .docbridge/overlay.json."
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("decision", choices=["approve", "reject"])
    parser.add_argument("proposal_id", metavar="PROPOSAL_ID")
    parser.add_argument("--by", required=True, metavar="NAME", help="the person deciding")
    parser.add_argument("--reason", metavar="TEXT", help="why (recorded with a rejection)")
    add_root(parser)
    parser.add_argument("--json", action="store_true", help="print the decided entry as JSON")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.enrich.approvals import DecisionRefused, decide
    from docbridge.engine.views.snapshot import snapshot_of
    root = root_dir(args.root)
    workspace = open_workspace(root)
    entities = snapshot_of(workspace.ensure_resolved()).entities
    try:
        moved = decide(root, entities, args.proposal_id, args.by, args.decision == "approve", args.reason,
                       agents=workspace.config.intelligence.registry.agent_ids())
    except DecisionRefused as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps(moved, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        word = "approved" if args.decision == "approve" else "rejected"
        console().print(f"{word} {args.proposal_id} ({moved.get('kind')} on {moved.get('entity')}) by {args.by}",
                        markup=False)
    return EXIT_OK
