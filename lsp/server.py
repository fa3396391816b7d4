"""The Doc Bridge language server (pygls 2, stdio): `docbridge-lsp`, `docbridge lsp` or `python -m lsp`."""

from __future__ import annotations

import logging
import sys

from engine import __version__
from lsp import actions, commands, completion, navigation  # register their handlers on the server
from lsp.app import DocBridgeServer, server

__all__ = ["DocBridgeServer", "actions", "commands", "completion", "main", "navigation", "server"]


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if args and args[0] in ("--version", "-V"):
        print(f"docbridge-lsp {__version__}")
        return 0
    if args and args[0] in ("--help", "-h"):
        print("docbridge-lsp: the Doc Bridge language server. It speaks the Language Server Protocol on stdin and "
              "stdout; start it from an editor (see the README).")
        return 0
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="docbridge-lsp %(levelname)s %(name)s: %(message)s")
    # Scans run in a worker thread; a short GIL switch interval lets the event loop answer requests
    # during a scan within a few milliseconds instead of waiting out 5 ms slices several times per request.
    sys.setswitchinterval(0.0005)
    server.start_io()
    return 0
