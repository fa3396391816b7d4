"""The `docbridge` command: the parser, built from the table of commands (docbridge.cli.commands), and `main`.

Exit codes: 0 success; 1 findings at or above `--fail-on`, or a benchmark regression; 2 a usage or input
error (bad arguments, unreadable root, invalid configuration, unknown reference).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from typing import Any

from docbridge.cli.commands import COMMANDS, command_named, lsp
from docbridge.cli.common import EXIT_OK, EXIT_USAGE, PrintableStream, console, input_errors, os_error_sentence
from docbridge.engine import __version__
from docbridge.engine.base.heap import bound_malloc_arenas

PROG = "docbridge"
DESCRIPTION = "Keep a repository's Markdown documentation and its JS/TS code in one deterministic model."
EPILOG = "Exit codes: 0 ok, 1 findings or regression, 2 usage or input error."


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose subcommand parsers share its help formatter, and which keeps the action holding
    them (`subcommands`: its `choices` map each name to its parser) so the CLI reference can walk every command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subcommands: argparse.Action | None = None

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", functools.partial(CommandParser, formatter_class=self.formatter_class))
        self.subcommands = super().add_subparsers(**kwargs)
        return self.subcommands


def build_parser(width: int | None = None) -> CommandParser:
    """The parser of every command in the table, in its order. `width`: the help's line width (default: the
    terminal's), fixed for the generated reference."""
    formatter: Any = functools.partial(argparse.HelpFormatter, width=width) if width else argparse.HelpFormatter
    parser = CommandParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=formatter)
    parser.add_argument("--version", action="version", version=f"docbridge {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_arguments(commands.add_parser(command.NAME, help=command.HELP, description=command.DESCRIPTION,
                                                  epilog=command.EPILOG))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    bound_malloc_arenas()  # before any thread starts (an index build's threads)
    if arguments[:1] == [lsp.NAME]:  # everything after `lsp` belongs to the server
        return lsp.run(argparse.Namespace(server_args=arguments[1:]))
    parser = build_parser()
    args = parser.parse_args(arguments)
    # what a command prints cannot drive the terminal (the MCP server's stdout carries its protocol)
    streams = sys.stdout, sys.stderr
    if args.command != "mcp":
        sys.stdout, sys.stderr = PrintableStream(sys.stdout), PrintableStream(sys.stderr)
    try:
        return int(command_named(args.command).run(args))
    except input_errors() as exc:
        console(stderr=True).print(f"error: {exc}", markup=False)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # what the machine refused: a full disk, a folder that cannot be made or written
        console(stderr=True).print(f"error: {os_error_sentence(exc)}", markup=False)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout, sys.stderr = streams


if __name__ == "__main__":
    sys.exit(main())
