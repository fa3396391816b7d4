"""`docbridge render TEMPLATE`: Markdown pages (and llms.txt) generated from the model through templates.

Every page is rendered in memory first, so a template error (exit 2) leaves every file as it was. Without
`--output` the pages go to standard output; with it, a single-page template (or one `--area`/`--record`) is
written to that file and a multi-page one under that directory. A file that exists keeps every byte outside
its generated region. `--check` writes nothing and exits 1 when a page's file differs from the rendering.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docbridge.cli.main import EXIT_FINDINGS, EXIT_OK, UsageError, _add_root, _console, _root, open_workspace
from docbridge.engine.render import DEFAULT_OUTPUT, TEMPLATES


def _fail(exc: Exception) -> UsageError:
    return UsageError(str(exc))


def cmd_render(args: argparse.Namespace) -> int:
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
    root = _root(args.root)
    workspace = open_workspace(root, progress=False, use_cache=not args.no_cache)
    key = args.area.strip("/") if args.area is not None else args.record
    try:
        pages, source = render_pages(workspace.state, name, key=key, since=args.since, overlay=args.overlay)
    except RenderError as exc:
        raise _fail(exc) from None
    single = name not in MULTI_PAGE or key is not None
    if args.data:
        payload: Any = pages[0].view if single else [{"path": p.name, **p.view} for p in pages]
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        return EXIT_OK
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
        raise _fail(exc) from None

    def shown(path: Path) -> str:
        return str(path.relative_to(root.resolve())) if path.is_relative_to(root.resolve()) else str(path)

    if args.check:
        differing = [p for p in planned if p.status != "unchanged"]
        if args.json:
            sys.stdout.write(json.dumps({"template": name, "source": source, "pages": [
                {"path": shown(p.path), "hash": p.page.hash, "status": "missing" if p.status == "new" else p.status}
                for p in planned]}, indent=2) + "\n")
        else:
            out = _console()
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
        out = _console()
        written = sum(1 for p in planned if p.status != "unchanged")
        for p in planned:
            out.print(f"{'wrote' if p.status != 'unchanged' else 'unchanged'} {shown(p.path)}", markup=False)
        out.print(f"{name}: {written} page(s) written, {len(planned) - written} unchanged.", markup=False)
    return EXIT_OK


def register(commands: Any) -> None:
    render = commands.add_parser(
        "render", help="write documentation pages generated from the model (llms.txt, area, ownership, ...)",
        description="Render a template over the model: llms.txt (the document index for agents), area (one page "
                    "per area), ownership (one page per ownership record), change-digest (what moved since the "
                    "last `docbridge scan` or --since FILE) or overlay-review (pending enrichment proposals). "
                    "Pages carry a generated region; rendering into an existing file replaces only that region. "
                    "Override a template with render.templates.<name> in doc-bridge.config.json.",
        epilog="Exit 0 when done (or, with --check, when every page is up to date), 1 when --check finds a page "
               "that differs, 2 on a usage, input or template error (nothing is written then).")
    render.add_argument("template", metavar="TEMPLATE", help=f"one of: {', '.join(TEMPLATES)}")
    _add_root(render)
    render.add_argument("--output", metavar="PATH",
                        help="the file (single page) or directory (area, ownership) to write; default: stdout")
    render.add_argument("--area", metavar="PATH", help="render only this area's page (area template)")
    render.add_argument("--record", metavar="ID", help="render only this ownership record's page")
    render.add_argument("--since", metavar="FILE", help="change-digest: the previous snapshot to compare with")
    render.add_argument("--overlay", metavar="FILE", help="overlay-review: the overlay file "
                                                          "(default .docbridge/overlay.json)")
    render.add_argument("--json", action="store_true", help="print {template, source, pages:[{path, hash}]}")
    render.add_argument("--data", action="store_true", help="print the view model the template receives")
    render.add_argument("--print-template", action="store_true", help="print the built-in template")
    render.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing every page whose file differs (default locations: "
                             + ", ".join(f"{k} → {v}" for k, v in DEFAULT_OUTPUT.items()) + ")")
    render.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    render.set_defaults(handler=cmd_render)
    register_map(commands)


def cmd_map(args: argparse.Namespace) -> int:
    from docbridge.engine.render.pages import write_file
    if not args.html and not args.json:
        raise UsageError("map needs --html (a self-contained page) or --json (its nodes and edges).")
    root = _root(args.root)
    workspace = open_workspace(root, progress=False, use_cache=not args.no_cache)
    if args.json:
        from docbridge.engine.render.graphmap import map_data
        sys.stdout.write(json.dumps(map_data(workspace.state), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        return EXIT_OK
    from docbridge.engine.base.safe_io import WriteRefused, write_target
    from docbridge.engine.render.graphmap import map_html
    try:
        target = write_target(root, Path(args.output).absolute(), outside_allowed=True) if args.output \
            else root / ".docbridge" / "map.html"
    except WriteRefused as exc:
        raise UsageError(str(exc)) from None
    write_file(target, map_html(workspace.state, target))
    _console().print(f"wrote {target.relative_to(root.resolve()) if target.is_relative_to(root.resolve()) else target}",
                     markup=False)
    return EXIT_OK


def register_map(commands: Any) -> None:
    graph = commands.add_parser(
        "map", help="draw areas, packages, imports and documentation coverage as one HTML page",
        description="Write one self-contained HTML file (no network at view time): packages and areas as nodes, "
                    "area imports and document coverage as edges, undocumented areas and import cycles "
                    "highlighted, fuzzy or proposed relations dashed; each area links to its generated page.")
    _add_root(graph)
    graph.add_argument("--html", action="store_true", help="write the HTML page")
    graph.add_argument("--json", action="store_true", help="print the nodes and edges as JSON instead")
    graph.add_argument("--output", metavar="FILE", help="where to write the page (default .docbridge/map.html)")
    graph.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    graph.set_defaults(handler=cmd_map)
