"""`docbridge lsp`: the language server on stdin/stdout. Everything after `lsp` belongs to the server
(`docbridge.cli.main` passes it through unparsed)."""

from __future__ import annotations

import argparse
import sys

from docbridge.cli.common import EXIT_OK

NAME = "lsp"
HELP = "start the language server on stdin/stdout (same as docbridge-lsp)"
DESCRIPTION = "Start the Doc Bridge language server, speaking LSP on stdin and stdout."
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("server_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Replace this process with the language server (engine code never imports the lsp package)."""
    import os
    os.execv(sys.executable, [sys.executable, "-m", "docbridge.lsp", *args.server_args])
    return EXIT_OK  # not reached
