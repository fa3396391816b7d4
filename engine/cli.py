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

from engine import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """An error in what the user asked for; printed as one clear sentence, exit 2."""


def _input_errors() -> tuple[type[Exception], ...]:
    # evaluated only when an exception reaches `main`: importing the configuration's model (pydantic) costs
    # more than a search over a current index takes
    from engine.config import ConfigError
    return UsageError, ConfigError


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
    from engine.workspace import Workspace
    workspace = Workspace(root, use_cache=use_cache, jobs=jobs)
    with _Progress(progress) as bar:
        workspace.scan(progress=bar if bar.enabled else None, resolve=resolve)
    return workspace


def _write_output(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    from engine.cache import write_atomic
    write_atomic(Path(path), text.encode("utf-8"))


# ---------------------------------------------------------------------------------------------- scan


def cmd_scan(args: argparse.Namespace) -> int:
    from engine.artifacts import write_snapshot
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
    from engine.artifacts import load_findings, store_findings
    from engine.findings import CheckReport, fails, render_sarif, render_text, summarise
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
    check.add_argument("--fail-on", choices=["error", "warning", "info", "never"], default="error",
                       help="lowest severity that makes the exit code 1 (default: error)")
    check.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    check.set_defaults(handler=cmd_check)


def open_retriever(root: Path, *, use_cache: bool = True, progress: bool = False) -> tuple[Any, Any]:
    """The workspace (None when it was not needed) and its retriever. Over a tree unchanged since the index
    in .docbridge/index was built, the index is opened and nothing is scanned; otherwise the tree is scanned
    (facts from their cache) and the projection and index are reused when their inputs match, rebuilt when
    they are missing, stale or corrupt (engine.retrieval.store)."""
    from engine.retrieval import store
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
    from engine.lexicon import tokens
    root = _root(args.root)
    if args.limit < 1:
        raise UsageError("--limit must be at least 1.")
    kinds = _kinds(args.kinds)
    if args.agent:
        from engine.budget import BudgetError
        from engine.payloads import agent_search, render_agent
        _, retriever = open_retriever(root, use_cache=not args.no_cache)
        try:
            payload = agent_search(retriever, args.query, args.mode, args.context_budget)
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
    from engine.artifacts import projection_for
    workspace = open_workspace(root, use_cache=use_cache)
    return workspace, projection_for(workspace)[0]


def cmd_query(args: argparse.Namespace) -> int:
    from engine.budget import BudgetError
    from engine.handoff import UnknownReference, handoff_for_entity, render_handoff_text
    from engine.payloads import budget_handoff
    root = _root(args.root)
    workspace, projection = _reference_workspace(root, not args.no_cache)
    try:
        handoff = handoff_for_entity(workspace, args.ref, projection)
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
    from engine.budget import BudgetError
    from engine.handoff import UnknownReference
    from engine.payloads import lookup, render_lookup_text
    root = _root(args.root)
    if not 1 <= args.depth <= 3:
        raise UsageError("--depth must be 1, 2 or 3.")
    workspace, projection = _reference_workspace(root, not args.no_cache)
    try:
        payload = lookup(workspace, args.ref, args.depth, args.budget, projection)
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
    query.add_argument("ref", help="entity id, ownership id, alias or path (e.g. src/billing, docs/api.md)")
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
    from engine import bench
    workdir = Path(args.workdir).resolve() if args.workdir else None
    if args.suite == "scan":
        return bench.bench_scan(args.files or [1000, 5000], workdir, args.json)
    if args.suite == "check":
        return bench.bench_check((args.files or [5000])[0], workdir, args.json)
    if args.suite == "retrieval":
        return cmd_bench_retrieval(args)
    if args.suite == "lsp":
        return bench.bench_lsp(args.files or [1000, 5000], workdir, args.json)
    if args.suite == "cli":
        roots = [_root(r) for r in (args.root_dirs or [])]
        return bench.bench_cli(roots, (args.files or [5000])[0], workdir, args.json)
    if args.suite == "search":
        suite = Path(args.suite_file) if args.suite_file else None
        return bench.bench_search((args.files or [5000])[0], workdir, args.json, suite,
                                  _root(args.root) if args.root else None)
    raise UsageError(f"unknown benchmark {args.suite!r}")


def cmd_bench_retrieval(args: argparse.Namespace) -> int:
    from engine import bench
    if not args.suite_file:
        raise UsageError("bench retrieval needs a suite file: docbridge bench retrieval SUITE.json")
    suite_path = Path(args.suite_file)
    try:
        suite = bench.load_suite(suite_path)
        root = _root(args.root) if args.root else suite_path.resolve().parent
        _, retriever = open_retriever(root, use_cache=True)
        if args.lexical != "combined":
            from engine.retrieval.rank import Retriever
            retriever = Retriever(retriever.projection, args.lexical)
        result = bench.run_retrieval_suite(retriever, suite, root)
        result.pop("_cases")
        status = EXIT_OK
        if args.update_baseline:
            if not args.by:
                raise UsageError("--update-baseline needs --by NAME (who approves the new baseline).")
            target = Path(args.baseline) if args.baseline else suite_path.with_name("retrieval-baseline.json")
            baseline = bench.seal_baseline(result, args.by, args.reason)
            from engine.cache import write_atomic
            write_atomic(target, (json.dumps(baseline, indent=2, sort_keys=True) + "\n").encode("utf-8"))
            result["baseline"] = {"path": str(target), "written": True}
        elif args.baseline:
            baseline = bench.read_baseline(Path(args.baseline))
            result["comparison"] = bench.compare(result, baseline)
            if result["comparison"]["blocking"]:
                status = EXIT_FINDINGS
    except bench.BenchError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        sys.stdout.write(bench.render_retrieval_text(result))
    return status


def _register_bench(commands: Any) -> None:
    bench = commands.add_parser("bench", help="run a benchmark and print its figures",
                                description="Benchmarks print figures; they are not pass/fail tests.")
    bench.add_argument("suite", choices=["scan", "check", "retrieval", "search", "cli", "lsp"],
                       help="which benchmark")
    bench.add_argument("suite_file", nargs="?", metavar="SUITE.json",
                       help="retrieval: the suite to run; search: a suite whose queries are timed too")
    bench.add_argument("--root", metavar="DIR",
                       help="retrieval, search: the suite's repository root (default: the suite's directory)")
    bench.add_argument("--repo", dest="root_dirs", action="append", metavar="DIR",
                       help="cli: a repository to time docbridge search on (repeatable; besides the synthetic one)")
    bench.add_argument("--baseline", metavar="FILE", help="retrieval: compare with (or write) this sealed baseline")
    bench.add_argument("--update-baseline", action="store_true", help="retrieval: record the result as the baseline")
    bench.add_argument("--by", metavar="NAME", help="retrieval: who approves the new baseline")
    bench.add_argument("--reason", metavar="TEXT", help="retrieval: why the baseline changes")
    bench.add_argument("--lexical", choices=["combined", "fields"], default="combined",
                       help="retrieval: BM25 over one weighted field (default) or per-field BM25 summed")
    bench.add_argument("--files", type=int, nargs="+", metavar="N",
                       help="synthetic sizes: N Markdown + N TypeScript files (default: 1000 5000)")
    bench.add_argument("--workdir", metavar="DIR", help="where synthetic repositories are generated and kept")
    bench.add_argument("--json", action="store_true", help="print figures as JSON")
    bench.set_defaults(handler=cmd_bench)


_EXTRA_COMMANDS: list[Callable[[Any], None]] = [_register_check, _register_search, _register_query,
                                                 _register_lsp, _register_bench]


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
