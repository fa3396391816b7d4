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
from engine.config import ConfigError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """An error in what the user asked for; printed as one clear sentence, exit 2."""


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


def cmd_bench(args: argparse.Namespace) -> int:
    from engine import bench
    workdir = Path(args.workdir).resolve() if args.workdir else None
    if args.suite == "scan":
        return bench.bench_scan(args.files or [1000, 5000], workdir, args.json)
    if args.suite == "check":
        return bench.bench_check((args.files or [5000])[0], workdir, args.json)
    raise UsageError(f"unknown benchmark {args.suite!r}")


def _register_bench(commands: Any) -> None:
    bench = commands.add_parser("bench", help="run a benchmark and print its figures",
                                description="Benchmarks print figures; they are not pass/fail tests.")
    bench.add_argument("suite", choices=["scan", "check"], help="which benchmark")
    bench.add_argument("--files", type=int, nargs="+", metavar="N",
                       help="synthetic sizes: N Markdown + N TypeScript files (default: 1000 5000)")
    bench.add_argument("--workdir", metavar="DIR", help="where synthetic repositories are generated and kept")
    bench.add_argument("--json", action="store_true", help="print figures as JSON")
    bench.set_defaults(handler=cmd_bench)


_EXTRA_COMMANDS: list[Callable[[Any], None]] = [_register_check, _register_bench]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except (UsageError, ConfigError) as exc:
        _console(stderr=True).print(f"error: {exc}", markup=False)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
