"""Ranking on a small repository built for the purpose (after the original's retrieval fixture, §21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import copy_fixture, docbridge, docbridge_json, make_repo
from docbridge.engine.retrieval.project import project
from docbridge.engine.retrieval.rank import COMPONENTS, Retriever
from docbridge.engine.workspace import Workspace

FILES = {
    "package.json": '{"name": "fixture", "scripts": {"test": "vitest run"}}',
    "doc-bridge.config.json": json.dumps({"routing": {"options": {"ownership": {"fixture-query": {
        "path": "src/query", "purpose": "Query layer", "checks": ["pnpm test --filter query"],
        "agentDoc": "docs/for-agents/query.md"}}}}}),
    "src/query/search.ts": "import { rank } from '../ranking/bm25.js';\n\n"
                           "export function searchIndex(q: string) { return rank(q); }\n",
    "src/query/parse.ts": "export function parseQuery(q: string) { return q.split(' '); }\n",
    "src/query/index.ts": "export { searchIndex } from './search.js';\nexport { parseQuery } from './parse.js';\n",
    "src/ranking/bm25.ts": "export function rank(q: string) { return q.length; }\n",
    "docs/for-agents/INDEX.md": "# Agent index\n\nStart with [query](query.md) and [ranking](../ranking.md).\n",
    "docs/for-agents/query.md": "---\naudience: agent\n---\n# Query layer\n\nCall `searchIndex` to search; "
                                "it ranks with the BM25 module. Workflow transitions are persisted elsewhere.\n",
    "docs/ranking.md": "# Ranking\n\nScores come from `src/ranking/bm25.ts`; `rank` is the entry point. "
                       "The searchIndex function uses it, and so does every searchIndex caller.\n",
    "docs/mention.md": "# Notes\n\nA passing mention of `src/ranking/bm25.tx` in these notes.\n",
    "docs/autenticacao.md": "# Autenticação\n\nComo a autenticação funciona: 認証と認可の境界を確認する。\n",
    "AGENTS.md": "# Agents\n\nRead docs/for-agents/INDEX.md first.\n",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = make_repo(tmp_path_factory.mktemp("ranking"), FILES)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    return ws


@pytest.fixture(scope="module")
def retriever(workspace: Workspace) -> Retriever:
    return workspace.retriever()  # type: ignore[no-any-return]


def ids(results: list) -> list[str]:
    return [r.entry.id for r in results]


def test_a_symbol_ranks_its_declaring_module_first(retriever: Retriever) -> None:
    results = retriever.search("searchIndex")
    assert ids(results)[0] == "module:src/query/search.ts"
    # the barrel that re-exports it and the documents that mention it come after
    assert ids(results).index("module:src/query/index.ts") > 0
    assert ids(results).index("document:docs/ranking.md") > 0
    top = results[0].components
    assert top["exactSymbol"] == 150


def test_a_file_path_ranks_that_file_and_a_directory_its_area(retriever: Retriever) -> None:
    assert ids(retriever.search("src/ranking/bm25.ts"))[0] == "module:src/ranking/bm25.ts"
    assert ids(retriever.search("docs/ranking.md"))[0] == "document:docs/ranking.md"
    assert ids(retriever.search("src/query"))[0] == "area:src/query"
    assert ids(retriever.search("src/ranking"))[0] == "area:src/ranking"


def test_an_ownership_id_names_its_area(retriever: Retriever) -> None:
    (first, *_) = retriever.search("fixture-query")
    assert (first.entry.id, first.entry.ownership_id) == ("area:src/query", "fixture-query")
    assert first.components["exactId"] >= 200


def test_stopwords_and_nonsense_return_nothing(retriever: Retriever) -> None:
    assert retriever.search("and") == []
    assert retriever.search("how to the of") == []
    assert retriever.search("de para com") == []
    assert retriever.search("zxqvnomatch987654321") == []
    assert retriever.search("") == []


def test_portuguese_and_cjk_find_their_document(retriever: Retriever) -> None:
    assert ids(retriever.search("autenticação"))[0] == "document:docs/autenticacao.md"
    assert ids(retriever.search("autenticacao"))[0] == "document:docs/autenticacao.md"
    assert ids(retriever.search("認証"))[0] == "document:docs/autenticacao.md"


def test_a_fuzzy_mention_surfaces_its_target_with_fuzzy_confidence(retriever: Retriever) -> None:
    results = retriever.search("passing mention", floor=0)
    assert ids(results)[0] == "document:docs/mention.md"
    surfaced = next(r for r in results if r.entry.id == "module:src/ranking/bm25.ts")
    assert surfaced.components["lexical"] == 0
    assert surfaced.surfaced_by == {"kind": "mentions", "id": "document:docs/mention.md", "confidence": "fuzzy",
                                    "hops": 1}
    assert (surfaced.entry.confidence, surfaced.confidence) == ("observed", "fuzzy")
    # with the default one-third floor a relation alone does not make an answer
    assert "module:src/ranking/bm25.ts" not in ids(retriever.search("passing mention"))


def test_explain_names_every_component_and_never_changes_the_order(retriever: Retriever) -> None:
    query = "workflow transitions persisted"
    results = retriever.search(query)
    assert results and results[0].terms == ["workflow", "transit", "persist"]
    explained = [r.to_json(explain=True) for r in results]
    plain = [r.to_json() for r in results]
    assert [e["id"] for e in explained] == [p["id"] for p in plain]
    for item in explained:
        assert set(item["explain"]["components"]) == set(COMPONENTS)
        assert item["explain"]["matched"]
    assert explained[0]["explain"]["components"]["acceptedAgentSignals"] == 0


def test_ties_break_deterministically(retriever: Retriever) -> None:
    first = [(r.entry.id, r.score) for r in retriever.search("query")]
    again = [(r.entry.id, r.score) for r in retriever.search("query")]
    assert first == again
    scores = [s for _, s in first]
    assert scores == sorted(scores, reverse=True)


def test_every_result_carries_evidence_provenance_and_confidence(retriever: Retriever) -> None:
    for result in retriever.search("ranking"):
        item = result.to_json()
        assert item["evidence"] == [{"path": result.entry.path, "content_hash": result.entry.content_hash}]
        assert item["provenance"] in ("observed", "declared") and item["confidence"]


def test_projection_hash_is_stable_and_moves_with_the_weights(workspace: Workspace) -> None:
    snapshot = workspace.snapshot()
    first = project(workspace, snapshot)
    second = project(workspace, snapshot)
    assert first.content_hash == second.content_hash
    changed = project(workspace, snapshot, {**workspace.config.weights(), "body": 9})
    assert changed.content_hash != first.content_hash
    # every document, module, area and package of the snapshot is an entry
    kinds = {"document", "module", "area", "package"}
    assert {e.id for e in snapshot.entities.values() if e.kind in kinds} <= set(first.by_id)


def test_owned_unit_inherits_its_agent_document(workspace: Workspace) -> None:
    entry = workspace.projection().by_id["area:src/query"]
    assert entry.ownership_id == "fixture-query"
    assert entry.title == "Query layer" and entry.summary == "Query layer"
    assert "searchindex" in entry.fields["body"].lower()


def test_a_typo_in_a_query_finds_the_close_indexed_word(retriever: Retriever) -> None:
    results = retriever.search("rankingg")
    assert results[0].corrected == {"rankingg": "rank"}  # the indexed stem of ranking, ranks, ranked
    assert "document:docs/ranking.md" in ids(results)[:3]
    assert retriever.search("zzranking") == []  # a different first letter is not a typo


# ------------------------------------------------------------------------------------------------ the CLI


def test_search_json_shape_and_kinds(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    payload = docbridge_json("search", "calculateTax", "--root", str(root), "--json")
    assert payload["query"] == "calculateTax"
    first = payload["results"][0]
    assert set(first) >= {"id", "kind", "path", "title", "score", "confidence", "provenance", "evidence"}
    assert first["id"] == "module:src/billing/tax.ts"
    only_docs = docbridge_json("search", "billing", "--root", str(root), "--json", "--kinds", "document")
    assert only_docs["results"] and {r["kind"] for r in only_docs["results"]} == {"document"}
    explained = docbridge_json("search", "billing", "--root", str(root), "--json", "--explain", "--limit", "3")
    assert len(explained["results"]) == 3
    assert all(set(r["explain"]["components"]) == set(COMPONENTS) for r in explained["results"])
    assert docbridge("search", "x", "--root", str(root), "--kinds", "banana").returncode == 2
    assert docbridge("search", "x", "--root", str(root), "--limit", "0").returncode == 2


def test_search_text_output(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    result = docbridge("search", "createInvoice", "--root", str(root), "--explain")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Query: createInvoice (")
    assert lines[1] == "Reading: a name (symbol or path)"
    assert lines[2].startswith(" 1. [module] module:src/billing/invoice.ts  score=")
    assert any(line.strip().startswith("why:") and "exactSymbol=150" in line for line in lines)


def test_the_index_is_reused_until_the_tree_changes_and_rebuilt_when_corrupt(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    assert docbridge_json("search", "tax", "--root", str(root), "--json")["index"]["reused"] is False
    assert docbridge_json("search", "tax", "--root", str(root), "--json")["index"]["reused"] is True
    doc = root / "docs" / "orders.md"
    doc.write_text(doc.read_text() + "\nA new line about tax.\n")
    assert docbridge_json("search", "tax", "--root", str(root), "--json")["index"]["reused"] is False
    artifact = root / ".docbridge" / "index" / "projection.json"
    data = bytearray(artifact.read_bytes())
    data[-5:] = b"xxxxx"
    artifact.write_bytes(bytes(data))
    rebuilt = docbridge_json("search", "tax", "--root", str(root), "--json")
    assert rebuilt["index"]["reused"] is False and rebuilt["results"]
    assert docbridge_json("search", "tax", "--root", str(root), "--json")["index"]["reused"] is True


def test_a_package_without_a_readme_is_described_by_its_manifest(tmp_path: Path) -> None:
    """statekit's `packages/vue` has no README: what it is for is in its manifest's `description` alone."""
    root = copy_fixture("statekit", tmp_path)
    manifest_path = root / "packages/vue/package.json"
    query = "which package keeps components reactive to a store"
    before = docbridge_json("search", query, "--root", str(root), "--json", "--kinds", "package")
    assert all(r["id"] != "package:@statekit/vue" for r in before["results"][:1])
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["description"] = "Composables that keep Vue components reactive to a statekit store"
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    after = docbridge_json("search", query, "--root", str(root), "--json", "--kinds", "package")
    assert after["results"][0]["id"] == "package:@statekit/vue"
    assert after["results"][0]["summary"] == manifest["description"]


def test_a_portuguese_function_word_is_never_read_as_a_typo_of_an_indexed_word(tmp_path: Path) -> None:
    """`durante` (during) is no word of the question's subject: it is neither matched nor corrected into the
    nearest indexed word (`duration`), which pulled pages about durations ahead of the one about the build."""
    root = make_repo(tmp_path / "repo", {
        "README.md": "# Shop\n",
        "docs/timeouts.md": "# Timeouts\n\nThe duration of each step, the duration of the whole run.\n",
        "docs/build.md": "# Build\n\nWhat the build writes to dist, and the warnings it prints.\n",
    })
    payload = docbridge_json("search", "avisos durante o build", "--root", str(root), "--json", "--explain")
    first = payload["results"][0]
    assert first["id"] == "document:docs/build.md"
    assert "corrected" not in first["explain"]
    assert all(r["id"] != "document:docs/timeouts.md" for r in payload["results"])


def test_a_phrase_spelling_out_an_abbreviation_weighs_one_word_beside_the_abbreviation(tmp_path: Path) -> None:
    """"server-side rendering" names one thing, SSR: its three words together weigh one word, so a page that
    says `server` and `side` often does not outrank the page about SSR."""
    root = make_repo(tmp_path / "repo", {
        "README.md": "# Shop\n",
        "docs/dev-server.md": "# Dev server\n\nThe server starts on port 5173. Server options set the server side "
                              "of the proxy, and the server restarts when its config changes. The side panel "
                              "shows the server's rendering of the error overlay.\n",
        "docs/ssr.md": "# SSR\n\nHow the ssr build loads its entry, and which dependencies ssr keeps external.\n",
    })
    payload = docbridge_json("search", "how does server-side rendering work", "--root", str(root), "--json")
    assert [r["id"] for r in payload["results"][:2]] == ["document:docs/ssr.md", "document:docs/dev-server.md"]


def _glob_repo(tmp_path: Path) -> Path:
    """A package with the plugin that expands glob imports, its types in a declaration file, and a module of a
    neighbouring feature whose name holds two of the question's words."""
    return make_repo(tmp_path / "repo", {
        "package.json": '{"name": "bundler", "version": "1.0.0"}\n',
        "README.md": "# Bundler\n",
        "types/importGlob.d.ts": "/** Options of a glob import: the pattern, eager or lazy, the import name. */\n"
                                 "export interface ImportGlobOptions { eager?: boolean; import?: string }\n"
                                 "/** import.meta.glob: a glob import of the files a pattern matches. */\n"
                                 "export type ImportGlobFunction = (pattern: string, options?: ImportGlobOptions)"
                                 " => Record<string, unknown>\n",
        "src/plugins/importMetaGlob.ts": "// Expands each call into one import per matched file.\n"
                                         "export function transformGlobImport(code: string): string {\n"
                                         "  return code.replace(/glob\\(/g, 'imports(')\n}\n",
        "src/plugins/assetImportMetaUrl.ts": "// new URL(path, import.meta.url): an asset's import.\n"
                                             "export function assetImportMetaUrlPlugin(code: string): string {\n"
                                             "  return code\n}\n",
    })


def test_a_question_that_spells_out_a_file_name_word_by_word_ranks_that_module_first(tmp_path: Path) -> None:
    """`import.meta.glob` spells out importMetaGlob.ts, three words in a row: that names the file, where
    importGlob.d.ts only holds one of them (`import`) and assetImportMetaUrl.ts two."""
    payload = docbridge_json("search", "where are import.meta.glob patterns expanded into imports", "--root",
                             str(_glob_repo(tmp_path)), "--json", "--explain")
    first = payload["results"][0]
    assert first["id"] == "module:src/plugins/importMetaGlob.ts"
    assert any("adjacent query words spell its file name" in line for line in first["explain"]["reasons"])


def test_a_declaration_file_is_not_the_code_that_implements_a_mechanism(tmp_path: Path) -> None:
    """A `.d.ts` file declares types, nothing that runs: a question about how something is implemented does
    not prefer it as code, as it does the plugin."""
    payload = docbridge_json("search", "how is the glob import implemented", "--root", str(_glob_repo(tmp_path)),
                             "--json", "--explain")
    explained = {r["id"]: r["explain"]["reasons"] for r in payload["results"]}
    assert not any("declares code" in line for line in explained["module:types/importGlob.d.ts"])
    assert any("declares code" in line for line in explained["module:src/plugins/importMetaGlob.ts"])
    ids = list(explained)
    assert ids.index("module:src/plugins/importMetaGlob.ts") < ids.index("module:types/importGlob.d.ts")


def _release_repo(tmp_path: Path) -> Path:
    """A migration guide, and the blog's announcements of the releases, which tell of upgrading too."""
    announcement = ("# Announcing Bundler {v}\n\n_March 12, 2026_\n\nBundler {v} is released today. This release "
                    "brings a new dev server, faster builds and a smaller install. Upgrade when you are ready: the "
                    "migration guide lists what changed since Bundler {p}.\n\n## Upgrading from Bundler {p}\n\nMost "
                    "projects upgrade by bumping the version; plugins that hook the dev server need migration. See "
                    "the migration guide for the upgrade steps.\n\n## Acknowledgements\n\nThanks to everyone "
                    "who tested the betas.\n")
    return make_repo(tmp_path / "repo", {
        "package.json": '{"name": "bundler", "version": "8.0.0"}\n',
        "README.md": "# Bundler\n\nA bundler for web apps.\n",
        "docs/guide/migration.md": "# Migration from v7\n\nBundler 8 renames two options and removes a plugin. "
                                   "To upgrade, change your configuration as below, then run your build.\n\n"
                                   "## Renamed options\n\n`outDir` is now `output.dir`.\n\n## Removed plugins\n\n"
                                   "The legacy plugin is gone: use the targets option.\n",
        "docs/blog/announcing-bundler8.md": announcement.format(v=8, p=7),
        "docs/blog/announcing-bundler7.md": announcement.format(v=7, p=6),
    })


def test_a_how_to_question_is_answered_by_the_guide_before_a_dated_announcement(tmp_path: Path) -> None:
    """An announcement tells what changed at a release; how to upgrade is the migration guide's (`upgrade` reads
    as `migration`, the topic guides file it under)."""
    root = _release_repo(tmp_path)
    payload = docbridge_json("search", "how do I upgrade from bundler 7", "--root", str(root), "--json", "--explain")
    ranked = [r["id"] for r in payload["results"]]
    assert ranked[0] == "document:docs/guide/migration.md"
    post = next(r for r in payload["results"] if r["id"] == "document:docs/blog/announcing-bundler8.md")
    assert any("a dated post" in reason for reason in post["explain"]["reasons"])


def test_a_question_about_the_release_itself_is_answered_by_its_announcement(tmp_path: Path) -> None:
    root = _release_repo(tmp_path)
    payload = docbridge_json("search", "what is new in the bundler 8 release", "--root", str(root), "--json",
                             "--explain")
    first = payload["results"][0]
    assert first["id"].startswith("document:docs/blog/announcing-bundler")
    assert not any("a dated post" in reason for result in payload["results"] for reason in result["explain"]["reasons"])


def test_a_module_of_types_alone_does_not_answer_how_something_is_implemented(tmp_path: Path) -> None:
    """How something works is answered by code that runs: a module that declares only types and interfaces
    describes shapes, as a declaration file does, and does not get the implementation question's prior."""
    root = make_repo(tmp_path / "repo", {
        "README.md": "# Queue\n\nA job queue.\n",
        "src/retry/types.ts": "/** The retry policy of a queue: how many attempts, and the backoff delay between "
                              "them. */\n"
                              "export interface RetryPolicy {\n  /** how many times a job runs before it fails */\n"
                              "  attempts: number;\n  /** the first backoff delay, in milliseconds */\n"
                              "  backoffDelayMs: number;\n}\n\n"
                              "export type RetryState = { attempt: number; nextDelayMs: number };\n",
        "src/retry/schedule.ts": "/** Retry scheduling: the backoff delay of a failed job's next attempt. */\n"
                                 "import type { RetryPolicy, RetryState } from './types';\n\n"
                                 "/** The next attempt: its delay doubles after each retry, up to eight times the "
                                 "policy's. */\n"
                                 "export function nextAttempt(policy: RetryPolicy, state: RetryState): RetryState {\n"
                                 "  const doubled = state.nextDelayMs * 2;\n"
                                 "  return { attempt: state.attempt + 1, nextDelayMs: Math.min(doubled, "
                                 "policy.backoffDelayMs * 8) };\n}\n",
    })
    payload = docbridge_json("search", "how is the backoff delay between retry attempts computed", "--root", str(root),
                             "--json", "--explain")
    assert [r["id"] for r in payload["results"][:2]] == ["module:src/retry/schedule.ts", "module:src/retry/types.ts"]
    implementation = "a module that declares code, for a question about how something is implemented"
    types_only, schedule = payload["results"][1], payload["results"][0]
    assert any(implementation in reason for reason in schedule["explain"]["reasons"])
    assert not any(implementation in reason for reason in types_only["explain"]["reasons"])
    assert types_only["explain"]["components"]["prior"] == 1.0


def test_a_word_only_a_heading_holds_counts_half_toward_what_a_page_is_about(tmp_path: Path) -> None:
    """A page's title says what it is about; a heading names one of its sections. The snapshot guide, with a
    section called Custom matchers, is not the page about adding matchers to `expect`: Extending Matchers is."""
    root = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "demo", "version": "1.0.0"}\n',
        "docs/guide/extending-matchers.md": (
            "# Extending Matchers\n\nYou can add your own matchers to `expect` with `expect.extend`, and every test "
            "can then use them.\n\n## Writing one\n\nMatchers receive the value given to `expect` and return whether "
            "it passed, with a message: a matcher that fails\nsays why.\n"),
        "docs/guide/snapshot.md": (
            "# Snapshot\n\nSnapshot tests record the output of a value and compare it on the next run.\n\n"
            "## Custom matchers\n\nSnapshots can be asserted with matchers you add to `expect` as well.\n\n"
            "## Updating snapshots\n\nRun the tests with `-u` to update every snapshot that changed. Obsolete snapshot "
            "files are reported at the end\nof the run, and removed when the run updates snapshots. Inline snapshots "
            "are written back into the test file,\nnext to the assertion that made them, so a review of the change "
            "shows the new output beside its test. A\nsnapshot that differs fails its test with a diff of the stored "
            "output and the new one.\n"),
    })
    payload = docbridge_json("search", "how to add custom matchers to expect", "--root", str(root), "--json",
                             "--explain")
    # the guide's heading holds two of the question's words (custom, matchers), the page's title one: counted
    # whole, the heading put the guide first
    assert [r["id"] for r in payload["results"]][:2] == ["document:docs/guide/extending-matchers.md",
                                                         "document:docs/guide/snapshot.md"]
