"""`docbridge map` draws the relations an agent proposed and a person accepted (the enrichment overlay) dashed, as
proposed, while enrichment is on; the observed model it draws is unchanged.

The proposal is read off fixtures/acme: docs/orders.md line 63 says the customer gets "a shipping confirmation
email", and src/notifications/email.ts (area src/notifications, which no document covers or mentions) sends it.
The reference agent (fixtures/agents/reference_agent.py) answers with the scripted proposal."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO, docbridge, docbridge_json

AGENT = REPO / "fixtures" / "agents" / "reference_agent.py"
ORDERS, EMAIL = "document:docs/orders.md", "module:src/notifications/email.ts"
PROPOSAL = {"entity": ORDERS, "kind": "propose-relation", "reason": "the shipping confirmation email",
            "payload": {"from": ORDERS, "to": EMAIL, "kind": "mentions"},
            "evidence": [{"source": "snapshot", "path": "docs/orders.md", "lineStart": 63, "lineEnd": 63}]}


def set_enrichment(root: Path, enabled: bool) -> None:
    path = root / "doc-bridge.config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["intelligence"] = {"registry": {"enabled": enabled, "agentId": "ref-agent", "roles": ["reviewer"],
                                           "timeoutSeconds": 20}}
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def proposed_edges(root: Path) -> list[dict[str, Any]]:
    return [e for e in docbridge_json("map", "--json", "--root", str(root))["edges"] if e.get("accepted")]


def test_an_accepted_proposed_relation_is_drawn_dashed_between_its_nodes(acme: Path, tmp_path: Path) -> None:
    assert "notifications" not in (acme / "docs" / "orders.md").read_text(encoding="utf-8")
    before = docbridge_json("map", "--json", "--root", str(acme))
    set_enrichment(acme, True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([PROPOSAL]), encoding="utf-8")
    command = " ".join([sys.executable, str(AGENT), "--script", str(script), "--log", str(tmp_path / "calls.log")])
    assert docbridge("enrich", "--root", str(acme), "--json", "--agent-command", command).returncode == 0
    (pending,) = json.loads((acme / ".docbridge" / "overlay.json").read_text(encoding="utf-8"))["pending"]
    assert proposed_edges(acme) == []  # pending: a person has not accepted it
    assert docbridge("fix", "approve", pending["proposalId"], "--by", "Ana", "--root", str(acme)).returncode == 0

    after = docbridge_json("map", "--json", "--root", str(acme))
    # the module is drawn as its area; the document gets a node of its own
    assert [e for e in after["edges"] if e.get("accepted")] == [
        {"source": ORDERS, "target": "area:src/notifications", "kind": "mentions", "proposed": True,
         "accepted": [pending["proposalId"]]}]
    assert ORDERS in {n["id"] for n in after["nodes"]}
    # what was observed is drawn as before: the area is still undocumented, and no other edge moved
    area = next(n for n in after["nodes"] if n["id"] == "area:src/notifications")
    assert area["undocumented"] is True and area["documents"] == []
    assert [e for e in after["edges"] if not e.get("accepted")] == before["edges"]

    assert docbridge("map", "--html", "--root", str(acme)).returncode == 0
    page = (acme / ".docbridge" / "map.html").read_text(encoding="utf-8")
    assert 'class="edge mentions proposed" ' in page
    assert f"{ORDERS} mentions area:src/notifications (proposed by an agent, accepted: {pending['proposalId']})" in page

    set_enrichment(acme, False)  # enrichment off: the overlay is not read, as search does not read it
    assert proposed_edges(acme) == []
