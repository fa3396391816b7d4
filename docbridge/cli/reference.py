"""The command line reference, generated from the parser: for `docbridge` and every command (in the table's
order, subcommands after their command), its one-line summary and its `--help` (usage, description, options
with their help, epilog), at a fixed line width so the text does not depend on the terminal.

docs/cli.md holds it between two markers; tests/test_cli_reference.py fails when it differs from what the
parser renders now.

    python -m docbridge.cli.reference                       # print the reference
    python -m docbridge.cli.reference --write docs/cli.md   # replace the generated part of the page
    python -m docbridge.cli.reference --check docs/cli.md   # exit 1 when the page's generated part is stale
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import cast

from docbridge.cli.commands import COMMANDS
from docbridge.cli.main import PROG, CommandParser, build_parser

BEGIN = "<!-- cli-reference:begin -->"
END = "<!-- cli-reference:end -->"
WIDTH = 100  # argparse's line width in the reference
REGENERATE = "python -m docbridge.cli.reference --write docs/cli.md"


def _parsers(parser: CommandParser) -> Iterator[CommandParser]:
    """`parser` and every parser under it, depth first in the order they were added."""
    yield parser
    if parser.subcommands is not None:
        for child in cast(Mapping[str, CommandParser], parser.subcommands.choices).values():
            yield from _parsers(child)


def render_reference() -> str:
    """The reference as Markdown: one section per command, its summary and its `--help` text."""
    summaries = {f"{PROG} {command.NAME}": command.HELP for command in COMMANDS}
    parts = [f"<!-- generated from the parser by `{REGENERATE}`; do not edit by hand -->\n"]
    for parser in _parsers(build_parser(width=WIDTH)):
        parts.append(f"\n### `{parser.prog}`\n\n")
        summary = summaries.get(parser.prog)
        if summary:
            parts.append(f"{summary[0].upper()}{summary[1:]}.\n\n")
        help_text = parser.format_help().rstrip("\n")
        parts.append(f"```text\n{help_text}\n```\n")
    return "".join(parts)


def generated_part(page: str) -> str:
    """The text between the markers of `page`; ValueError when they are missing or out of order."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {BEGIN} ... {END} section")
    return page[start + len(BEGIN):end].strip("\n") + "\n"


def splice(page: str, reference: str) -> str:
    """`page` with `reference` between its markers (everything else kept byte for byte)."""
    generated_part(page)  # the markers are there
    start, end = page.find(BEGIN) + len(BEGIN), page.find(END)
    return page[:start] + "\n" + reference.strip("\n") + "\n" + page[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docbridge.cli.reference",
                                     description="Print the command line reference, or write it into a page.")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", metavar="PAGE", help="replace the generated part of PAGE (e.g. docs/cli.md)")
    action.add_argument("--check", metavar="PAGE", help="exit 1 when PAGE's generated part differs")
    args = parser.parse_args(argv)
    reference = render_reference()
    if not (args.write or args.check):
        sys.stdout.write(reference)
        return 0
    path = Path(args.write or args.check)
    page = path.read_text(encoding="utf-8")
    if args.check:
        if generated_part(page) == reference:
            return 0
        print(f"{path}: the command line reference is stale; regenerate it: {REGENERATE}", file=sys.stderr)
        return 1
    updated = splice(page, reference)
    if updated != page:
        path.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
