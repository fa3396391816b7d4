"""`docbridge bench SUITE`: benchmarks that print figures (retrieval and fidelity compare with a sealed
baseline, exit 1 on a regression)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, open_retriever, root_dir

NAME = "bench"
HELP = "run a benchmark and print its figures"
DESCRIPTION = "Benchmarks print figures; they are not pass/fail tests."
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", choices=["scan", "check", "retrieval", "search", "cli", "lsp", "scale", "mcp", "kill",
                                          "robust", "loop", "fidelity"],
                        help="which benchmark")
    parser.add_argument("suite_file", nargs="?", metavar="SUITE.json",
                        help="retrieval: the suite to run; search: a suite whose queries are timed too, or a "
                        "folder of suites whose queries are timed on --root")
    parser.add_argument("--root", metavar="DIR",
                        help="retrieval, search: the suite's repository root (default: the suite's directory)")
    parser.add_argument("--index", metavar="PATH", help="retrieval: rank a DocBridgeIndexV1 file (docbridge index) "
                                                        "instead of scanning the repository")
    parser.add_argument("--repo", dest="root_dirs", action="append", metavar="DIR",
                        help="cli: a repository to time docbridge search on (repeatable; besides the synthetic one)")
    parser.add_argument("--baseline", metavar="FILE", help="retrieval, fidelity: compare with (or write) this sealed "
                                                           "baseline")
    parser.add_argument("--update-baseline", action="store_true",
                        help="retrieval, fidelity: record the result as the baseline")
    parser.add_argument("--by", metavar="NAME", help="retrieval, fidelity: who approves the new baseline")
    parser.add_argument("--reason", metavar="TEXT", help="retrieval, fidelity: why the baseline changes")
    parser.add_argument("--lexical", choices=["combined", "fields"], default="combined",
                        help="retrieval: BM25 over one weighted field (default) or per-field BM25 summed")
    parser.add_argument("--files", type=int, nargs="+", metavar="N",
                        help="synthetic sizes: N Markdown + N TypeScript files (default: 1000 5000; scale: 50000)")
    parser.add_argument("--workdir", metavar="DIR", help="where synthetic repositories are generated and kept")
    parser.add_argument("--trials", type=int, default=20, metavar="N",
                        help="kill: how many cold scans to kill -9 at a random moment (default: 20)")
    parser.add_argument("--bytes", type=int, nargs="+", metavar="N",
                        help="robust: Markdown input sizes in bytes (default: 250000 500000 1000000); loop: one size "
                             "(default: 1000000)")
    parser.add_argument("--large", action="store_true", help="robust: sizes of 1, 2 and 4 MB (over the default "
                                                             "file size cap: raise it in the config to analyze them)")
    parser.add_argument("--case", dest="cases", action="append", metavar="NAME",
                        help="robust, loop: only this case (repeatable): paths, anchors, code-spans, quotes, "
                             "deep-quotes, brackets, autolinks, long-line, wide-lines, alias-bomb, huge-line")
    parser.add_argument("--checkouts", metavar="DIR", help="fidelity: where the corpus's checkouts are, one "
                                                            "directory per repository (default: $REAL_REPOS, else "
                                                            "bench/real/checkouts)")
    parser.add_argument("--only", action="append", metavar="NAME", help="fidelity: only this repository (repeatable)")
    parser.add_argument("--todo", action="store_true", help="fidelity: add stubs for sampled findings nobody "
                                                            "labelled yet to each findings.json, and stop")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    parser.add_argument("--hybrid", action="store_true", help="retrieval: rank with hybrid search")
    parser.add_argument("--overlay", action="store_true",
                        help="retrieval: rank without and with the enrichment overlay; exit 1 when hit@3 drops")
    parser.add_argument("--tokens", choices=["approximate", "exact"], default="approximate",
                        help="retrieval: count tokens to first evidence (and the context's tokens) as characters / 4 "
                             "(default) or exactly, as OpenAI's cl100k_base (the optional `tokens` extra)")


MAX_FILES, MAX_TRIALS, MAX_BYTES = 1_000_000, 10_000, 1 << 30


def run(args: argparse.Namespace) -> int:
    if args.suite == "retrieval":
        return overlay_delta(args) if args.overlay else retrieval(args)
    from docbridge.bench import core as bench
    least = 0 if args.suite == "search" else 1  # search: 0 skips the synthetic repository
    if any(n < least for n in args.files or ()) or args.trials < 1:
        raise UsageError(f"bench {args.suite}: --files and --trials count files and runs: each must be at least "
                         f"{least if any(n < least for n in args.files or ()) else 1}.")
    # a typo's extra digits would fill the memory and the disk before anything is measured
    if any(n > MAX_FILES for n in args.files or ()) or args.trials > MAX_TRIALS or any(
            n > MAX_BYTES for n in getattr(args, "bytes", None) or ()):
        raise UsageError(f"bench {args.suite}: --files is at most {MAX_FILES:,} (each a Markdown and a TypeScript "
                         f"file), --trials at most {MAX_TRIALS:,} and --bytes at most {MAX_BYTES:,}.")
    workdir = Path(args.workdir).resolve() if args.workdir else None
    if args.suite == "scan":
        return bench.bench_scan(args.files or [1000, 5000], workdir, args.json)
    if args.suite == "check":
        return bench.bench_check((args.files or [5000])[0], workdir, args.json)
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
        roots = [root_dir(r) for r in (args.root_dirs or [])]
        return bench.bench_cli(roots, (args.files or [5000])[0], workdir, args.json)
    if args.suite == "robust":
        from docbridge.bench import robust as bench_robust
        sizes = args.bytes or list(bench_robust.LARGE_SIZES if args.large else bench_robust.DEFAULT_SIZES)
        if any(size < 1 for size in sizes):
            raise UsageError("--bytes sizes must be positive.")
        check_cases(args.cases)
        return bench_robust.bench_robust(sizes, workdir, args.json, args.cases)
    if args.suite == "loop":
        from docbridge.bench import loop as bench_loop
        sizes = args.bytes or [1_000_000]
        if len(sizes) != 1 or sizes[0] < 1:
            raise UsageError("bench loop takes one positive --bytes size.")
        check_cases(args.cases)
        return bench_loop.bench_loop(sizes[0], workdir, args.json, args.cases)
    if args.suite == "fidelity":
        return fidelity(args)
    if args.suite == "search":
        suite = Path(args.suite_file) if args.suite_file else None
        if suite is not None and suite.is_dir() and (args.root is None or not any(suite.rglob("*-suite.json"))):
            raise UsageError(f"bench search over a folder times the queries of its suites (*-suite.json) on --root: "
                             f"give --root, and a folder that holds suites ({suite})")
        return bench.bench_search((args.files or [5000])[0], workdir, args.json, suite,
                                  root_dir(args.root) if args.root else None)
    raise UsageError(f"unknown benchmark {args.suite!r}")


def check_cases(cases: list[str] | None) -> None:
    """`--case`: a usage error on a case the robust benchmark does not have."""
    from docbridge.bench import robust as bench_robust
    unknown = sorted(set(cases or ()) - set(bench_robust.CASES))
    if unknown:
        raise UsageError(f"unknown robust case {unknown[0]!r} (cases: {', '.join(bench_robust.CASES)}).")


def fidelity(args: argparse.Namespace) -> int:
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


def retrieval(args: argparse.Namespace) -> int:
    from docbridge.engine.agent import suites
    if not args.suite_file:
        raise UsageError("bench retrieval needs a suite file: docbridge bench retrieval SUITE.json")
    suite_path = Path(args.suite_file)
    try:
        suite = suites.load_suite(suite_path)
        root = root_dir(args.root) if args.root else suite_path.resolve().parent
        if args.index:
            retriever = index_retriever(Path(args.index))
        else:
            _, retriever = open_retriever(root, use_cache=True)
        if args.lexical != "combined":
            from docbridge.engine.retrieval.rank import Retriever
            retriever = Retriever(retriever.projection, args.lexical)
        if args.hybrid:
            from docbridge.cli.hybrid import hybrid_retriever
            retriever = hybrid_retriever(root, retriever)
        result = suites.run_retrieval_suite(retriever, suite, root, counter(args.tokens))
        result.pop("_cases")
        status = EXIT_OK
        if args.update_baseline:
            if not args.by:
                raise UsageError("--update-baseline needs --by NAME (who approves the new baseline).")
            target = Path(args.baseline) if args.baseline else baseline_beside(suite_path)
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


def baseline_beside(suite: Path) -> Path:
    """The baseline a suite's is by default: NAME-suite.json's is NAME-baseline.json beside it (retrieval-suite.json:
    retrieval-baseline.json), any other file's FILE-baseline.json."""
    name = suite.name.removesuffix(".json").removesuffix("-suite")
    return suite.with_name(f"{name}-baseline.json")


def counter(method: str) -> Any:
    """The token counter `--tokens` names (a usage error when the exact one is not installed)."""
    from docbridge.engine.base.budget import TokenizerUnavailable, token_counter
    try:
        return token_counter(method)
    except TokenizerUnavailable as exc:
        raise UsageError(str(exc)) from exc


def index_retriever(path: Path) -> Any:
    """A retriever over a DocBridgeIndexV1 file (verified by content hash; nothing is scanned)."""
    from docbridge.engine.artifacts.index_file import IndexFileError, read_index
    from docbridge.engine.retrieval.rank import Retriever
    try:
        _, projection = read_index(path)
    except IndexFileError as exc:
        raise UsageError(str(exc)) from exc
    return Retriever(projection)


OVERLAY_DELTA_KEYS = ("suite", "overlayHash", "status", "regression", "withoutOverlay", "withOverlay", "deltas",
                      "lostCases", "gainedCases", "messages")


def overlay_delta(args: argparse.Namespace) -> int:
    """`bench retrieval --overlay`: the suite ranked without and with the enrichment overlay (exit 2 when there is
    no overlay to measure, 1 when hit@3 drops). The JSON is the delta, `ok`, and `overlayDelta`: the delta under the
    reference's names alone, where a script written against the original reads it."""
    from docbridge.cli.overlay import render_delta, retrieval_delta
    if not args.suite_file:
        raise UsageError("bench retrieval --overlay needs a suite file: docbridge bench retrieval SUITE.json "
                         "--overlay")
    suite_path = Path(args.suite_file)
    root = root_dir(args.root) if args.root else suite_path.resolve().parent
    delta = retrieval_delta(root, suite_path)
    if args.json:
        print(json.dumps({**delta, "ok": not delta["regression"],
                          "overlayDelta": {key: delta[key] for key in OVERLAY_DELTA_KEYS}}, indent=2, sort_keys=True))
    else:
        sys.stdout.write(render_delta(delta))
    return EXIT_FINDINGS if delta["regression"] else EXIT_OK
