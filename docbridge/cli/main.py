"""The `docbridge` command.

Exit codes: 0 success; 1 findings at or above `--fail-on`, or a benchmark regression; 2 a usage or input
error (bad arguments, unreadable root, invalid configuration, unknown reference).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from docbridge.engine import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """An error in what the user asked for; printed as one clear sentence, exit 2."""


def _input_errors() -> tuple[type[Exception], ...]:
    # evaluated only when an exception reaches `main`: importing the configuration's model (pydantic) costs
    # more than a search over a current index takes
    from docbridge.engine.base.config import ConfigError
    from docbridge.engine.base.safe_io import ArtifactPathError
    return UsageError, ConfigError, ArtifactPathError


def _console(stderr: bool = False) -> Any:
    from rich.console import Console
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _root(value: str | None) -> Path:
    root = Path(value or ".").resolve()
    if not root.is_dir():
        raise UsageError(f"--root {value!r} is not a directory.")
    return root


class _Progress(AbstractContextManager["_Progress"]):
    """A progress bar on a terminal (stderr), nothing when piped."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.bar: Any = None
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
            self.bar = Progress(TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=_console(stderr=True), transient=True)
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.bar is None:
            return
        task = self.tasks.get(phase)
        if task is None:
            task = self.tasks[phase] = self.bar.add_task(phase, total=max(total, 1))
        self.bar.update(task, completed=done, total=max(total, 1))


def open_workspace(root: Path, *, progress: bool = False, use_cache: bool = True, jobs: int | None = None,
                   resolve: bool = True) -> Any:
    """A scanned Workspace for `root` (warm from the facts cache when nothing changed)."""
    from docbridge.engine.workspace import Workspace
    workspace = Workspace(root, use_cache=use_cache, jobs=jobs)
    with _Progress(progress) as bar:
        workspace.scan(progress=bar if bar.enabled else None, resolve=resolve)
    return workspace


def _write_output(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    from docbridge.engine.base.cache import write_atomic
    write_atomic(Path(path), text.encode("utf-8"))


# ---------------------------------------------------------------------------------------------- scan


UNREADABLE_SHOWN = 10  # inputs that could not be used, named one per line in scan's text report


def cmd_scan(args: argparse.Namespace) -> int:
    from docbridge.engine.artifacts.snapshot_file import write_snapshot
    root = _root(args.root)
    workspace = open_workspace(root, progress=not args.json, use_cache=not args.no_cache, jobs=args.jobs,
                               resolve=False)
    artifact = write_snapshot(workspace)
    if args.output:
        _write_output(args.output, artifact.path.read_text(encoding="utf-8"))
    summary = {"root": str(root), "snapshot": str(artifact.path), "content_hash": artifact.content_hash,
               **artifact.summary, "seconds": round(workspace.last_scan.seconds, 3)}
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return EXIT_OK
    out = _console()
    files = summary["files"]
    analyzed = ", ".join(f"{n} {k}" for k, n in files["by_kind"].items()) or "nothing"
    out.print(f"Scanned {root}: {files['analyzed']} files analyzed ({analyzed}).")
    out.print("Entities:   " + (", ".join(f"{n} {k}" for k, n in summary["entities"].items()) or "none"))
    out.print("Relations:  " + (", ".join(f"{n} {k}" for k, n in summary["relations"].items()) or "none"))
    out.print("Skipped:    " + (", ".join(f"{n} {k}" for k, n in summary["skipped"].items()) or "nothing"))
    out.print("Unresolved: " + (", ".join(f"{n} {k}" for k, n in summary["unresolved"].items()) or "nothing"))
    unreadable = summary.get("unreadable", [])
    for item in unreadable[:UNREADABLE_SHOWN]:
        out.print(f"Unreadable: {item['path']}: {item['reason']}", markup=False, highlight=False)
    if len(unreadable) > UNREADABLE_SHOWN:
        out.print(f"Unreadable: {len(unreadable) - UNREADABLE_SHOWN} more (--json lists them)")
    out.print(f"Reuse:      {summary['reuse']['reason']}")
    shown = artifact.path.relative_to(root) if artifact.path.is_relative_to(root) else artifact.path
    state = "written" if artifact.rebuilt else "unchanged"
    out.print(f"Snapshot:   {shown} ({state}, content hash {artifact.content_hash[:16]})")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------- parser


def _add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", metavar="DIR", help="repository root (default: the current directory)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docbridge",
        description="Keep a repository's Markdown documentation and its JS/TS code in one deterministic model.",
        epilog="Exit codes: 0 ok, 1 findings or regression, 2 usage or input error.")
    parser.add_argument("--version", action="version", version=f"docbridge {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    scan = commands.add_parser("scan", help="scan the repository and write .docbridge/snapshot.json",
                               description="Scan the repository (documents, modules, packages, areas) and write "
                                           "the content-hashed snapshot to .docbridge/snapshot.json.")
    _add_root(scan)
    scan.add_argument("--json", action="store_true", help="print the summary as JSON")
    scan.add_argument("--output", metavar="FILE", help="also write the snapshot to FILE ('-' for stdout)")
    scan.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    scan.add_argument("--jobs", type=int, metavar="N", help="worker processes for large scans (default: cores)")
    scan.set_defaults(handler=cmd_scan)

    for register in _EXTRA_COMMANDS:
        register(commands)
    return parser


def cmd_check(args: argparse.Namespace) -> int:
    from docbridge.engine.artifacts.snapshot_file import load_findings, store_findings
    from docbridge.engine.base.findings import CheckReport, fails, render_sarif, render_text, summarise
    root = _root(args.root)
    workspace = open_workspace(root, progress=args.format == "text", use_cache=not args.no_cache, resolve=False)
    findings = load_findings(workspace)  # unchanged inputs: the findings of the last run
    if findings is None:
        findings = workspace.findings()
        store_findings(workspace, findings)
    suggestions = workspace.area_suggestions()
    if args.format == "json":
        report = CheckReport(findings=findings, summary=summarise(findings), suggestions=suggestions)
        text = report.model_dump_json(indent=2) + "\n"
    elif args.format == "sarif":
        text = json.dumps(render_sarif(findings, root.as_uri() + "/"), indent=2) + "\n"
    else:
        text = render_text(findings, suggestions)
    if args.output:
        _write_output(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_FINDINGS if fails(findings, args.fail_on) else EXIT_OK


def _register_check(commands: Any) -> None:
    check = commands.add_parser(
        "check", help="report drift between documentation and code",
        description="Report broken links and anchors, unresolved and ambiguous mentions, malformed frontmatter, "
                    "undocumented areas and area imports, unobserved ownership paths, import cycles and "
                    "hand-edited generated regions.",
        epilog="Exit 0 when no finding reaches --fail-on, 1 when one does, 2 on a usage or input error.")
    _add_root(check)
    check.add_argument("--format", choices=["text", "json", "sarif"], default="text", help="output format")
    check.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    check.add_argument("--fail-on", choices=["error", "warning", "info", "never"], default="error",
                       help="lowest severity that makes the exit code 1 (default: error)")
    check.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    check.set_defaults(handler=cmd_check)


def open_retriever(root: Path, *, use_cache: bool = True, progress: bool = False) -> tuple[Any, Any]:
    """The workspace (None when it was not needed) and its retriever. Over a tree unchanged since the index
    in .docbridge/index was built, the index is opened and nothing is scanned; otherwise the tree is scanned
    (facts from their cache) and the projection and index are reused when their inputs match, rebuilt when
    they are missing, stale or corrupt (docbridge.engine.retrieval.store)."""
    from docbridge.engine.retrieval import store
    if use_cache:
        retriever = store.open_current(root)
        if retriever is not None:
            return None, retriever
    started = store.now_ns()
    workspace = open_workspace(root, progress=progress, use_cache=use_cache, resolve=False)
    return workspace, store.retriever_for(workspace, started)


def _kinds(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    kinds = sorted({k.strip() for v in values for k in v.split(",") if k.strip()})
    known = {"document", "module", "area", "package", "directory", "intent", "change"}
    unknown = [k for k in kinds if k not in known]
    if unknown:
        raise UsageError(f"unknown kind {unknown[0]!r}; choose from {', '.join(sorted(known))}.")
    return kinds


def render_search_text(query: str, results: list[Any], explain: bool) -> str:
    lines = [f"Query: {query} ({len(results)} result{'s' if len(results) != 1 else ''})"]
    if explain and results:
        readings = [f"{source} → {target}" for source, target in results[0].translated.items()]
        readings += [f"{typo} → {word} (closest indexed word)" for typo, word in results[0].corrected.items()]
        if readings:
            lines.append("Read as: " + "; ".join(readings))
    for number, result in enumerate(results, start=1):
        entry = result.entry
        lines.append(f"{number:>2}. [{entry.kind}] {entry.id}  score={result.score:.2f}  "
                     f"confidence={result.confidence}")
        detail = entry.path + (f" — {entry.summary}" if entry.summary else "")
        lines.append(f"    {detail[:160]}")
        if result.also_in:
            shown = ", ".join(result.also_in[:3]) + (f" and {len(result.also_in) - 3} more" if len(
                result.also_in) > 3 else "")
            lines.append(f"    also in: {shown}")
        if explain:
            parts = [f"{k}={v:g}" for k, v in result.components.items()
                     if v and not (k in ("prior", "aboutness") and v == 1.0)]
            lines.append(f"    why: {', '.join(parts) or 'nothing'}")
            for reason in result.reasons:
                lines.append(f"    because: {reason}")
            if result.matches():
                lines.append("    matched: " + " | ".join(f"{f}: {' '.join(t)}" for f, t in result.matches().items()))
            if result.surfaced_by:
                via = result.surfaced_by
                lines.append(f"    surfaced by: {via['kind']} {via['id']} ({via['hops']} hop"
                             f"{'s' if via['hops'] != 1 else ''}, {via['confidence']})")
    return "\n".join(lines) + "\n"


def _dump(payload: Any, compact_output: bool = False) -> str:
    if compact_output:
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    return json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def cmd_search(args: argparse.Namespace) -> int:
    from docbridge.engine.base.lexicon import tokens
    root = _root(args.root)
    if args.limit < 1:
        raise UsageError("--limit must be at least 1.")
    kinds = _kinds(args.kinds)
    if args.agent:
        from docbridge.engine.agent.payloads import agent_search, render_agent
        from docbridge.engine.base.budget import BudgetError
        _, retriever = open_retriever(root, use_cache=not args.no_cache)
        try:
            payload = agent_search(retriever, args.query, args.mode, args.context_budget, root)
        except BudgetError as exc:
            raise UsageError(str(exc)) from exc
        sys.stdout.write(render_agent(payload))
        return EXIT_OK
    _, retriever = open_retriever(root, use_cache=not args.no_cache, progress=not args.json)
    results = retriever.search(args.query, args.limit, kinds=kinds)
    if args.json:
        payload = {"query": args.query, "terms": results[0].terms if results else tokens(args.query, unique=True),
                   "index": {"entries": len(retriever.entries), "reused": retriever.reused,
                             "source": retriever.source},
                   "results": [r.to_json(explain=args.explain) for r in results]}
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_search_text(args.query, results, args.explain))
    return EXIT_OK


def _register_search(commands: Any) -> None:
    search = commands.add_parser(
        "search", help="ranked search over documents, modules, areas, packages and routes",
        description="Rank the repository's documents, modules, areas, packages and configured routes for a "
                    "query: an exported symbol, a path, an ownership id or a question (English or Portuguese).")
    search.add_argument("query", help="what to look for")
    _add_root(search)
    search.add_argument("--limit", type=int, default=10, metavar="N", help="at most N results (default 10)")
    search.add_argument("--kinds", nargs="+", metavar="KIND",
                        help="only these kinds (document, module, area, package, directory, intent, change)")
    search.add_argument("--explain", action="store_true", help="show every score component and matched terms")
    output = search.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--text", action="store_true", help="print a readable ranked list (the default)")
    search.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    search.add_argument("--agent", action="store_true",
                        help="a bounded payload for agents: matches without scores, follow-up commands, telemetry")
    search.add_argument("--mode", choices=["discovery", "editing", "debugging", "documentation"],
                        default="discovery", help="--agent: how many matches and commands to allow")
    search.add_argument("--context-budget", type=int, default=300, metavar="N",
                        help="--agent: token budget for the printed payload (approximate: characters / 4; "
                             "default 300)")
    search.set_defaults(handler=cmd_search)


def _reference_workspace(root: Path, use_cache: bool) -> tuple[Any, Any]:
    """A resolved workspace and its projection (from the on-disk index when the inputs match)."""
    from docbridge.engine.artifacts.snapshot_file import projection_for
    workspace = open_workspace(root, use_cache=use_cache)
    return workspace, projection_for(workspace)[0]


def cmd_query(args: argparse.Namespace) -> int:
    from docbridge.engine.agent.handoff import UnknownReference, handoff_for_entity, render_handoff_text
    from docbridge.engine.agent.payloads import budget_handoff
    from docbridge.engine.base.budget import BudgetError
    root = _root(args.root)
    workspace, projection = _reference_workspace(root, not args.no_cache)
    ref = query_reference(args.ref, projection, workspace.config)
    try:
        handoff = handoff_for_entity(workspace.ensure_resolved(), ref, projection)
        if args.budget is not None:
            handoff = budget_handoff(handoff, args.budget)
    except (UnknownReference, BudgetError) as exc:
        raise UsageError(str(exc)) from exc
    if args.text:
        sys.stdout.write(render_handoff_text(handoff))
    else:
        sys.stdout.write(_dump(handoff, compact_output=args.agent))
    return EXIT_OK


def cmd_lookup(args: argparse.Namespace) -> int:
    from docbridge.engine.agent.handoff import UnknownReference
    from docbridge.engine.agent.payloads import lookup, render_lookup_text
    from docbridge.engine.base.budget import BudgetError
    root = _root(args.root)
    if not 1 <= args.depth <= 3:
        raise UsageError("--depth must be 1, 2 or 3.")
    workspace, projection = _reference_workspace(root, not args.no_cache)
    try:
        payload = lookup(workspace.ensure_resolved(), args.ref, args.depth, args.budget, projection)
    except (UnknownReference, BudgetError) as exc:
        raise UsageError(str(exc)) from exc
    sys.stdout.write(_dump(payload) if args.json else render_lookup_text(payload))
    return EXIT_OK


def _register_query(commands: Any) -> None:
    query = commands.add_parser(
        "query", help="the handoff for an entity: where to start, what to edit, what to run",
        description="Print the handoff for a package, area, module, document or configured route, named by "
                    "entity id, ownership id, alias or repository-relative path.",
        epilog="Exit 2 when the reference names nothing (the closest candidates are listed).")
    query.add_argument("ref", nargs="+", metavar="REF",
                       help="entity id, ownership id, alias or path (e.g. src/billing, docs/api.md); or KIND ID "
                            "with KIND package, ownership, intent, change, area, module or document")
    _add_root(query)
    output = query.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="the handoff object as JSON (the default)")
    output.add_argument("--agent", action="store_true", help="compact JSON for agents")
    output.add_argument("--text", action="store_true", help="a readable card")
    query.add_argument("--budget", type=int, metavar="N", help="drop evidence, related, explain and notes to fit N "
                                                              "tokens")
    query.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    query.set_defaults(handler=cmd_query)

    look = commands.add_parser(
        "lookup", help="everything an agent reads before editing an entity",
        description="The entity, its neighbours by relation kind, the documents that cover and mention it, its "
                    "handoff, its open findings and its evidence, optionally under a token budget.")
    look.add_argument("ref", help="entity id, ownership id, alias or path")
    _add_root(look)
    look.add_argument("--depth", type=int, default=1, metavar="N", help="neighbour hops, 1 to 3 (default 1)")
    look.add_argument("--budget", type=int, metavar="N", help="token budget; drops evidence excerpts, related, "
                                                             "neighbours, then summaries")
    look.add_argument("--json", action="store_true", help="print JSON (default: text)")
    look.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    look.set_defaults(handler=cmd_lookup)


def cmd_lsp(args: argparse.Namespace) -> int:
    """Replace this process with the language server (engine code never imports the lsp package)."""
    import os
    os.execv(sys.executable, [sys.executable, "-m", "lsp", *args.server_args])
    return EXIT_OK  # not reached


def _register_lsp(commands: Any) -> None:
    lsp = commands.add_parser("lsp", help="start the language server on stdin/stdout (same as docbridge-lsp)",
                              description="Start the Doc Bridge language server, speaking LSP on stdin and stdout.")
    lsp.add_argument("server_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    lsp.set_defaults(handler=cmd_lsp)


def cmd_bench(args: argparse.Namespace) -> int:
    from docbridge.bench import core as bench
    workdir = Path(args.workdir).resolve() if args.workdir else None
    if args.suite == "scan":
        return bench.bench_scan(args.files or [1000, 5000], workdir, args.json)
    if args.suite == "check":
        return bench.bench_check((args.files or [5000])[0], workdir, args.json)
    if args.suite == "retrieval":
        return cmd_bench_retrieval(args)
    if args.suite == "lsp":
        return bench.bench_lsp(args.files or [1000, 5000], workdir, args.json)
    if args.suite == "scale":
        from docbridge.bench.scale import bench_scale
        return bench_scale((args.files or [50000])[0], workdir, args.json)
    if args.suite == "kill":
        from docbridge.bench.kill import bench_kill
        return bench_kill((args.files or [1000])[0], workdir, args.json, trials=args.trials)
    if args.suite == "mcp":
        from docbridge.bench.mcp import bench_mcp
        return bench_mcp((args.files or [5000])[0], workdir, args.json)
    if args.suite == "cli":
        roots = [_root(r) for r in (args.root_dirs or [])]
        return bench.bench_cli(roots, (args.files or [5000])[0], workdir, args.json)
    if args.suite == "robust":
        from docbridge.bench import robust as bench_robust
        sizes = args.bytes or list(bench_robust.LARGE_SIZES if args.large else bench_robust.DEFAULT_SIZES)
        if any(size < 1 for size in sizes):
            raise UsageError("--bytes sizes must be positive.")
        unknown = sorted(set(args.cases or ()) - set(bench_robust.CASES))
        if unknown:
            raise UsageError(f"unknown robust case {unknown[0]!r} (cases: {', '.join(bench_robust.CASES)}).")
        return bench_robust.bench_robust(sizes, workdir, args.json, args.cases)
    if args.suite == "loop":
        from docbridge.bench import loop as bench_loop
        from docbridge.bench import robust as bench_robust
        sizes = args.bytes or [1_000_000]
        if len(sizes) != 1 or sizes[0] < 1:
            raise UsageError("bench loop takes one positive --bytes size.")
        unknown = sorted(set(args.cases or ()) - set(bench_robust.CASES))
        if unknown:
            raise UsageError(f"unknown robust case {unknown[0]!r} (cases: {', '.join(bench_robust.CASES)}).")
        return bench_loop.bench_loop(sizes[0], workdir, args.json, args.cases)
    if args.suite == "fidelity":
        return cmd_bench_fidelity(args)
    if args.suite == "search":
        suite = Path(args.suite_file) if args.suite_file else None
        return bench.bench_search((args.files or [5000])[0], workdir, args.json, suite,
                                  _root(args.root) if args.root else None)
    raise UsageError(f"unknown benchmark {args.suite!r}")


def cmd_bench_fidelity(args: argparse.Namespace) -> int:
    from docbridge.bench import fidelity as bench_fidelity
    corpus = Path(args.suite_file or "bench/fidelity/corpus.json")
    checkouts = Path(args.checkouts) if args.checkouts else bench_fidelity.default_checkouts()
    try:
        baseline = Path(args.baseline) if args.baseline else (
            corpus.parent / "baseline.json" if args.update_baseline else None)
        return bench_fidelity.bench_fidelity(corpus, checkouts, args.only, args.json, todo=args.todo,
                                             baseline_path=baseline, update_baseline=args.update_baseline,
                                             by=args.by, reason=args.reason)
    except bench_fidelity.FidelityError as exc:
        raise UsageError(str(exc)) from exc


def cmd_bench_retrieval(args: argparse.Namespace) -> int:
    from docbridge.engine.agent import suites
    if not args.suite_file:
        raise UsageError("bench retrieval needs a suite file: docbridge bench retrieval SUITE.json")
    suite_path = Path(args.suite_file)
    try:
        suite = suites.load_suite(suite_path)
        root = _root(args.root) if args.root else suite_path.resolve().parent
        if args.index:
            retriever = _index_retriever(Path(args.index))
        else:
            _, retriever = open_retriever(root, use_cache=True)
        if args.lexical != "combined":
            from docbridge.engine.retrieval.rank import Retriever
            retriever = Retriever(retriever.projection, args.lexical)
        if getattr(args, "hybrid", False):
            from docbridge.cli.semantic import bench_hybrid
            retriever = bench_hybrid(args, root, retriever)
        result = suites.run_retrieval_suite(retriever, suite, root)
        result.pop("_cases")
        status = EXIT_OK
        if args.update_baseline:
            if not args.by:
                raise UsageError("--update-baseline needs --by NAME (who approves the new baseline).")
            target = Path(args.baseline) if args.baseline else suite_path.with_name("retrieval-baseline.json")
            baseline = suites.seal_baseline(result, args.by, args.reason)
            from docbridge.engine.base.cache import write_atomic
            write_atomic(target, (json.dumps(baseline, indent=2, sort_keys=True) + "\n").encode("utf-8"))
            result["baseline"] = {"path": str(target), "written": True}
        elif args.baseline:
            baseline = suites.read_baseline(Path(args.baseline))
            result["comparison"] = suites.compare(result, baseline)
            if result["comparison"]["blocking"]:
                status = EXIT_FINDINGS
    except suites.BenchError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        sys.stdout.write(suites.render_retrieval_text(result))
    return status


def _index_retriever(path: Path) -> Any:
    """A retriever over a DocBridgeIndexV1 file (verified by content hash; nothing is scanned)."""
    from docbridge.engine.artifacts.index_file import IndexFileError, read_index
    from docbridge.engine.retrieval.rank import Retriever
    try:
        _, projection = read_index(path)
    except IndexFileError as exc:
        raise UsageError(str(exc)) from exc
    return Retriever(projection)


def _register_bench(commands: Any) -> None:
    bench = commands.add_parser("bench", help="run a benchmark and print its figures",
                                description="Benchmarks print figures; they are not pass/fail tests.")
    bench.add_argument("suite", choices=["scan", "check", "retrieval", "search", "cli", "lsp", "scale", "mcp", "kill",
                                         "robust", "loop", "fidelity"],
                       help="which benchmark")
    bench.add_argument("suite_file", nargs="?", metavar="SUITE.json",
                       help="retrieval: the suite to run; search: a suite whose queries are timed too")
    bench.add_argument("--root", metavar="DIR",
                       help="retrieval, search: the suite's repository root (default: the suite's directory)")
    bench.add_argument("--index", metavar="PATH", help="retrieval: rank a DocBridgeIndexV1 file (docbridge index) "
                                                       "instead of scanning the repository")
    bench.add_argument("--repo", dest="root_dirs", action="append", metavar="DIR",
                       help="cli: a repository to time docbridge search on (repeatable; besides the synthetic one)")
    bench.add_argument("--baseline", metavar="FILE", help="retrieval, fidelity: compare with (or write) this sealed "
                                                          "baseline")
    bench.add_argument("--update-baseline", action="store_true",
                       help="retrieval, fidelity: record the result as the baseline")
    bench.add_argument("--by", metavar="NAME", help="retrieval, fidelity: who approves the new baseline")
    bench.add_argument("--reason", metavar="TEXT", help="retrieval, fidelity: why the baseline changes")
    bench.add_argument("--lexical", choices=["combined", "fields"], default="combined",
                       help="retrieval: BM25 over one weighted field (default) or per-field BM25 summed")
    bench.add_argument("--files", type=int, nargs="+", metavar="N",
                       help="synthetic sizes: N Markdown + N TypeScript files (default: 1000 5000; scale: 50000)")
    bench.add_argument("--workdir", metavar="DIR", help="where synthetic repositories are generated and kept")
    bench.add_argument("--trials", type=int, default=20, metavar="N",
                       help="kill: how many cold scans to kill -9 at a random moment (default: 20)")
    bench.add_argument("--bytes", type=int, nargs="+", metavar="N",
                       help="robust: Markdown input sizes in bytes (default: 250000 500000 1000000); loop: one size "
                            "(default: 1000000)")
    bench.add_argument("--large", action="store_true", help="robust: sizes of 1, 2 and 4 MB (over the default "
                                                            "file size cap: raise it in the config to analyze them)")
    bench.add_argument("--case", dest="cases", action="append", metavar="NAME",
                       help="robust, loop: only this case (repeatable): paths, anchors, code-spans, quotes, "
                            "deep-quotes, brackets, autolinks, long-line, wide-lines, alias-bomb, huge-line")
    bench.add_argument("--checkouts", metavar="DIR", help="fidelity: where the corpus's checkouts are, one "
                                                           "directory per repository (default: $REAL_REPOS, else "
                                                           "bench/real/checkouts)")
    bench.add_argument("--only", action="append", metavar="NAME", help="fidelity: only this repository (repeatable)")
    bench.add_argument("--todo", action="store_true", help="fidelity: add stubs for sampled findings nobody "
                                                           "labelled yet to each findings.json, and stop")
    bench.add_argument("--json", action="store_true", help="print figures as JSON")
    bench.set_defaults(handler=cmd_bench)


# ---------------------------------------------------------------------------------------------- agents: mcp


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the live model over MCP (the SDK is imported here only, so other commands never load it)."""
    root = _root(args.root)
    if args.transport == "stdio" and args.port is not None:
        raise UsageError("--port applies to --transport http only.")
    port = args.port if args.port is not None else 8765
    if not 1 <= port <= 65535:
        raise UsageError(f"--port {port} is not a TCP port (1 to 65535).")
    if args.debounce_ms < 0 or args.scan_timeout <= 0:
        raise UsageError("--debounce-ms must be at least 0 and --scan-timeout greater than 0.")
    try:
        from docbridge.mcp_server import serve
    except ImportError as exc:
        raise UsageError(f"the MCP server needs the `mcp` extra ({exc.name or exc} is missing): "
                         "pip install 'docbridge[mcp]'.") from exc
    return serve(root, transport=args.transport, port=port, debounce_ms=args.debounce_ms,
                 scan_timeout=args.scan_timeout, use_cache=not args.no_cache, jobs=args.jobs)


def _register_mcp(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp", help="serve the live model to agents over the Model Context Protocol",
        description="Start an MCP server over the repository: it scans on start, follows file changes on disk, "
                    "and answers knowledge.search, knowledge.lookup, handoff.resolve, doc.search, doc.get, "
                    "retriever.query, docbridge.diagnostics and docbridge.proposals from the current model.",
        epilog="stdio by default (for MCP clients that start the server); --transport http serves streamable "
               "HTTP on 127.0.0.1:PORT/mcp. Exit 2 on a usage error.")
    _add_root(mcp)
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="stdio (default) or http")
    mcp.add_argument("--port", type=int, metavar="N", help="--transport http: the port on 127.0.0.1 (default 8765)")
    mcp.add_argument("--debounce-ms", type=int, default=200, metavar="MS",
                     help="wait this long for file changes to settle before applying them (default 200)")
    mcp.add_argument("--scan-timeout", type=float, default=120.0, metavar="SECONDS",
                     help="how long a tool call waits for the first scan before answering with an error (default 120)")
    mcp.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    mcp.add_argument("--jobs", type=int, metavar="N", help="worker processes for the first scan (default: cores)")
    mcp.set_defaults(handler=cmd_mcp)


# ---------------------------------------------------------------------------------------------- index, list, ask


def cmd_index(args: argparse.Namespace) -> int:
    from docbridge.engine.artifacts.index_file import write_index
    root = _root(args.root)
    workspace, projection = _reference_workspace(root, not args.no_cache)
    target = Path(args.output).resolve() if args.output else None
    path, index = write_index(workspace.state, projection, target)
    retrieval = index["projection"]
    summary = {"index": str(path), "contentHash": index["contentHash"], "knowledge": len(index["knowledge"]),
               "entries": len(retrieval["entries"]), "params": retrieval["params"],
               **({"paramsNote": retrieval["paramsNote"]} if "paramsNote" in retrieval else {})}
    if args.json:
        sys.stdout.write(_dump(summary))
        return EXIT_OK
    out = _console()
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    out.print(f"Index:      {shown} (content hash {index['contentHash'][:16]})")
    out.print(f"Knowledge:  {summary['knowledge']} documents and modules")
    out.print(f"Projection: {summary['entries']} entries, BM25 k1={retrieval['params']['k1']:g} "
              f"b={retrieval['params']['b']:g}")
    if "paramsNote" in summary:
        out.print(f"Note:       {summary['paramsNote']}")
    return EXIT_OK


def _register_index(commands: Any) -> None:
    index = commands.add_parser(
        "index", help="write .docbridge/index.json (DocBridgeIndexV1) for index readers",
        description="Write the DocBridgeIndexV1 artifact: knowledge[] (every document and module with its content "
                    "hash and tags) and the retrieval projection with its header (weights, BM25 params, lexical "
                    "statistics), sealed by content hash.")
    _add_root(index)
    index.add_argument("--output", metavar="FILE", help="write here instead of .docbridge/index.json")
    index.add_argument("--json", action="store_true", help="print the summary as JSON")
    index.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    index.set_defaults(handler=cmd_index)


def cmd_list(args: argparse.Namespace) -> int:
    from docbridge.engine.base.model import DOCUMENT, MODULE, PACKAGE
    root = _root(args.root)
    workspace, projection = _reference_workspace(root, not args.no_cache)
    if args.what == "packages":
        owned = {e.ownership_id: e for e in projection.entries if e.ownership_id}
        rows = []
        for record in sorted(workspace.config.ownership, key=lambda r: r.id):
            entry = owned.get(record.id) or projection.by_id.get(f"ownership:{record.id}")
            rows.append({"id": record.id, "kind": "ownership", "path": record.path,
                         "entityId": entry.id if entry else None, "purpose": record.purpose})
        for entry in projection.entries:
            if entry.kind == PACKAGE and not entry.id.startswith("ownership:") and entry.ownership_id is None:
                rows.append({"id": entry.id, "kind": "package", "path": entry.path, "entityId": entry.id,
                             "purpose": entry.summary})
        if args.text:
            for row in rows:
                sys.stdout.write(f"{row['id']}  [{row['kind']}] {row['path']}"
                                 + (f" — {row['purpose']}" if row["purpose"] else "") + "\n")
            return EXIT_OK
        sys.stdout.write(_dump({"type": "packages", "count": len(rows), "packages": rows}))
        return EXIT_OK
    records = [{"id": e.id, "type": e.kind, "title": e.title, "path": e.path, "description": e.summary or "",
                "symbols": list(e.symbols), "tags": list(e.tags), "contentHash": e.content_hash}
               for e in projection.entries if e.kind in (DOCUMENT, MODULE)]
    if args.text:
        for record in records:
            sys.stdout.write(f"[{record['type']}] {record['path']} — {record['title']}"
                             + (f": {record['description']}" if record["description"] else "") + "\n")
        return EXIT_OK
    sys.stdout.write(_dump({"type": "knowledge", "count": len(records), "knowledge": records}))
    return EXIT_OK


def _register_list(commands: Any) -> None:
    listing = commands.add_parser(
        "list", help="list packages and ownership records, or every document and module",
        description="`list packages`: ownership records and packages (the ids `query` accepts); `list knowledge`: "
                    "every document and module with its title, description, symbols, tags and content hash.")
    listing.add_argument("what", choices=["packages", "knowledge"], help="what to list")
    _add_root(listing)
    listing.add_argument("--text", action="store_true", help="one readable line each (default: JSON)")
    listing.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    listing.set_defaults(handler=cmd_list)


def cmd_ask(args: argparse.Namespace) -> int:
    """Search, then the handoff of the best unit: the answer to "where do I start for …"."""
    from docbridge.engine.agent.handoff import handoff_for_entity
    from docbridge.engine.agent.knowledge import ArgumentError, knowledge_search
    from docbridge.engine.base.model import CHANGE, INTENT
    from docbridge.engine.retrieval.rank import Retriever
    root = _root(args.root)
    workspace, projection = _reference_workspace(root, not args.no_cache)
    retriever = Retriever(projection)
    try:
        found = knowledge_search(retriever, args.question, limit=args.limit)
    except ArgumentError as exc:
        raise UsageError(str(exc)) from exc
    best = found["results"][0] if found["results"] else None
    handoff = handoff_for_entity(workspace.state, best["entityId"], projection) if best else None
    answer = {"type": "ask", "schemaVersion": 1, "question": args.question, "best": best,
              "handoff": handoff, "alternatives": found["results"][1:]}
    if args.json:
        sys.stdout.write(_dump(answer))
        return EXIT_OK if best else EXIT_FINDINGS
    if best is None:
        sys.stdout.write(f"Nothing in {root.name} matches {args.question!r}. Try other words, or "
                         "`docbridge list knowledge --text`.\n")
        return EXIT_FINDINGS
    from docbridge.engine.agent.handoff import render_handoff_text
    lines = [f"Best match: [{best['type']}] {best['id']} — {best['title']} ({best['path']}, {best['confidence']})"]
    if best.get("summary"):
        lines.append(f"  {best['summary']}")
    if best.get("excerpt"):
        lines.append(f"  > {best['excerpt']}")
    lines.append("")
    if handoff is not None and (best["kind"] in (INTENT, CHANGE) or handoff):
        lines += render_handoff_text(handoff).rstrip("\n").splitlines()
    if answer["alternatives"]:
        lines.append("")
        lines.append("Also relevant:")
        lines += [f"  [{r['type']}] {r['id']} — {r['path']}" for r in answer["alternatives"]]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _register_ask(commands: Any) -> None:
    ask = commands.add_parser(
        "ask", help="a question in plain words: the best match and where to start",
        description="Answer a natural-language question (\"where do I change how tax is calculated?\") with the "
                    "best-ranked document, module, area, package or route and its handoff: where to start, what "
                    "to read before editing, where to edit and which checks to run.",
        epilog="Exit 1 when nothing matches, 2 on a usage error.")
    ask.add_argument("question", help="the question, in quotes")
    _add_root(ask)
    ask.add_argument("--limit", type=int, default=4, metavar="N", help="the best match and N-1 alternatives")
    ask.add_argument("--json", action="store_true", help="print JSON")
    ask.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")
    ask.set_defaults(handler=cmd_ask)


QUERY_FORMS = ("package", "ownership", "intent", "change", "area", "module", "document")


def query_reference(words: list[str], projection: Any, config: Any) -> str:
    """`query REF` or `query KIND ID` (the original's forms): the reference to hand off, checked against KIND."""
    from docbridge.engine.agent.handoff import UnknownReference, resolve_ref
    if len(words) == 1:
        return words[0]
    if len(words) != 2 or words[0] not in QUERY_FORMS:
        raise UsageError(f"query takes REF or KIND ID with KIND one of {', '.join(QUERY_FORMS)}; got "
                         f"{' '.join(words)!r}.")
    kind, ident = words
    if kind == "package" and any(r.id == ident for r in config.ownership):
        return ident  # the original's package records are the ownership records
    if kind == "ownership":
        # by ownership id, or by path or alias as the original answers (`query ownership src/query`): the
        # record whose path it is, else whatever the path or alias names
        if any(r.id == ident for r in config.ownership):
            return ident
        path = ident.strip().removeprefix("./").rstrip("/")
        for record in config.ownership:
            if record.path.rstrip("/") == path:
                return record.id
        try:
            return resolve_ref(projection, ident).id
        except UnknownReference as exc:
            known = ", ".join(sorted(r.id for r in config.ownership)) or "none"
            raise UsageError(f'"{ident}" is no ownership id, path or alias here. Ownership ids: {known}. Try '
                             f'`docbridge list packages`.') from exc
    if kind in ("intent", "change"):
        ref = ident if ident.startswith(f"{kind}:") else f"{kind}:{ident}"
        if ref not in projection.by_id:
            raise UsageError(f'Unknown {kind} route "{ident}". Try `docbridge list packages` or '
                             f'`docbridge search "{ident}"`.')
        return ref
    try:
        entry = resolve_ref(projection, ident)
    except UnknownReference as exc:
        raise UsageError(str(exc)) from exc
    actual = "package" if entry.id.startswith("ownership:") else entry.kind
    if actual != kind:
        raise UsageError(f'"{ident}" is a {actual} ({entry.id}), not a {kind}. Try `docbridge query {ident}`.')
    return entry.id


def _register_semantic(commands: Any) -> None:
    """`search --hybrid`, `index --semantic`, `bench retrieval --hybrid` (docbridge.cli.semantic)."""
    from docbridge.cli.semantic import register
    register(commands)


def _register_enrich(commands: Any) -> None:
    """`enrich`, `fix approve|reject`, `check --enrich`, `bench retrieval --overlay` (docbridge.cli.enrich)."""
    from docbridge.cli.enrich import register
    register(commands)


def _register_render(commands: Any) -> None:
    """`render` and `map --html` (docbridge.cli.render)."""
    from docbridge.cli.render import register
    register(commands)


def _register_init(commands: Any) -> None:
    """`init` (docbridge.cli.init)."""
    from docbridge.cli.init import register
    register(commands)


def _register_governance(commands: Any) -> None:
    """`reconcile`, `audit`, `doctor`, `parity`, `study`, `check --mode` (docbridge.cli.governance)."""
    from docbridge.cli.governance import register
    register(commands)


_EXTRA_COMMANDS: list[Callable[[Any], None]] = [_register_init, _register_check, _register_search, _register_query,
                                                 _register_lsp, _register_bench, _register_mcp, _register_index,
                                                 _register_list, _register_ask, _register_semantic,
                                                 _register_governance, _register_render, _register_enrich]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["lsp"]:  # everything after `lsp` belongs to the server
        return cmd_lsp(argparse.Namespace(server_args=arguments[1:]))
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        return int(args.handler(args))
    except _input_errors() as exc:
        _console(stderr=True).print(f"error: {exc}", markup=False)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
