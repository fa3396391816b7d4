"""`docbridge scan` on the fixtures: entities, relations with evidence, ambiguity, fuzzy resolution, regions.

Expected values come from reading the fixture files (line numbers below are 1-based as in an editor and
converted to the snapshot's 0-based lines with `- 1`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, docbridge, docbridge_json
from support.positions import find

ACME = FIXTURES / "acme"


@pytest.fixture(scope="module")
def acme_snapshot(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from conftest import copy_fixture
    root = copy_fixture("acme", tmp_path_factory.mktemp("scan"))
    result = docbridge("scan", "--root", str(root))
    assert result.returncode == 0, result.stderr
    return json.loads((root / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def mono_snapshot(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from conftest import copy_fixture
    root = copy_fixture("monorepo", tmp_path_factory.mktemp("scan"))
    assert docbridge("scan", "--root", str(root)).returncode == 0
    return json.loads((root / ".docbridge" / "snapshot.json").read_text(encoding="utf-8"))


def ids(snapshot: dict[str, Any], kind: str) -> set[str]:
    return {e["id"] for e in snapshot["entities"] if e["kind"] == kind}


def relation(snapshot: dict[str, Any], source: str, kind: str, target: str, symbol: str | None = None) -> dict:
    for rel in snapshot["relations"]:
        if (rel["source"], rel["kind"], rel["target"]) == (source, kind, target) and (
                symbol is None or rel["metadata"].get("symbol") == symbol):
            return rel
    raise AssertionError(f"no relation {source} {kind} {target}")


def test_snapshot_shape_and_content_hash(acme_snapshot: dict[str, Any]) -> None:
    assert set(acme_snapshot) >= {"schema_version", "content_hash", "entities", "relations", "coverage"}
    assert acme_snapshot["schema_version"] == 1
    hashed = {k: v for k, v in acme_snapshot.items() if k != "content_hash"}
    hashed["coverage"] = {k: v for k, v in hashed["coverage"].items() if k != "reuse"}
    canonical = json.dumps(hashed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(canonical.encode()).hexdigest() == acme_snapshot["content_hash"]
    assert [e["id"] for e in acme_snapshot["entities"]] == sorted(e["id"] for e in acme_snapshot["entities"])


def test_acme_entities(acme_snapshot: dict[str, Any]) -> None:
    documents = {f"document:{p.relative_to(ACME).as_posix()}" for p in ACME.rglob("*.md")
                 if ".docbridge" not in p.parts}
    assert ids(acme_snapshot, "document") == documents
    assert len(documents) == 15
    modules = {f"module:{p.relative_to(ACME).as_posix()}" for pattern in ("*.ts", "*.tsx", "*.cjs")
               for p in ACME.rglob(pattern) if ".docbridge" not in p.parts}
    assert ids(acme_snapshot, "module") == modules and len(modules) == 34
    assert ids(acme_snapshot, "area") == {f"area:src/{a}" for a in (
        "api", "auth", "billing", "catalog", "notifications", "orders", "storage", "util")}
    assert ids(acme_snapshot, "package") == {"package:@acme/orders-api"}
    assert ids(acme_snapshot, "external") == {f"external:{n}" for n in (
        "fastify", "node:crypto", "pg", "react", "react-dom", "vitest", "zod")}
    assert ids(acme_snapshot, "intent") == {"intent:find-endpoint"}
    assert ids(acme_snapshot, "change") == {"change:tax-rules"}
    billing_area = next(e for e in acme_snapshot["entities"] if e["id"] == "area:src/billing")
    assert billing_area["ownership_id"] == "acme-billing"
    assert billing_area["package"] == "package:@acme/orders-api"


def test_document_entity_data(acme_snapshot: dict[str, Any]) -> None:
    billing = next(e for e in acme_snapshot["entities"] if e["id"] == "document:docs/billing.md")
    assert billing["title"] == "Billing"
    assert billing["frontmatter"] == {"title": "Billing", "type": "explanation", "audience": "human",
                                      "owner": "billing-team", "lifecycle": "maintained", "tier": "1"}
    assert billing["classification"] == "human"
    assert [h["slug"] for h in billing["headings"]] == [
        "billing", "invoices", "taxes", "payments", "refunds--credit-notes", "roadmap"]
    raw = (ACME / "docs/billing.md").read_bytes()
    assert billing["content_hash"] == hashlib.sha256(raw).hexdigest()
    agent = next(e for e in acme_snapshot["entities"] if e["id"] == "document:docs/for-agents/billing.md")
    assert agent["classification"] == "agent"
    faturamento = next(e for e in acme_snapshot["entities"] if e["id"] == "document:docs/guias/faturamento.md")
    assert faturamento["language"] == "pt"
    japanese = next(e for e in acme_snapshot["entities"] if e["id"] == "document:docs/i18n/auth-ja.md")
    assert japanese["language"] == "cjk"


def test_mentions_and_links_carry_line_and_column(acme_snapshot: dict[str, Any]) -> None:
    rel = relation(acme_snapshot, "document:docs/billing.md", "mentions-symbol", "module:src/billing/invoice.ts",
                   "createInvoice")
    line, column = find(ACME / "docs/billing.md", "`createInvoice`", line=20 - 1)
    assert (rel["evidence"][0]["line"], rel["evidence"][0]["column"]) == (line, column)
    assert rel["evidence"][0]["end_column"] == column + len("`createInvoice`")
    assert rel["evidence"][0]["content_hash"] == hashlib.sha256((ACME / "docs/billing.md").read_bytes()).hexdigest()

    rel = relation(acme_snapshot, "document:docs/billing.md", "mentions", "module:src/billing/invoice.ts")
    assert (rel["evidence"][0]["line"], rel["evidence"][0]["column"]) == find(
        ACME / "docs/billing.md", "`src/billing/invoice.ts`", line=20 - 1)

    rel = relation(acme_snapshot, "document:docs/billing.md", "links-to", "document:docs/architecture.md")
    assert rel["metadata"]["anchors"] == ["why-orders-and-billing-import-each-other"]
    assert (rel["evidence"][0]["line"], rel["evidence"][0]["column"]) == find(
        ACME / "docs/billing.md", "[why orders and billing", line=16 - 1)

    # a directory in backticks mentions its area; a package name mentions the package
    rel = relation(acme_snapshot, "document:docs/billing.md", "mentions", "area:src/billing")
    assert rel["evidence"][0]["line"] == 14 - 1
    relation(acme_snapshot, "document:docs/architecture.md", "mentions", "package:@acme/orders-api")


def test_barrel_reexport_does_not_make_a_symbol_ambiguous(acme_snapshot: dict[str, Any]) -> None:
    targets = {r["target"] for r in acme_snapshot["relations"]
               if r["kind"] == "mentions-symbol" and r["metadata"].get("symbol") == "createInvoice"}
    assert targets == {"module:src/billing/invoice.ts"}


def test_a_name_two_modules_declare_resolves_by_the_document_it_is_mentioned_in(acme_snapshot: dict[str, Any]) -> None:
    # `formatAmount` is declared by src/billing/invoice.ts and src/util/money.ts; docs/billing.md (line 25, about
    # invoice amounts) means the billing one: the document's subject names the area of one candidate only
    (rel,) = [r for r in acme_snapshot["relations"] if r["metadata"].get("symbol") == "formatAmount"]
    assert (rel["source"], rel["target"], rel["kind"]) == (
        "document:docs/billing.md", "module:src/billing/invoice.ts", "mentions-symbol")
    assert rel["evidence"][0]["line"] == 25 - 1
    billing = next(e for e in acme_snapshot["entities"] if e["id"] == "document:docs/billing.md")
    assert "ambiguous_symbols" not in billing


def test_fuzzy_typo_resolves_with_fuzzy_confidence(acme_snapshot: dict[str, Any]) -> None:
    rel = relation(acme_snapshot, "document:docs/guias/faturamento.md", "mentions", "module:src/billing/tax.ts")
    assert rel["confidence"] == "fuzzy"
    assert rel["metadata"]["written"] == ["src/biling/tax.ts"]
    assert rel["evidence"][0]["line"] == 23 - 1


def test_generated_regions_and_code_fences_are_not_evidence(acme_snapshot: dict[str, Any]) -> None:
    # docs/api.md names the path src/api/routes.ts only inside its generated endpoints table
    assert not [r for r in acme_snapshot["relations"] if r["source"].startswith("document:")
                and r["target"] == "module:src/api/routes.ts" and r["kind"] == "mentions"]
    fence_lines = {46, 47, 48}  # architecture.md lines 47-49 are a fenced block
    for rel in acme_snapshot["relations"]:
        if rel["source"] == "document:docs/architecture.md":
            assert not fence_lines & {e["line"] for e in rel["evidence"]}


def test_generated_region_hashes(acme_snapshot: dict[str, Any]) -> None:
    def regions(doc: str) -> list[dict[str, Any]]:
        return next(e for e in acme_snapshot["entities"] if e["id"] == doc)["generated_regions"]

    def body_hash(path: str, first: int, last: int) -> str:  # 1-based marker lines, exclusive
        lines = (ACME / path).read_text(encoding="utf-8").split("\n")[first:last - 1]
        return hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()[:16]

    (api,) = regions("document:docs/api.md")
    assert (api["start_line"], api["end_line"], api["hash"]) == (29 - 1, 36 - 1, "8b7e64c9e39d69f8")
    assert api["computed_hash"] == body_hash("docs/api.md", 29, 36) == "8b7e64c9e39d69f8"
    (config,) = regions("document:docs/configuration.md")
    assert config["hash"] == "bc0e62e7d58b47d5"
    assert config["computed_hash"] == body_hash("docs/configuration.md", 17, 26) != config["hash"]


def test_covers_and_ownership_relations(acme_snapshot: dict[str, Any]) -> None:
    covers = {(r["source"], r["target"]) for r in acme_snapshot["relations"] if r["kind"] == "covers"}
    assert covers == {
        ("document:docs/api.md", "area:src/api"), ("document:docs/billing.md", "area:src/billing"),
        ("document:docs/orders.md", "area:src/orders"), ("document:docs/catalog.md", "area:src/catalog"),
        ("document:docs/storage.md", "area:src/storage"),
        ("document:docs/for-agents/billing.md", "area:src/billing"),
        # `covers: [src/catalog, src/reporting]`: what names nothing is an unresolved-reference entity
        ("document:docs/catalog.md", "unresolved:src/reporting")}
    rel = relation(acme_snapshot, "document:docs/for-agents/billing.md", "covers", "area:src/billing")
    assert rel["provenance"] == "declared"


def test_imports_resolve_with_extension_probing(acme_snapshot: dict[str, Any]) -> None:
    def imports(source: str, target: str, kind: str = "imports") -> dict:
        return relation(acme_snapshot, f"module:{source}", kind, target)

    rel = imports("src/orders/checkout.ts", "module:src/billing/invoice.ts")  # `.js` written, `.ts` on disk
    assert rel["evidence"][0]["line"] == 1
    imports("src/storage/db.ts", "module:src/util/logger.ts")  # extensionless
    imports("src/storage/db.ts", "module:src/storage/legacy-config.cjs")
    imports("src/notifications/email.ts", "module:src/notifications/EmailLayout.tsx")
    imports("src/storage/legacy-config.cjs", "module:src/storage/pool-defaults.cjs")  # require()
    imports("src/index.ts", "module:src/storage/migrations.ts")  # dynamic import()
    imports("src/api/routes.ts", "external:zod")
    imports("src/billing/index.ts", "module:src/billing/tax.ts", "re-exports")
    imports("test/billing.test.ts", "module:src/billing/index.ts")


def test_containment(acme_snapshot: dict[str, Any]) -> None:
    contains = {(r["source"], r["target"]) for r in acme_snapshot["relations"] if r["kind"] == "contains"}
    assert ("package:@acme/orders-api", "area:src/billing") in contains
    assert ("area:src/billing", "module:src/billing/tax.ts") in contains
    assert ("package:@acme/orders-api", "module:src/index.ts") in contains  # directly in src: no area
    assert ("package:@acme/orders-api", "document:docs/billing.md") in contains
    area_modules = [t for s, t in contains if s == "area:src/storage"]
    assert sorted(area_modules) == [f"module:src/storage/{n}" for n in (
        "cache.ts", "db.ts", "legacy-config.cjs", "migrations.ts", "pool-defaults.cjs")]


def test_scan_summary_counts_unresolved(tmp_path: Path) -> None:
    from conftest import copy_fixture
    root = copy_fixture("acme", tmp_path)
    summary = docbridge_json("scan", "--root", str(root), "--json")
    assert summary["unresolved"] == {"anchors": 1, "declarations": 1, "links": 1, "mentions": 1}
    assert summary["entities"]["document"] == 15
    assert summary["files"]["by_kind"] == {"document": 15, "module": 34, "package-manifest": 1, "tsconfig": 1}


def test_monorepo_packages_and_cross_package_imports(mono_snapshot: dict[str, Any]) -> None:
    assert ids(mono_snapshot, "package") == {"package:mono-root", "package:@mono/core", "package:@mono/api",
                                             "package:@mono/web"}
    # by package name, to the package's entry module
    relation(mono_snapshot, "module:packages/api/src/routes/users.ts", "imports", "module:packages/core/src/index.ts")
    relation(mono_snapshot, "module:packages/web/src/pages/OrdersPage.tsx", "imports",
             "module:packages/api/src/index.ts")
    # through tsconfig `paths` (`@core/*` -> packages/core/src/*)
    rel = relation(mono_snapshot, "module:packages/api/src/routes/users.ts", "imports",
                   "module:packages/core/src/models/user.ts")
    assert rel["evidence"][0]["line"] == 2
    # .jsx through the TSX grammar, and a plain script with require()
    relation(mono_snapshot, "module:packages/web/src/pages/OrdersPage.tsx", "imports",
             "module:packages/web/src/components/ErrorBanner.jsx")
    assert "module:packages/web/scripts/build.js" in ids(mono_snapshot, "module")
    areas = ids(mono_snapshot, "area")
    assert {"area:packages/core/src/models", "area:packages/api/src/routes", "area:packages/web/src/pages",
            "area:packages/web/src/components", "area:packages/core"} <= areas
    models = next(e for e in mono_snapshot["entities"] if e["id"] == "area:packages/core/src/models")
    assert models["package"] == "package:@mono/core" and models["parent"] == "area:packages/core"
    relation(mono_snapshot, "document:docs/architecture.md", "mentions", "package:@mono/web")
