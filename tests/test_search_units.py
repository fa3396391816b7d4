"""A question that asks for a unit is answered by the unit whose code holds the matches
(docbridge.engine.retrieval.units), and a family of private packages that apply the repository's library
(starter templates) is peripheral (`Layout.applications`). Through the command line, on a small repository
written here: the expected answers follow from its files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import docbridge_json, make_repo


def _module(words: str, name: str) -> str:
    return f"// {words}\nexport function {name}(value: string): string {{\n  return value\n}}\n"


def _starter(framework: str) -> dict[str, str]:
    return {
        f"starters/template-{framework}/package.json": json.dumps(
            {"name": f"starter-{framework}", "private": True, "dependencies": {"@demo/assert": "^1.0.0"}}),
        # a starter's README says the question's words more often than any module does
        f"starters/template-{framework}/README.md": (
            f"# {framework} starter\n\nAssertion diffs are printed in colour. Change how assertion diffs are "
            "printed in `vite.config`. Printed diffs, printed assertion diffs, diffs printed.\n"),
        f"starters/template-{framework}/src/main.ts": _module("printed assertion diffs in the starter", "main"),
    }


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files: dict[str, str] = {
        "package.json": json.dumps({"name": "demo", "private": True, "workspaces": ["packages/*", "starters/*"]}),
        "README.md": "# Demo\n\nAn assertion library.\n",
        "packages/assert/package.json": json.dumps({"name": "@demo/assert", "version": "1.0.0"}),
        "packages/assert/README.md": "# @demo/assert\n\nAssertions for tests.\n",
        "packages/assert/src/index.ts": "export { expect } from './expect'\n",
        "packages/assert/src/expect.ts": _module("the expect function: assertion entry point", "expect"),
        "packages/assert/src/matchers/equal.ts": _module("equality matcher for an assertion", "toEqual"),
        "packages/assert/src/matchers/throws.ts": _module("throws matcher for an assertion", "toThrow"),
        # three modules that print diffs: the area that holds them is where one changes it (its name, `render`,
        # is none of the question's words)
        "packages/assert/src/render/printDiff.ts": _module("print the diff of an assertion, printed in colour",
                                                         "printDiff"),
        "packages/assert/src/render/diffLines.ts": _module("diffs of lines, printed one per row", "diffLines"),
        "packages/assert/src/render/colors.ts": _module("colours of printed diffs", "diffColors"),
        **_starter("react"), **_starter("vue"),
        # the rest of the package's code, about other things
        **{f"packages/assert/src/runtime/{name}.ts": _module(f"the {name} of the test runtime", name)
           for name in ("config", "cli", "worker", "pool", "cache", "watcher", "timers", "globals")},
    }
    return make_repo(tmp_path_factory.mktemp("units"), files)


def search(root: Path, query: str, limit: int = 10) -> list[dict[str, Any]]:
    payload = docbridge_json("search", query, "--root", str(root), "--json", "--explain", "--limit", str(limit))
    return payload["results"]  # type: ignore[no-any-return]


def test_the_folder_whose_modules_match_answers_where_to_change(repo: Path) -> None:
    results = search(repo, "where do I change how assertion diffs are printed")
    first = results[0]
    assert first["id"] == "area:packages/assert/src/render"  # the first folder under a source root is an area
    assert first["explain"]["components"]["memberEvidence"] > 0
    assert "the unit that holds it" in " ".join(first["explain"]["reading"])
    assert any("holding 3 of the strongest matching modules" in reason for reason in first["explain"]["reasons"])
    # the package holds the same three: the evidence belongs to the smaller unit, and the package gathers none
    assert all(r["explain"]["components"]["memberEvidence"] == 0 for r in results[1:])
    # its modules stay listed: the floor is a share of what the entries earned themselves
    assert {"packages/assert/src/render/printDiff.ts", "packages/assert/src/render/diffLines.ts"} <= {
        r["path"] for r in results}


def test_a_question_about_how_something_is_done_is_answered_by_a_module(repo: Path) -> None:
    # the same words, asked as where a thing is implemented: a module answers, no unit gathers
    results = search(repo, "where is printing assertion diffs implemented")
    assert results[0]["kind"] == "module"
    assert all(r["explain"]["components"]["memberEvidence"] == 0 for r in results)


def test_a_family_of_starter_packages_is_peripheral(repo: Path) -> None:
    results = search(repo, "where do I change how assertion diffs are printed")
    starters = [r for r in results if r["path"].startswith("starters/")]
    assert starters, "the starters match the words: they are still found"
    for result in starters:
        assert any("under a test, fixture, example or playground directory" in reason
                   for reason in result["explain"]["reasons"]), result["id"]
        assert result["explain"]["components"]["memberEvidence"] == 0
    # asked for, they are not lowered
    asked = search(repo, "starter examples of printed assertion diffs")
    assert not any("under a test, fixture, example or playground directory" in reason
                   for r in asked if r["path"].startswith("starters/") for reason in r["explain"].get("reasons", []))
    assert any(r["path"].startswith("starters/") for r in asked[:3])


def test_a_lone_private_app_is_not_peripheral(tmp_path: Path) -> None:
    # one private package using the library is a product's own app, not a family of starters
    root = make_repo(tmp_path, {
        "package.json": json.dumps({"name": "demo", "private": True, "workspaces": ["packages/*", "apps/*"]}),
        "packages/assert/package.json": json.dumps({"name": "@demo/assert", "version": "1.0.0"}),
        "packages/assert/src/index.ts": _module("assertions", "expect"),
        "apps/web/package.json": json.dumps({"name": "web", "private": True,
                                             "dependencies": {"@demo/assert": "1.0.0"}}),
        "apps/web/src/checkout.ts": _module("the checkout page of the web app", "checkout"),
        "apps/web/src/cart.ts": _module("the cart of the web app", "cart"),
    })
    results = search(root, "checkout page")
    assert results[0]["path"] == "apps/web/src/checkout.ts"
    assert not any("under a test" in reason for reason in results[0]["explain"].get("reasons", []))


@pytest.fixture(scope="module")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("guides"), {
        "package.json": json.dumps({"name": "runner", "version": "1.0.0"}),
        # two pages whose titles name the question's words alike (a word only a heading holds counts half): the
        # option's reference page, and the guide that walks through the task
        "docs/config/testnamepattern.md": (
            "# testNamePattern\n\n- Type: `string | RegExp`\n- CLI: `-t`\n\nRun only the tests whose full name "
            "matches the pattern.\n"),
        "docs/guide/filtering.md": (
            "# Filtering Tests by Name Pattern\n\nFiltering tests, timeouts and concurrent runs.\n\n"
            "## Filter by name pattern\n\n"
            "Run only the tests whose name matches a pattern with `-t`:\n\n```sh\nrunner -t \"adds numbers\"\n```\n\n"
            "## Skipping suites and tests\n\nUse `.skip` to skip a test.\n"),
    })


def test_a_how_to_question_is_answered_by_the_guide_before_the_reference(docs_site: Path) -> None:
    results = search(docs_site, "how do I run only the tests whose name matches a pattern")
    assert results[0]["path"] == "docs/guide/filtering.md"
    assert "a page in a guide folder, for a question that asks how to do something" in " ".join(
        results[0]["explain"]["reasons"])
    # asked how to configure it, the option's reference answers, and the guide gains nothing for its folder
    configured = search(docs_site, "how do I configure the test name pattern")
    assert configured[0]["path"] == "docs/config/testnamepattern.md"
    assert not any("guide folder" in reason for r in configured for reason in r["explain"].get("reasons", []))


def test_a_unit_that_holds_most_of_the_code_gathers_nothing(tmp_path: Path) -> None:
    # `src/node` holds 9 of 12 modules: it holds most of any question's matches by its size alone
    files = {"package.json": json.dumps({"name": "tool", "version": "1.0.0"})}
    for name in ("dom", "overlay", "socket"):
        files[f"src/client/{name}.ts"] = _module(f"the browser {name}", name)
    for name in ("cli", "config", "build", "optimizer", "logger", "utils"):
        files[f"src/node/{name}.ts"] = _module(f"the {name}: calls plugin hooks", name)
    for name in ("css", "json", "assets"):
        files[f"src/node/plugins/{name}.ts"] = _module(f"the {name} plugin: its transform and load hooks, "
                                                      "plugin hooks", name)
    results = search(make_repo(tmp_path, files), "where do I change the plugin hooks", limit=20)
    gathered = {r["id"] for r in results if r["explain"]["components"]["memberEvidence"] > 0}
    assert "directory:src/node/plugins" in gathered
    assert "area:src/node" not in gathered


def test_the_hosting_sites_folder_is_the_projects_process_not_its_documentation(tmp_path: Path) -> None:
    root = make_repo(tmp_path, {
        "package.json": json.dumps({"name": "devserver", "version": "1.0.0"}),
        # a security policy that talks about the dev server at length
        ".github/SECURITY.md": (
            "# Security Policy\n\n## Reporting a vulnerability\n\nReport it privately.\n\n## Dev server\n\nThe dev "
            "server is not meant to be exposed: do not configure its proxy to forward requests from the network; "
            "the dev server proxy trusts every request. Configure the dev server host with care.\n"),
        "docs/config/server-options.md": (
            "# Server Options\n\n## server.proxy\n\nConfigure custom proxy rules for the dev server.\n\n"
            "## server.host\n\nWhich address the server listens on.\n"),
    })
    results = search(root, "configure the dev server proxy")
    assert results[0]["path"] == "docs/config/server-options.md"
    policy = next(r for r in results if r["path"] == ".github/SECURITY.md")
    assert any("under a test, fixture, example or playground directory" in reason
               for reason in policy["explain"]["reasons"])
    # asked for by what it is, the policy is still the answer
    assert search(root, "security policy: reporting a vulnerability")[0]["path"] == ".github/SECURITY.md"


def test_a_unit_that_holds_a_quarter_of_the_code_gathers_nothing(tmp_path: Path) -> None:
    # `src/server` holds 5 of 12 modules, and the question's matches: it is still not where one edits them
    files = {"package.json": json.dumps({"name": "tool", "version": "1.0.0"})}
    for name in ("dom", "overlay", "socket", "errors", "env", "events", "timers"):
        files[f"src/client/{name}.ts"] = _module(f"the browser {name}", name)
    for name in ("html", "transform", "static", "proxy", "cors"):
        files[f"src/server/{name}.ts"] = _module(f"the {name} middleware: transforms html requests", name)
    results = search(make_repo(tmp_path, files), "where do I change the html transform", limit=20)
    assert all(r["explain"]["components"]["memberEvidence"] == 0 for r in results)
    assert results[0]["path"] == "src/server/html.ts"


def test_the_unit_asked_for_is_a_candidate_however_many_pages_say_its_words_more(tmp_path: Path) -> None:
    # 300 pages whose titles and text repeat the question's words fill the first lexical hits; the package that
    # owns the thing is named by two of them and says them once
    pages = {f"docs/recipes/chart-renderer-{n:03}.md": f"# Chart renderer recipe {n}\n\nThe chart renderer draws "
             f"charts. Chart renderer options, renderer themes and chart colours for recipe {n}.\n"
             for n in range(300)}
    root = make_repo(tmp_path / "repo", {
        "package.json": json.dumps({"name": "charts-monorepo", "private": True, "workspaces": ["packages/*"]}),
        "packages/chart-renderer/package.json": json.dumps(
            {"name": "@kit/chart-renderer", "version": "1.0.0", "description": "Draws charts."}),
        "packages/chart-renderer/src/index.ts": _module("draws the chart", "draw"),
        "packages/chart-renderer-themes/package.json": json.dumps(
            {"name": "@kit/chart-renderer-themes", "version": "1.0.0", "description": "Colour themes."}),
        "packages/chart-renderer-themes/src/index.ts": _module("colour themes for the renderer", "theme"),
        **pages})
    payload = docbridge_json("search", "which package owns the chart renderer", "--root", str(root), "--json",
                             "--explain", "--limit", "5")
    first = payload["results"][0]
    assert first["id"] == "package:@kit/chart-renderer", [r["id"] for r in payload["results"]]
    assert first["explain"]["components"]["lexical"] > 0  # its own words, not only its modules'
