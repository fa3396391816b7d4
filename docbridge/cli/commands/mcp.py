"""`docbridge mcp`: the live model served to agents over the Model Context Protocol. The SDK is imported by
the handler only, so no other command loads it."""

from __future__ import annotations

import argparse

from docbridge.cli.common import UsageError, add_root, root_dir

NAME = "mcp"
HELP = "serve the live model to agents over the Model Context Protocol"
DESCRIPTION = ("Start an MCP server over the repository: it scans on start, follows file changes on disk, and answers "
               "knowledge.search, knowledge.lookup, handoff.resolve, doc.search, doc.get, retriever.query, "
               "docbridge.diagnostics and docbridge.proposals from the current model.")
EPILOG = ("stdio by default (for MCP clients that start the server); --transport http serves streamable HTTP on "
          "127.0.0.1:PORT/mcp. Exit 2 on a usage error.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root(parser)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="stdio (default) or http")
    parser.add_argument("--port", type=int, metavar="N",
                        help="--transport http: the port on 127.0.0.1 (default 8765)")
    parser.add_argument("--debounce-ms", type=int, default=200, metavar="MS",
                        help="wait this long for file changes to settle before applying them (default 200)")
    parser.add_argument("--scan-timeout", type=float, default=120.0, metavar="SECONDS",
                        help="how long a tool call waits for the first scan before answering with an error "
                             "(default 120)")
    parser.add_argument("--no-cache", action="store_true", help="ignore and do not write the facts cache")
    parser.add_argument("--jobs", type=int, metavar="N", help="worker processes for the first scan (default: cores)")


def run(args: argparse.Namespace) -> int:
    """Serve the live model over MCP (the SDK is imported here only, so other commands never load it)."""
    root = root_dir(args.root)
    if args.transport == "stdio" and args.port is not None:
        raise UsageError("--port applies to --transport http only.")
    port = args.port if args.port is not None else 8765
    if not 1 <= port <= 65535:
        raise UsageError(f"--port {port} is not a TCP port (1 to 65535).")
    if args.debounce_ms < 0 or args.scan_timeout <= 0:
        raise UsageError("--debounce-ms must be at least 0 and --scan-timeout greater than 0.")
    try:
        from docbridge.mcp_server import serve
    except ImportError as exc:
        raise UsageError(f"the MCP server needs the `mcp` extra ({exc.name or exc} is missing): "
                         "pip install 'docbridge[mcp]'.") from exc
    return serve(root, transport=args.transport, port=port, debounce_ms=args.debounce_ms,
                 scan_timeout=args.scan_timeout, use_cache=not args.no_cache, jobs=args.jobs)
