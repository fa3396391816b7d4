"""`docbridge reconcile`: the relations documents declare matched to the ones the code shows."""

from __future__ import annotations

import argparse
import json

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, add_root, emit, open_workspace, root_dir
from docbridge.engine.governance.names import RECONCILIATION_SCOPES

NAME = "reconcile"
HELP = "match the relations documents declare to the ones the code shows"
DESCRIPTION = ("Match every relation declared under `docbridge.relations` to the observed imports, and report "
               "observed relations no document declares, aggregated to a scope.")
EPILOG = "Exit 0 when no diagnostic is an error, 1 when one is, 2 on a usage or input error."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--scope", choices=RECONCILIATION_SCOPES,
                        help="aggregation scope (default: reconciliation.scope, else file)")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report (the default)")
    form.add_argument("--text", action="store_true", help="readable report")
    parser.add_argument("--include-orphaned", action="store_true",
                        help="report documents that declare no relation (DOCUMENTATION_ORPHANED)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.governance.reconciliation import reconcile, render_text
    root = root_dir(args.root)
    workspace = open_workspace(root, use_cache=not args.no_cache)
    settings = workspace.config.reconciliation
    scope = args.scope or settings.scope
    include = args.include_orphaned or settings.include_orphaned_documents
    report = reconcile(workspace.state, workspace.findings(), scope, settings.required_relation_kinds, include)
    if args.text:
        emit(render_text(report))
    else:
        emit(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return EXIT_FINDINGS if any(d["severity"] == "error" for d in report["diagnostics"]) else EXIT_OK
