"""The model's relations and entities beyond links, mentions and imports, through the CLI: `covers` by the agent
corpus's path convention, `depends-on` between the repository's packages, `runtime-wiring`, the evidence of
`contains`, `unresolved-reference` entities and the area suggestions kept in the snapshot's coverage. Expected
values come from the files the tests write or from the fixtures' files, read here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from conftest import copy_fixture, docbridge, docbridge_json, make_repo
from docbridge.engine.workspace import Workspace
from support.incremental import edit_and_rescan


def snapshot_of(root: Path) -> dict[str, Any]:
    out = root / ".snapshot-under-test.json"
    result = docbridge("scan", "--root", str(root), "--output", str(out))
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    return data


def relations(snapshot: dict[str, Any], kind: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["source"], r["target"]): r for r in snapshot["relations"] if r["kind"] == kind}


def entity(snapshot: dict[str, Any], eid: str) -> dict[str, Any]:
    return next(e for e in snapshot["entities"] if e["id"] == eid)


def line_of(text: str, needle: str, start: int = 0) -> int:
    """0-based line of the first `needle` at or after line `start`."""
    return next(i for i, line in enumerate(text.split("\n")) if i >= start and needle in line)


def package_json(name: str, **fields: Any) -> str:
    return json.dumps({"name": name, **fields}, indent=2) + "\n"


SHOP = {
    "package.json": package_json("shop", private=True, workspaces=["packages/*", "apps/*"]),
    "packages/web/package.json": package_json("@shop/web"),
    "packages/web/src/index.ts": "export function renderPage(): string {\n  return 'page';\n}\n",
    "packages/api/package.json": package_json(
        "@shop/api", dependencies={"left-pad": "1.0.0", "@shop/web": "workspace:*"},
        peerDependencies={"@shop/web": "*"}),
    "packages/api/src/index.ts": "export function serve(): number {\n  return 1;\n}\n",
    "apps/admin/package.json": package_json("admin", devDependencies={"@shop/api": "workspace:*"}),
    "apps/admin/src/index.ts": "export const admin = true;\n",
    # the convention: a page named after the package it is about
    "docs/for-agents/packages/web.md": "# Web\n\nThe storefront pages.\n",
    "docs/for-agents/apps/admin.md": "# Admin\n\nThe back office.\n",
    # a page of the same folder about no package: it covers nothing and is no error
    "docs/for-agents/packages/overview.md": "# Overview\n\nHow the packages fit together.\n",
    # a page that declares what it covers: the declaration is the answer, not its name
    "docs/for-agents/packages/api.md": "---\ncovers: [packages/web]\n---\n\n# API notes\n\nAbout the web package.\n",
}


# ------------------------------------------------------------------------------------------------ covers (M6)


def test_a_page_under_the_agent_roots_packages_or_apps_folder_covers_the_package_it_is_named_after(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "shop", SHOP)
    covers = relations(snapshot_of(root), "covers")
    assert set(covers) == {
        ("document:docs/for-agents/packages/web.md", "package:@shop/web"),  # `web`: the name's last segment
        ("document:docs/for-agents/apps/admin.md", "package:admin"),
        ("document:docs/for-agents/packages/api.md", "package:@shop/web"),  # declared, so not `@shop/api`
    }
    convention = covers[("document:docs/for-agents/packages/web.md", "package:@shop/web")]
    assert convention["provenance"] == "declared"  # declared by where the page is kept
    assert convention["evidence"][0]["path"] == "docs/for-agents/packages/web.md"
    # what the audit asks for follows: the convention documents web and admin; api is still undocumented
    audit = docbridge_json("audit", "--root", str(root), "--json")
    missing = sorted(i["data"]["entity"] for i in audit["findings"] if i["code"] == "PACKAGE_DOCUMENTATION_MISSING")
    assert missing == ["package:@shop/api"]
    # the page about no package raises nothing
    report = docbridge_json("check", "--root", str(root), "--json", "--fail-on", "never")
    assert not [f for f in report["findings"] if f["path"] == "docs/for-agents/packages/overview.md"]


def test_the_convention_follows_the_configured_agent_root(tmp_path: Path) -> None:
    files = {path: text for path, text in SHOP.items() if not path.startswith("docs/")}
    files["agents/packages/api.md"] = "# API\n\nThe server.\n"
    files["docs/for-agents/packages/web.md"] = "# Web\n"  # no longer the agent corpus: no convention here
    files["doc-bridge.config.json"] = json.dumps({"corpus": {"agent": {"root": "agents/"}}})
    covers = relations(snapshot_of(make_repo(tmp_path / "shop", files)), "covers")
    assert set(covers) == {("document:agents/packages/api.md", "package:@shop/api")}


def test_the_convention_is_kept_up_to_date_by_edits_as_a_fresh_scan_would_be(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "shop", SHOP)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    edits: list[tuple[str, str | None]] = [
        ("docs/for-agents/packages/api.md", "# API\n\nNo declaration any more.\n"),  # the convention applies
        ("packages/web/package.json", package_json("@shop/storefront")),  # `web` now names the folder alone
        ("docs/for-agents/packages/web.md", None),  # the page goes
        ("packages/api/package.json", package_json("@shop/api", dependencies={"@shop/storefront": "1"})),
    ]
    for path, text in edits:
        fresh = edit_and_rescan(ws, root, path, text)
        assert ws.snapshot().content_hash == fresh.snapshot().content_hash, path
    final = ws.snapshot()
    assert {(r.source, r.target) for r in final.relations if r.kind in ("covers", "depends-on")} == {
        ("document:docs/for-agents/packages/api.md", "package:@shop/api"),
        ("document:docs/for-agents/apps/admin.md", "package:admin"),
        ("package:admin", "package:@shop/api"),
        ("package:@shop/api", "package:@shop/storefront"),
    }


# ------------------------------------------------------------------------------------------------ depends-on (T5)


def test_a_package_listing_another_of_the_repository_depends_on_it_with_the_line_of_each_entry(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "shop", SHOP)
    snapshot = snapshot_of(root)
    depends = relations(snapshot, "depends-on")
    assert set(depends) == {("package:@shop/api", "package:@shop/web"), ("package:admin", "package:@shop/api")}
    api = depends[("package:@shop/api", "package:@shop/web")]
    assert api["metadata"]["dependency_types"] == ["dependencies", "peerDependencies"]
    manifest = (root / "packages/api/package.json").read_text(encoding="utf-8")
    first = line_of(manifest, '"@shop/web"')
    second = line_of(manifest, '"@shop/web"', first + 1)
    assert [(e["path"], e["line"]) for e in api["evidence"]] == [
        ("packages/api/package.json", first), ("packages/api/package.json", second)]
    column = manifest.split("\n")[first].index('"@shop/web"')
    assert (api["evidence"][0]["column"], api["evidence"][0]["end_column"]) == (column, column + len('"@shop/web"'))
    assert api["evidence"][0]["content_hash"] == entity(snapshot, "package:@shop/api")["content_hash"]
    # a third-party dependency stays in the manifest: no relation, no entity
    assert not any(e["id"] == "external:left-pad" for e in snapshot["entities"])


def test_the_monorepo_fixtures_workspace_dependencies(tmp_path: Path) -> None:
    root = copy_fixture("monorepo", tmp_path)
    manifests = {p: json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.glob("packages/*/package.json"))}
    names = {m["name"] for m in manifests.values()}
    expected = set()
    for manifest in manifests.values():
        for field in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
            expected |= {(f"package:{manifest['name']}", f"package:{name}")
                         for name in manifest.get(field, {}) if name in names}
    assert expected  # the fixture has some to find
    assert set(relations(snapshot_of(root), "depends-on")) == expected


# ------------------------------------------------------------------------------------------------ runtime-wiring (T6)


SERVER = {
    "package.json": package_json("server", dependencies={"express": "4"}),
    "src/app.ts": (
        "import express from 'express';\n"
        "import { usersRouter } from './routes/users';\n"
        "import * as plugins from './plugins';\n"
        "import { format } from './format';\n"
        "\n"
        "export const app = express();\n"
        "app.use('/users', usersRouter);\n"
        "app.use(express.json());\n"
        "app.register(plugins.auth.setup());\n"
        "console.log([1].map(format));\n"
    ),
    "src/routes/users.ts": "export const usersRouter = {};\n",
    "src/plugins.ts": "export const auth = { setup: () => 1 };\n",
    "src/format.ts": "export function format(x: number): string {\n  return String(x);\n}\n",
    "test/app.test.ts": ("import { usersRouter } from '../src/routes/users';\n"
                         "const app = { use(x: unknown) { return x; } };\napp.use(usersRouter);\n"),
}


def test_an_imported_binding_handed_to_a_registration_call_is_runtime_wiring(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "server", SERVER)
    snapshot = snapshot_of(root)
    wiring = relations(snapshot, "runtime-wiring")
    assert set(wiring) == {  # `map(format)` registers nothing; the test's `use` is no structure of the program
        ("module:src/app.ts", "module:src/routes/users.ts"),
        ("module:src/app.ts", "external:express"),
        ("module:src/app.ts", "module:src/plugins.ts"),
    }
    app = (root / "src/app.ts").read_text(encoding="utf-8")
    users = wiring[("module:src/app.ts", "module:src/routes/users.ts")]
    line = line_of(app, "app.use('/users'")
    assert [(e["path"], e["line"], e["column"]) for e in users["evidence"]] == [
        ("src/app.ts", line, app.split("\n")[line].index("usersRouter"))]
    assert users["metadata"] == {"detection": "runtime-wiring-static", "methods": ["use"], "bindings": ["usersRouter"]}
    assert wiring[("module:src/app.ts", "module:src/plugins.ts")]["metadata"]["methods"] == ["register"]
    # each is an import already: the import relations and the findings are what they were
    assert ("module:src/app.ts", "module:src/routes/users.ts") in relations(snapshot, "imports")


# ------------------------------------------------------------------------------------------------ evidence (N4)


def test_every_relation_has_file_and_line_evidence_and_contains_names_the_file_that_proves_it(
        tmp_path: Path) -> None:
    snapshot = snapshot_of(copy_fixture("acme", tmp_path))
    assert all(r["evidence"] and all("path" in e and "line" in e for e in r["evidence"])
               for r in snapshot["relations"])
    entities = {e["id"]: e for e in snapshot["entities"]}
    contains = relations(snapshot, "contains")
    assert contains
    for (_source, target), relation in contains.items():
        (evidence,) = relation["evidence"]
        child = entities[target]
        if child["kind"] in ("module", "document"):  # the file itself, from its first line, with its hash
            assert (evidence["path"], evidence["line"]) == (child["path"], 0)
            assert evidence["content_hash"] == child["content_hash"]
        else:  # an area: a module it holds
            assert child["kind"] == "area" and evidence["path"].startswith(child["path"] + "/")
            assert entities[f"module:{evidence['path']}"]["kind"] == "module"


# ------------------------------------------------------------------------------------------------ NEW-5


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def test_a_declared_reference_that_names_nothing_is_an_unresolved_reference_entity(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    snapshot = snapshot_of(root)
    catalog = root / "docs/catalog.md"
    missing = [ref for ref in frontmatter(catalog)["covers"] if not (root / ref).exists()]
    assert missing == ["src/reporting"]
    unresolved = {e["id"]: e for e in snapshot["entities"] if e["kind"] == "unresolved-reference"}
    assert set(unresolved) == {"unresolved:src/reporting"}
    found = unresolved["unresolved:src/reporting"]
    text = catalog.read_text(encoding="utf-8")
    line = line_of(text, "covers:")
    assert (found["provenance"], found["title"]) == ("declared", "src/reporting")
    assert found["documents"] == ["docs/catalog.md"]
    assert [(e["path"], e["line"], e["column"]) for e in found["evidence"]] == [
        ("docs/catalog.md", line, text.split("\n")[line].index("src/reporting"))]
    covers = relations(snapshot, "covers")[("document:docs/catalog.md", "unresolved:src/reporting")]
    assert covers["provenance"] == "declared"
    # the finding that reports it is unchanged, and names the same reference
    report = docbridge_json("check", "--root", str(root), "--json", expect=1)
    assert any("src/reporting" in f["message"] and f["path"] == "docs/catalog.md" for f in report["findings"])


def test_an_unresolved_endpoint_of_a_declared_relation_is_one_too(tmp_path: Path) -> None:
    root = copy_fixture("governance", tmp_path)
    declared = frontmatter(root / "README.md")["docbridge"]["relations"]
    endpoints = sorted({r[side] for r in declared for side in ("from", "to") if not (root / r[side]).exists()})
    assert endpoints == ["src/payments/gateway.ts"]
    unresolved = [e for e in snapshot_of(root)["entities"] if e["kind"] == "unresolved-reference"]
    assert [(e["id"], e["documents"]) for e in unresolved] == [("unresolved:src/payments/gateway.ts", ["README.md"])]
    text = (root / "README.md").read_text(encoding="utf-8")
    assert unresolved[0]["evidence"][0]["line"] == line_of(text, "- from:", line_of(text, "to: src/payments") - 1)


# ------------------------------------------------------------------------------------------------ A6


def clique(folder: str, names: list[str], other: str | None = None) -> dict[str, str]:
    files = {}
    for name in names:
        lines = [f"import {{ {n} }} from './{n}';" for n in names if n != name]
        if other and name == names[0]:
            lines.append(f"import {{ {other.rsplit('/', 1)[1]} }} from '../{other}';")
        files[f"{folder}/{name}.ts"] = "\n".join([*lines, f"export const {name} = 1;", ""])
    return files


def test_area_suggestions_of_a_flat_layout_are_kept_in_the_snapshots_coverage(tmp_path: Path) -> None:
    files = {"package.json": package_json("flat"), **clique("code/billing", ["invoice", "tax", "total", "vat"],
                                                             other="orders/order"),
             **clique("code/orders", ["order", "cart", "line", "ship"])}
    root = make_repo(tmp_path / "flat", files)
    report = docbridge_json("check", "--root", str(root), "--json", "--fail-on", "never")
    suggestions = {s["label"]: s for s in report["suggestions"]}
    assert set(suggestions) == {"code/billing", "code/orders"}  # the two folders that import among themselves
    notes = {n["scope"]: n for n in snapshot_of(root)["coverage"]["notes"] if n["scope"].startswith("area-")}
    assert set(notes) == {f"area-suggestion:{label}" for label in suggestions}
    for label, suggestion in suggestions.items():
        note = notes[f"area-suggestion:{label}"]
        assert (note["analyzer"], note["status"], note["reason"]) == ("graph", "not-analyzed", suggestion["reason"])
        assert [e["path"] for e in note["evidence"]] == suggestion["modules"] == sorted(
            p for p in files if p.startswith(label + "/"))


def test_a_layout_with_areas_suggests_none(tmp_path: Path) -> None:
    snapshot = snapshot_of(copy_fixture("acme", tmp_path))
    assert sum(1 for e in snapshot["entities"] if e["kind"] == "area") >= 2
    assert not [n for n in snapshot["coverage"]["notes"] if n["scope"].startswith("area-suggestion:")]


def test_what_the_facts_cache_gives_back_builds_the_same_relations(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {**SHOP, **{k: v for k, v in SERVER.items() if k != "package.json"}})
    cold = Workspace(root, use_cache=False)
    cold.scan()
    assert {"depends-on", "runtime-wiring", "covers"} <= {r.kind for r in cold.snapshot().relations}
    for _ in range(2):  # the first writes the facts cache, the second reads every file's facts from it
        warm = Workspace(root, use_cache=True)
        warm.scan()
    assert warm.reuse_report()["parsed"] == 0
    assert warm.snapshot().content_hash == cold.snapshot().content_hash
