"""The members of DocBridgeIndexV1 that need a handoff: `lookup` (with every package's checks) and `handoffs`.

`engine/artifacts/index_file.py` writes the index but sits below the agent layer, so `docbridge index` asks for
these here and passes them in. `lookup` starts from what the configuration and the model declare
(`base_lookup`); a package whose record declares no checks takes its handoff's (the package's verify scripts,
or its package manager's default test) with the handoff's `checksSource`. `handoffs` holds the handoff of every
package in `lookup.packages`, keyed by its id, with the envelope the original's index carries: `type:
"agent-handoff"` and `source`, the index file it is written in (relative to the root when inside it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docbridge.engine.agent.handoff import UnknownReference, handoff_for_entity
from docbridge.engine.artifacts.index_file import CHECKS_SOURCES, base_lookup
from docbridge.engine.retrieval.project import Projection

if TYPE_CHECKING:
    from docbridge.engine.state.model_state import ModelState


def index_members(state: ModelState, projection: Projection, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(`lookup`, `handoffs`) for the index written at `source` (a path relative to the root, as it is shown)."""
    lookup, refs = base_lookup(state, projection)
    handoffs: dict[str, Any] = {}
    for package_id in lookup["packages"]:
        try:
            handoff = handoff_for_entity(state, refs[package_id], projection)
        except UnknownReference:  # a reference the projection cannot resolve keeps its declared record only
            continue
        handoffs[package_id] = {"type": "agent-handoff", **handoff, "source": source}
        record = lookup["ownership"][package_id]
        if not record["checks"] and handoff.get("checks"):
            record["checks"] = list(handoff["checks"])
            checks_source = (handoff.get("metadata") or {}).get("checksSource")
            if checks_source in CHECKS_SOURCES:
                record["checksSource"] = checks_source
    return lookup, handoffs


__all__ = ["index_members"]
