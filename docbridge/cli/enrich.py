"""`docbridge enrich`, `docbridge fix approve|reject`, `check --enrich` and `bench retrieval --overlay`.

Only `enrich` imports the agent-command code (docbridge.engine.enrich.run); the others read the overlay.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.main import (
    EXIT_FINDINGS,
    EXIT_OK,
    UsageError,
    _console,
    _Progress,
    _root,
    cmd_bench,
    cmd_check,
    open_workspace,
)


def cmd_enrich(args: argparse.Namespace) -> int:
    from docbridge.engine.enrich.run import EnrichError, enrich
    root = _root(args.root)
    workspace = open_workspace(root, progress=not args.json)
    try:
        with _Progress(not args.json) as bar:
            report = enrich(workspace, command=args.agent_command, roles=args.role or None,
                            progress=bar if bar.enabled else None)
    except EnrichError as exc:
        raise UsageError(str(exc)) from exc
    status = EXIT_OK if report["written"] else EXIT_FINDINGS
    if args.retrieval_delta:
        report["retrievalDelta"] = retrieval_delta(root, Path(args.retrieval_delta))
        if report["retrievalDelta"]["hitAt3Dropped"]:
            status = EXIT_FINDINGS
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
        return status
    stats = report["stats"]
    out = _console()
    verb = "wrote" if report["written"] else "did not write (an agent run failed; the previous overlay stands)"
    out.print(f"enrich: {verb} {report['overlay']}", markup=False)
    out.print(f"  this run: {report['accepted']} accepted, {report['pending']} pending, {report['rejected']} "
              f"rejected; overlay: {report['totals']['accepted']} accepted, {report['totals']['pending']} pending",
              markup=False)
    out.print(f"  agent runs {stats['agentRuns']}, packs {stats['packs']} (cache hits {stats['cacheHits']}, "
              f"rate {stats['cacheHitRate']:.0%}), bytes sent {stats['bytesSent']}, received "
              f"{stats['bytesReceived']}, expired {stats['expired']}, {stats['wallTimeMs']} ms", markup=False)
    for reason, count in stats["rejectionReasons"].items():
        out.print(f"  rejected {reason}: {count}", markup=False)
    for failure in stats["failures"]:
        out.print(f"  agent failure {failure['reason']}: {failure['detail']}", markup=False)
    if "retrievalDelta" in report:
        out.print(render_delta(report["retrievalDelta"]), markup=False)
    return status


def cmd_fix(args: argparse.Namespace) -> int:
    from docbridge.engine.enrich.approvals import DecisionRefused, decide
    root = _root(args.root)
    workspace = open_workspace(root)
    from docbridge.engine.views.snapshot import snapshot_of
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
        _console().print(f"{word} {args.proposal_id} ({moved.get('kind')} on {moved.get('entity')}) by {args.by}",
                         markup=False)
    return EXIT_OK


# ------------------------------------------------------------------------------- check --enrich


def overlay_findings(root: Path, entities: dict[str, Any]) -> list[dict[str, Any]]:
    """The overlay's findings, labelled as such: accepted gaps, and pending contradictions and redundancies."""
    from docbridge.engine.base.overlay import expired_reason, read_overlay
    overlay = read_overlay(root)
    if overlay is None:
        return []
    out = []
    for status, entries in (("accepted", overlay.accepted), ("pending", overlay.pending)):
        for entry in entries:
            if entry.get("kind") not in ("flag-gap", "flag-contradiction", "flag-redundancy"):
                continue
            if status == "accepted" and expired_reason(entry, entities) is not None:
                continue
            evidence = (entry.get("evidence") or [{}])[0]
            payload = entry.get("payload") or {}
            message = {"flag-gap": f"gap in {payload.get('area')}: {payload.get('missing')}",
                       "flag-contradiction": f"contradicts {payload.get('against')}: {payload.get('claim')}",
                       "flag-redundancy": f"duplicates {payload.get('with')}"}[entry["kind"]]
            out.append({"source": "enrichment-overlay", "code": entry["kind"], "status": status,
                        "proposalId": entry["proposalId"], "entity": entry.get("entity"),
                        "path": evidence.get("path"), "line": evidence.get("lineStart"), "message": message})
    return sorted(out, key=lambda f: (f["path"] or "", f["line"] or 0, f["code"], f["proposalId"]))


def cmd_check_enrich(args: argparse.Namespace, plain_check: Any = None) -> int:
    run_check = plain_check or cmd_check
    if not getattr(args, "enrich", False):
        return int(run_check(args))
    if args.output or args.format == "sarif":
        raise UsageError("check --enrich prints text or --format json to stdout only.")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = int(run_check(args))  # the deterministic result: never changed by the overlay
    root = _root(args.root)
    workspace = open_workspace(root, use_cache=not args.no_cache)
    from docbridge.engine.views.snapshot import snapshot_of
    extra = overlay_findings(root, snapshot_of(workspace.ensure_resolved()).entities)
    if args.format == "json":
        report = json.loads(buffer.getvalue())
        report["overlay"] = {"label": "proposed by an agent, not observed; does not change the exit status",
                             "findings": extra}
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(buffer.getvalue())
        if extra:
            sys.stdout.write(f"\nEnrichment overlay (proposed by an agent, not observed): {len(extra)}\n")
            for f in extra:
                sys.stdout.write(f"  [overlay {f['status']}] {f['path']}:{f['line']}: {f['code']}: {f['message']}\n")
    return status


# ------------------------------------------------------------------------------- retrieval delta


def retrieval_delta(root: Path, suite_path: Path) -> dict[str, Any]:
    """The suite ranked without and with the overlay's live entries: metrics of both, lost and gained cases."""
    from docbridge.engine.agent import suites
    from docbridge.engine.retrieval.project import project
    from docbridge.engine.retrieval.rank import Retriever
    try:
        suite = suites.load_suite(suite_path)
    except suites.BenchError as exc:
        raise UsageError(str(exc)) from exc
    workspace = open_workspace(root)
    state = workspace.ensure_resolved()
    from docbridge.engine.views.snapshot import snapshot_of
    snapshot = snapshot_of(state)
    results = {}
    for name, flag in (("without", False), ("with", True)):
        result = suites.run_retrieval_suite(Retriever(project(state, snapshot, overlay=flag)), suite)
        result.pop("_cases")
        results[name] = result
    before = {c["id"]: c["rank"] for c in results["without"]["cases"]}
    after = {c["id"]: c["rank"] for c in results["with"]["cases"]}

    def hit(rank: int | None) -> bool:
        return rank is not None and rank <= 3
    gained = sorted(i for i in after if hit(after[i]) and not hit(before.get(i)))
    lost = sorted(i for i in after if hit(before.get(i)) and not hit(after[i]))
    m0, m1 = results["without"]["metrics"], results["with"]["metrics"]
    return {"suite": str(suite_path), "without": m0, "with": m1,
            "delta": {k: round(m1[k] - m0[k], 6) for k in ("hitAt1", "hitAt3", "meanReciprocalRank")},
            "gained": gained, "lost": lost, "hitAt3Dropped": m1["hitAt3"] < m0["hitAt3"],
            "ranks": {i: {"without": before.get(i), "with": after[i]} for i in sorted(after)
                      if before.get(i) != after[i]}}


def render_delta(delta: dict[str, Any]) -> str:
    d = delta["delta"]
    lines = [f"Retrieval delta with the overlay ({delta['suite']}): hit@1 {d['hitAt1']:+.3f}, "
             f"hit@3 {d['hitAt3']:+.3f}, MRR {d['meanReciprocalRank']:+.3f}",
             f"  hit@3 {delta['without']['hitAt3']:.3f} -> {delta['with']['hitAt3']:.3f}"]
    lines += [f"  gained: {case}" for case in delta["gained"]]
    lines += [f"  lost:   {case}" for case in delta["lost"]]
    if delta["hitAt3Dropped"]:
        lines.append("  hit@3 dropped: the overlay makes search worse")
    return "\n".join(lines) + "\n"


def cmd_bench_overlay(args: argparse.Namespace) -> int:
    if not (getattr(args, "overlay", False) and args.suite == "retrieval"):
        return cmd_bench(args)
    if not args.suite_file:
        raise UsageError("bench retrieval --overlay needs a suite file: docbridge bench retrieval SUITE.json "
                         "--overlay")
    suite_path = Path(args.suite_file)
    root = _root(args.root) if args.root else suite_path.resolve().parent
    delta = retrieval_delta(root, suite_path)
    if args.json:
        print(json.dumps(delta, indent=2, sort_keys=True))
    else:
        sys.stdout.write(render_delta(delta))
    return EXIT_FINDINGS if delta["hitAt3Dropped"] else EXIT_OK


# ------------------------------------------------------------------------------- parser


def register(commands: Any) -> None:
    enrich = commands.add_parser(
        "enrich", help="ask the configured agent for proposals and update .docbridge/overlay.json",
        description="Send bounded context packs to the agent command (protocol doc-bridge.registry-agent.v2 on "
                    "stdin/stdout), validate every proposal deterministically and write the sealed overlay: "
                    "accepted by policy, pending for a person, rejected with a reason. Runs only when "
                    "intelligence.registry.enabled is true. Exit 1 when an agent run failed (the previous "
                    "overlay is kept) or --retrieval-delta shows hit@3 dropping.")
    enrich.add_argument("--root", metavar="DIR", help="repository root (default: the current directory)")
    enrich.add_argument("--agent-command", metavar="CMD",
                        help="the agent command (default: intelligence.registry.command)")
    enrich.add_argument("--role", action="append", choices=["curator", "reviewer", "adjudicator"],
                        help="run only this role (repeatable; default: intelligence.registry.roles)")
    enrich.add_argument("--json", action="store_true", help="print the report and its stats as JSON")
    enrich.add_argument("--retrieval-delta", metavar="SUITE", help="also rank SUITE without and with the overlay")
    enrich.set_defaults(handler=cmd_enrich)

    fix = commands.add_parser("fix", help="decide a pending enrichment proposal",
                              description="Approve or reject a pending proposal of .docbridge/overlay.json.")
    fix.add_argument("decision", choices=["approve", "reject"])
    fix.add_argument("proposal_id", metavar="PROPOSAL_ID")
    fix.add_argument("--by", required=True, metavar="NAME", help="the person deciding")
    fix.add_argument("--reason", metavar="TEXT", help="why (recorded with a rejection)")
    fix.add_argument("--root", metavar="DIR", help="repository root (default: the current directory)")
    fix.add_argument("--json", action="store_true", help="print the decided entry as JSON")
    fix.set_defaults(handler=cmd_fix)

    check = commands.choices["check"]
    check.add_argument("--enrich", action="store_true",
                       help="also list the enrichment overlay's findings (labelled; the exit status is unchanged)")
    # wrap whatever `check` runs by now (rules modes add their own handler): the overlay only appends
    plain_check = check.get_default("handler") or cmd_check
    check.set_defaults(handler=lambda args: cmd_check_enrich(args, plain_check))
    bench = commands.choices["bench"]
    bench.add_argument("--overlay", action="store_true",
                       help="retrieval: rank without and with the enrichment overlay; exit 1 when hit@3 drops")
    bench.set_defaults(handler=cmd_bench_overlay)
