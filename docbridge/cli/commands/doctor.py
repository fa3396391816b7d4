"""`docbridge doctor`: how ready the documentation is for agents, graded, with the actions that raise the
grade."""

from __future__ import annotations

import argparse
import json

from docbridge.cli.common import EXIT_OK, add_root, emit, root_dir

NAME = "doctor"
HELP = "grade how ready the documentation is for agents, with the actions that raise the grade"
DESCRIPTION = ("Measure reachability (documents linked from an entry document and in the projection; the share in "
               "the projection alone, the reference's figure, is shown beside it), connectivity (areas documented, "
               "documents linked to code) and hit@3 on a golden suite; grade A needs 100 % reachability, 80 % "
               "connectivity and 80 % hit@3.")
EPILOG = "Exit 0 with a report, 2 on a usage or input error (a suite that does not exist or is invalid)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--suite", metavar="FILE", help="golden retrieval suite (default: doctor.suite)")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report")
    form.add_argument("--text", action="store_true", help="readable report (the default)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the caches")


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.governance import doctor_report
    from docbridge.engine.agent.doctor import render_text
    root = root_dir(args.root)
    report = doctor_report(root, args.suite, not args.no_cache)
    emit(json.dumps(report, indent=2, ensure_ascii=False) + "\n" if args.json else render_text(report))
    return EXIT_OK
