"""Payloads for agents: the bounded search answer (`search --agent`) and the one call before editing
(`lookup`), both under a declared token budget (docbridge.engine.base.budget).

The search answer is the original's AgentSearch (`engine/data/schemas/agent-search.schema.json`), kept field for
field: `type: "agent-search"`, `schemaVersion: 1`, `source`, `term`, `count`, `bestMatch`, `matches`,
`nextCommands` and `telemetry`; `query` (the same as `term`) and `mode` are our additions."""

from __future__ import annotations

import math
import os
import shlex
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbridge.engine.base.budget import BudgetError, apply_budget, check_budget, compact, strip_key
from docbridge.engine.base.model import AREA, CHANGE, INTENT, MODULE, PACKAGE
from docbridge.engine.base.safe_io import ARTIFACT_DIR
from docbridge.engine.retrieval.project import Entry, Projection, projection_of
from docbridge.engine.views.reconcile import findings_of

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState as Workspace

MODES = {"discovery": (8, 5), "editing": (5, 3), "debugging": (6, 4), "documentation": (6, 3)}
DEFAULT_AGENT_BUDGET = 32  # tokens of the selected context: the matches and the follow-up commands
AGENT_SCHEMA_VERSION = 1
INDEX_SOURCE = f"{ARTIFACT_DIR}/index.json"  # `source`: the index the answer comes from (`docbridge index`)
EXCERPT = 240
MAX_NEIGHBOURS = 32


# ------------------------------------------------------------------------------------------------ search --agent


def _agent_match(entry: Entry) -> dict[str, Any]:
    """`{type, id, path}` (the ownership id for an owned unit, else the entry id) and the summary when known."""
    match: dict[str, Any] = {"type": "ownership" if entry.ownership_id else entry.kind,
                             "id": entry.ownership_id or entry.id, "path": entry.path}
    if entry.summary:
        match["summary"] = entry.summary
    return match


def _next_command(entry: Entry, root_option: str) -> str:
    ref = entry.id if entry.kind in (INTENT, CHANGE) else entry.ownership_id or entry.path
    return f"docbridge query {ref} --agent{root_option}"


def root_option(root: Path, cwd: Path | None = None) -> str:
    """` --root DIR` for follow-up commands when the repository is not the working directory (a command run
    from elsewhere without it would scan the wrong tree), else nothing."""
    here = (cwd or Path.cwd()).resolve()
    if root.resolve() == here:
        return ""
    try:
        shown = os.path.relpath(root, here)
    except ValueError:  # another drive
        shown = str(root)
    if shown.startswith(".." + os.sep + ".." + os.sep):
        shown = str(root)
    return " --root " + shlex.quote(shown)


def render_agent(payload: dict[str, Any]) -> str:
    """The agent payload exactly as printed: one line of compact JSON (an agent pays for every space)."""
    return compact(payload) + "\n"


def context_bytes(matches: list[dict[str, Any]], commands: list[str]) -> int:
    """What the budget counts: the UTF-8 bytes of the selected context, `{matches, nextCommands}` as compact JSON
    (the envelope, `bestMatch` and the telemetry are not context an agent chose to read)."""
    return len(compact({"matches": matches, "nextCommands": commands}).encode("utf-8"))


def agent_search(retriever: Any, query: str, mode: str = "discovery",
                 budget: int | None = None, root: Path | None = None) -> dict[str, Any]:
    """Matches without scores (`count` of all, `bestMatch` the first, in full), follow-up commands, and telemetry.
    The budget (tokens, estimated as bytes / 4) bounds the selected context, `{matches, nextCommands}`; while it
    is over, the summary of the last match that still has one goes, then commands (down to one), then matches
    (down to one), then the last command. One grounded match is the minimum: a budget given that cannot hold it
    is refused (`BudgetError`), never exceeded. No budget given: the reference's default of 32 tokens, raised to
    the one grounded match when that needs more (our ids name the kind and the path, longer than the original's:
    with 32 alone, half of the questions of a monorepo's suite were refused); the telemetry gives the budget used."""
    if mode not in MODES:
        raise BudgetError(f"--mode must be one of {', '.join(MODES)}.")
    given = budget is not None
    if budget is None:
        budget = DEFAULT_AGENT_BUDGET
    check_budget(budget, "--context-budget")
    max_matches, max_commands = MODES[mode]
    results = retriever.search(query, 20, agent=True)
    suffix = root_option(root) if root is not None else ""
    entries = [r.entry for r in results]
    if entries and entries[0].kind in (INTENT, CHANGE):
        entries = [e for e in entries if e.kind == entries[0].kind][:3]  # the route focuses the payload
    else:
        entries = entries[:max_matches]
    matches = [_agent_match(e) for e in entries]
    commands = list(dict.fromkeys(_next_command(e, suffix) for e in entries[:max_commands]))
    limit = budget * 4
    size = context_bytes(matches, commands)
    truncated = False
    while size > limit:
        with_summary = [m for m in matches if "summary" in m]
        if with_summary:
            del with_summary[-1]["summary"]
        elif len(commands) > 1:
            commands.pop()
        elif len(matches) > 1:
            matches.pop()
        elif commands:
            commands.pop()
        else:
            break
        truncated = True
        size = context_bytes(matches, commands)
    if size > limit and not given and matches:
        budget = math.ceil(size / 4)  # the default yields to the minimum grounded result
    elif size > limit or (results and not matches):
        needed = math.ceil(size / 4)
        raise BudgetError(f"--context-budget {budget} is too small for the minimum grounded result ({needed} tokens "
                          f"needed: one match without its summary); pass --context-budget {needed} or more.")
    return {
        "type": "agent-search", "schemaVersion": AGENT_SCHEMA_VERSION, "source": INDEX_SOURCE, "term": query,
        "query": query, "mode": mode, "count": len(results),
        "bestMatch": _agent_match(entries[0]) if entries else None,  # unbudgeted: the first match in full
        "matches": matches, "nextCommands": commands,
        "telemetry": {"contextBytes": size, "estimatedTokens": math.ceil(size / 4), "tokenMethod": "estimate",
                      "contextBudgetTokens": budget, "mode": mode, "truncated": truncated}}


# ------------------------------------------------------------------------------------------------ lookup


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= EXCERPT:
        return text
    cut = text.rfind(" ", 0, EXCERPT)
    return (text[:cut] if cut > EXCERPT // 2 else text[:EXCERPT]) + "…"


def _ref(entry: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {"id": entry.id, "kind": entry.kind, "path": entry.path, "title": entry.title}
    if entry.summary:
        out["summary"] = entry.summary
    return out


def _neighbourhood(projection: Projection, entry: Entry, depth: int) -> dict[str, list[dict[str, Any]]]:
    """Breadth-first over relations (both directions) plus containment, to `depth`, grouped by relation kind."""
    children: dict[str, list[str]] = {}
    for member in projection.entries:
        parent = member.area_id or (member.package_id if member.kind in (AREA, MODULE) else None)
        if parent:
            children.setdefault(parent, []).append(member.id)

    def edges_of(node: Entry) -> list[tuple[str, str, str, str]]:
        out = [(e.kind, e.other, e.direction, e.confidence) for e in node.edges]
        parent = node.area_id or (node.package_id if node.kind in (AREA, MODULE) else None)
        if parent:
            out.append(("contains", parent, "in", "observed"))
        for child in children.get(node.id, []):
            out.append(("contains", child, "out", "observed"))
        return sorted(out)

    seen = {entry.id: 0}
    queue = deque([entry])
    grouped: dict[str, list[dict[str, Any]]] = {}
    while queue:
        node = queue.popleft()
        distance = seen[node.id]
        if distance >= depth:
            continue
        for kind, other_id, direction, confidence in edges_of(node):
            other = projection.by_id.get(other_id)
            if other is None or other_id in seen:
                continue
            seen[other_id] = distance + 1
            queue.append(other)
            item = {**_ref(other), "direction": direction, "confidence": confidence, "distance": distance + 1}
            if distance + 1 > 1:
                item["via"] = node.id
            grouped.setdefault(kind, []).append(item)
    return {kind: sorted(items, key=lambda i: (i["distance"], i["id"]))[:MAX_NEIGHBOURS]
            for kind, items in sorted(grouped.items())}


def lookup(ws: Workspace, ref: str, depth: int = 1, budget: int | None = None,
           projection: Projection | None = None) -> dict[str, Any]:
    """The entity, its neighbours by relation kind, the documents covering and mentioning it, its handoff,
    its open findings and its evidence: what an agent reads before editing."""
    from docbridge.engine.agent.handoff import (  # not on search --agent's path
        handoff_for_entity,
        ranked_documents,
        resolve_ref,
    )
    projection = projection or projection_of(ws)
    entry = resolve_ref(projection, ref)
    depth = max(1, min(3, depth))
    covering = ranked_documents(projection, entry.covered_by)
    mentioning = [d for d in ranked_documents(projection, entry.mentioned_by) if d not in covering]
    findings = []
    prefix = entry.path.rstrip("/") + "/"
    for finding in findings_of(ws):
        if finding.entity == entry.id or (finding.path and (finding.path == entry.path or (
                entry.kind in (AREA, PACKAGE) and finding.path.startswith(prefix)))):
            findings.append({"id": finding.fingerprint, "code": finding.code, "severity": finding.severity,
                             "message": finding.message, "path": finding.path,
                             "line": finding.range.start.line if finding.range else None})
    findings = findings[:32]
    body = entry.fields.get("body", "")
    evidence = [{"path": entry.path, "contentHash": entry.content_hash, "context": f"{entry.kind} {entry.id}",
                 **({"excerpt": _excerpt(body)} if body else {})}]
    for document in (covering + mentioning)[:7]:
        relation = "covers" if document in covering else "mentions"
        evidence.append({"path": document.path, "contentHash": document.content_hash,
                         "context": f"{relation} {entry.id}",
                         **({"excerpt": _excerpt(document.fields['body'])} if document.fields.get("body") else {})})
    payload = {
        "type": "lookup", "schemaVersion": 1,
        "entity": {"id": entry.id, "kind": entry.kind, "path": entry.path, "title": entry.title,
                   "summary": entry.summary, "audience": entry.audience, "aliases": list(entry.aliases),
                   "symbols": list(entry.symbols), "tags": list(entry.tags), "provenance": entry.provenance,
                   "confidence": entry.confidence, "contentHash": entry.content_hash,
                   "ownershipId": entry.ownership_id, "areaId": entry.area_id, "packageId": entry.package_id,
                   "pagerank": entry.pagerank},
        "neighbours": _neighbourhood(projection, entry, depth),
        "documents": {"covering": [_ref(d) for d in covering], "mentioning": [_ref(d) for d in mentioning]},
        # the lookup carries its own evidence; the handoff's would repeat it
        "handoff": {k: v for k, v in handoff_for_entity(ws, entry.id, projection).items() if k != "evidence"},
        "findings": findings,
        "evidence": evidence,
    }
    if budget is None:
        return payload
    return apply_budget(payload, budget, LOOKUP_SECTIONS)


def _drop_neighbours(payload: dict[str, Any]) -> bool:
    held = bool(payload.get("neighbours"))
    payload["neighbours"] = {}
    return held


def _empty_notes(*path: str) -> Callable[[dict[str, Any]], bool]:
    """A stripper that empties the handoff's `notes` (the contract requires the list, not its items)."""

    def strip(payload: dict[str, Any]) -> bool:
        node: Any = payload
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict) or not node.get("notes"):
            return False
        node["notes"] = []
        return True

    return strip


LOOKUP_SECTIONS = [
    ("evidenceExcerpts", strip_key("excerpt", ("evidence",))),
    ("related", strip_key("related", ("handoff",))),
    ("neighbours", _drop_neighbours),
    ("summaries", strip_key("summary", ("entity",), ("documents", "covering"), ("documents", "mentioning"))),
    ("explanations", lambda p: any([strip_key("explain", ("handoff",))(p), _empty_notes("handoff")(p)])),
    ("details", lambda p: any([strip_key(key, ("entity",))(p) for key in ("aliases", "symbols", "tags")])),
]

HANDOFF_SECTIONS = [
    ("evidence", strip_key("evidence", ())),
    ("related", strip_key("related", ())),
    ("explain", strip_key("explain", ())),
    ("notes", _empty_notes()),
]


def budget_handoff(handoff: dict[str, Any], budget: int) -> dict[str, Any]:
    """A handoff under a budget: evidence, related units, explanations and notes go first (in that order; `notes`
    stays as an empty list, which the contract requires); the contract's envelope, target, startHere,
    readBeforeEditing, editRoots, checks and metadata are the minimum grounded answer."""
    return apply_budget(handoff, budget, HANDOFF_SECTIONS)


def render_lookup_text(payload: dict[str, Any]) -> str:
    entity = payload["entity"]
    lines = [f"{entity['title']}  [{entity['kind']}] {entity['id']}"]
    if entity.get("summary"):
        lines.append(f"  {entity['summary']}")
    lines.append(f"  path {entity['path']} · confidence {entity['confidence']} · owner "
                 f"{entity.get('ownershipId') or '—'}")
    if payload.get("neighbours"):
        lines.append("")
        lines.append("Neighbours:")
        for kind, items in payload["neighbours"].items():
            for item in items:
                arrow = "←" if item["direction"] == "in" else "→"
                hops = item["distance"]
                lines.append(f"  {kind} {arrow} {item['id']} ({item['kind']}, {hops} hop{'s' if hops != 1 else ''})")
    documents = payload["documents"]
    if documents["covering"] or documents["mentioning"]:
        lines.append("")
        lines.append("Documents:")
        lines += [f"  covers   {d['path']}" for d in documents["covering"]]
        lines += [f"  mentions {d['path']}" for d in documents["mentioning"]]
    from docbridge.engine.agent.handoff import render_handoff_text
    lines.append("")
    lines.append("Handoff:")
    lines += ["  " + line for line in render_handoff_text(payload["handoff"]).splitlines()]
    lines.append("")
    lines.append("Findings:" if payload["findings"] else "Findings: none")
    for finding in payload["findings"]:
        lines.append(f"  [{finding['severity']}] {finding['code']}: {finding['message']} ({finding['path']})")
    if payload.get("budget"):
        report = payload["budget"]
        lines.append("")
        lines.append(f"Budget: {report['tokens']['total']}/{report['budgetTokens']} tokens (approximate), "
                     f"dropped: {', '.join(report['dropped']) or 'nothing'}")
    return "\n".join(lines) + "\n"
