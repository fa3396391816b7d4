"""Negotiated handoff `caveats` (AgentHandoffV1's optional member): only when a caller asks (`query --caveats`,
MCP handoff.resolve with includeCaveats), never in the index or a default answer; the open findings where the
handoff sends the agent, the revision analyzed and what was not analyzed there, bounded and schema-valid.

Expected values come from reading fixtures/acme: the area src/billing's handoff sends the agent to
docs/architecture.md (it mentions the area), whose line 57 names `src/legacy/importer.ts` (no such file) and line
58 links `./deployment-v1.md` (no such file); src/billing/invoice.ts:2 imports payments.ts, which imports
orders/checkout.ts, which imports invoice.ts (a cycle)."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import docbridge, docbridge_json, make_repo

SCHEMA = json.loads(files("docbridge.engine").joinpath("data", "schemas", "agent-handoff-v1.schema.json")
                    .read_text(encoding="utf-8"))


def valid(handoff: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(handoff)


def test_caveats_come_only_when_asked_and_change_nothing_else(acme: Path) -> None:
    plain = docbridge_json("query", "src/billing", "--agent", "--root", str(acme))
    assert "caveats" not in plain
    asked = docbridge_json("query", "src/billing", "--agent", "--caveats", "--root", str(acme))
    caveats = asked.pop("caveats")
    assert asked == plain
    valid({**asked, "caveats": caveats})
    assert "docs/architecture.md" in plain["readBeforeEditing"] and plain["editRoots"] == ["src/billing"]
    assert [(f["severity"], f.get("path"), f.get("line"), f["code"]) for f in caveats["pendingFindings"]] == [
        ("error", "docs/architecture.md", 58, "LINK_BROKEN"),
        ("warning", "docs/architecture.md", 57, "MENTION_UNRESOLVED"),
        ("info", "src/billing/invoice.ts", 2, "IMPORT_CYCLE")]
    assert caveats["totals"] == {"pendingFindings": 3, "coverage": 0} and caveats["coverage"] == []
    assert docbridge("scan", "--root", str(acme)).returncode == 0
    snapshot = json.loads((acme / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))
    package = json.loads((acme / "package.json").read_text(encoding="utf-8"))
    assert caveats["analyzed"] == {"repository": package["name"], "revision": snapshot["content_hash"],
                                   "revisionKind": "snapshot-content-hash"}
    text = docbridge("query", "src/billing", "--text", "--caveats", "--root", str(acme)).stdout
    assert "Open findings:       3" in text and "  error    docs/architecture.md:58  LINK_BROKEN:" in text


def test_the_index_never_embeds_caveats(acme: Path) -> None:
    assert docbridge("index", "--root", str(acme)).returncode == 0
    index = json.loads((acme / ".docbridge" / "index.json").read_text(encoding="utf-8"))
    assert index["handoffs"] and not any("caveats" in handoff for handoff in index["handoffs"].values())


def test_what_was_not_analyzed_under_the_edit_root_is_a_coverage_caveat(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "dyn", {
        "package.json": json.dumps({"name": "dyn"}),
        "src/core/load.ts": "export async function load(name: string) {\n  return import(name)\n}\n",
        "src/other/index.ts": "export async function other(name: string) {\n  return import(name)\n}\n",
        "docs/core.md": "# Core\n\n`src/core/load.ts` loads plugins by name.\n",
    })
    caveats = docbridge_json("query", "src/core", "--agent", "--caveats", "--root", str(root))["caveats"]
    # the computed `import(name)` of src/core/load.ts is under the edit root; src/other's is not
    assert [c["scope"] for c in caveats["coverage"]] == ["dynamic-imports:src/core/load.ts"]
    assert caveats["coverage"][0]["reason"] == "1 dynamic import(s) with a computed specifier were not analyzed."
    assert caveats["totals"]["coverage"] == 1


def test_a_bad_schema_shape_is_refused() -> None:
    handoff = {"type": "agent-handoff", "schemaVersion": 1, "source": ".docbridge/index.json",
               "target": {"type": "area", "id": "area:src/x"}, "startHere": "docs/x.md", "readBeforeEditing": [],
               "editRoots": ["src/x"], "checks": [], "notes": []}
    caveats = {"pendingFindings": [], "analyzed": {"repository": "x", "revision": "a" * 64,
                                                   "revisionKind": "snapshot-content-hash"},
               "coverage": [], "totals": {"pendingFindings": 0, "coverage": 0}}
    valid({**handoff, "caveats": caveats})
    for broken in ({**caveats, "extra": 1}, {**caveats, "pendingFindings": [{"id": "x"}]},
                   {**caveats, "coverage": [{"scope": "s", "reason": "r"}] * 17},
                   {k: v for k, v in caveats.items() if k != "analyzed"}):
        with pytest.raises(jsonschema.ValidationError):
            valid({**handoff, "caveats": broken})


async def test_the_mcp_tool_negotiates_caveats_with_include_caveats(acme: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the `mcp` extra (make test installs it)")
    from tests.test_mcp import call, error, serve
    cli = docbridge_json("query", "src/billing", "--agent", "--caveats", "--root", str(acme))
    async with serve(acme) as client:
        default = await call(client, "handoff.resolve", {"ref": "src/billing"})
        asked = await call(client, "handoff.resolve", {"ref": "src/billing", "includeCaveats": True})
        refused = await error(client, "handoff.resolve", {"ref": "src/billing", "includeCaveats": "yes"})
    assert "caveats" not in default
    assert asked["caveats"] == cli["caveats"]
    assert "includeCaveats" in refused
