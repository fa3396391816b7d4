"""`docbridge study expectations SUITE`: deterministic checks of an agent study's suite before it is run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, add_root, emit, open_retriever, root_dir

NAME = "study"
HELP = "check an agent study's suite before running it"
DESCRIPTION = "Deterministic checks of agent-study suites."
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="study_command", required=True, metavar="ACTION")
    expectations = actions.add_parser(
        "expectations", help="verify each task's expectedEntities / expectedDocuments against search",
        description="Run each task's queries (retrievalQueries, else query, else objective) through search and "
                    "check that its expected entities and documents are in the top results (limit per task, "
                    "default 10). With --expectations, the suite's expectations are opaque references that the "
                    "local expectations file resolves to ids and paths. A task without expectations is listed as "
                    "not checked, never as a pass. Also reports the tokens an agent spends to its first evidence.",
        epilog="Exit 0 when every checked task meets its expectations, 1 on a miss, an unresolved reference or when "
               "nothing was checked, 2 on an invalid suite or expectations file.")
    expectations.add_argument("suite_file", metavar="SUITE", help="the study suite (JSON)")
    add_root(expectations)
    expectations.add_argument("--expectations", metavar="FILE",
                              help="a local StudyExpectationsV1 file resolving the suite's opaque references")
    expectations.add_argument("--repository", metavar="ID",
                              help="check the tasks of this repository (default: the expectations file's only one)")
    expectations.add_argument("--index", metavar="PATH",
                              help="rank a DocBridgeIndexV1 file (docbridge index) instead of scanning the root")
    expectations.add_argument("--require-expectations", action="store_true",
                              help="refuse a suite in which a task declares no expectations (exit 2, naming them)")
    expectations.add_argument("--tokens", choices=["approximate", "exact"], default="approximate",
                              help="count tokens to first evidence as characters / 4 (default) or exactly "
                                   "(cl100k_base, the optional `tokens` extra)")
    expectations.add_argument("--json", action="store_true", help="JSON report")


def run(args: argparse.Namespace) -> int:
    # `expectations` is the one action (argparse requires it)
    return expectations(args)


def expectations(args: argparse.Namespace) -> int:
    from docbridge.engine.governance import study
    root = root_dir(args.root)
    try:
        suite = study.load_suite(Path(args.suite_file), args.suite_file)
        resolved = None
        if args.expectations:
            study.check_references(suite, args.suite_file)
            resolved = study.load_expectations(Path(args.expectations), args.expectations, suite)
        repository = study.select_repository(suite, resolved, args.repository)
    except study.SuiteError as exc:
        raise UsageError(str(exc)) from exc
    if args.require_expectations:
        without = [t["id"] for t in suite["tasks"] if not study.expects(t)]
        if without:
            raise UsageError(f"{args.suite_file}: these tasks declare no expectedEntities or expectedDocuments, so "
                             f"nothing about them can be checked mechanically: {', '.join(without)}.")
    from docbridge.cli.commands.bench import counter, index_retriever
    count = counter(args.tokens)
    retriever = index_retriever(Path(args.index)) if args.index else open_retriever(root)[1]
    report = study.verify(retriever, suite, resolved, repository)
    _first_evidence(report, retriever, root, count)
    emit(json.dumps(report, indent=2, ensure_ascii=False) + "\n" if args.json else study.render_text(report))
    return EXIT_OK if report["ok"] else EXIT_FINDINGS


def _first_evidence(report: dict[str, Any], retriever: Any, root: Path, count: Any) -> None:
    """Each case's tokens to first evidence (an agent's `search --agent` call, then the wrong results it reads
    before a right one) and their percentiles: the study's `tokensToFirstEvidenceP95` for the deterministic arm."""
    from docbridge.engine.agent import suites
    for outcome in report["outcomes"]:
        outcome["tokensToFirstEvidence"] = suites.first_evidence_cost(
            retriever, root, outcome["query"], set(outcome["expectedTargets"]), count)
    if report["outcomes"]:
        summary = suites.first_evidence_summary([o["tokensToFirstEvidence"] for o in report["outcomes"]])
        report["metrics"].update({"tokensToFirstEvidence": summary, "tokensToFirstEvidenceP95": summary["p95"],
                                  "tokenMethod": count.method})
