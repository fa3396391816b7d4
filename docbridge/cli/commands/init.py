"""`docbridge init`: scan a repository and write a `doc-bridge.config.json` that shows what was decided
(docbridge.engine.init), never replacing one without `--force`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from docbridge.cli.common import EXIT_OK, UsageError, add_root, console, open_workspace, root_dir

NAME = "init"
HELP = "write a doc-bridge.config.json that shows what Doc Bridge found in the repository"
DESCRIPTION = ("Scan the repository, report its shape (documentation roots and site generator, packages, which "
               "modules are tests, examples, demos, templates, the documentation site's code, scripts or generated, "
               "and why) and write it as the comments of a short doc-bridge.config.json with the keys that change a "
               "decision.")
EPILOG = "Exit 0 when written, 2 when the file exists (without --force) or on a usage or input error."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--force", action="store_true",
                        help="replace an existing file (kept as <file>.bak)")
    parser.add_argument("--dry-run", action="store_true", help="print the file instead of writing it")
    parser.add_argument("--json", action="store_true", help="what was found and written, as JSON")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.base.cache import artifact_dir, write_atomic, write_new_file
    from docbridge.engine.base.config import CONFIG_FILE
    from docbridge.engine.base.safe_io import ignore_everything_in
    from docbridge.engine.init import config_text, read_shape, summary_lines
    root = root_dir(args.root)
    target = root / CONFIG_FILE
    exists = target.exists() or target.is_symlink()
    if exists and not (args.force or args.dry_run):
        raise UsageError(f"{target} already exists; `docbridge init --force` replaces it (the current file is kept "
                         f"as {CONFIG_FILE}.bak), `--dry-run` prints what would be written.")
    workspace = open_workspace(root, progress=not args.json, resolve=False)
    shape = read_shape(workspace.state)
    text = config_text(shape, root.name)
    if not args.dry_run:
        if exists:
            if target.is_symlink() or not target.is_file():
                raise UsageError(f"{target} is not a regular file; Doc Bridge replaces only a regular file.")
            write_atomic(root / (CONFIG_FILE + ".bak"), target.read_bytes())
            write_atomic(target, text.encode("utf-8"))
        else:
            try:  # never replacing a file another run (or the user) wrote meanwhile
                write_new_file(target, text.encode("utf-8"))
            except FileExistsError:
                raise UsageError(f"{target} appeared while the repository was scanned; it is kept (`docbridge init "
                                 "--force` replaces it).") from None
        base = artifact_dir(root)
        if base.is_dir():
            ignore_everything_in(base)  # a `.docbridge` made before it carried its own .gitignore
    if args.json:
        payload: dict[str, Any] = {"config": str(target), "written": not args.dry_run, "replaced": exists and
                                   not args.dry_run, "shape": shape.to_json()}
        if args.dry_run:
            payload["text"] = text
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    if args.dry_run:
        sys.stdout.write(text)
        return EXIT_OK
    out = console()
    for line in summary_lines(shape):
        out.print(line, markup=False)
    verb = "Replaced" if exists else "Wrote"
    out.print(f"\n{verb} {target}" + (f" (the previous one is {CONFIG_FILE}.bak)" if exists else "") + ".",
              markup=False)
    out.print("Next: `docbridge check` for drift between the docs and the code, `docbridge search QUERY` to "
              "find where something lives; `.docbridge/` keeps the caches and ignores itself in git.",
              markup=False)
    return EXIT_OK
