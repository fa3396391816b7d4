"""How the ranking weighs what a query says (issue 16): words the glossary adds, the words a routing question
is made of, and what a title or a unit's name says about the query. Each test is built on a small repository
written to show one signal, through the engine's search."""

from __future__ import annotations

import json

import pytest
from conftest import make_repo

from engine.retrieval.rank import Retriever
from engine.workspace import Workspace

FILES: dict[str, str] = {
    "package.json": json.dumps({"name": "weights", "private": True}),
    "docs/guide/mocking/modules.md": "# Mocking Modules\n\nReplace an import with a fake one while a test runs.\n",
    "docs/api/vi.md": "# Vi\n\nThe vi helper.\n\n## vi.mock\n\nMock a module: every import of the module is mocked. "
                      "A mocked module keeps its exports; mock the module before importing it.\n\n"
                      "## vi.fn\n\nA mock function.\n",
    # a Portuguese page: the words the glossary reads `mock` and `module` as are indexed, and rare
    "docs/pt/simulacao.md": "# Guia\n\nComo simular um módulo: a simulação troca o módulo.\n",
    **{f"docs/topics/{name}.md": f"# {name.title()}\n\nHow {name} works, step by step.\n"
       for name in ("coverage", "reporters", "workspaces", "snapshots", "fixtures", "timeouts")},
}


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    root = make_repo(tmp_path_factory.mktemp("weights"), FILES)
    workspace = Workspace(root, use_cache=False)
    workspace.scan()
    return workspace.retriever()  # type: ignore[no-any-return]


def by_id(results: list, entry_id: str):  # type: ignore[no-untyped-def]
    return next(r for r in results if r.entry.id == entry_id)


def test_words_the_glossary_adds_weigh_their_reading_weight_in_aboutness(retriever: Retriever) -> None:
    results = retriever.search("how do I mock a module")
    page = by_id(results, "document:docs/guide/mocking/modules.md")
    # the English query reads `mock` and `module` as Portuguese words too (weight 0.3, shared among the
    # alternatives); they are rare here, and at their full IDF they would take most of the query's weight
    assert set(page.translated) == {"mock", "module"}
    assert {"mock", "modul"} <= set(page.terms) and len(page.terms) > 2
    # the title holds every word the query said: most of its weight
    assert page.components["aboutness"] > 1.12  # 1.07 when they weigh their full IDF
    assert results[0].entry.id == "document:docs/guide/mocking/modules.md"
