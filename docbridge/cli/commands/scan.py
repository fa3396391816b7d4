"""`docbridge scan`: scan the repository and write the content-hashed snapshot."""

from __future__ import annotations

import argparse
import json

from docbridge.cli.common import EXIT_OK, add_root, console, open_workspace, root_dir, write_output

NAME = "scan"
HELP = "scan the repository and write .docbridge/snapshot.json"
DESCRIPTION = ("Scan the repository (documents, modules, packages, areas) and write the content-hashed snapshot to "
               ".docbridge/snapshot.json.")
EPILOG = None

UNREADABLE_SHOWN = 10  # inputs that could not be used, named one per line in scan's text report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--output", metavar="FILE", help="also write the snapshot to FILE ('-' for stdout)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    parser.add_argument("--jobs", type=int, metavar="N", help="worker processes for large scans (default: cores)")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.artifacts.snapshot_file import write_snapshot
    root = root_dir(args.root)
    workspace = open_workspace(root, progress=not args.json, use_cache=not args.no_cache, jobs=args.jobs,
                               resolve=False)
    artifact = write_snapshot(workspace)
    if args.output:
        write_output(args.output, artifact.path.read_text(encoding="utf-8"))
    summary = {"root": str(root), "snapshot": str(artifact.path), "content_hash": artifact.content_hash,
               **artifact.summary, "seconds": round(workspace.last_scan.seconds, 3)}
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return EXIT_OK
    out = console()
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
