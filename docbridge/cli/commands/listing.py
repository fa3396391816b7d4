"""`docbridge list packages|knowledge`: the ids `query` accepts, or every document and module."""

from __future__ import annotations

import argparse
import sys

from docbridge.cli.common import EXIT_OK, add_root, dump, reference_workspace, root_dir

NAME = "list"
HELP = "list packages and ownership records, or every document and module"
DESCRIPTION = ("`list packages`: ownership records and packages (the ids `query` accepts); `list knowledge`: every "
               "document and module with its title, description, symbols, tags and content hash.")
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=["packages", "knowledge"], help="what to list")
    add_root(parser)
    parser.add_argument("--text", action="store_true", help="one readable line each (default: JSON)")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.base.model import DOCUMENT, MODULE, PACKAGE
    root = root_dir(args.root)
    workspace, projection = reference_workspace(root, not args.no_cache)
    if args.what == "packages":
        owned = {e.ownership_id: e for e in projection.entries if e.ownership_id}
        rows = []
        for record in sorted(workspace.config.ownership, key=lambda r: r.id):
            entry = owned.get(record.id) or projection.by_id.get(f"ownership:{record.id}")
            rows.append({"id": record.id, "kind": "ownership", "path": record.path,
                         "entityId": entry.id if entry else None, "purpose": record.purpose})
        for entry in projection.entries:
            if entry.kind == PACKAGE and not entry.id.startswith("ownership:") and entry.ownership_id is None:
                rows.append({"id": entry.id, "kind": "package", "path": entry.path, "entityId": entry.id,
                             "purpose": entry.summary})
        if args.text:
            for row in rows:
                sys.stdout.write(f"{row['id']}  [{row['kind']}] {row['path']}"
                                 + (f" — {row['purpose']}" if row["purpose"] else "") + "\n")
            return EXIT_OK
        sys.stdout.write(dump({"type": "packages", "count": len(rows), "packages": rows}))
        return EXIT_OK
    records = [{"id": e.id, "type": e.kind, "title": e.title, "path": e.path, "description": e.summary or "",
                "symbols": list(e.symbols), "tags": list(e.tags), "contentHash": e.content_hash}
               for e in projection.entries if e.kind in (DOCUMENT, MODULE)]
    if args.text:
        for record in records:
            sys.stdout.write(f"[{record['type']}] {record['path']} — {record['title']}"
                             + (f": {record['description']}" if record["description"] else "") + "\n")
        return EXIT_OK
    sys.stdout.write(dump({"type": "knowledge", "count": len(records), "knowledge": records}))
    return EXIT_OK
