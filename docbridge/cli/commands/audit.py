"""`docbridge audit [documentation]`: the documentation audit (titles, length, examples, sections, duplicates,
coverage). `audit documentation` is the original's name for the same audit: its report adds the original's type
and metrics (documents, coverage units covered, findings by category), and its text their summary lines."""

from __future__ import annotations

import argparse
import json

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, add_root, emit, open_workspace, root_dir

NAME = "audit"
HELP = "audit the documentation: titles, length, examples, sections, duplicates, coverage"
DESCRIPTION = ("Audit every document (title, length, example, required sections, exact duplicates, generated "
               "regions, declaration codes), package and area coverage, and the reconciliation; report blocked, "
               "needs-review or pass. `docbridge audit documentation` (the original's form) is the same audit with "
               "the report's type and metrics: documents, packages or areas covered, findings by category.")
EPILOG = "Exit 0 unless the status is blocked (1); 2 on a usage or input error."

SCOPES = ("documentation",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scope", nargs="?", choices=SCOPES, metavar="documentation",
                        help="the original's form: add the report's type and metrics (documents, coverage)")
    add_root(parser)
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report (the default)")
    form.add_argument("--text", action="store_true", help="readable report")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.governance import disk_reader
    from docbridge.engine.governance.audit import audit, documentation_metrics, render_metrics, render_text
    root = root_dir(args.root)
    workspace = open_workspace(root, use_cache=not args.no_cache)
    state = workspace.ensure_resolved()
    report = audit(state, workspace.findings(), disk_reader(root))
    status = EXIT_FINDINGS if report["status"] == "blocked" else EXIT_OK
    if args.scope != "documentation":
        emit(render_text(report) if args.text else json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return status
    metrics = documentation_metrics(state, report)
    if args.text:
        findings, _, verdict = render_text(report).rstrip("\n").rpartition("\n")
        emit((findings + "\n" if findings else "") + render_metrics(metrics) + verdict + "\n")
    else:
        document = {"type": "documentation-audit-report", "schemaVersion": 1, **report, "metrics": metrics}
        emit(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return status
