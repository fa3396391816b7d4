"""Governance gates on the command line: `reconcile`, `audit`, `doctor`, `parity`, `study expectations`, and
`check --mode` / `check --format finding`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.cli import EXIT_FINDINGS, EXIT_OK, UsageError, _add_root, _root, _write_output, open_workspace


def _emit(text: str, output: str | None = None) -> None:
    if output:
        _write_output(output, text)
    else:
        sys.stdout.write(text)


# ---------------------------------------------------------------------------------------------- reconcile


def cmd_reconcile(args: argparse.Namespace) -> int:
    from engine.reconciliation import reconcile, render_text
    root = _root(args.root)
    workspace = open_workspace(root, use_cache=not args.no_cache)
    settings = workspace.config.reconciliation
    scope = args.scope or settings.scope
    include = args.include_orphaned or settings.include_orphaned_documents
    report = reconcile(workspace.state, workspace.findings(), scope, settings.required_relation_kinds, include)
    if args.text:
        _emit(render_text(report))
    else:
        _emit(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return EXIT_FINDINGS if any(d["severity"] == "error" for d in report["diagnostics"]) else EXIT_OK


def _register_reconcile(commands: Any) -> None:
    from engine.reconciliation import SCOPES
    parser = commands.add_parser(
        "reconcile", help="match the relations documents declare to the ones the code shows",
        description="Match every relation declared under `docbridge.relations` to the observed imports, and "
                    "report observed relations no document declares, aggregated to a scope.",
        epilog="Exit 0 when no diagnostic is an error, 1 when one is, 2 on a usage or input error.")
    _add_root(parser)
    parser.add_argument("--scope", choices=SCOPES, help="aggregation scope (default: reconciliation.scope, else file)")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report (the default)")
    form.add_argument("--text", action="store_true", help="readable report")
    parser.add_argument("--include-orphaned", action="store_true",
                        help="report documents that declare no relation (DOCUMENTATION_ORPHANED)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    parser.set_defaults(handler=cmd_reconcile)


def register(commands: Any) -> None:
    _register_reconcile(commands)


__all__ = ["UsageError", "register"]
