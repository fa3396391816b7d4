"""`docbridge audit`: the documentation audit (titles, length, examples, sections, duplicates, coverage)."""

from __future__ import annotations

import argparse
import json

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, add_root, emit, open_workspace, root_dir

NAME = "audit"
HELP = "audit the documentation: titles, length, examples, sections, duplicates, coverage"
DESCRIPTION = ("Audit every document (title, length, example, required sections, exact duplicates, generated "
               "regions, declaration codes), package and area coverage, and the reconciliation; report blocked, "
               "needs-review or pass.")
EPILOG = "Exit 0 unless the status is blocked (1); 2 on a usage or input error."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report (the default)")
    form.add_argument("--text", action="store_true", help="readable report")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.governance import disk_reader
    from docbridge.engine.governance.audit import audit, render_text
    root = root_dir(args.root)
    workspace = open_workspace(root, use_cache=not args.no_cache)
    report = audit(workspace.ensure_resolved(), workspace.findings(), disk_reader(root))
    emit(render_text(report) if args.text else json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return EXIT_FINDINGS if report["status"] == "blocked" else EXIT_OK
