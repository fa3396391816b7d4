"""`docbridge check`: the exact findings the fixtures plant, exit codes, JSON, SARIF and conservativeness."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, REPO, docbridge, docbridge_json, make_repo
from docbridge.engine.base.findings import LIVE_ONLY_CODES, RULES, CheckReport
from docbridge.engine.base.rule_catalog import GOVERNANCE_RULES
from support.positions import find, one_based

# every code a check of acme and monorepo reports (a stale generated region needs a code change after rendering:
# tests/test_render.py plants one; the governance codes are planted in fixtures/governance, tests/test_governance_*.py)
ALL_CODES = set(RULES) - LIVE_ONLY_CODES - {"GENERATED_REGION_STALE"} - set(GOVERNANCE_RULES)


def findings_of(root: Path) -> set[tuple[str, str, int]]:
    report = docbridge_json("check", "--root", str(root), "--format", "json", "--fail-on", "never")
    return {(f["code"], f["path"], f["range"]["start"]["line"] + 1) for f in report["findings"]}


def test_acme_findings_are_exactly_the_planted_ones(acme: Path) -> None:
    result = docbridge("check", "--root", str(acme), "--format", "json")
    assert result.returncode == 1  # errors are planted; the default --fail-on is error
    found = {(f["code"], f["path"], f["range"]["start"]["line"] + 1) for f in json.loads(result.stdout)["findings"]}
    config = FIXTURES / "acme" / "doc-bridge.config.json"
    assert found == {
        ("LINK_BROKEN", "docs/architecture.md", 58),
        ("MENTION_UNRESOLVED", "docs/architecture.md", 57),
        ("LINK_ANCHOR_MISSING", "docs/storage.md", 20),
        ("COVERS_TARGET_MISSING", "docs/catalog.md", 8),
        ("DOCBRIDGE_BLOCK_INVALID", "docs/deployment.md", 6),
        ("GENERATED_REGION_EDITED", "docs/configuration.md", 17),
        ("AREA_UNDOCUMENTED", "src/notifications/EmailLayout.tsx", 1),
        # ownership records declare the architecture: every area-to-area import counts, as in the original
        ("RELATION_UNDOCUMENTED", "src/orders/fulfillment.ts", 2),
        ("OWNERSHIP_PATH_UNOBSERVED", "doc-bridge.config.json", one_based(find(config, '"acme-shipping"'))[0]),
        ("IMPORT_CYCLE", "src/billing/invoice.ts", 2),
    }
    # `formatAmount` (docs/billing.md:25) is declared by src/billing/invoice.ts and src/util/money.ts: a document
    # about billing means the billing one, so it is no ambiguity


def test_scope_library_leaves_out_relations_into_an_undocumented_area(acme: Path) -> None:
    # src/orders imports src/notifications, which no document describes at all: the area finding says so, and
    # under `library` (the default of a repository that declares no architecture) no relation finding repeats it
    config = json.loads((acme / "doc-bridge.config.json").read_text())
    config["check"] = {"scope": "library"}
    (acme / "doc-bridge.config.json").write_text(json.dumps(config))
    found = {(f["code"], f["path"], f["range"]["start"]["line"] + 1) for f in docbridge_json(
        "check", "--root", str(acme), "--format", "json", "--fail-on", "never")["findings"]
        if f["code"] in ("RELATION_UNDOCUMENTED", "AREA_UNDOCUMENTED")}
    assert found == {("AREA_UNDOCUMENTED", "src/notifications/EmailLayout.tsx", 1)}


def test_monorepo_findings_are_exactly_the_planted_ones(monorepo: Path) -> None:
    result = docbridge("check", "--root", str(monorepo), "--format", "json")
    assert result.returncode == 0  # only warnings and info
    found = {(f["code"], f["path"], f["range"]["start"]["line"] + 1) for f in json.loads(result.stdout)["findings"]}
    assert found == {
        ("LINK_ANCHOR_MISSING", "docs/web.md", 20),
        ("AREA_UNDOCUMENTED", "packages/web/src/components/ErrorBanner.jsx", 1),
        # pages import components (OrdersPage.tsx:4); nothing documents components at all
        ("RELATION_UNDOCUMENTED", "packages/web/src/pages/OrdersPage.tsx", 4),
        ("RELATION_UNDOCUMENTED", "packages/web/src/components/OrderTable.tsx", 1),
    }


def test_every_code_is_planted_somewhere(acme: Path, monorepo: Path, statekit: Path) -> None:
    (statekit / "doc-bridge.config.json").write_text(json.dumps({"check": {"scope": "all"}}))
    codes = {f["code"] for root in (acme, monorepo, statekit) for f in docbridge_json(
        "check", "--root", str(root), "--format", "json", "--fail-on", "never")["findings"]}
    assert codes == ALL_CODES


def test_finding_details(acme: Path) -> None:
    report = docbridge_json("check", "--root", str(acme), "--format", "json", "--fail-on", "never")
    by_code = {f["code"]: f for f in report["findings"]}
    cycle = by_code["IMPORT_CYCLE"]
    assert cycle["data"]["modules"] == ["src/billing/invoice.ts", "src/billing/payments.ts", "src/orders/checkout.ts"]
    assert [(e["path"], e["range"]["start"]["line"] + 1) for e in cycle["evidence"]] == [
        ("src/billing/invoice.ts", 2), ("src/billing/payments.ts", 1), ("src/orders/checkout.ts", 2)]
    region = by_code["GENERATED_REGION_EDITED"]
    assert (region["data"]["recorded_hash"], region["data"]["computed_hash"]) == ("bc0e62e7d58b47d5",
                                                                                   "b13024e195fee091")
    assert region["range"]["end"]["line"] + 1 == 26
    anchor = by_code["LINK_ANCHOR_MISSING"]
    assert "#environment-variables" in anchor["remediation"]
    broken = by_code["LINK_BROKEN"]
    assert broken["data"]["candidates"][0] == "docs/deployment.md"
    relation = by_code["RELATION_UNDOCUMENTED"]
    assert (relation["data"]["from"], relation["data"]["to"]) == ("area:src/orders", "area:src/notifications")
    assert all(f["remediation"] and len(f["fingerprint"]) == 32 for f in report["findings"])
    planted = ALL_CODES - {"SYMBOL_AMBIGUOUS", "LINK_UNVERIFIED"}  # planted in statekit
    assert report["summary"] == {"total": 10, "by_severity": {"error": 3, "warning": 4, "info": 3},
                                 "by_code": {code: 1 for code in sorted(planted)}}


def test_json_round_trips_through_the_model(acme: Path) -> None:
    raw = docbridge("check", "--root", str(acme), "--format", "json").stdout
    report = CheckReport.model_validate_json(raw)
    assert json.loads(report.model_dump_json()) == json.loads(raw)
    # `--json`, as every other command spells it, is the same report
    assert docbridge("check", "--root", str(acme), "--json").stdout == raw


def test_text_output_groups_by_file_with_positions(acme: Path) -> None:
    result = docbridge("check", "--root", str(acme))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert "docs/architecture.md" in lines
    assert any(line.strip().startswith("docs/architecture.md:58:1  error    LINK_BROKEN") for line in lines)
    headers = [line for line in lines[:-1] if line and not line.startswith(" ")]
    assert headers == sorted(headers) and len(headers) == 9  # one header per file, files in order
    assert lines[-1] == "10 findings: 3 errors, 4 warnings, 3 info"


def test_exit_codes(acme: Path, monorepo: Path) -> None:
    assert docbridge("check", "--root", str(acme), "--fail-on", "never").returncode == 0
    assert docbridge("check", "--root", str(monorepo)).returncode == 0
    assert docbridge("check", "--root", str(monorepo), "--fail-on", "warning").returncode == 1
    assert docbridge("check", "--root", str(monorepo), "--fail-on", "info").returncode == 1
    assert docbridge("check", "--root", str(monorepo), "--format", "xml").returncode == 2
    assert docbridge("check", "--root", str(monorepo / "nope")).returncode == 2


def test_sarif_validates_against_the_2_1_0_schema(acme: Path) -> None:
    schema = json.loads((REPO / "tests" / "data" / "sarif-2.1.0-rtm.5.json").read_text())
    sarif = docbridge_json("check", "--root", str(acme), "--format", "sarif", expect=1)
    jsonschema.Draft4Validator(schema).validate(sarif)
    (run,) = sarif["runs"]
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} == set(RULES)
    findings = docbridge_json("check", "--root", str(acme), "--format", "json", "--fail-on", "never")["findings"]
    assert len(run["results"]) == len(findings) == 10
    for result, finding in zip(run["results"], findings):
        region = result["locations"][0]["physicalLocation"]["region"]
        assert result["ruleId"] == finding["code"]
        assert region["startLine"] == finding["range"]["start"]["line"] + 1
        assert region["startColumn"] == finding["range"]["start"]["character"] + 1
        assert result["partialFingerprints"]["docbridgeFingerprint/v1"] == finding["fingerprint"]
    assert {r["level"] for r in run["results"]} == {"error", "warning", "note"}
    # a deliberately broken log fails the same validation: the test can fail
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(broken)


def test_fingerprints_survive_lines_moving(acme: Path) -> None:
    before = {f["fingerprint"] for f in docbridge_json(
        "check", "--root", str(acme), "--format", "json", "--fail-on", "never")["findings"]}
    for doc in ("docs/architecture.md", "docs/billing.md", "docs/storage.md"):
        path = acme / doc
        text = path.read_text()
        head, sep, rest = text.partition("\n# ")
        path.write_text(head + "\n\nA new paragraph.\n" + sep + rest)
    after = docbridge_json("check", "--root", str(acme), "--format", "json", "--fail-on", "never")["findings"]
    assert {f["fingerprint"] for f in after} == before
    moved = {f["code"]: f["range"]["start"]["line"] + 1 for f in after if f["path"] == "docs/architecture.md"}
    assert moved == {"MENTION_UNRESOLVED": 57 + 3, "LINK_BROKEN": 58 + 3}  # three lines were inserted above


def test_severity_overrides_off_and_ignore_globs(acme: Path) -> None:
    config = json.loads((acme / "doc-bridge.config.json").read_text())
    config["check"] = {"severity": {"LINK_BROKEN": "warning", "AREA_UNDOCUMENTED": "off"},
                       "ignore": ["docs/deployment.md"]}
    (acme / "doc-bridge.config.json").write_text(json.dumps(config))
    report = docbridge_json("check", "--root", str(acme), "--format", "json", "--fail-on", "never")
    codes = {f["code"]: f for f in report["findings"]}
    assert codes["LINK_BROKEN"]["severity"] == "warning"
    assert "AREA_UNDOCUMENTED" not in codes and "DOCBRIDGE_BLOCK_INVALID" not in codes
    assert len(report["findings"]) == 8
    config["check"] = {"severity": {"LINK_BROKEN": "loud"}}
    (acme / "doc-bridge.config.json").write_text(json.dumps(config))
    result = docbridge("check", "--root", str(acme))
    assert result.returncode == 2 and "check.severity.LINK_BROKEN" in result.stderr


CONSERVATIVE = """\
# Working on the service

Run `npm install`, then `npm run build -- --watch` and `npx vitest run src/`.
Use `git checkout -b feature/new-thing` and `git push origin main`; CI runs `make test`.
Set `NODE_ENV=production` and call `curl -s https://api.example.com/v1/orders | jq .`.
The API lives at `https://api.example.com/v1` and `http://localhost:3000/health`.
Versions: `v1.2.3`, `1.2.3-beta.1`, `^18.0.0`, `>=3.11`, `node@20`.
Content types: `application/json`, `text/plain`, and units like `km/h` or `req/s`.
Globs: `src/**/*.ts`, `docs/*.md`, `!dist`. Paths outside: `/usr/bin/env`, `~/.config/app`, `C:\\Users\\me`.
Keys like [[Tab]], [[Ctrl]] and [[Enter]] are shortcuts; [x] and [ ] are not links. Footnote[^1].
Emails `ops@example.com` and handles `@acme/ui-kit` (not in this repository) are fine, as is `react-dom/server`.
Regular expressions `^[a-z]+/[0-9]+$` and template strings `${base}/api` are fine too.

- [x] ship it
- [ ] write more tests

```sh
cat src/does/not/exist.ts && open docs/missing.md
```

    src/indented/missing.ts

[^1]: A footnote with `owner/repo` in it.
"""


def test_a_document_full_of_non_references_produces_no_finding(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "calm"}',
        "docs/working.md": CONSERVATIVE,
        "docs/index.md": "# Index\n\nSee [working](working.md) about `src/app`.\n",
        "src/app/main.ts": "export const main = 1;\n",
    })
    report = docbridge_json("check", "--root", str(root), "--format", "json", "--fail-on", "never")
    assert report["findings"] == []


def test_documentation_site_links_resolve_the_way_the_site_serves_them(tmp_path: Path) -> None:
    # a VitePress-style site under docs/: `/` is docs/, pages are linked without `.md` or as `.html`,
    # static files live in docs/public/, and heading anchors turn punctuation into hyphens
    post = ("# Release notes\n\n"
            "See [the option](/guide/options#ssr-external), [as HTML](/guide/options.html#ssr-noexternal),\n"
            "[the logo](/logo.svg) and ![logo](/logo.svg).\n\n"
            "This one is gone: [old page](/guide/removed) and [old anchor](/guide/options#ssr-target).\n")
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "site"}',
        "docs/.vitepress/config.ts": "export default { title: 'Site', cleanUrls: true }\n",
        "docs/index.md": "# Home\n\nRead [the guide](./guide/options.md).\n",
        "docs/guide/options.md": "# Options\n\n## ssr.external\n\nText.\n\n## ssr.noExternal\n\nText.\n",
        "docs/blog/post.md": post,
        "docs/public/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
    })
    # the site is built from this repository (its configuration is here) and its guide/ folder has pages: a
    # page missing from it is a broken link
    found = {(code, path, line) for code, path, line in findings_of(root) if path == "docs/blog/post.md"}
    assert found == {("LINK_BROKEN", "docs/blog/post.md", 6), ("LINK_ANCHOR_MISSING", "docs/blog/post.md", 6)}


def test_a_link_to_a_folder_a_documentation_site_serves_as_its_index_page_links_to_that_page(
        tmp_path: Path) -> None:
    from docbridge.engine.workspace import Workspace
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "site"}',
        "docs/guide/browser/index.md": "# Browser Mode\n\n## Headless\n\nText.\n",
        "docs/guide/browser/why.md": "# Why\n\nText.\n",
        "docs/guide/plain/a.md": "# A\n\nText.\n",
        "docs/guide/plain/b.md": "# B\n\nText.\n",
        "docs/config/enabled.md": ("# Enabled\n\nRun in [Browser Mode](/guide/browser/), "
                                   "[headless](/guide/browser/#headless)\n"
                                   "or [gone](/guide/browser/#gone); see [plain](/guide/plain/).\n"),
    })
    # the folder's page holds the anchors: a missing one is found; a folder without index.md stays a folder
    found = {(code, path, line) for code, path, line in findings_of(root) if path == "docs/config/enabled.md"}
    assert found == {("LINK_ANCHOR_MISSING", "docs/config/enabled.md", 4)}
    workspace = Workspace(root, use_cache=False)
    workspace.scan()
    links = {(r.source, r.target) for r in workspace.snapshot().relations if r.kind == "links-to"}
    assert ("document:docs/config/enabled.md", "document:docs/guide/browser/index.md") in links
    assert not any(target.startswith("document:docs/guide/plain") for _, target in links)


def test_links_to_explicit_heading_ids_resolve(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "site"}',
        "docs/config.md": "# Config\n\n## Server options {#server-options}\n\n## Build `outDir` {#build-outdir}\n",
        "docs/index.md": ("# Home\n\nSee [server](./config.md#server-options), [out](./config.md#build-outdir)\n"
                          "and [gone](./config.md#build-outdir-1).\n"),
    })
    found = {(code, path, line) for code, path, line in findings_of(root) if path == "docs/index.md"}
    assert found == {("LINK_ANCHOR_MISSING", "docs/index.md", 4)}


def test_python_dash_m_docbridge_is_the_command(acme: Path) -> None:
    import subprocess
    import sys
    command = [sys.executable, "-m", "docbridge", "check", "--root", str(acme), "--format", "json",
               "--fail-on", "never"]
    completed = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    assert completed.returncode == 0, completed.stderr
    assert {(f["code"], f["path"]) for f in json.loads(completed.stdout)["findings"]} == \
        {(code, path) for code, path, _ in findings_of(acme)}
