"""`docbridge study expectations SUITE`: deterministic checks of an agent study's suite before it is run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, add_root, emit, open_retriever, root_dir

NAME = "study"
HELP = "check an agent study's suite before running it"
DESCRIPTION = "Deterministic checks of agent-study suites."
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="study_command", required=True, metavar="ACTION")
    expectations = actions.add_parser(
        "expectations", help="verify each task's expectedEntities / expectedDocuments against search",
        description="Run each task's query through search and check that its expected entities and documents are "
                    "in the top results (limit per task, default 10).",
        epilog="Exit 0 when every expectation is met, 1 on a miss, 2 on an invalid suite.")
    expectations.add_argument("suite_file", metavar="SUITE", help="the study suite (JSON)")
    add_root(expectations)
    expectations.add_argument("--json", action="store_true", help="JSON report")


def run(args: argparse.Namespace) -> int:
    # `expectations` is the one action (argparse requires it)
    return expectations(args)


def expectations(args: argparse.Namespace) -> int:
    from docbridge.engine.governance import study
    root = root_dir(args.root)
    path = Path(args.suite_file)
    try:
        suite = study.load_suite(path, args.suite_file)
    except study.SuiteError as exc:
        raise UsageError(str(exc)) from exc
    _, retriever = open_retriever(root)
    report = study.verify(retriever, suite)
    emit(json.dumps(report, indent=2, ensure_ascii=False) + "\n" if args.json else study.render_text(report))
    return EXIT_OK if report["ok"] else EXIT_FINDINGS
