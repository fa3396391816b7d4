"""`docbridge map`: areas, packages, imports and documentation coverage drawn as one self-contained HTML page
(or its nodes and edges as JSON)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from docbridge.cli.common import EXIT_OK, UsageError, add_root, console, open_workspace, root_dir

NAME = "map"
HELP = "draw areas, packages, imports and documentation coverage as one HTML page"
DESCRIPTION = ("Write one self-contained HTML file (no network at view time): packages and areas as nodes, area "
               "imports and document coverage as edges, undocumented areas and import cycles highlighted, fuzzy or "
               "proposed relations dashed; each area links to its generated page.")
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--html", action="store_true", help="write the HTML page")
    parser.add_argument("--json", action="store_true", help="print the nodes and edges as JSON instead")
    parser.add_argument("--output", metavar="FILE",
                        help="where to write the page (default .docbridge/map.html; '-' for stdout)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.render.pages import write_file
    if not args.html and not args.json:
        raise UsageError("map needs --html (a self-contained page) or --json (its nodes and edges).")
    root = root_dir(args.root)
    workspace = open_workspace(root, progress=False, use_cache=not args.no_cache)
    if args.json:
        from docbridge.engine.render.graphmap import map_data
        sys.stdout.write(json.dumps(map_data(workspace.state), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        return EXIT_OK
    from docbridge.engine.base.cache import write_named_file
    from docbridge.engine.base.safe_io import WriteRefused, write_target
    from docbridge.engine.render.graphmap import map_html
    if args.output == "-":  # the page on stdout, its links relative to the current folder
        sys.stdout.write(map_html(workspace.state, Path.cwd() / "map.html"))
        return EXIT_OK
    try:
        target = write_target(root, Path(args.output).absolute(), outside_allowed=True) if args.output \
            else root / ".docbridge" / "map.html"
    except WriteRefused as exc:
        raise UsageError(str(exc)) from None
    page = map_html(workspace.state, target)
    if args.output:  # a file the user named: a device or a FIFO is written into, not replaced
        write_named_file(target, page.encode("utf-8"))
    else:
        write_file(target, page)
    shown = target.relative_to(root.resolve()) if target.is_relative_to(root.resolve()) else target
    console().print(f"wrote {shown}", markup=False)
    return EXIT_OK
