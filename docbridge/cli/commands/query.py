"""`docbridge query`: the handoff for an entity, named by reference or by KIND ID."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from docbridge.cli.common import EXIT_OK, UsageError, add_root, dump, reference_workspace, root_dir

NAME = "query"
HELP = "the handoff for an entity: where to start, what to edit, what to run"
DESCRIPTION = ("Print the handoff for a package, area, module, document or configured route, named by entity id, "
               "ownership id, alias or repository-relative path.")
EPILOG = "Exit 2 when the reference names nothing (the closest candidates are listed)."

QUERY_FORMS = ("package", "ownership", "intent", "change", "area", "module", "document")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ref", nargs="+", metavar="REF",
                        help="entity id, ownership id, alias or path (e.g. src/billing, docs/api.md); or KIND ID "
                             "with KIND package, ownership, intent, change, area, module or document")
    add_root(parser)
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="the handoff object as JSON (the default)")
    output.add_argument("--agent", action="store_true", help="compact JSON for agents")
    output.add_argument("--text", action="store_true", help="a readable card")
    parser.add_argument("--budget", type=int, metavar="N", help="drop evidence, related, explain and notes to fit N "
                                                               "tokens")
    parser.add_argument("--caveats", action="store_true",
                        help="add caveats: the open findings where the handoff sends you, the revision it was "
                             "analyzed at and what was not analyzed there")
    parser.add_argument("--no-cache", action="store_true", help="ignore the cached index and facts")


def run(args: argparse.Namespace) -> int:
    from docbridge.engine.agent.handoff import UnknownReference, handoff_for_entity, render_handoff_text
    from docbridge.engine.agent.payloads import budget_handoff
    from docbridge.engine.base.budget import BudgetError
    root = root_dir(args.root)
    workspace, projection = reference_workspace(root, not args.no_cache)
    ref = query_reference(args.ref, projection, workspace.config)
    try:
        handoff = handoff_for_entity(workspace.ensure_resolved(), ref, projection, include_caveats=args.caveats)
        if args.budget is not None:
            handoff = budget_handoff(handoff, args.budget)
    except (UnknownReference, BudgetError) as exc:
        raise UsageError(str(exc)) from exc
    if args.text:
        sys.stdout.write(render_handoff_text(handoff))
    else:
        sys.stdout.write(dump(handoff, compact_output=args.agent))
    return EXIT_OK


def query_reference(words: list[str], projection: Any, config: Any) -> str:
    """`query REF` or `query KIND ID` (the original's forms): the reference to hand off, checked against KIND."""
    from docbridge.engine.agent.handoff import UnknownReference, resolve_ref
    if len(words) == 1:
        return words[0]
    if len(words) != 2 or words[0] not in QUERY_FORMS:
        raise UsageError(f"query takes REF or KIND ID with KIND one of {', '.join(QUERY_FORMS)}; got "
                         f"{' '.join(words)!r}.")
    kind, ident = words
    path = ident.strip().replace("\\", "/").removeprefix("./").rstrip("/")
    if kind in ("package", "ownership"):
        # the original's package records are the ownership records: by id, or by the path the record names
        # (`query ownership src/query`)
        for record in config.ownership:
            if record.id == ident or record.path.rstrip("/") == path:
                return record.id
    if kind == "ownership":
        # else whatever the path or alias names, as the original resolves it
        try:
            return resolve_ref(projection, path or ident).id
        except UnknownReference as exc:
            known = ", ".join(sorted(r.id for r in config.ownership)) or "none"
            closest = f" Closest: {', '.join(exc.candidates)}." if exc.candidates else ""
            raise UsageError(f'"{ident}" is no ownership id, path or alias here.{closest} Ownership ids: {known}. '
                             f'Try `docbridge list packages` or `docbridge search "{ident}"`.') from exc
    if kind in ("intent", "change"):
        ref = ident if ident.startswith(f"{kind}:") else f"{kind}:{ident}"
        if ref not in projection.by_id:
            raise UsageError(f'Unknown {kind} route "{ident}". Try `docbridge list packages` or '
                             f'`docbridge search "{ident}"`.')
        return ref
    try:
        entry = resolve_ref(projection, ident)
    except UnknownReference as exc:
        raise UsageError(str(exc)) from exc
    actual = "package" if entry.id.startswith("ownership:") else entry.kind
    if actual != kind:
        article = "an" if actual[:1] in "aeiou" else "a"
        raise UsageError(f'"{ident}" is {article} {actual} ({entry.id}), not a {kind}. Try `docbridge query '
                         f'{ident}`.')
    return entry.id
