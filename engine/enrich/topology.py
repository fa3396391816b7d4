"""The enrichment agents' topology, as the original's MCP `registry.topology` reported its curator's.

The original answered a fixed object (`id: doc-curator`, its delegates, the tools they call, the steps and a
merge policy that never merges without a person). Here the same keys describe what this repository's
configuration (`intelligence.registry`) runs: the roles and their agents, the proposal kinds each role may make,
how each kind is decided (by policy, by a person, or as a finding), and the steps of `docbridge enrich`. Pure: it
reads the configuration and runs nothing.
"""

from __future__ import annotations

from typing import Any

from docbridge.engine.enrich.proposals import FINDING, HUMAN, KIND_POLICY, POLICY, PROTOCOL, ROLE_KINDS, ROLE_TASKS

TOPOLOGY_ID = "doc-curator"  # the original's name for the curator and its delegates
STEPS = ("pack", "propose", "validate", "decide")


def registry_topology(config: Any, tools: list[str]) -> dict[str, Any]:
    """The configured roles as the original's topology; `tools`: the read-only tools an agent may call."""
    registry = config.intelligence.registry
    roles = []
    for name in sorted(registry.roles, key=list(ROLE_TASKS).index):
        role = registry.roles[name]
        roles.append({"role": name, "task": ROLE_TASKS[name], "agentId": role.agent_id or registry.agent_id,
                      "proposes": list(ROLE_KINDS.get(name, ())),
                      "command": "configured" if (role.command or registry.command) else None})
    by = {decision: sorted(k for k, v in KIND_POLICY.items() if v == decision) for decision in (POLICY, HUMAN, FINDING)}
    return {
        "type": "registry-topology", "schemaVersion": 1, "id": TOPOLOGY_ID, "enabled": registry.enabled,
        "protocol": PROTOCOL, "agentId": registry.agent_id, "delegates": [r["role"] for r in roles],
        "roles": roles, "tools": sorted(tools), "steps": list(STEPS),
        "mergePolicy": {"autoMerge": False, "requiresHuman": True, "acceptedByPolicy": by[POLICY],
                        "decidedByAPerson": by[HUMAN], "reportedAsFindings": by[FINDING]},
        "note": ("`docbridge enrich` packs bounded context per entity, asks each role's agent for proposals, "
                 "validates every proposal deterministically and decides it: accepted by policy, pending for a "
                 "person (`docbridge fix approve|reject`), or reported as a finding. No agent approves its own "
                 "output and nothing changes a document." if registry.enabled else
                 "Enrichment is off (intelligence.registry.enabled is false): no agent runs. The roles below are "
                 "what `docbridge enrich` would run once it is enabled."),
    }


__all__ = ["STEPS", "TOPOLOGY_ID", "registry_topology"]
