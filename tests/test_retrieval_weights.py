"""How the ranking weighs what a query says (issue 16): words the glossary adds, the words a routing question
is made of, and what a title or a unit's name says about the query. Each test is built on a small repository
written to show one signal, through the engine's search."""

from __future__ import annotations

import json

import pytest
from conftest import make_repo, result_by_id, scanned_retriever
from docbridge.engine.base.lexicon import tokens, translations
from docbridge.engine.retrieval.rank import COMPOUND, READING_BOOST, TITLED, Retriever

FILES: dict[str, str] = {
    "package.json": json.dumps({"name": "weights", "private": True}),
    "docs/guide/mocking/modules.md": "# Mocking Modules\n\nReplace an import with a fake one while a test runs.\n",
    "docs/api/vi.md": "# Vi\n\nThe vi helper.\n\n## vi.mock\n\nMock a module: every import of the module is mocked. "
                      "A mocked module keeps its exports; mock the module before importing it.\n\n"
                      "## vi.fn\n\nA mock function.\n",
    # a Portuguese page: the words the glossary reads `mock` and `module` as are indexed, and rare
    "docs/pt/simulacao.md": "# Guia\n\nComo simular um módulo: a simulação troca o módulo.\n",
    **{f"docs/topics/{name}.md": f"# {name.title()}\n\nHow {name} works in Vue, step by step.\n"
       for name in ("coverage", "reporters", "workspaces", "snapshots", "fixtures", "timeouts")},
    # adapters of one core: the Lit one says "adapter" in its README's opening, the Vue one does not
    "packages/vue-thing/package.json": json.dumps({"name": "@acme/vue-thing"}),
    "packages/vue-thing/README.md": "# Vue Thing\n\nHooks for fetching and caching data in Vue components.\n",
    "packages/vue-thing/src/index.ts": "export function useThing() { return 1 }\n",
    "packages/lit-thing/package.json": json.dumps({"name": "@acme/lit-thing"}),
    "packages/lit-thing/README.md": "# Lit Thing\n\nLit adapter for the core: an adapter of the adapter kind, "
                                    "with reactive controllers.\n",
    "packages/lit-thing/src/index.ts": "export function thingController() { return 1 }\n",
    # the reporters, and a test fixture directory named after them too
    "packages/runner/src/reporters/json.ts": "/** Writes results as JSON. */\nexport class JsonReporter {}\n",
    "packages/runner/src/reporters/dot.ts": "/** Prints a dot per test. */\nexport class DotReporter {}\n",
    "test/fixtures/reporters/custom.ts": "/** A custom reporter for the reporter tests. */\n"
                                         "export class CustomReporter {}\n",
    "test/fixtures/reporters/other.ts": "/** Another custom reporter. */\nexport class OtherReporter {}\n",
    # test implementations of reporters, in a folder named after the word "implemented" reads as
    "test/e2e/implementations/custom-reporter.ts": "/** A reporter implementation: implements the reporter "
                                                   "interface. */\nexport class CustomReporter {}\n",
    "test/e2e/implementations/json-reporter.ts": "/** Implements a reporter. */\nexport class JsonReporter {}\n",
    # a package whose manager module says what the question says, more often than the package's name does
    "packages/snapshot/package.json": json.dumps({"name": "@acme/snapshot"}),
    "packages/snapshot/src/manager.ts": "/** Manages snapshots: the snapshot manager reads, writes and manages "
                                        "snapshot files. */\nexport class SnapshotManager {}\n",
    "packages/snapshot/src/port.ts": "export function writeSnapshot() {}\n",
    # a guide that uses a name more often than its declaration says it, and a page named after the name
    "packages/core/src/utils.ts": "/** Small helpers. */\nexport const skipToken = Symbol()\n"
                                  "export function noop() {}\nexport function identity(x) { return x }\n",
    "docs/guides/disabling.md": "# Disabling queries\n\nPass `skipToken` to disable a query. With skipToken "
                                "the query does not run; skipToken keeps types intact. Prefer skipToken "
                                "over `enabled: false`.\n",
    "docs/api/skipToken.md": "# skipToken\n\nThe skipToken value.\n",
    # a test helper that declares a word that is also a page's name: no declaration outside tests
    "test/helpers/caching.ts": "export function caching() {}\n",
    "docs/caching.md": "# Caching\n\nHow caching works.\n",
    # a compound identifier, and a page named after one of its parts
    "packages/core/src/errors.ts": "export class AppError extends Error {}\n",
    "docs/app.md": "# App\n\nThe app object. An AppError is thrown when a request fails; requests are retried.\n",
    # a reference page whose sections mention every word of a question, and the guide named after it
    "docs/config/options.md": "# Options\n\n## Retry failing tests\n\n" + "".join(
        f"## {name}\n\nSet {name} when tests are failing: retry failing tests, retry the failing tests, "
        f"{name} them.\n\n" for name in ("retry", "bail", "repeat", "isolate", "sequence")),
    "docs/guide/retry-failing.md": "# Retry failing tests\n\nA flaky test can be run again before it counts as "
                                   "failed.\n",
    # a name written as one word, said as two: a file named after it, a class declared in a file that is not
    "packages/runner/src/sequencers/RandomSequencer.ts": "import { BaseSequencer } from './BaseSequencer'\n"
                                                         "export class RandomSequencer extends BaseSequencer {}\n",
    "packages/runner/src/sequencers/BaseSequencer.ts": "/** Sorts test files. */\nexport class BaseSequencer {}\n",
    "docs/config/sequence.md": "# sequence\n\n## sequence.shuffle\n\nShuffles files in a random order "
                               "(the random sequencer).\n",
    "packages/runner/src/mock/clock.ts": "/** A clock. */\nexport class FakeTimers {\n  advance(): void {}\n}\n",
    "docs/guide/clock.md": "# Clock\n\nFake timers, timers that are fake: a fake clock advances fake timers.\n",
    # the code that watches files, named after what it does, and a page on watching
    "packages/runner/src/watcher.ts": "/** Reruns tests. */\nexport class Watcher {\n  rerun(): void {}\n}\n",
    "docs/guide/watching.md": "# Watch mode\n\nThe runner watches files and decides which tests to rerun.\n",
    # a page about speed that never says "slow"
    "docs/guide/improving-performance.md": "# Improving Performance\n\nRun fewer files at once; isolate "
                                           "less.\n",
}


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    return scanned_retriever(make_repo(tmp_path_factory.mktemp("weights"), FILES))  # type: ignore[no-any-return]


by_id = result_by_id


def test_words_the_glossary_adds_weigh_their_reading_weight_in_aboutness(retriever: Retriever) -> None:
    query = "how do I mock a module"
    results = retriever.search(query)
    page = by_id(results, "document:docs/guide/mocking/modules.md")
    # the English query reads `mock` and `module` as Portuguese words too (weight 0.3, shared among the
    # alternatives); they are rare here, and at their full IDF they would take most of the query's weight
    assert set(page.translated) == {"mock", "module"}
    said = ["mock", "modul"]
    assert set(said) < set(page.terms)
    boost: dict[str, float] = {}
    for reading in translations(query):
        targets = tokens(reading.target, unique=True)
        for token in targets:
            boost[token] = max(boost.get(token, 0.0), READING_BOOST[reading.how] / len(targets))
    idf = {t: retriever.lexical.idf(t) for t in page.terms}
    weighted = {t: idf[t] * (1.0 if t in said else boost[t]) for t in page.terms}
    # the title holds every word the query said: their share of the weight, the added words at theirs (the
    # title and path alone hold that share too: a sentence mostly about what the page is called)
    assert page.components["aboutness"] == pytest.approx(1 + (0.2 + TITLED) * sum(weighted[t] for t in said) / sum(
        weighted.values()))
    assert page.components["aboutness"] > 1 + 0.2 * sum(idf[t] for t in said) / sum(idf.values()) + 0.02
    assert results[0].entry.id == "document:docs/guide/mocking/modules.md"


def test_the_words_that_make_a_routing_question_are_not_read_through_the_glossary(retriever: Retriever) -> None:
    results = retriever.search("where do I change the vue hooks")
    # `change` and `where` say what kind of answer is wanted; their Portuguese readings (`mudança`) are not
    # matched as text, while the subject's are
    assert "change" not in results[0].translated
    assert not {"mudanca", "mudar", "alterar"} & set(results[0].terms)


def test_a_unit_named_by_a_routing_question_outranks_prose_that_holds_another_of_its_words(
        retriever: Retriever) -> None:
    results = retriever.search("who owns the vue adapter")
    assert results[0].entry.id == "package:@acme/vue-thing"
    reason = next(r for r in results[0].reasons if r.startswith("exactId +"))
    assert "its name carries" in reason


def test_a_unit_under_a_test_directory_earns_half_for_its_name(retriever: Retriever) -> None:
    results = retriever.search("where are the reporters")
    assert results[0].entry.id == "directory:packages/runner/src/reporters"
    fixture = by_id(results, "directory:test/fixtures/reporters")
    named = next(r for r in fixture.reasons if r.startswith("exactId +"))
    assert "(×0.5)" in named
    assert fixture.components["exactId"] == pytest.approx(results[0].components["exactId"] / 2, rel=0.01)


def test_implemented_in_a_where_which_or_how_question_is_a_routing_word(retriever: Retriever) -> None:
    results = retriever.search("where are the reporters implemented")
    # "implemented" says the answer is code; matched as text it would find whatever says "implementation"
    assert "implement" not in results[0].terms
    assert results[0].entry.id == "directory:packages/runner/src/reporters"
    assert "implement" not in retriever.search("how is the snapshot manager implemented")[0].terms
    assert "implement" not in retriever.search("which package implements snapshots")[0].terms
    # outside such a question it is a word like any other
    assert "implement" in retriever.search("reporter implementations")[0].terms


def test_a_question_that_asks_for_a_package_lowers_files(retriever: Retriever) -> None:
    results = retriever.search("which package manages snapshots")
    assert results[0].entry.id == "package:@acme/snapshot"
    manager = by_id(results, "module:packages/snapshot/src/manager.ts")
    assert "prior ×0.6: a module, for a question that asks for a package" in manager.reasons


def test_a_word_a_module_declares_ranks_the_declaration_before_pages_about_it(retriever: Retriever) -> None:
    results = retriever.search("skipToken")
    assert results[0].entry.id == "module:packages/core/src/utils.ts"
    for page in ("document:docs/guides/disabling.md", "document:docs/api/skipToken.md"):
        assert "prior ×0.8: a page, for a query that is the name a module declares" in by_id(results, page).reasons
    # a name only a test helper declares does not lower the pages
    results = retriever.search("caching")
    assert results[0].entry.id == "document:docs/caching.md"
    assert not any("declares" in reason for reason in results[0].reasons)


def test_a_compound_identifier_weighs_one_word_in_the_query(retriever: Retriever) -> None:
    results = retriever.search("AppError thrown")
    page = by_id(results, "document:docs/app.md")
    # `AppError` reads as apperror, app and error; they share the one word's weight, so a title that holds
    # `app` holds a third of it, not a word's worth
    idf = {t: retriever.lexical.idf(t) for t in page.terms}
    assert set(page.terms) == {"apperror", "app", "error", "thrown"}
    share = {t: 1 / 3 for t in ("apperror", "app", "error")} | {"thrown": 1.0}
    total = sum(idf[t] * share[t] for t in idf)
    assert page.components["aboutness"] == pytest.approx(1 + 0.2 * idf["app"] / 3 / total)


def test_a_sentence_about_what_a_page_is_called_ranks_it_before_sections_that_mention_it(
        retriever: Retriever) -> None:
    results = retriever.search("how to retry failing tests")
    assert results[0].entry.id == "document:docs/guide/retry-failing.md"
    assert any(r.startswith("aboutness +") and "title or path holds" in r for r in results[0].reasons)
    options = by_id(results, "document:docs/config/options.md")
    assert not any(r.startswith("aboutness +") for r in options.reasons)


def test_two_adjacent_words_that_spell_a_file_or_a_declared_name_name_it(retriever: Retriever) -> None:
    results = retriever.search("how does the random sequencer shuffle files")
    module = by_id(results, "module:packages/runner/src/sequencers/RandomSequencer.ts")
    assert f"exactPath +{COMPOUND}: adjacent query words spell its file name" in module.reasons
    assert module.components["exactPath"] == COMPOUND
    page = by_id(results, "document:docs/config/sequence.md")
    assert page.components["exactPath"] == 0
    results = retriever.search("fake timers advance")
    clock = by_id(results, "module:packages/runner/src/mock/clock.ts")
    assert f"exactSymbol +{COMPOUND}: adjacent query words spell a name it declares (faketimers)" in clock.reasons
    # words that are not adjacent do not spell it
    clock = by_id(retriever.search("timers that are fake"), "module:packages/runner/src/mock/clock.ts")
    assert clock.components["exactSymbol"] == 0


def test_where_something_is_written_asks_for_the_code_that_writes_it(retriever: Retriever) -> None:
    # "written" names a mechanism, as "generated" or "serialized" do: modules that declare code are raised
    results = retriever.search("where are snapshots written")
    port = by_id(results, "module:packages/snapshot/src/port.ts")
    assert "prior ×1.3: a module that declares code, for a question about how something is implemented" in port.reasons
    # a task is not a mechanism
    task = retriever.search("how do I write snapshots")
    assert not any("how something is implemented" in reason for r in task for reason in r.reasons)


def test_a_module_is_not_about_modules_for_being_one(retriever: Retriever) -> None:
    # the word is a topic (mocking modules, the module graph), not the kind every source file is: a module
    # matches "module" only when its text says it
    assert not any(r.entry.kind == "module" for r in retriever.search("module", floor=0))
    assert retriever.search("how do I mock a module")[0].entry.id == "document:docs/guide/mocking/modules.md"


def test_a_question_that_asks_how_to_do_something_raises_pages(retriever: Retriever) -> None:
    task = "prior ×1.2: a page, for a question that asks how to do something"
    for query in ("how do I retry failing tests", "how to retry failing tests", "como repetir testes"):
        results = retriever.search(query)
        pages = [r for r in results if r.entry.kind == "document"]
        assert pages and all(task in r.reasons for r in pages), query
        assert not any(task in r.reasons for r in results if r.entry.kind != "document"), query
    # ...and so does a sentence that begins with a verb: it asks to do something
    assert all(task in r.reasons for r in retriever.search("retry failing tests") if r.entry.kind == "document")
    # how something works, or what a word means, is no task
    for query in ("how does the sequencer shuffle files", "failing test retries", "como funciona o snapshot"):
        assert not any(task in r.reasons for r in retriever.search(query)), query


def test_a_symptom_finds_the_page_on_its_topic(retriever: Retriever) -> None:
    results = retriever.search("why are my tests slow")
    assert results[0].entry.id == "document:docs/guide/improving-performance.md"
    assert results[0].translated["slow"] == "performance"


def test_a_module_named_after_what_an_implementation_question_asks_about(retriever: Retriever) -> None:
    named = "prior ×1.2: a query word is its file name or part of it, for a question about how something is " \
            "implemented"
    results = retriever.search("how does watch mode decide which tests to rerun")
    assert named in by_id(results, "module:packages/runner/src/watcher.ts").reasons
    assert not any(named in r.reasons for r in results if r.entry.id != "module:packages/runner/src/watcher.ts")
    # a question that is not about how code works does not read file names so
    assert not any(named in r.reasons for r in retriever.search("watch mode reruns tests"))


def test_two_plain_words_are_a_phrase_a_page_explains(retriever: Retriever) -> None:
    phrase = "prior ×1.15: a document, for a phrase of plain words"
    results = retriever.search("retry failing")
    assert all(phrase in r.reasons for r in results if r.entry.kind == "document")
    # a name is not a phrase, nor is a routing question
    for query in ("skipToken usage", "docs/guide retry", "who owns reporters"):
        assert not any(phrase in r.reasons for r in retriever.search(query)), query
