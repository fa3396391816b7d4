"""The original tool's older MCP tool names, answered from this model (the MCP server's thin aliases).

The original (`@agentskit/doc-bridge`, `src/mcp/server.ts`) served, besides the tools this project answers under
the same names, `gate.status`, `memory.classify`, `memory.promoteDraft`, `registry.topology`,
`docbridge.snapshot`, `docbridge.report`, `docbridge.relations` and `docbridge.run`. Each function here is what
one of them answers when this model has a counterpart:

- `snapshot`, `report`, `relations`: the discovery snapshot, the reconciliation report and the snapshot's
  relations. The original read them from its latest workflow run; this model has one live state, whose id
  (`run_id`: the snapshot's content hash, shortened) stands for the run.
- `unavailable`: the structured answer of a tool with no counterpart (`memory.*`): what it did, why nothing
  here does it, and what to call instead.

`gate.status` answers with `docbridge gate run`'s implementation (`docbridge.engine.render.gates`, in the render
layer because it renders `llms.txt` to tell whether the file is current), and `registry.topology` is built from
the enrichment roles (`docbridge.engine.enrich.topology`). Pure functions of a `ModelState`, as
`engine.agent.knowledge`'s; bad arguments raise `knowledge.ArgumentError`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from docbridge.engine.agent.knowledge import SCHEMA_VERSION, ArgumentError
from docbridge.engine.base.hashing import canonical_hash

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState

MAX_RELATIONS = 500
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024  # a snapshot larger than this is refused (read it with docbridge.relations)
RUN_ID_CHARS = 16


# ------------------------------------------------------------------------------------------------ the run


def run_id(state: ModelState) -> str:
    """The id that stands for the original's workflow run: the model's snapshot, by content."""
    from docbridge.engine.views.snapshot import snapshot_of
    return snapshot_of(state).content_hash[:RUN_ID_CHARS]


def _check_run(state: ModelState, requested: str | None) -> str:
    current = run_id(state)
    if requested is not None and requested != current:
        raise ArgumentError(f'runId: unknown run "{requested}"; Doc Bridge keeps one live model, and its current '
                            f'run is "{current}" (docbridge.run).')
    return current


def reconciliation_report(state: ModelState) -> dict[str, Any]:
    """The reconciliation report of the configured scope, sealed by its content hash."""
    from docbridge.engine.governance.reconciliation import reconcile
    from docbridge.engine.views.reconcile import findings_of
    settings = state.config.reconciliation
    report = reconcile(state, findings_of(state), settings.scope, settings.required_relation_kinds,
                       settings.include_orphaned_documents)
    return {**report, "contentHash": canonical_hash(report)}


def run(state: ModelState, status: dict[str, Any]) -> dict[str, Any]:
    """`docbridge.run`: the live model as the original's workflow state: its run id, state and artifacts."""
    from docbridge.engine.views.snapshot import snapshot_of
    return {"type": "run", "schemaVersion": SCHEMA_VERSION, "runId": run_id(state),
            "state": status.get("state"), "revision": state.revision, "files": status.get("files"),
            "pendingChanges": status.get("pendingChanges"),
            "artifacts": {"snapshot": {"contentHash": snapshot_of(state).content_hash},
                          "report": {"contentHash": reconciliation_report(state)["contentHash"]}},
            "note": "Doc Bridge keeps one live model that follows the disk (no resumable workflow runs): the run "
                    "id changes when the model does."}


# ------------------------------------------------------------------------------------------------ artifacts


def snapshot(state: ModelState, run: str | None = None) -> dict[str, Any]:
    """`docbridge.snapshot`: the discovery snapshot (as `docbridge scan` writes it)."""
    from docbridge.engine.views.snapshot import snapshot_of
    current = _check_run(state, run)
    text = snapshot_of(state).to_json()
    if len(text) > MAX_SNAPSHOT_BYTES:
        raise ArgumentError(f"the snapshot is {len(text):,} bytes, more than {MAX_SNAPSHOT_BYTES:,} are served; read "
                            "it by parts: docbridge.relations (by kind), knowledge.lookup (one entity), or the "
                            "docbridge://snapshot summary.")
    return {"type": "snapshot", "schemaVersion": SCHEMA_VERSION, "runId": current, "snapshot": json.loads(text)}


def report(state: ModelState, run: str | None = None) -> dict[str, Any]:
    """`docbridge.report`: the reconciliation report (as `docbridge reconcile` prints it) and its hash."""
    current = _check_run(state, run)
    return {"type": "reconciliation-report", "schemaVersion": SCHEMA_VERSION, "runId": current,
            **reconciliation_report(state)}


def relations(state: ModelState, kind: str | None = None, limit: int = 100) -> dict[str, Any]:
    """`docbridge.relations`: the snapshot's observed and declared relations, of one kind or all, the first
    `limit` in the snapshot's order."""
    from docbridge.engine.views.snapshot import relation_json, snapshot_of
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RELATIONS:
        raise ArgumentError(f"limit must be an integer between 1 and {MAX_RELATIONS}; got {limit!r}.")
    built = snapshot_of(state)
    kinds = sorted({r.kind for r in built.relations})
    if kind is not None and kind not in kinds:
        raise ArgumentError(f"kind: no relation of kind {kind!r} in this repository; its kinds are "
                            f"{', '.join(kinds) or 'none'}.")
    selected = [r for r in built.relations if kind is None or r.kind == kind]
    return {"type": "relations", "schemaVersion": SCHEMA_VERSION, "snapshotHash": built.content_hash,
            **({"kind": kind} if kind is not None else {}), "total": len(selected),
            "count": min(limit, len(selected)), "truncated": len(selected) > limit,
            "relations": [relation_json(r, built.hashes) for r in selected[:limit]]}


# ------------------------------------------------------------------------------------------------ no counterpart


def unavailable(tool: str, did: str, why: str, instead: list[dict[str, str]]) -> dict[str, Any]:
    """The structured answer of an original tool this model has no counterpart for."""
    return {"type": "tool-unavailable", "schemaVersion": SCHEMA_VERSION, "tool": tool, "counterpart": None,
            "original": did, "reason": why, "instead": instead}


MEMORY_REASON = ("Doc Bridge does not read agent memory files (.agent-memory/**/*.md, .cursor/rules/*.mdc): it has "
                 "no memory candidates to classify or promote. Knowledge an agent proposes enters through the "
                 "enrichment overlay instead, where deterministic validators and a person decide each proposal.")
MEMORY_INSTEAD = [
    {"tool": "knowledge.search", "why": "whether a fact is already documented, and where (the original's "
                                        "duplicate check)"},
    {"tool": "docbridge.proposals", "why": "the agent proposals awaiting a person's decision"},
    {"command": "docbridge enrich", "why": "ask the configured agent for proposals (validated, then pending or "
                                           "accepted by policy)"},
    {"command": "docbridge fix approve PROPOSAL_ID --by NAME", "why": "a person promotes a pending proposal"},
]


def memory_classify() -> dict[str, Any]:
    return unavailable("memory.classify", "classified local memory candidates into agent, human, playbook or "
                       "discard routes", MEMORY_REASON, MEMORY_INSTEAD)


def memory_promote_draft() -> dict[str, Any]:
    return unavailable("memory.promoteDraft", "built a draft promotion body (a pull request text) from local "
                       "memory candidates", MEMORY_REASON, MEMORY_INSTEAD)


def render_unavailable(payload: dict[str, Any]) -> str:
    lines = [f"{payload['tool']} has no counterpart in Doc Bridge: {payload['reason']}", "Instead:"]
    for item in payload["instead"]:
        name = item.get("tool") or item.get("command")
        lines.append(f"  {name}: {item['why']}")
    return "\n".join(lines) + "\n"


__all__ = ["memory_classify", "memory_promote_draft", "reconciliation_report", "relations",
           "render_unavailable", "report", "run", "run_id", "snapshot", "unavailable"]
