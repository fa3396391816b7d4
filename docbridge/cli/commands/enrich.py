"""`docbridge enrich`: proposals from the configured agent, validated and written to the sealed overlay.

The only module that imports the code that runs the agent command (docbridge.engine.enrich.run); every other
command reads the overlay."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from docbridge.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    Progress,
    UsageError,
    add_root,
    console,
    open_workspace,
    root_dir,
)

NAME = "enrich"
HELP = "ask the configured agent for proposals and update .docbridge/overlay.json"
DESCRIPTION = ("Send bounded context packs to the agent command (protocol doc-bridge.registry-agent.v2 on "
               "stdin/stdout), validate every proposal deterministically and write the sealed overlay: accepted by "
               "policy, pending for a person, rejected with a reason. Runs only when intelligence.registry.enabled "
               "is true. Exit 1 when an agent run failed (the previous overlay is kept) or --retrieval-delta shows "
               "hit@3 dropping.")
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--agent-command", metavar="CMD",
                        help="the agent command (default: intelligence.registry.command)")
    parser.add_argument("--role", action="append", choices=["curator", "reviewer", "adjudicator"],
                        help="run only this role (repeatable; default: intelligence.registry.roles)")
    parser.add_argument("--json", action="store_true", help="print the report and its stats as JSON")
    parser.add_argument("--retrieval-delta", metavar="SUITE", help="also rank SUITE without and with the overlay")


def run(args: argparse.Namespace) -> int:
    from docbridge.cli.overlay import render_delta, retrieval_delta
    from docbridge.engine.enrich.run import EnrichError, enrich
    root = root_dir(args.root)
    if args.retrieval_delta:  # a suite that cannot be read is refused before any agent runs
        from docbridge.engine.agent.suites import BenchError, load_suite
        try:
            load_suite(Path(args.retrieval_delta))
        except BenchError as exc:
            raise UsageError(str(exc)) from exc
    workspace = open_workspace(root, progress=not args.json)
    try:
        with Progress(not args.json) as bar:
            report = enrich(workspace, command=args.agent_command, roles=args.role or None,
                            progress=bar if bar.enabled else None)
    except EnrichError as exc:
        raise UsageError(str(exc)) from exc
    status = EXIT_OK if report["written"] else EXIT_FINDINGS
    if args.retrieval_delta:
        report["retrievalDelta"] = retrieval_delta(root, Path(args.retrieval_delta), require_overlay=False)
        if report["retrievalDelta"]["regression"]:
            status = EXIT_FINDINGS
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
        return status
    stats = report["stats"]
    out = console()
    verb = "wrote" if report["written"] else "did not write (an agent run failed; the previous overlay stands)"
    out.print(f"enrich: {verb} {report['overlay']}", markup=False)
    out.print(f"  this run: {report['accepted']} accepted, {report['pending']} pending, {report['rejected']} "
              f"rejected; overlay: {report['totals']['accepted']} accepted, {report['totals']['pending']} pending",
              markup=False)
    cost = stats["cost"]
    dollars = "not reported" if cost["registryAgentCostUsd"] is None else f"${cost['registryAgentCostUsd']:g}"
    out.print(f"  Cost: agent runs {stats['agentRuns']}, packs {stats['packs']} (cache hits {stats['cacheHits']}, "
              f"rate {stats['cacheHitRate']:.0%}), input bytes {stats['inputBytes']}, output bytes "
              f"{stats['outputBytes']}, tokens {cost['registryAgentInputTokens']} in / "
              f"{cost['registryAgentOutputTokens']} out ({cost['tokenMethod']}), cost {dollars}, "
              f"{stats['wallTimeMs']} ms", markup=False)
    rejected = sum(stats["rejectionReasons"].values())
    out.print(f"  Rejections: {rejected}; Invented references: {stats['inventedReferences']}; expired "
              f"{stats['expired']}", markup=False)
    identical = "identical overlay hash" if stats["overlayHashIdentical"] else "overlay hash changed"
    out.print(f"  Stability: {identical}; proposal id share {stats['proposalIdShare']:.3f} "
              f"({stats['sharedProposalIds']} shared of {stats['proposalIds']} now, {stats['previousProposalIds']} "
              f"before)", markup=False)
    for reason, count in stats["rejectionReasons"].items():
        out.print(f"  rejected {reason}: {count}", markup=False)
    for failure in stats["failures"]:
        out.print(f"  agent failure {failure['reason']}: {failure['detail']}", markup=False)
    if "retrievalDelta" in report:
        out.print(render_delta(report["retrievalDelta"]), markup=False)
    return status
