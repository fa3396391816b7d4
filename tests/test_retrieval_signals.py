"""Ranking signals for the misses found on real repositories (issue 16), through `docbridge search` on a
small monorepo built to show each: a directory named by the query, copies of one page, a question a module
answers, a Portuguese question, initials of a package name, a symbol declared by several modules, a typo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import docbridge_json, make_repo

GUIDE = ("# {title}\n\nUse `useThing` to fetch data. The cache keeps results for five minutes.\n\n"
         "## Options\n\n{extra}\n")
FILES: dict[str, str] = {
    "package.json": json.dumps({"name": "thing-monorepo", "private": True, "workspaces": ["packages/*"]}),
    # a core package every adapter depends on, and two adapters that declare the same hook
    "packages/thing-core/package.json": json.dumps({"name": "@acme/thing-core", "exports": {".": "./src/index.ts"}}),
    "packages/thing-core/src/index.ts": "export * from './scheduler'\nexport * from './client'\n",
    "packages/thing-core/src/scheduler.ts": (
        "/**\n * Decides when cached results are garbage collected: every entry gets a timer when its last\n"
        " * observer leaves, and the timer removes it after gcTime.\n */\n"
        "export class Scheduler {\n  schedule(): void {}\n  collectGarbage(): void {}\n  private tick(): void {}\n}\n"
        "export function createClient(): void {\n  throw new Error('No client was provided to the provider')\n}\n"),
    "packages/thing-core/src/client.ts": "export class ThingClient {\n  fetchThing(): void {}\n}\n",
    "packages/react-thing/package.json": json.dumps({
        "name": "@acme/react-thing", "exports": {".": "./src/index.ts"}, "dependencies": {"@acme/thing-core": "1"}}),
    "packages/react-thing/src/index.ts": "export { useThing } from './useThing'\n",
    "packages/react-thing/src/useThing.ts": "export function useThing() { return 1 }\n",
    "packages/react-thing-devtools/package.json": json.dumps({
        "name": "@acme/react-thing-devtools", "dependencies": {"@acme/react-thing": "1"}}),
    "packages/react-thing-devtools/src/index.ts": "export function Devtools() { return null }\n",
    "packages/vue-thing/package.json": json.dumps({
        "name": "@acme/vue-thing", "exports": {".": "./src/index.ts"}, "dependencies": {"@acme/thing-core": "1"}}),
    "packages/vue-thing/src/index.ts": "export { useThing } from './useThing'\n"
                                       "export { ThingClient } from './client'\n",
    # the Vue adapter declares its own ThingClient on top of the core one (imported through the core's barrel)
    "packages/vue-thing/src/client.ts": "import { ThingClient as Base } from '@acme/thing-core'\n"
                                        "export class ThingClient extends Base {\n  fetchThing(): void {}\n}\n",
    "packages/vue-thing/src/useThing.ts": "export function useThing() { return 2 }\n",
    # a playground copy declares the same name, and so does a test helper
    "playground/demo/src/useThing.ts": "export function useThing() { return 3 }\n",
    "packages/react-thing/src/__tests__/useThing.test.ts": "export function useThing() { return 4 }\n",
    # one guide per framework: the React page is the one the others name with `ref`
    "docs/framework/react/guides/caching.md": "---\ntitle: Caching\n---\n" + GUIDE.format(
        title="Caching", extra="Stale results are refetched in the background when a window regains focus."),
    "docs/framework/vue/guides/caching.md": "---\ntitle: Caching\nref: docs/framework/react/guides/caching.md\n---\n"
                                           + GUIDE.format(title="Caching", extra="Vue refs."),
    "docs/framework/solid/guides/caching.md": "---\ntitle: Caching\nref: docs/framework/react/guides/caching.md\n---\n"
                                              + GUIDE.format(title="Caching", extra=""),
    "docs/framework/react/guides/testing.md": "# Testing\n\nHow to test components that fetch data.\n",
    "docs/framework/react/overview.md": "# Overview\n\nWhat the library does. Cached data is garbage collected "
                                        "after a while; see the caching guide.\n",
    "docs/guides/browser.md": "# Browser support\n\nWhich browsers are supported and how to run in a browser.\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("signals"), FILES)


def search(repo: Path, query: str, *extra: str) -> list[dict[str, Any]]:
    payload = docbridge_json("search", query, "--root", str(repo), "--json", "--explain", *extra)
    return payload["results"]  # type: ignore[no-any-return]


def test_a_query_naming_a_directory_gets_the_directory_first(repo: Path) -> None:
    for query in ("docs/framework/react/guides", "docs/framework/react/guides/", "react/guides"):
        first = search(repo, query)[0]
        assert (first["kind"], first["path"]) == ("directory", "docs/framework/react/guides"), query
    # a documentation folder with one page has no directory result: the page itself answers
    assert search(repo, "docs/guides")[0]["path"] == "docs/guides/browser.md"
    # a source directory that is an area stays an area
    assert search(repo, "packages/thing-core/src")[0]["kind"] in ("directory", "area")


def test_copies_of_a_page_collapse_into_the_canonical_one(repo: Path) -> None:
    results = search(repo, "caching guide options")
    first = results[0]
    assert first["path"] == "docs/framework/react/guides/caching.md"
    assert sorted(first["alsoIn"]) == ["docs/framework/solid/guides/caching.md", "docs/framework/vue/guides/caching.md"]
    assert not any("guides/caching.md" in r["path"] for r in results[1:])
    assert any("canonical copy of a page with 2 variants" in why for why in first["explain"]["reasons"])
    # a query that names the variant it wants gets that variant
    vue = search(repo, "vue caching")[0]
    assert vue["path"] == "docs/framework/vue/guides/caching.md"
    assert "docs/framework/react/guides/caching.md" in vue["alsoIn"]


def test_an_implementation_question_reaches_the_module_that_says_so(repo: Path) -> None:
    results = search(repo, "how does the scheduler decide when results are garbage collected")
    assert results[0]["path"] == "packages/thing-core/src/scheduler.ts"
    assert results[0]["summary"].startswith("Decides when cached results are garbage collected")
    assert any("implemented" in why for why in results[0]["explain"]["reasons"])
    # its public methods and its error messages are searchable too
    assert search(repo, "collectGarbage")[0]["path"] == "packages/thing-core/src/scheduler.ts"
    assert search(repo, "no client was provided")[0]["path"] == "packages/thing-core/src/scheduler.ts"
    # a task question still gets the guide
    assert search(repo, "how do I test components")[0]["path"] == "docs/framework/react/guides/testing.md"


def test_a_portuguese_question_finds_english_documentation_through_the_glossary(repo: Path) -> None:
    payload = docbridge_json("search", "como testar componentes", "--root", str(repo), "--json", "--explain")
    first = payload["results"][0]
    assert first["path"] == "docs/framework/react/guides/testing.md"
    assert first["explain"]["translated"]["componente"] == "component"
    browser = search(repo, "navegadores suportados")[0]
    assert browser["path"] == "docs/guides/browser.md"
    assert browser["explain"]["translated"]["navegador"] == "browser"


def test_initials_of_a_package_name_find_the_package(repo: Path) -> None:
    first = search(repo, "rt devtools")[0]
    assert first["id"] == "package:@acme/react-thing-devtools"
    assert "rt" in first["explain"]["matched"]["aliases"]


def test_a_symbol_declared_by_several_modules_prefers_the_public_declaration(repo: Path) -> None:
    results = search(repo, "useThing", "--kinds", "module")
    paths = [r["path"] for r in results]
    assert paths[0] in ("packages/react-thing/src/useThing.ts", "packages/vue-thing/src/useThing.ts")
    assert paths.index("playground/demo/src/useThing.ts") >= 2
    assert paths.index("packages/react-thing/src/__tests__/useThing.test.ts") >= 2
    reasons = " ".join(results[0]["explain"]["reasons"])
    assert "public surface" in reasons
    demoted = next(r for r in results if r["path"] == "playground/demo/src/useThing.ts")
    assert any("test, fixture, example or playground" in why for why in demoted["explain"]["reasons"])


def test_a_class_declared_in_the_package_others_depend_on_wins(repo: Path) -> None:
    results = search(repo, "ThingClient")
    first = results[0]
    assert first["path"] == "packages/thing-core/src/client.ts"
    assert any("2 other packages depend on" in why for why in first["explain"]["reasons"])
    assert any("other declarations of the name import" in why for why in first["explain"]["reasons"])
    assert "packages/vue-thing/src/client.ts" in [r["path"] for r in results[1:]]


def test_a_typo_inside_a_longer_query_is_corrected_and_explained(repo: Path) -> None:
    results = search(repo, "schedler garbage")
    assert results[0]["path"] == "packages/thing-core/src/scheduler.ts"
    assert results[0]["explain"]["corrected"] == {"schedler": "schedul"}


def test_search_text_explains_readings_and_variants(repo: Path) -> None:
    from conftest import docbridge
    text = docbridge("search", "como testar o cache", "--root", str(repo), "--explain").stdout
    assert "Read as:" in text and "testar → test" in text
    text = docbridge("search", "caching guide options", "--root", str(repo)).stdout
    assert "also in: docs/framework/" in text
