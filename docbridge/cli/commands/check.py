"""`docbridge check`: drift between documentation and code, with the rules mode (`--mode`), the documentation
audit's codes (`--audit`) and the enrichment overlay's findings (`--enrich`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, add_root, emit, open_workspace, root_dir
from docbridge.engine.governance.names import RULES_MODES

NAME = "check"
HELP = "report drift between documentation and code"
DESCRIPTION = ("Report broken links and anchors, unresolved and ambiguous mentions, malformed frontmatter, "
               "undocumented areas and area imports, unobserved ownership paths, import cycles and hand-edited "
               "generated regions.")
EPILOG = "Exit 0 when no finding reaches --fail-on, 1 when one does, 2 on a usage or input error."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--format", choices=["text", "json", "sarif", "finding"], default="text",
                        help="output format (finding: the ecosystem Finding shape, most severe first)")
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    parser.add_argument("--fail-on", choices=["error", "warning", "info", "never"], default="error",
                        help="lowest severity that makes the exit code 1 (default: error)")
    parser.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    parser.add_argument("--mode", choices=RULES_MODES,
                        help="rules mode: rule-mapped findings take its severity (default info, recommended "
                             "warning, strict error); default: rules.mode, else none")
    parser.add_argument("--audit", action="store_true",
                        help="also report the documentation audit's codes (docbridge audit)")
    parser.add_argument("--enrich", action="store_true",
                        help="also list the enrichment overlay's findings (labelled; the exit status is unchanged) "
                             "and say how the overlay stands; the agent is never run here: docbridge enrich runs it")


def run(args: argparse.Namespace) -> int:
    if args.enrich and (args.output or args.format == "sarif"):
        raise UsageError("check --enrich prints text or --format json to stdout only.")
    root = root_dir(args.root)
    text, failed = report(args, root)
    if args.enrich:
        text = with_overlay(text, args, root)  # the exit status stays the deterministic result's
    emit(text, args.output)
    return EXIT_FINDINGS if failed else EXIT_OK


def report(args: argparse.Namespace, root: Path) -> tuple[str, bool]:
    """The report in `--format`, and whether a finding reaches `--fail-on`."""
    from docbridge.engine.artifacts.snapshot_file import load_findings, store_findings
    from docbridge.engine.base.findings import CheckReport, fails, render_sarif, render_text, summarise
    from docbridge.engine.governance.rules import apply_mode
    workspace = open_workspace(root, progress=args.format == "text", use_cache=not args.no_cache, resolve=False)
    findings = load_findings(workspace)  # unchanged inputs: the findings of the last run
    if findings is None:
        findings = workspace.findings()
        store_findings(workspace, findings)
    if args.audit:
        from docbridge.cli.governance import disk_reader
        from docbridge.engine.governance.audit import AUDIT_CODES, document_audit, package_audit
        state = workspace.ensure_resolved()
        extra = [f for f in document_audit(state, disk_reader(root)) + package_audit(state)
                 if f.code in AUDIT_CODES and f.code != "GENERATED_REGION_EDITED"]
        findings = sorted([*findings, *extra], key=lambda f: f.sort_key)
    settings = workspace.config.rules
    mode = args.mode or settings.mode
    if mode is not None:
        findings = apply_mode(workspace.ensure_resolved(), findings, mode, settings)
    suggestions = workspace.area_suggestions()
    if args.format == "json":
        check_report = CheckReport(findings=findings, summary=summarise(findings), suggestions=suggestions)
        text = check_report.model_dump_json(indent=2) + "\n"
    elif args.format == "sarif":
        text = json.dumps(render_sarif(findings, root.as_uri() + "/"), indent=2) + "\n"
    elif args.format == "finding":
        text = render_finding_format(findings)
    else:
        text = render_text(findings, suggestions)
    return text, fails(findings, args.fail_on)


def render_finding_format(findings: list[Any]) -> str:
    """`check --format finding`: the ecosystem Finding shape, most severe first, then id."""
    from docbridge.engine.agent.knowledge import FINDING_SEVERITY, finding_record
    order = list(FINDING_SEVERITY.values())
    records = []
    for finding in findings:
        record = finding_record(finding)
        if finding.data.get("id"):
            record["id"] = finding.data["id"]
            record["ruleId"] = finding.data["rule"]
            record["code"] = finding.code
        records.append(record)
    records.sort(key=lambda r: (order.index(r["severity"]), r["id"]))
    return json.dumps({"findings": records}, indent=2, ensure_ascii=False) + "\n"


def overlay_status(root: Path, enabled: bool, snapshot_hash: str) -> dict[str, str]:
    """How the enrichment overlay stands, and what to run about it: `check --enrich` reads the overlay the last
    `docbridge enrich` wrote and never runs the agent itself (a check stays deterministic, offline and free; the
    agent is a program the user's settings name, which may call a model and cost money)."""
    from docbridge.engine.base.overlay import overlay_path, read_overlay
    path = overlay_path(root)
    overlay = read_overlay(root, warn=False)
    if overlay is None and not path.exists():
        if not enabled:
            return {"state": "off", "message": "enrichment is off (intelligence.registry.enabled) and there is no "
                                               "overlay: nothing an agent proposed is listed."}
        return {"state": "missing", "message": "there is no overlay yet: run `docbridge enrich` to ask the "
                                               "configured agent for proposals (check never runs it)."}
    if overlay is None:
        return {"state": "unusable", "message": ".docbridge/overlay.json cannot be used (corrupt, edited or not "
                                                "written by Doc Bridge for this user); `docbridge enrich` writes "
                                                "a new one."}
    if overlay.snapshot_hash != snapshot_hash:
        return {"state": "earlier-snapshot", "message": "the overlay was made for an earlier state of the "
                                                        "repository: proposals about what changed since are "
                                                        "missing; run `docbridge enrich` to bring it up to date."}
    return {"state": "current", "message": "the overlay was made for the repository as it is."}


def with_overlay(text: str, args: argparse.Namespace, root: Path) -> str:
    """`--enrich`: the report followed by the enrichment overlay's findings, labelled as proposed by an agent
    (inside the JSON report with `--format json`), and how the overlay stands (`overlay_status`)."""
    from docbridge.cli.overlay import overlay_findings
    from docbridge.engine.base.overlay import enabled
    from docbridge.engine.views.snapshot import snapshot_of
    workspace = open_workspace(root, use_cache=not args.no_cache)
    snapshot = snapshot_of(workspace.ensure_resolved())
    extra = overlay_findings(root, snapshot.entities)
    status = overlay_status(root, enabled(workspace.config), snapshot.content_hash)
    if args.format == "json":
        payload = json.loads(text)
        payload["overlay"] = {"label": "proposed by an agent, not observed; does not change the exit status",
                              "status": status, "findings": extra}
        return json.dumps(payload, indent=2) + "\n"
    text += f"\nEnrichment overlay (proposed by an agent, not observed): {len(extra)} finding(s); {status['message']}\n"
    for f in extra:
        text += f"  [overlay {f['status']}] {f['path']}:{f['line']}: {f['code']}: {f['message']}\n"
    return text
