"""Search right after an edit: the projection and the lexical index are patched from the previous state's, and
answer as a build from nothing over the edited tree would (docbridge.engine.retrieval.incremental).

Each edit goes through `Workspace.update` as an editor's buffer; the patched projection is compared entry by entry
with one projected from a scan from nothing of the same tree written to disk, and searches with that scan's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import copy_fixture, make_repo
from docbridge.engine.base.lexicon import tokens
from docbridge.engine.retrieval.rank import Retriever
from docbridge.engine.workspace import Workspace
from support.incremental import edit_and_rescan


def _entries(projection: object) -> list[dict[str, object]]:
    return [e.to_json() for e in projection.entries]  # type: ignore[attr-defined]


def _edited(root: Path, path: str, change: object) -> tuple[Workspace, Workspace]:
    """A workspace whose search index was built, then `path` edited (`change(text) -> text`); and a scan from
    nothing of the edited tree."""
    ws = Workspace(root, use_cache=False)
    ws.scan()
    ws.retriever()
    text = (root / path).read_text(encoding="utf-8")
    edited = change(text)  # type: ignore[operator]
    assert edited != text, "the edit changes the file"
    fresh = edit_and_rescan(ws, root, path, edited)
    return ws, fresh


def _scanned(tmp_path: Path, pages: dict[str, str]) -> tuple[Path, Workspace]:
    """A small package of these pages, scanned."""
    root = make_repo(tmp_path / "repo", {"package.json": '{"name": "copies", "version": "1.0.0"}\n', **pages})
    ws = Workspace(root, use_cache=False)
    ws.scan()
    return root, ws


# (fixture, file, edit, the entries it must change besides its own)
PROSE_EDITS = [
    ("acme", "docs/billing.md", lambda t: t + "\nRefunds are reconciled nightly against the ledger.\n", []),
    # the agent document of the src/billing ownership: the area inherits its text
    ("acme", "docs/for-agents/billing.md", lambda t: t + "\nAlways run the ledger reconciliation first.\n",
     ["area:src/billing"]),
    # the index page of docs/: the directory's summary is the page's first paragraph
    ("acme", "docs/README.md", lambda t: t.replace("Start here.", "Begin with this page."), ["directory:docs"]),
    ("acme", "src/billing/invoice.ts", lambda t: "// Invoices are numbered per tenant.\n" + t, []),
    # a package's README: the package's summary is its opening paragraph
    ("monorepo", "packages/web/README.md",
     lambda t: t.replace("The customer-facing React app", "The React app customers use"), ["package:@mono/web"]),
]


@pytest.mark.parametrize(("fixture", "path", "change", "borrowers"), PROSE_EDITS,
                         ids=[f"{f}:{p}" for f, p, _, _ in PROSE_EDITS])
def test_a_prose_edit_patches_the_projection_as_a_build_from_nothing_would(
        tmp_path: Path, fixture: str, path: str, change: object, borrowers: list[str]) -> None:
    root = copy_fixture(fixture, tmp_path)
    ws, fresh = _edited(root, path, change)
    original = Workspace(copy_fixture(fixture, tmp_path / "before"), use_cache=False)
    original.scan()
    before = original.projection().by_id
    patched = ws.projection()
    assert patched.origin is not None, "a prose edit patches the projection"
    assert _entries(patched) == _entries(fresh.projection())
    changed = {patched.entries[i].id for i in patched.origin[1]}
    kind = "document" if path.endswith(".md") else "module"
    assert f"{kind}:{path}" in changed
    for borrower in borrowers:
        assert borrower in changed
        assert patched.by_id[borrower] != before[borrower]


def test_a_prose_edit_of_a_page_with_copies_chooses_the_canonical_copy_again(tmp_path: Path) -> None:
    root, ws = _scanned(tmp_path, {
        "docs/v1/install.md": "# Install\n\nRun the installer and follow its prompts to the end.\n",
        "docs/v2/install.md": "# Install\n\nRun the installer.\n"})
    first = ws.projection()
    assert first.by_id["document:docs/v2/install.md"].variant_of == "document:docs/v1/install.md"  # the longer
    # v2 grows longer than v1: it becomes the canonical copy (the projection is patched, the copies regrouped)
    longer = "# Install\n\nRun the installer, answer its questions about the target folder, the shell and the " \
             "proxy, then restart the terminal so the new path is read.\n"
    fresh = edit_and_rescan(ws, root, "docs/v2/install.md", longer)
    patched = ws.projection()
    assert patched.origin is not None
    assert _entries(patched) == _entries(fresh.projection())
    assert patched.by_id["document:docs/v1/install.md"].variant_of == "document:docs/v2/install.md"


@pytest.mark.parametrize(("path", "change"), [
    ("docs/billing.md", lambda t: t + "\nSee [the orders page](./orders.md).\n"),  # a new link
    ("docs/billing.md", lambda t: t.replace("title: Billing", "title: Billing and invoices", 1)),  # a new title
    ("src/billing/invoice.ts", lambda t: "import '../util/logger.js';\n" + t),  # a new import
], ids=["link", "title", "import"])
def test_an_edit_that_changes_what_the_graph_or_a_title_holds_builds_the_projection_whole(
        tmp_path: Path, path: str, change: object) -> None:
    root = copy_fixture("acme", tmp_path)
    ws, fresh = _edited(root, path, change)
    projection = ws.projection()
    assert projection.origin is None
    assert _entries(projection) == _entries(fresh.projection())


def test_search_right_after_edits_ranks_as_a_fresh_build_and_forgets_the_old_text(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    queries = [case["input"] for case in json.loads((root / "retrieval-suite.json").read_text())["cases"]]
    ws = Workspace(root, use_cache=False)
    ws.scan()
    ws.retriever()
    billing = (root / "docs/billing.md").read_text(encoding="utf-8")
    invoice = (root / "src/billing/invoice.ts").read_text(encoding="utf-8")
    # the code's own names too (read for a question about how code works, with their own statistics)
    coded = invoice + "\n// numbered by the quokkaledger sequence\nconst platypusSequence = { next: 1 }\n"
    edits = [("docs/billing.md", billing + "\nRefunds settle through the quokkaledger.\n"),
             ("src/billing/invoice.ts", coded),
             ("docs/billing.md", billing + "\nRefunds settle through the wombatledger.\n")]
    mechanism = ["where is the platypus sequence computed", "how are invoice numbers computed internally"]
    for path, text in edits:
        fresh = edit_and_rescan(ws, root, path, text)
        patched = ws.retriever()
        assert patched.lexical.patched_since_built()
        rebuilt = Retriever(fresh.projection())
        for query in [*queries, *mechanism, "quokkaledger", "wombatledger", "refunds settle"]:
            assert [r.entry.id for r in patched.search(query, 10)] == [r.entry.id for r in rebuilt.search(query, 10)], \
                query
    # what the language server does once edits pause (`search.warmAfterMs`): the lexical index built again, exact,
    # sharing what reads only the entries, which are the same (the lookups, the packed field masks)
    whole = patched.rebuilt()
    assert not whole.lexical.patched_since_built() and whole.projection is patched.projection
    assert whole.by_symbol is patched.by_symbol and whole.index_of is patched.projection.by_id.positions
    assert whole.lexical.packed_masks() is patched.lexical.packed_masks()
    assert whole.lexical.packed_masks() == rebuilt.lexical.packed_masks()
    assert whole.lexical.vocabulary() == rebuilt.lexical.vocabulary()  # the patched index's words, not listed again
    for query in [*queries, *mechanism, "quokkaledger", "wombatledger", "refunds settle"]:
        assert [(r.entry.id, r.score) for r in whole.search(query, 10)] == \
            [(r.entry.id, r.score) for r in rebuilt.search(query, 10)], query
    assert [r.entry.id for r in patched.search(mechanism[0], 3)][:1] == ["module:src/billing/invoice.ts"]
    found = [r.entry.id for r in ws.retriever().search("quokkaledger", 5)]
    assert found == ["module:src/billing/invoice.ts"]  # the page no longer says it
    assert [r.entry.id for r in ws.retriever().search("wombatledger", 5)][:1] == ["document:docs/billing.md"]
    # undone: the word only that text held is gone from the vocabulary typo correction reads, as in a fresh build
    fresh = edit_and_rescan(ws, root, "docs/billing.md", billing)
    vocabulary = ws.retriever().lexical.vocabulary()
    [wombat], [quokka] = tokens("wombatledger"), tokens("quokkaledger")  # as indexed (stemmed)
    assert wombat not in vocabulary and quokka in vocabulary
    assert vocabulary == Retriever(fresh.projection()).lexical.vocabulary()


def test_a_projection_read_from_the_stored_index_is_patched_after_an_edit(tmp_path: Path) -> None:
    from docbridge.engine.artifacts.snapshot_file import projection_for, stored_or_built_projection
    root = copy_fixture("acme", tmp_path)
    writer = Workspace(root)
    writer.scan()
    projection_for(writer)  # what `docbridge search` stores under .docbridge/index
    ws = Workspace(root)
    ws.scan()
    stored = stored_or_built_projection(ws.state)
    assert stored.out_hashes and stored.basis is not None, "read from disk, with what a patch compares"
    assert stored.snapshot_hash_source == writer.projection().header()["snapshot_hash"]
    path = "docs/billing.md"
    fresh = edit_and_rescan(ws, root, path, (root / path).read_text(encoding="utf-8") + "\nRefunds settle nightly.\n")
    patched = stored_or_built_projection(ws.state)
    assert patched.origin is not None
    assert _entries(patched) == _entries(fresh.projection())


def test_a_copy_naming_its_canonical_page_is_resolved_among_every_page_as_a_build_does(tmp_path: Path) -> None:
    root, ws = _scanned(tmp_path, {
        "docs/v1/guide.md": "# Guide\n\nShort.\n",
        # `../v1/guide.md` is read first from the root: the page outside the copies, which a build then ignores
        "docs/v2/guide.md": "---\ncanonical: ../v1/guide.md\n---\n# Guide\n\nA longer guide to it.\n",
        "v1/guide.md": "# Old guide\n\nKept for links.\n"})
    ws.projection()
    text = (root / "docs/v2/guide.md").read_text(encoding="utf-8")
    fresh = edit_and_rescan(ws, root, "docs/v2/guide.md", text + "\nIt grew a second paragraph.\n")
    patched = ws.projection()
    assert patched.origin is not None
    assert _entries(patched) == _entries(fresh.projection())
    assert patched.by_id["document:docs/v1/guide.md"].variant_of == "document:docs/v2/guide.md"


def test_earlier_states_and_patched_indexes_are_not_kept_alive_by_the_index_patched_from_them(tmp_path: Path) -> None:
    import gc
    import weakref
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    ws.retriever()
    text = (root / "docs/billing.md").read_text(encoding="utf-8")
    states, indexes = [], []
    gc.collect()
    gc.disable()
    try:
        for round_ in range(6):
            ws.update("docs/billing.md", text + f"\nRound {round_} of edits.\n")
            index = ws.retriever().lexical
            assert index.patched_since_built()
            assert index.vocabulary()  # what a typo-tolerant search lists
            states.append(weakref.ref(ws.state))
            indexes.append(weakref.ref(index))
            del index
        # freed as soon as newer ones replace them, without a collection: a reference cycle would keep each
        # patched index (its masks, lengths, entries) until a full one, which a server's frozen heap rarely runs
        # (3 MB a patch on a 100,042-file tree)
        assert [found() is not None for found in indexes][:4] == [False] * 4 and indexes[-1]() is not None
    finally:
        gc.enable()
    gc.collect()
    # the newest state, and at most the one before it (whose projection seeds the next): not the whole history
    assert sum(state() is not None for state in states) <= 2


def test_an_index_rebuilt_once_edits_pause_frees_the_one_it_replaces_without_a_collection(tmp_path: Path) -> None:
    """What a build leaves is frozen (never walked by the collector again): an index in a reference cycle with the
    record of which version of it is newest stayed in the process after each rebuild, every word and posting."""
    import gc
    import weakref

    from docbridge.engine.base.heap import built
    from docbridge.engine.retrieval.rank import COMBINED
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    ws.retriever()
    text = (root / "docs/billing.md").read_text(encoding="utf-8")
    ws.update("docs/billing.md", text + "\nA pause in editing follows.\n")
    patched = ws.retriever()
    assert patched.lexical.patched_since_built()
    assert patched.search("invoce totals", 5)  # a typo: the vocabulary is listed
    whole = built(patched.rebuilt)()  # as the language server rebuilds it, frozen when built
    ws.state.replace_view(COMBINED, whole)
    replaced = weakref.ref(patched.lexical)
    gc.disable()
    try:
        del patched
        assert replaced() is None
    finally:
        gc.enable()
    assert [r.entry.id for r in ws.retriever().search("invoce totals", 5)] == \
        [r.entry.id for r in Retriever(ws.projection()).search("invoce totals", 5)]


def test_a_typo_is_compared_with_the_indexed_words_of_its_first_letter_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from docbridge.engine.retrieval import lexical as lexical_module
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    lexical = ws.retriever().lexical
    words = lexical.vocabulary()
    assert words == sorted(words) and len(words) > 100
    # a large tree's words are gathered in sorted runs, merged once: the same words
    monkeypatch.setattr(lexical_module, "VOCABULARY_RUN", 40)
    assert Retriever(ws.projection()).lexical.vocabulary() == words
    for initial in [*sorted({w[0] for w in words}), "\u00e9", "~"]:
        assert lexical.words_starting(initial) == [w for w in words if w.startswith(initial)], initial


def test_a_module_whose_exports_change_is_found_by_its_new_name_and_no_longer_by_its_old_one(tmp_path: Path) -> None:
    root = copy_fixture("acme", tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.scan()
    ws.retriever()
    path = "src/billing/invoice.ts"
    text = (root / path).read_text(encoding="utf-8")
    module = f"module:{path}"
    # names nothing imports: the graph stays, and the index and its lookups are patched
    for added, names, gone in (
            ("export function draftQuokkaInvoice() {}\nexport const QUOKKA_RATE = 3;\n",
             ["draftQuokkaInvoice", "QUOKKA_RATE"], None),
            ("export function draftWombatInvoice() {}\n", ["draftWombatInvoice"], "draftquokkainvoice")):
        before = ws.retriever()
        fresh = edit_and_rescan(ws, root, path, text + "\n" + added)
        patched = ws.retriever()
        assert patched.lexical.patched_since_built() and patched.by_symbol is not before.by_symbol, \
            "the index and the symbols' lookup were patched"
        rebuilt = Retriever(fresh.projection())
        assert {key: patched.by_symbol.get(key) for key in patched.by_symbol} == \
            {key: rebuilt.by_symbol.get(key) for key in rebuilt.by_symbol}
        at = patched.index_of[module]
        for name in names:
            assert patched.by_symbol.get(name.lower()) == (at,), name
            assert patched.search(name, 3)[0].entry.id == module, name
        if gone is not None:
            assert patched.by_symbol.get(gone) == ()
            assert at in patched.by_symbol.get("createinvoice"), "an export the edit kept"


def test_what_searches_derive_of_each_entry_is_kept_for_a_bounded_number_of_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from docbridge.engine.base import heap
    root = copy_fixture("acme", tmp_path)
    queries = [case["input"] for case in json.loads((root / "retrieval-suite.json").read_text())["cases"]]
    ws = Workspace(root, use_cache=False)
    ws.scan()
    unbounded = [[(r.entry.id, r.score) for r in Retriever(ws.projection()).search(q, 10)] for q in queries]
    monkeypatch.setattr(heap, "ENTRY_MEMO", 3)
    index = Retriever(ws.projection())
    bounded = [[(r.entry.id, r.score) for r in index.search(q, 10)] for q in queries]
    assert bounded == unbounded
    memos = {"symbols": index._symbols, "adjacency": index._adjacency, "unit names": index._unit_names,
             "file names": index._file_names, "body tokens": index.lexical._body_masks}
    assert {name: len(memo) <= 3 for name, memo in memos.items()} == dict.fromkeys(memos, True)
    assert not hasattr(index.lexical, "_masks"), "the field masks are read from the packed masks, not kept"


def test_a_projection_read_from_the_stored_index_holds_each_distinct_edge_once_as_a_build_does(tmp_path: Path) -> None:
    from docbridge.engine.artifacts.snapshot_file import projection_for, stored_or_built_projection
    root = copy_fixture("monorepo", tmp_path)
    writer = Workspace(root)
    writer.scan()
    built, reused = projection_for(writer)  # what `docbridge search` stores under .docbridge/index
    assert not reused
    ws = Workspace(root)
    ws.scan()
    stored = stored_or_built_projection(ws.state)
    assert stored is not built and _entries(stored) == _entries(built)
    edges = [edge for entry in stored.entries for edge in entry.edges]
    assert len(edges) > len({(e.kind, e.other, e.direction, e.confidence) for e in edges}), "edges repeat"
    assert len({id(e) for e in edges}) == len({(e.kind, e.other, e.direction, e.confidence) for e in edges})
    assert len({id(e) for e in edges}) == len({id(e) for entry in built.entries for e in entry.edges})
