"""Governance gates on the command line: `reconcile`, `audit`, `doctor`, `parity`, `study expectations`, and
`check --mode` / `check --format finding`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.main import EXIT_FINDINGS, EXIT_OK, UsageError, _add_root, _root, _write_output, open_workspace
from docbridge.engine.governance.names import RECONCILIATION_SCOPES, RULES_MODES


def _emit(text: str, output: str | None = None) -> None:
    if output:
        _write_output(output, text)
    else:
        sys.stdout.write(text)


# ---------------------------------------------------------------------------------------------- reconcile


def cmd_reconcile(args: argparse.Namespace) -> int:
    from docbridge.engine.governance.reconciliation import reconcile, render_text
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
    parser = commands.add_parser(
        "reconcile", help="match the relations documents declare to the ones the code shows",
        description="Match every relation declared under `docbridge.relations` to the observed imports, and "
                    "report observed relations no document declares, aggregated to a scope.",
        epilog="Exit 0 when no diagnostic is an error, 1 when one is, 2 on a usage or input error.")
    _add_root(parser)
    parser.add_argument("--scope", choices=RECONCILIATION_SCOPES,
                        help="aggregation scope (default: reconciliation.scope, else file)")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report (the default)")
    form.add_argument("--text", action="store_true", help="readable report")
    parser.add_argument("--include-orphaned", action="store_true",
                        help="report documents that declare no relation (DOCUMENTATION_ORPHANED)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    parser.set_defaults(handler=cmd_reconcile)


# ---------------------------------------------------------------------------------------------- check


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


def cmd_check_modes(args: argparse.Namespace) -> int:
    from docbridge.engine.artifacts.snapshot_file import load_findings, store_findings
    from docbridge.engine.base.findings import CheckReport, fails, render_sarif, render_text, summarise
    from docbridge.engine.governance.rules import apply_mode
    root = _root(args.root)
    workspace = open_workspace(root, progress=args.format == "text", use_cache=not args.no_cache, resolve=False)
    findings = load_findings(workspace)  # unchanged inputs: the findings of the last run
    if findings is None:
        findings = workspace.findings()
        store_findings(workspace, findings)
    if args.audit:
        from docbridge.engine.governance.audit import AUDIT_CODES, document_audit, package_audit
        state = workspace.ensure_resolved()
        extra = [f for f in document_audit(state, _disk_reader(root)) + package_audit(state)
                 if f.code in AUDIT_CODES and f.code != "GENERATED_REGION_EDITED"]
        findings = sorted([*findings, *extra], key=lambda f: f.sort_key)
    settings = workspace.config.rules
    mode = args.mode or settings.mode
    if mode is not None:
        findings = apply_mode(workspace.ensure_resolved(), findings, mode, settings)
    suggestions = workspace.area_suggestions()
    if args.format == "json":
        report = CheckReport(findings=findings, summary=summarise(findings), suggestions=suggestions)
        text = report.model_dump_json(indent=2) + "\n"
    elif args.format == "sarif":
        text = json.dumps(render_sarif(findings, root.as_uri() + "/"), indent=2) + "\n"
    elif args.format == "finding":
        text = render_finding_format(findings)
    else:
        text = render_text(findings, suggestions)
    _emit(text, args.output)
    return EXIT_FINDINGS if fails(findings, args.fail_on) else EXIT_OK


def _extend_check(commands: Any) -> None:
    check = commands.choices["check"]
    for action in check._actions:
        if action.dest == "format" and action.choices is not None and "finding" not in action.choices:
            action.choices = [*action.choices, "finding"]
            action.help = "output format (finding: the ecosystem Finding shape, most severe first)"
    check.add_argument("--mode", choices=RULES_MODES,
                       help="rules mode: rule-mapped findings take its severity (default info, recommended "
                            "warning, strict error); default: rules.mode, else none")
    check.add_argument("--audit", action="store_true",
                       help="also report the documentation audit's codes (docbridge audit)")
    check.set_defaults(handler=cmd_check_modes)


# ---------------------------------------------------------------------------------------------- audit


def _disk_reader(root: Any) -> Any:
    def read(path: str) -> str | None:
        try:
            return (root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    return read


def cmd_audit(args: argparse.Namespace) -> int:
    from docbridge.engine.governance.audit import audit, render_text
    root = _root(args.root)
    workspace = open_workspace(root, use_cache=not args.no_cache)
    report = audit(workspace.ensure_resolved(), workspace.findings(), _disk_reader(root))
    _emit(render_text(report) if args.text else json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return EXIT_FINDINGS if report["status"] == "blocked" else EXIT_OK


def _register_audit(commands: Any) -> None:
    parser = commands.add_parser(
        "audit", help="audit the documentation: titles, length, examples, sections, duplicates, coverage",
        description="Audit every document (title, length, example, required sections, exact duplicates, "
                    "generated regions, declaration codes), package and area coverage, and the reconciliation; "
                    "report blocked, needs-review or pass.",
        epilog="Exit 0 unless the status is blocked (1); 2 on a usage or input error.")
    _add_root(parser)
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report (the default)")
    form.add_argument("--text", action="store_true", help="readable report")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    parser.set_defaults(handler=cmd_audit)


# ---------------------------------------------------------------------------------------------- doctor


def _suite_path(value: str | None, configured: str | None, root: Any, what: str) -> Any:
    if value:
        path = Path(value)
        if not path.is_file():
            raise UsageError(f"{what}: suite file {value!r} does not exist.")
        return path
    if configured:
        path = root / configured
        if not path.is_file():
            raise UsageError(f"doc-bridge.config.json: doctor.suite names {configured!r}, which does not exist.")
        return path
    return None


def doctor_report(root: Any, suite: str | None, use_cache: bool = True) -> dict[str, Any]:
    from docbridge.engine.agent import suites
    from docbridge.engine.agent.doctor import run_doctor
    from docbridge.engine.retrieval import store
    started = store.now_ns()
    workspace = open_workspace(root, use_cache=use_cache)
    suite_path = _suite_path(suite, workspace.config.doctor.suite, root, "--suite")
    retriever = store.retriever_for(workspace, started)
    try:
        return run_doctor(workspace.ensure_resolved(), retriever.projection, retriever, suite_path, root)
    except suites.BenchError as exc:
        raise UsageError(str(exc)) from exc


def cmd_doctor(args: argparse.Namespace) -> int:
    from docbridge.engine.agent.doctor import render_text
    root = _root(args.root)
    report = doctor_report(root, args.suite, not args.no_cache)
    _emit(json.dumps(report, indent=2, ensure_ascii=False) + "\n" if args.json else render_text(report))
    return EXIT_OK


def _register_doctor(commands: Any) -> None:
    parser = commands.add_parser(
        "doctor", help="grade how ready the documentation is for agents, with the actions that raise the grade",
        description="Measure reachability (documents linked from an entry document and in the projection), "
                    "connectivity (areas documented, documents linked to code) and hit@3 on a golden suite; "
                    "grade A needs 100 % reachability, 80 % connectivity and 80 % hit@3.",
        epilog="Exit 0 with a report, 2 on a usage or input error (a suite that does not exist or is invalid).")
    _add_root(parser)
    parser.add_argument("--suite", metavar="FILE", help="golden retrieval suite (default: doctor.suite)")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="JSON report")
    form.add_argument("--text", action="store_true", help="readable report (the default)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the caches")
    parser.set_defaults(handler=cmd_doctor)


# ---------------------------------------------------------------------------------------------- parity


def _cli_commands() -> set[str]:
    from docbridge.cli.main import build_parser
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def cmd_parity(args: argparse.Namespace) -> int:
    from docbridge.engine.base.cache import write_atomic
    from docbridge.engine.governance import parity
    root = _root(args.root)
    shown = args.claims or parity.DEFAULT_REGISTRY
    file = root / shown if not args.claims else Path(args.claims)
    cache: dict[str, Any] = {}

    def workspace() -> Any:
        if "ws" not in cache:
            cache["ws"] = open_workspace(root)
        return cache["ws"]

    def counts() -> dict[str, int]:
        state = workspace().ensure_resolved()
        layout = state.universe.layout
        return {"document": len(state.universe.documents), "module": len(state.universe.modules),
                "area": len(layout.areas) if layout else 0, "package": len(layout.packages) if layout else 0}

    if args.init:
        if file.exists():
            raise UsageError(f"{shown}: a claims registry already exists; edit it (and reseal) instead.")
        readme = root / "README.md"
        text = readme.read_text(encoding="utf-8", errors="replace") if readme.is_file() else ""
        registry = parity.starter_registry(root, text, counts(), _cli_commands())
        write_atomic(file, (json.dumps(registry, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        sys.stdout.write(f"wrote {shown} with {len(registry['claims'])} claim(s) from README.md\n")
        return EXIT_OK
    try:
        registry = parity.load_registry(file, shown)
    except parity.RegistryError as exc:
        raise UsageError(str(exc)) from exc
    facts = {"counts": counts, "commands": _cli_commands, "doctor": lambda: doctor_report(root, None)}
    report = parity.check(registry, root, facts)
    _emit(parity.render_text(report) if args.text else json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK if report["ok"] else EXIT_FINDINGS


def _register_parity(commands: Any) -> None:
    parser = commands.add_parser(
        "parity", help="hold the claims public documents make to the repository's facts",
        description="Check every claim of the sealed registry (default docs/parity/public-claims-v1.json) against "
                    "its evidence on each public surface: stale, missing, contradicting or not analysed.",
        epilog="Exit 0 when no finding blocks, 1 when one does, 2 on a broken registry or a usage error.")
    _add_root(parser)
    parser.add_argument("--text", action="store_true", help="one line per finding, with its remediation")
    parser.add_argument("--claims", metavar="FILE", help="a registry somewhere else")
    parser.add_argument("--init", action="store_true",
                        help="write a starter registry from the numbers and commands README.md states")
    parser.set_defaults(handler=cmd_parity)


# ---------------------------------------------------------------------------------------------- study


def cmd_study_expectations(args: argparse.Namespace) -> int:
    from docbridge.cli.main import open_retriever
    from docbridge.engine.governance import study
    root = _root(args.root)
    path = Path(args.suite_file)
    try:
        suite = study.load_suite(path, args.suite_file)
    except study.SuiteError as exc:
        raise UsageError(str(exc)) from exc
    _, retriever = open_retriever(root)
    report = study.verify(retriever, suite)
    _emit(json.dumps(report, indent=2, ensure_ascii=False) + "\n" if args.json else study.render_text(report))
    return EXIT_OK if report["ok"] else EXIT_FINDINGS


def _register_study(commands: Any) -> None:
    study = commands.add_parser("study", help="check an agent study's suite before running it",
                                description="Deterministic checks of agent-study suites.")
    actions = study.add_subparsers(dest="study_command", required=True, metavar="ACTION")
    parser = actions.add_parser(
        "expectations", help="verify each task's expectedEntities / expectedDocuments against search",
        description="Run each task's query through search and check that its expected entities and documents are "
                    "in the top results (limit per task, default 10).",
        epilog="Exit 0 when every expectation is met, 1 on a miss, 2 on an invalid suite.")
    parser.add_argument("suite_file", metavar="SUITE", help="the study suite (JSON)")
    _add_root(parser)
    parser.add_argument("--json", action="store_true", help="JSON report")
    parser.set_defaults(handler=cmd_study_expectations)


def register(commands: Any) -> None:
    _register_reconcile(commands)
    _register_audit(commands)
    _register_doctor(commands)
    _register_parity(commands)
    _register_study(commands)
    _extend_check(commands)


__all__ = ["UsageError", "register"]
