"""`docbridge render TEMPLATE`: Markdown pages (and llms.txt) generated from the model through templates.

Every page is rendered in memory first, so a template error (exit 2) leaves every file as it was. Without
`--output` the pages go to standard output; with it, a single-page template (or one `--area`/`--record`) is
written to that file and a multi-page one under that directory. A file that exists keeps every byte outside
its generated region. `--check` writes nothing and exits 1 when a page's file differs from the rendering.
`--data FILE` renders from a file instead of the working tree: the view model itself (what `--print-data` prints,
for a template author iterating on an override, or data made elsewhere), or the artifact the template reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError, add_root, console, open_workspace, root_dir
from docbridge.engine.render import DEFAULT_OUTPUT, TEMPLATES

NAME = "render"
HELP = "write documentation pages generated from the model (llms.txt, area, ownership, ...)"
DESCRIPTION = ("Render a template over the model: llms.txt (the agent reading list `docbridge index` writes), area "
               "(one page per area), ownership (one page per ownership record), change-digest (what moved since "
               "the last `docbridge scan` or --since FILE) or overlay-review (pending enrichment proposals). Pages "
               "carry a generated region; rendering into an existing file replaces only that region. Override a "
               "template with render.templates.<name> in doc-bridge.config.json; --print-data prints the view model "
               "a template receives, and --data FILE renders from such a file (or from the template's artifact) "
               "instead of the working tree.")
EPILOG = ("Exit 0 when done (or, with --check, when every page is up to date), 1 when --check finds a page that "
          "differs, 2 on a usage, input or template error (nothing is written then).")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("template", metavar="TEMPLATE", help=f"one of: {', '.join(TEMPLATES)}")
    add_root(parser)
    parser.add_argument("--output", metavar="PATH",
                        help="the file (single page) or directory (area, ownership) to write; default (or '-'): stdout")
    parser.add_argument("--area", metavar="PATH", help="render only this area's page (area template)")
    parser.add_argument("--record", metavar="ID", help="render only this ownership record's page")
    parser.add_argument("--since", metavar="FILE", help="change-digest: the previous snapshot to compare with")
    parser.add_argument("--overlay", metavar="FILE", help="overlay-review: the overlay file "
                                                          "(default .docbridge/overlay.json)")
    parser.add_argument("--data", metavar="FILE",
                        help="render from FILE instead of the working tree: the view model itself (as --print-data "
                             "prints it), or the template's artifact: a DocBridgeIndex (llms.txt), the previous "
                             "snapshot (change-digest), an overlay (overlay-review)")
    parser.add_argument("--json", action="store_true", help="print {template, source, pages:[{path, hash}]}")
    parser.add_argument("--print-data", action="store_true", help="print the view model the template receives")
    parser.add_argument("--print-template", action="store_true", help="print the built-in template")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing every page whose file differs (default locations: "
                             + ", ".join(f"{k} → {v}" for k, v in DEFAULT_OUTPUT.items()) + ")")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")


def data_pages(root: Path, name: str, data: str, key: str | None, use_cache: bool) -> tuple[list[Any], str, bool]:
    """`--data FILE`: the pages rendered from FILE (the model is read only for change-digest's snapshot)."""
    from docbridge.engine.base.config import load_config
    from docbridge.engine.render.pages import render_data
    return render_data(root, load_config(root), name, data, key=key,
                       state=lambda: open_workspace(root, progress=False, use_cache=use_cache).state)


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.render.pages import MULTI_PAGE, plan, render_pages, write_file
    from docbridge.engine.render.templating import RenderError, builtin_source
    name = args.template
    if name not in TEMPLATES:
        raise UsageError(f"Unknown template {name!r}; the templates are {', '.join(TEMPLATES)}.")
    if args.print_template:
        sys.stdout.write(builtin_source(name))
        return EXIT_OK
    if args.area is not None and name != "area":
        raise UsageError("--area is for the area template.")
    if args.record is not None and name != "ownership":
        raise UsageError("--record is for the ownership template.")
    root = root_dir(args.root)
    key = args.area.strip("/") if args.area is not None else args.record
    if args.data is not None and (args.since is not None or args.overlay is not None):
        raise UsageError("--data names what to render from; --since and --overlay are its forms for one template "
                         "each: give one of them.")
    try:
        if args.data is not None:
            pages, source, single = data_pages(root, name, args.data, key, not args.no_cache)
        else:
            workspace = open_workspace(root, progress=False, use_cache=not args.no_cache)
            pages, source = render_pages(workspace.state, name, key=key, since=args.since, overlay=args.overlay)
            single = name not in MULTI_PAGE or key is not None
    except RenderError as exc:
        raise UsageError(str(exc)) from None
    if args.print_data:
        payload: Any = pages[0].view if single else [{"path": p.name, **p.view} for p in pages]
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        return EXIT_OK
    if args.output == "-":  # stdout, as without --output
        if args.check:
            raise UsageError("render --check compares the pages on disk with a fresh rendering: --output - names "
                             "none (give the file or folder, or leave --output out for the default).")
        args.output = None
    output = args.output or (DEFAULT_OUTPUT[name] if args.check else None)
    if output is None:
        if args.json:
            payload = {"template": name, "source": source,
                       "pages": [{"path": p.name, "hash": p.hash, "content": p.sealed.text} for p in pages]}
            sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        else:
            for index, page in enumerate(pages):
                if len(pages) > 1:
                    sys.stdout.write(("\n" if index else "") + f"<!-- docbridge render: {page.name} -->\n")
                sys.stdout.write(page.sealed.text)
        return EXIT_OK
    target = Path(output)
    target = target if target.is_absolute() else (Path.cwd() / target if args.output else root / target)
    if single and (target.is_dir() or (args.output is None and name in MULTI_PAGE)):
        target = target / pages[0].name
    try:
        # a path typed on the command line may leave the repository (the user's choice); inside it, never
        # through a link
        planned = plan(pages, target, name, single, root, outside_allowed=bool(args.output))
    except RenderError as exc:
        raise UsageError(str(exc)) from None

    def shown(path: Path) -> str:
        return str(path.relative_to(root.resolve())) if path.is_relative_to(root.resolve()) else str(path)

    if args.check:
        differing = [p for p in planned if p.status != "unchanged"]
        if args.json:
            sys.stdout.write(json.dumps({"template": name, "source": source, "pages": [
                {"path": shown(p.path), "hash": p.page.hash, "status": "missing" if p.status == "new" else p.status}
                for p in planned]}, indent=2) + "\n")
        else:
            out = console()
            for p in differing:
                why = "missing" if p.status == "new" else "differs from a fresh rendering"
                out.print(f"{shown(p.path)}: {why}", markup=False)
            out.print(f"{len(planned) - len(differing)} of {len(planned)} page(s) of {name} are up to date.",
                      markup=False)
        return EXIT_FINDINGS if differing else EXIT_OK
    for p in planned:
        if p.status != "unchanged":
            write_file(p.path, p.text)
    if args.json:
        sys.stdout.write(json.dumps({"template": name, "source": source, "pages": [
            {"path": shown(p.path), "hash": p.page.hash, "status": "written" if p.status != "unchanged"
             else "unchanged"} for p in planned]}, indent=2) + "\n")
    else:
        out = console()
        written = sum(1 for p in planned if p.status != "unchanged")
        for p in planned:
            out.print(f"{'wrote' if p.status != 'unchanged' else 'unchanged'} {shown(p.path)}", markup=False)
        out.print(f"{name}: {written} page(s) written, {len(planned) - written} unchanged.", markup=False)
    return EXIT_OK
