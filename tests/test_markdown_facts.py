"""Fenced code cites symbols: the names a fence of a JS/TS language writes become `mentions-symbol` relations with
`citationContext: code-fence`, kept in the snapshot (and so in the MCP server's relations), but never a ranking
signal, a finding, a reverse-index entry or a neighbour in a lookup.

Expected values come from reading the fixtures (fixtures/governance, fixtures/acme) and the files the tests write;
the CLI runs as a subprocess, the MCP server over stdio as tests/test_mcp.py drives it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BIN, docbridge, docbridge_json, make_repo
from tests.support.incremental import edit_and_rescan

CODE_FENCE = {"citationContext": "code-fence"}


def snapshot(root: Path) -> dict[str, Any]:
    result = docbridge("scan", "--root", str(root), "--no-cache", "--output", "-")
    assert result.returncode == 0, result.stderr
    return json.JSONDecoder().raw_decode(result.stdout)[0]  # the snapshot, then the summary


def relations_from(snap: dict[str, Any], document: str) -> dict[str, dict[str, Any]]:
    """The relations a document makes, by (kind, target, symbol)."""
    return {f"{r['kind']} {r['target']} {r['metadata'].get('symbol', '')}".rstrip(): r
            for r in snap["relations"] if r["source"] == f"document:{document}"}


def line_of(text: str, needle: str, after: int = 0) -> int:
    """The 0-based line of the first line at or after `after` that holds `needle`."""
    lines = text.split("\n")
    return next(i for i in range(after, len(lines)) if needle in lines[i])


def fence_lines(text: str) -> set[int]:
    """The 0-based lines inside fences (between the opening and closing fence lines)."""
    inside, found = False, set()
    for number, line in enumerate(text.split("\n")):
        if line.lstrip().startswith("```"):
            inside = not inside
        elif inside:
            found.add(number)
    return found


def check(root: Path) -> list[dict[str, Any]]:
    return docbridge_json("check", "--root", str(root), "--json", "--no-cache", "--fail-on", "never")["findings"]


# ------------------------------------------------------------------------------------------------ what is kept


def test_a_symbol_only_fenced_code_names_is_a_code_fence_citation(governance: Path) -> None:
    text = (governance / "docs/ledger.md").read_text(encoding="utf-8")
    audit = (governance / "src/ledger/audit.ts").read_text(encoding="utf-8")
    assert "export function auditInvoice(" in audit
    prose = [line for number, line in enumerate(text.split("\n")) if number not in fence_lines(text)]
    assert not any("auditInvoice" in line for line in prose)  # the fence alone names it
    line = line_of(text, "auditInvoice(")
    assert line in fence_lines(text)

    relations = relations_from(snapshot(governance), "docs/ledger.md")
    cited = relations["mentions-symbol module:src/ledger/audit.ts auditInvoice"]
    assert cited["metadata"] == {**CODE_FENCE, "symbol": "auditInvoice"}
    assert (cited["confidence"], cited["provenance"]) == ("observed", "observed")
    column = text.split("\n")[line].index("auditInvoice")
    assert [(e["path"], e["line"], e["column"], e["end_line"], e["end_column"]) for e in cited["evidence"]] == [
        ("docs/ledger.md", line, column, line, column + len("auditInvoice"))]
    # the path the prose names is a mention as before, without the citation's metadata
    assert "citationContext" not in relations["mentions module:src/ledger/audit.ts"]["metadata"]


def test_a_symbol_the_prose_mentions_too_keeps_its_mention_and_gains_the_fence_lines(acme: Path) -> None:
    text = (acme / "docs/billing.md").read_text(encoding="utf-8")
    fenced = fence_lines(text)
    inline = line_of(text, "`calculateTax`")
    assert inline not in fenced
    cited = sorted(n for n in fenced if "calculateTax" in text.split("\n")[n])
    assert len(cited) == 2  # the import line and the call

    relation = relations_from(snapshot(acme), "docs/billing.md")["mentions-symbol module:src/billing/tax.ts "
                                                                  "calculateTax"]
    assert relation["metadata"] == {"symbol": "calculateTax"}  # a mention: it ranks as it did
    assert [e["line"] for e in relation["evidence"]] == [inline, *cited]


def test_a_fence_inside_a_list_or_quote_keeps_its_columns(acme: Path) -> None:
    make_repo(acme, {"docs/nested.md": "# Nested\n\n- Step one:\n\n  ```ts\n  const v = calculateTax(1, 'PT');\n"
                                       "  ```\n\n> ```js\n> placeOrder(cart, products)\n> ```\n"})
    text = (acme / "docs/nested.md").read_text(encoding="utf-8")
    relations = relations_from(snapshot(acme), "docs/nested.md")
    for symbol, module in (("calculateTax", "src/billing/tax.ts"), ("placeOrder", "src/orders/checkout.ts")):
        line = line_of(text, f"{symbol}(")
        column = text.split("\n")[line].index(symbol)
        evidence = relations[f"mentions-symbol module:{module} {symbol}"]["evidence"]
        assert [(e["line"], e["column"], e["end_column"]) for e in evidence] == [(line, column, column + len(symbol))]


# ------------------------------------------------------------------------------------------------ what is not


def test_fenced_code_names_no_path_package_or_near_name_and_check_says_what_it_said(acme: Path) -> None:
    # contributor notes: every path they name is this repository's, so a broken one in prose is a finding
    prose = "# Contributing\n\nNothing to see here.\n"
    make_repo(acme, {"CONTRIBUTING.md": prose})
    before = check(acme)
    fence = ("\n```ts\n// see src/billing/nope.ts and src/biling/tax.ts, docs/billing.md, src/billing\n"
             "import { thing } from '../src/billing/tax.js'\nconst pkg = require('@acme/orders-api')\n"
             "calculateTaxes(1); AcmeOrdersApi.run(); orders_api()\n```\n")
    make_repo(acme, {"CONTRIBUTING.md": prose + fence})
    assert check(acme) == before
    assert relations_from(snapshot(acme), "CONTRIBUTING.md") == {}
    # the same broken path written in prose is a finding: the check above could tell
    make_repo(acme, {"CONTRIBUTING.md": prose + "\nSee `src/billing/nope.ts`.\n"})
    assert [(f["code"], f["path"]) for f in check(acme) if f not in before] == [
        ("MENTION_UNRESOLVED", "CONTRIBUTING.md")]


def test_json_yaml_and_shell_fences_and_generated_regions_cite_nothing(acme: Path) -> None:
    make_repo(acme, {"docs/fences.md": (
        "# Fences\n\n```json\n{ \"calculateTax\": 1 }\n```\n\n```yaml\ncalculateTax: 1\n```\n\n"
        "```sh\ncalculateTax --now\n```\n\n```\ncalculateTax(1)\n```\n\n    calculateTax(2)\n\n"
        "<!-- doc-bridge:generated hash=abc -->\n```ts\ncalculateTax(3)\n```\n<!-- /doc-bridge:generated -->\n\n"
        "```TypeScript {2}\ncalculateTax(4)\n```\n")})
    text = (acme / "docs/fences.md").read_text(encoding="utf-8")
    relations = relations_from(snapshot(acme), "docs/fences.md")
    assert list(relations) == ["mentions-symbol module:src/billing/tax.ts calculateTax"]
    # the one `typescript` fence outside the region (its language read case-blind, line highlights ignored)
    assert [e["line"] for e in relations["mentions-symbol module:src/billing/tax.ts calculateTax"]["evidence"]] == [
        line_of(text, "calculateTax(4)")]


def test_what_an_example_declares_itself_is_no_citation(acme: Path) -> None:
    # src/util/logger.ts exports `logger` (a plain lowercase word) and src/util/money.ts exports `formatAmount`
    assert "export const logger" in (acme / "src/util/logger.ts").read_text(encoding="utf-8")
    example = ("# Examples\n\n```ts\nconst createInvoice = makeOne();\nfunction placeOrder() {}\n"
               "const labels = { calculateTax: 'vat', 'fulfilOrder': 1 };\nconst note = 'markOrderPaid';\n"
               "function log(logger: Console) { logger.info(note) }\nlogger\n```\n")
    make_repo(acme, {"docs/examples.md": example})
    assert relations_from(snapshot(acme), "docs/examples.md") == {}
    # imported, the plain word is a citation; so is a name the example only calls
    make_repo(acme, {"docs/examples.md": example + "\n```ts\nimport { logger } from '../src/util/logger.js'\n"
                                                   "logger.info(setLogLevel('debug'))\n```\n"})
    assert set(relations_from(snapshot(acme), "docs/examples.md")) == {
        "mentions-symbol module:src/util/logger.ts logger", "mentions-symbol module:src/util/logger.ts setLogLevel"}


def test_a_name_two_modules_declare_is_no_citation_and_no_ambiguity(acme: Path) -> None:
    owners = sorted(p.relative_to(acme).as_posix() for p in (acme / "src").rglob("*.ts")
                    if "export function formatAmount" in p.read_text(encoding="utf-8"))
    assert len(owners) == 2
    make_repo(acme, {"docs/amounts.md": "# Amounts\n\n```ts\nformatAmount(total)\n```\n"})
    snap = snapshot(acme)
    assert relations_from(snap, "docs/amounts.md") == {}
    assert not [n for n in snap["coverage"]["notes"] if "docs/amounts.md" in n["scope"]]
    assert not [f for f in check(acme) if f["path"] == "docs/amounts.md"]


# ------------------------------------------------------------------------------------------------ isolation


def inbound(root: Path, entity: str) -> list[tuple[str, str]]:
    """The inbound edges of an entry of the retrieval projection (`docbridge index`)."""
    result = docbridge("index", "--root", str(root), "--no-cache")
    assert result.returncode == 0, result.stderr
    index = json.loads((root / ".docbridge" / "index.json").read_text(encoding="utf-8"))
    entry = next(e for e in index["projection"]["entries"] if e["id"] == entity)
    return sorted((edge["kind"], edge["id"]) for edge in entry["graph"]["inbound"])


def test_a_code_fence_citation_gives_the_projection_no_edge(governance: Path) -> None:
    audit = "module:src/ledger/audit.ts"
    edges = inbound(governance, audit)
    assert ("mentions", "document:docs/ledger.md") in edges  # the path the prose names
    assert ("mentions-symbol", "document:docs/ledger.md") not in edges  # the fence's `auditInvoice(...)`
    # the same name in prose is a ranking signal: the assertion above could fail
    with (governance / "docs/ledger.md").open("a", encoding="utf-8") as out:
        out.write("\nCall `auditInvoice` before posting.\n")
    assert ("mentions-symbol", "document:docs/ledger.md") in inbound(governance, audit)


# ------------------------------------------------------------------------------------------------ budgets


def test_a_document_citing_more_symbols_than_its_budget_keeps_the_first_and_says_so(tmp_path: Path) -> None:
    names = [f"helperNumber{i:03}" for i in range(70)]
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "many"}',
        "src/helpers.ts": "".join(f"export function {n}(): number {{ return {i}; }}\n" for i, n in enumerate(names)),
        "src/other.ts": "export function onlyInProse(): number { return 1; }\n",
        "docs/all.md": "# All\n\n```ts\n" + "\n".join(f"{n}();" for n in names) + "\n```\n\n"
                       "And `onlyInProse`.\n",
        "docs/huge.md": "# Huge\n\n```ts\n" + "\n".join(f"const v = localName{i}();" for i in range(4200)) + "\n```\n",
    })
    snap = snapshot(root)
    relations = relations_from(snap, "docs/all.md")
    fenced = sorted(key.rsplit(" ", 1)[1] for key, r in relations.items() if r["metadata"].get("citationContext"))
    assert fenced == names[:64]  # the default `limits.relations_per_document`, in the order written
    assert "mentions-symbol module:src/other.ts onlyInProse" in relations  # the prose has its own budget
    scopes = {note["scope"] for note in snap["coverage"]["notes"]}
    assert {"fence-relations:docs/all.md", "fence-tokens:docs/huge.md"} <= scopes
    assert "fence-tokens:docs/all.md" not in scopes and "relations:docs/all.md" not in scopes


# ------------------------------------------------------------------------------------------------ incremental


def test_edits_keep_fenced_citations_equal_to_a_scan_from_nothing(acme: Path) -> None:
    from docbridge.engine.workspace import Workspace

    def citations(ws: Workspace) -> set[tuple[str, str, str]]:
        return {(r.source, r.target, r.symbol) for r in ws.snapshot().relations if r.meta("citationContext")}

    ws = Workspace(acme, use_cache=False)
    ws.scan()
    steps: list[tuple[str, str | None]] = [
        ("docs/cookbook.md", "# Cookbook\n\n```ts\nplaceOrder(cart); refundInvoice(invoice)\n```\n"),
        ("src/billing/refund.ts", "export function refundInvoice(id: string): string { return id; }\n"),
        ("src/orders/replay.ts", "export async function placeOrder(): Promise<void> {}\n"),  # a second declaration
        ("src/billing/refund.ts", None),
        ("docs/cookbook.md", "# Cookbook\n\n```ts\nplaceOrder(cart)\n```\n\nSee `refundInvoice`.\n"),
    ]
    seen = []
    for path, text in steps:
        fresh = edit_and_rescan(ws, acme, path, text)
        assert ws.snapshot().content_hash == fresh.snapshot().content_hash, path
        seen.append(citations(ws))
    cookbook = "document:docs/cookbook.md"
    assert seen[0] == {(cookbook, "module:src/orders/checkout.ts", "placeOrder")}
    assert seen[1] == seen[0] | {(cookbook, "module:src/billing/refund.ts", "refundInvoice")}  # the module came later
    # a second library module declaring `placeOrder` alike: which one the example calls cannot be told
    assert seen[2] == {(cookbook, "module:src/billing/refund.ts", "refundInvoice")}
    assert seen[3] == set() and seen[4] == set()


# ------------------------------------------------------------------------------------------------ MCP


async def test_the_mcp_server_lists_the_citation_and_a_lookup_has_no_such_neighbour(governance: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP server needs the `mcp` extra (make test installs it)")
    pytest.importorskip("watchfiles", reason="the MCP server needs the `mcp` extra (make test installs it)")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    # a page whose only word about src/ledger/audit.ts is the example calling its `auditInvoice`
    make_repo(governance, {"docs/recipes.md": "# Recipes\n\n```ts\nauditInvoice(draft)\n```\n"})
    params = StdioServerParameters(command=str(BIN / "docbridge"), args=["mcp", "--root", str(governance)],
                                   env=dict(os.environ))
    async with Client(params, read_timeout_seconds=120) as client:
        listed = await client.call_tool("docbridge.relations", {"kind": "mentions-symbol", "limit": 500})
        lookup = await client.call_tool("knowledge.lookup", {"path": "src/ledger/audit.ts"})
    assert not listed.is_error and not lookup.is_error
    assert listed.structured_content is not None and lookup.structured_content is not None
    cited = {r["source"]: r["metadata"] for r in listed.structured_content["relations"]
             if r["target"] == "module:src/ledger/audit.ts"}
    fenced_only = set()  # the documents that name `auditInvoice` in fenced code and nowhere else
    for page in governance.rglob("*.md"):
        lines = page.read_text(encoding="utf-8").split("\n")
        fenced = fence_lines("\n".join(lines))
        if any("auditInvoice" in lines[n] for n in fenced) and \
                not any("auditInvoice" in line for n, line in enumerate(lines) if n not in fenced):
            fenced_only.add(f"document:{page.relative_to(governance).as_posix()}")
    assert {"document:docs/ledger.md", "document:docs/recipes.md"} <= fenced_only
    assert cited == {document: {**CODE_FENCE, "symbol": "auditInvoice"} for document in fenced_only}
    neighbours = {n["id"] for found in lookup.structured_content["neighbours"].values() for n in found}
    assert "document:docs/ledger.md" in neighbours  # its prose names the module's path
    assert "document:docs/recipes.md" not in neighbours
